//! Finding retrieved documents and tool results inside the text of the messages a model was
//! sent, by content: each source's text occurring verbatim in a message.
//!
//! One Aho-Corasick automaton over an anchor of each source (its first [`ANCHOR`] bytes), so the
//! automaton stays small however long the documents are; each anchor hit is checked against the
//! sources that start with it, longest first, and the search goes on after a match. Each distinct message text is searched once (a conversation sends its history
//! again in every call), in time linear in the text; the checks of one text have a budget, so
//! hostile near-duplicates cannot make it quadratic.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Input, MatchKind};
use hashbrown::HashMap;

/// Bytes of a source's text its anchor holds (cut back to a `char` boundary).
const ANCHOR: usize = 32;

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
    /// The automaton over the distinct anchors; `None` when no source is long enough.
    anchors: Option<AhoCorasick>,
    /// For each anchor, the sources that start with it, longest first.
    by_anchor: Vec<Vec<usize>>,
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
        let mut anchor_of: HashMap<&'a str, usize> = HashMap::new();
        let mut anchors: Vec<&'a str> = Vec::new();
        let mut by_anchor: Vec<Vec<usize>> = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            whole.entry(*t).or_insert(i);
            if t.trim().len() < MIN_FOUND {
                continue;
            }
            let a = anchor(t);
            let slot = *anchor_of.entry(a).or_insert_with(|| {
                anchors.push(a);
                by_anchor.push(Vec::new());
                anchors.len() - 1
            });
            if let Some(list) = by_anchor.get_mut(slot) {
                list.push(i);
            }
        }
        for list in &mut by_anchor {
            list.sort_by_key(|&i| std::cmp::Reverse(texts.get(i).map_or(0, |t| t.len())));
            list.dedup_by_key(|i| texts.get(*i).copied());
        }
        Finder {
            anchors: automaton(&anchors),
            texts,
            by_anchor,
            whole,
        }
    }

    /// The source whose whole text is `text`.
    pub fn whole(&self, text: &str) -> Option<usize> {
        self.whole.get(text).copied()
    }

    /// The sources found in `text`, in order, none overlapping: at each place the longest
    /// source that starts there, the earlier place first. The automaton finds the leftmost
    /// anchor; a source found there is taken and the search goes on after it, else the search
    /// goes on one byte later (so an anchor inside a failed one is still seen).
    pub fn find(&self, text: &str) -> Vec<Found> {
        let Some(ac) = &self.anchors else {
            return Vec::new();
        };
        let mut budget = text.len().saturating_mul(CHECK_BUDGET_PER_BYTE);
        let mut out: Vec<Found> = Vec::new();
        let mut from = 0;
        while from < text.len() && budget > 0 {
            let Some(m) = ac.find(Input::new(text).span(from..text.len())) else {
                break;
            };
            let start = m.start();
            let rest = text.get(start..).unwrap_or_default();
            let mut taken = None;
            for &s in self
                .by_anchor
                .get(m.pattern().as_usize())
                .into_iter()
                .flatten()
            {
                let Some(src) = self.texts.get(s) else {
                    continue;
                };
                if src.len() > rest.len() {
                    continue;
                }
                // What comparing costs is what it reads: up to the first difference.
                let same = rest
                    .bytes()
                    .zip(src.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                budget = budget.saturating_sub(same + 1);
                if same == src.len() {
                    taken = Some((s, start + src.len()));
                    break;
                }
                if budget == 0 {
                    break;
                }
            }
            match taken {
                Some((source, end)) => {
                    out.push(Found { start, end, source });
                    from = end;
                }
                None => {
                    from = start + 1;
                    while !text.is_char_boundary(from) {
                        from += 1;
                    }
                }
            }
        }
        out
    }
}

/// Sources that may sit in a text in another form, by a window of their plain text.
pub struct Prober {
    probes: Option<AhoCorasick>,
    source: Vec<usize>,
}

impl Prober {
    /// Probes of the sources `which` of `texts` (those long enough to have one).
    pub fn new(texts: &[&str], which: &[usize]) -> Prober {
        let mut probe_texts: Vec<&str> = Vec::new();
        let mut source = Vec::new();
        let mut seen_probe: HashMap<&str, ()> = HashMap::new();
        for &i in which {
            if let Some(p) = texts.get(i).and_then(|t| probe(t))
                && seen_probe.insert(p, ()).is_none()
            {
                probe_texts.push(p);
                source.push(i);
            }
        }
        Prober {
            probes: automaton(&probe_texts),
            source,
        }
    }

    /// The sources a probe of which occurs in `text`: text that holds the source, perhaps
    /// written again in another form (indented, escaped otherwise).
    pub fn seen<'p>(&'p self, text: &'p str) -> impl Iterator<Item = usize> + 'p {
        self.probes
            .iter()
            .flat_map(move |ac| ac.find_iter(text))
            .filter_map(|m| self.source.get(m.pattern().as_usize()).copied())
    }
}

/// One automaton for `patterns` (leftmost-first, so a search can skip what it has passed).
fn automaton(patterns: &[&str]) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostFirst)
        .build(patterns)
        .ok()
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

/// A text's anchor: its first [`ANCHOR`] bytes, cut back to a `char` boundary.
fn anchor(t: &str) -> &str {
    let mut end = t.len().min(ANCHOR);
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    t.get(..end).unwrap_or(t)
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
        assert_eq!(p.seen(fed_back).collect::<Vec<_>>(), vec![0]);
        assert_eq!(p.seen("Barcelona is a city").count(), 0);
        assert_eq!(probe("short"), None);
    }
}
