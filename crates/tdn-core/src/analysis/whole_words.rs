//! Finding a word or phrase in text as whole words: not inside a longer word ("booked" is not
//! in "unbooked", "400" not in "4001"). One rule (`glued`) for every caller: one phrase
//! ([`contains_words`]), the first of a list ([`find_phrase`]), or a fixed list in one pass
//! ([`PhraseSet`]: one automaton over the text instead of one search per phrase, and
//! [`PhraseSet::find_any_case`] for text not yet in lower case, without a lower-case copy when
//! the text is ASCII). Built on first use; no I/O.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;

/// The first phrase of `phrases` found in `haystack` (both compared in lower case; `haystack`
/// must already be lower case). Single words match only as whole words.
pub fn find_phrase<'p>(haystack_lower: &str, phrases: &[&'p str]) -> Option<&'p str> {
    phrases
        .iter()
        .copied()
        .find(|p| contains_words(haystack_lower, p))
}

/// True when `needle` occurs in `haystack` not inside a longer word.
pub fn contains_words(haystack: &str, needle: &str) -> bool {
    whole_word_matches(haystack, needle).next().is_some()
}

/// Where `needle` occurs in `haystack` not inside a longer word, left to right (`start..end`
/// byte ranges; occurrences may overlap). None for an empty `needle`.
pub fn whole_word_matches<'h>(
    haystack: &'h str,
    needle: &'h str,
) -> impl Iterator<Item = (usize, usize)> + 'h {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut from = if needle.is_empty() {
        haystack.len() + 1
    } else {
        0
    };
    std::iter::from_fn(move || {
        while let Some(pos) = haystack.get(from..).and_then(|h| h.find(needle)) {
            let start = from + pos;
            let end = start + needle.len();
            from = start + step;
            if !glued(haystack, start, end) {
                return Some((start, end));
            }
        }
        from = haystack.len() + 1;
        None
    })
}

/// A fixed list of phrases (lower case, as `find_phrase` expects) and its automata.
pub struct PhraseSet {
    list: &'static [&'static str],
    /// Over the phrases as written.
    exact: OnceLock<Option<Matcher>>,
    /// Over the phrases holding no upper-case ASCII letter, ASCII case ignored.
    folded: OnceLock<Option<Matcher>>,
}

/// An automaton and, for each of its patterns, the position of the phrase in the list.
struct Matcher {
    ac: AhoCorasick,
    at: Vec<usize>,
}

impl Matcher {
    /// Over the phrases of `list` that `keep` keeps (never the empty one, which matches nothing).
    fn build(list: &[&str], keep: impl Fn(&str) -> bool, fold: bool) -> Option<Matcher> {
        let (at, pats): (Vec<usize>, Vec<&str>) = list
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty() && keep(p))
            .map(|(i, p)| (i, *p))
            .unzip();
        // The lists are the program's own, short and fixed: a DFA, the fastest to search.
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .ascii_case_insensitive(fold)
            .build(&pats)
            .ok()?;
        Some(Matcher { ac, at })
    }

    /// The position in the list of the first phrase found in `text` as whole words.
    fn first(&self, text: &str) -> Option<usize> {
        // Most texts hold no phrase at all: one search (skipping ahead on the phrases' bytes)
        // says so before every match is walked.
        if !self.ac.is_match(text) {
            return None;
        }
        let mut best: Option<usize> = None;
        for m in self.ac.find_overlapping_iter(text) {
            let Some(&i) = self.at.get(m.pattern().as_usize()) else {
                continue;
            };
            if best.is_some_and(|b| b <= i) {
                continue;
            }
            if !glued(text, m.start(), m.end()) {
                best = Some(i);
            }
        }
        best
    }
}

/// True when the match at `start..end` of `text` sits inside a longer word: an alphanumeric
/// end of it touches an alphanumeric character. The one rule of whole-word matching here.
fn glued(text: &str, start: usize, end: usize) -> bool {
    let Some(found) = text.get(start..end) else {
        return true;
    };
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    let first = found.chars().next().is_some_and(char::is_alphanumeric);
    let last = found.chars().next_back().is_some_and(char::is_alphanumeric);
    (first && before.is_some_and(char::is_alphanumeric))
        || (last && after.is_some_and(char::is_alphanumeric))
}

impl PhraseSet {
    /// The set of `list`'s phrases.
    pub const fn new(list: &'static [&'static str]) -> PhraseSet {
        PhraseSet {
            list,
            exact: OnceLock::new(),
            folded: OnceLock::new(),
        }
    }

    /// The first phrase of the list found in `haystack_lower` as whole words:
    /// `find_phrase(haystack_lower, list)`.
    pub fn find(&self, haystack_lower: &str) -> Option<&'static str> {
        let m = self
            .exact
            .get_or_init(|| Matcher::build(self.list, |_| true, false));
        match m {
            Some(m) => m
                .first(haystack_lower)
                .and_then(|i| self.list.get(i).copied()),
            None => find_phrase(haystack_lower, self.list),
        }
    }

    /// [`find`](Self::find) of `text` in lower case. ASCII text is read as it is, its case
    /// ignored: its lower-case copy has the same characters at the same places, and a phrase
    /// holding an upper-case letter matches no lower-case text, so it is left out.
    pub fn find_any_case(&self, text: &str) -> Option<&'static str> {
        if !text.is_ascii() {
            return self.find(&text.to_lowercase());
        }
        let m = self.folded.get_or_init(|| {
            Matcher::build(
                self.list,
                |p| !p.bytes().any(|b| b.is_ascii_uppercase()),
                true,
            )
        });
        match m {
            Some(m) => m.first(text).and_then(|i| self.list.get(i).copied()),
            None => self.find(&text.to_lowercase()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule spelled out on characters: an occurrence counts unless a letter or digit at
    /// either end of it touches a letter or digit outside it.
    fn by_characters(haystack: &str, needle: &str) -> Vec<(usize, usize)> {
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        (0..=haystack.len())
            .filter(|&i| {
                !needle.is_empty() && haystack.get(i..).is_some_and(|h| h.starts_with(needle))
            })
            .map(|i| (i, i + needle.len()))
            .filter(|&(i, e)| {
                let before = haystack[..i].chars().next_back();
                let after = haystack[e..].chars().next();
                let glued_before = alnum(needle.chars().next()) && alnum(before);
                let glued_after = alnum(needle.chars().next_back()) && alnum(after);
                !(glued_before || glued_after)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn matches_are_every_occurrence_not_inside_a_longer_word(
            haystack in "[ab1 .é-]{0,24}",
            needle in "[ab1 .é-]{0,4}",
        ) {
            let got: Vec<_> = whole_word_matches(&haystack, &needle).collect();
            prop_assert_eq!(&got, &by_characters(&haystack, &needle));
            prop_assert_eq!(contains_words(&haystack, &needle), !got.is_empty());
        }

        #[test]
        fn a_phrase_set_finds_what_find_phrase_finds(
            text in "[abAB1 .é-]{0,30}",
            list in proptest::collection::vec("[ab1 .é-]{0,4}", 0..6),
        ) {
            let list: &'static [&'static str] = Vec::leak(
                list.into_iter().map(|p| &*String::leak(p)).collect::<Vec<_>>(),
            );
            let set = PhraseSet::new(list);
            let lower = text.to_lowercase();
            prop_assert_eq!(set.find(&lower), find_phrase(&lower, list));
            prop_assert_eq!(set.find_any_case(&text), find_phrase(&lower, list));
        }
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(contains_words("your order is booked.", "booked"));
        assert!(!contains_words("unbooked", "booked"));
        assert!(contains_words("error 400: bad", "400"));
        assert!(!contains_words("error 4001", "400"));
        const DECLINES: &[&str] = &["no thank", "no thanks", "not interested"];
        assert_eq!(
            find_phrase("no thanks, i'll keep it", DECLINES),
            Some("no thanks")
        );
        assert_eq!(find_phrase("sounds good", DECLINES), None);
    }

    const LIST: &[&str] = &[
        "shall i",
        "confirm",
        "i",
        "",
        "go ahead?",
        "Upper",
        "400",
        "café",
        "a-b",
        "confirm",
    ];
    static SET: PhraseSet = PhraseSet::new(LIST);

    #[test]
    fn answers_as_find_phrase_does_in_any_case() {
        let texts = [
            "",
            "Shall I confirm?",
            "unconfirmed, reconfirm, confirmed",
            "shall i",
            "go ahead? go ahead?x",
            "upper case Upper",
            "error 4001 and 400: done",
            "CAFÉ au lait",
            "le café",
            "a-b-c xa-b a-b",
            "I",
            "ii i",
            "\u{212A}onfirm",
            "ÀI",
            "confirm\u{301}",
            "x\u{e9}confirm",
        ];
        for t in texts {
            let lower = t.to_lowercase();
            assert_eq!(SET.find(&lower), find_phrase(&lower, LIST), "{t:?}");
            assert_eq!(SET.find(t), find_phrase(t, LIST), "{t:?} as written");
            assert_eq!(SET.find_any_case(t), find_phrase(&lower, LIST), "{t:?}");
        }
        assert_eq!(SET.find_any_case("Please CONFIRM."), Some("confirm"));
        assert_eq!(SET.find_any_case("reconfirmation"), None);
        assert_eq!(SET.find_any_case("Shall I?"), Some("shall i"));
    }
}
