//! Finding retrieved documents and tool results inside the text of the messages a model was
//! sent, by content: each source's text occurring verbatim in a message.
//!
//! Each source is indexed by its first [`ANCHOR`] bytes (`window.rs`: a rolling hash, so the
//! index stays small however many and however long the documents are); a place whose window
//! may start one is checked against the sources that start alike, longest first, and the search
//! goes on after a match. Each distinct message text is searched once (a conversation sends its
//! history again in every call), in time linear in the text; the checks of one text have a
//! budget, so hostile near-duplicates cannot make it quadratic.

use super::window::Windows;
use hashbrown::HashMap;

/// Bytes of a source's text its window holds.
const ANCHOR: usize = 16;

/// Sources shorter than this (in bytes, once trimmed) are only found as a message's whole text:
/// a short text ("OK", "42", a date) would be found in places that never came from it.
pub const MIN_FOUND: usize = 24;

/// At most this many bytes of source text are compared per byte of a message's text.
const CHECK_BUDGET_PER_BYTE: usize = 8;

/// Bytes of a probe: a window of plain text (letters, digits, spaces and common punctuation)
/// from a source, which survives being written again as JSON, indented or with other escapes.
const PROBE: usize = 40;

/// The sources' texts, searchable.
pub struct Finder<'a> {
    texts: Vec<&'a str>,
    /// The sources long enough to be searched for, by their first bytes.
    index: Windows,
    /// Each source's position by its whole text (the first source of a text).
    whole: HashMap<&'a str, usize>,
}

/// A source found in a text: its byte range and the source's position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// The source's position in the list the finder was made from.
    pub source: usize,
}

impl<'a> Finder<'a> {
    /// A finder over `texts` (a source's position is its index here).
    pub fn new(texts: Vec<&'a str>) -> Finder<'a> {
        let mut whole = HashMap::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            whole.entry(*t).or_insert(i);
        }
        let index = Windows::new(
            ANCHOR,
            texts
                .iter()
                .enumerate()
                .filter(|(_, t)| t.trim().len() >= MIN_FOUND)
                .filter_map(|(i, t)| Some((t.as_bytes(), u32::try_from(i).ok()?))),
        );
        Finder {
            texts,
            index,
            whole,
        }
    }

    /// The source whose whole text is `text`.
    pub fn whole(&self, text: &str) -> Option<usize> {
        self.whole.get(text).copied()
    }

    /// The sources found in `text`, in order, none overlapping: at each place the longest
    /// source that starts there, the earlier place first.
    pub fn find(&self, text: &str) -> Vec<Found> {
        let mut budget = text.len().saturating_mul(CHECK_BUDGET_PER_BYTE);
        let mut out: Vec<Found> = Vec::new();
        let bytes = text.as_bytes();
        let mut candidates: Vec<usize> = Vec::new();
        self.index.scan(bytes, |start, numbers| {
            let rest = bytes.get(start..).unwrap_or_default();
            candidates.clear();
            for n in numbers {
                candidates.push(n as usize);
            }
            candidates
                .sort_by_key(|&i| std::cmp::Reverse(self.texts.get(i).map_or(0, |t| t.len())));
            for &s in &candidates {
                let Some(src) = self.texts.get(s) else {
                    continue;
                };
                if src.len() > rest.len() {
                    continue;
                }
                // What comparing costs is what it reads: up to the first difference.
                let same = rest
                    .iter()
                    .zip(src.as_bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                budget = budget.saturating_sub(same + 1);
                if same == src.len() {
                    let end = start + src.len();
                    out.push(Found {
                        start,
                        end,
                        source: s,
                    });
                    return Some(end);
                }
                if budget == 0 {
                    return None;
                }
            }
            Some(start + 1)
        });
        out
    }
}

/// Sources that may sit in a text in another form, by a window of their plain text.
pub struct Prober<'a> {
    probes: Vec<&'a str>,
    source: Vec<usize>,
    index: Windows,
}

impl<'a> Prober<'a> {
    /// Probes of the sources `which` of `texts` (those long enough to have one).
    pub fn new(texts: &[&'a str], which: &[usize]) -> Prober<'a> {
        let mut probes: Vec<&'a str> = Vec::new();
        let mut source = Vec::new();
        for &i in which {
            if let Some(p) = texts.get(i).and_then(|t| probe(t)) {
                probes.push(p);
                source.push(i);
            }
        }
        let index = Windows::new(
            PROBE,
            probes
                .iter()
                .enumerate()
                .filter_map(|(k, p)| Some((p.as_bytes(), u32::try_from(k).ok()?))),
        );
        Prober {
            probes,
            source,
            index,
        }
    }

    /// The sources a probe of which occurs in `text`: text that holds the source, perhaps
    /// written again in another form (indented, escaped otherwise).
    pub fn seen(&self, text: &str) -> Vec<usize> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        self.index.scan(bytes, |at, numbers| {
            let window = bytes.get(at..at + PROBE);
            for k in numbers {
                let k = k as usize;
                if self.probes.get(k).map(|p| p.as_bytes()) == window
                    && let Some(&s) = self.source.get(k)
                {
                    out.push(s);
                }
            }
            Some(at + 1)
        });
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A source's probe: [`PROBE`] bytes from the middle of its longest run of plain text (ASCII
/// letters, digits, spaces and punctuation other than quotes and backslashes), starting at a word;
/// `None` when no run is that long.
fn probe(t: &str) -> Option<&str> {
    let plain = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'.'
                    | b','
                    | b';'
                    | b':'
                    | b'!'
                    | b'?'
                    | b'('
                    | b')'
                    | b'-'
                    | b'\''
                    | b'/'
                    | b'%'
                    | b'&'
            )
    };
    let bytes = t.as_bytes();
    let (mut best, mut run_start) = ((0, 0), None);
    for (i, &b) in bytes.iter().chain(std::iter::once(&0)).enumerate() {
        match (plain(b), run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(s)) => {
                if i - s > best.1 - best.0 {
                    best = (s, i);
                }
                run_start = None;
            }
            _ => {}
        }
    }
    let (s, e) = best;
    if e - s < PROBE + 8 {
        return None;
    }
    // From the middle of the run, at the next word.
    let mut from = s + (e - s - PROBE) / 2;
    while from > s && bytes.get(from - 1).is_some_and(|b| *b != b' ') {
        from -= 1;
    }
    let to = (from + PROBE).min(e);
    t.get(from..to).filter(|p| p.trim().len() >= PROBE / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC_A: &str =
        "Meta Platforms reported revenue of 134.9 billion dollars in 2023, up 16 percent.";
    const DOC_B: &str = "Meta Platforms reported revenue of 134.9 billion dollars in 2023, up 16 percent. Costs rose.";

    #[test]
    fn documents_are_found_by_their_text_the_longest_at_each_place() {
        let f = Finder::new(vec![
            DOC_A,
            DOC_B,
            "short",
            "an unrelated document that is long enough",
        ]);
        let text = format!("Context:\n{DOC_B}\n\n{DOC_A}\nQuestion: revenue?");
        let found = f.find(&text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].source, 1, "the longer text at the same place");
        assert_eq!(&text[found[0].start..found[0].end], DOC_B);
        assert_eq!(&text[found[1].start..found[1].end], DOC_A);
        assert!(
            f.find("nothing here, short").is_empty(),
            "short texts are not searched"
        );
        assert_eq!(f.whole("short"), Some(2));
        assert!(Finder::new(vec![]).find(DOC_A).is_empty());
    }

    #[test]
    fn anchors_cut_at_char_boundaries_and_many_near_duplicates_stay_bounded() {
        let uni = "ä".repeat(40);
        let f = Finder::new(vec![&uni]);
        let text = format!("x{uni}y");
        assert_eq!(
            f.find(&text),
            vec![Found {
                start: 1,
                end: 1 + uni.len(),
                source: 0
            }]
        );
        // 2,000 sources sharing one anchor, none in the text: the checks stop at the budget.
        let base = "z".repeat(70);
        let near: Vec<String> = (0..2_000)
            .map(|i| format!("{base}{i}-{}", "q".repeat(500)))
            .collect();
        let f = Finder::new(near.iter().map(String::as_str).collect());
        let text = base.repeat(50);
        assert!(f.find(&text).is_empty());
    }

    #[test]
    fn a_source_written_again_in_another_form_is_seen_by_its_probe() {
        let tool = r#"[{"description":"Barcelona is a city on the northeastern coast of Spain, the capital of Catalonia."}]"#;
        let f = Finder::new(vec![tool, "short"]);
        let fed_back = "Function Output: [{\"description\": \"Barcelona is a city on the northeastern coast of Spain, the capital of Catalonia.\"}]";
        assert!(f.find(fed_back).is_empty(), "not verbatim");
        let p = Prober::new(&[tool, "short"], &[0, 1]);
        assert_eq!(p.seen(fed_back), vec![0]);
        assert!(p.seen("Barcelona is a city").is_empty());
        assert_eq!(probe("short"), None);
    }
}
