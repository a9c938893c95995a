//! What the evidence index reads of a passage: the claims' terms it holds, in the order
//! [`each_term`] and then [`each_id_part`] give them, and the numbers [`each_number`] gives,
//! each as the claims' term it is (or none of them). One pass over the tokens, not three, and
//! what a token gives is kept by its text: in agent text a few words carry most of it, so most
//! tokens are one look-up instead of lower-casing, stemming and two set look-ups (issue 28).
//! A passage made of three sentences already read is their three readings put together.
//!
//! The plain reading ([`each_term`], [`each_id_part`], [`each_number`] on the passage's whole
//! text) stays the reference: the tests below compare the two on random texts.
//!
//! [`each_term`]: super::words::each_term
//! [`each_id_part`]: super::words::each_id_part
//! [`each_number`]: super::words::each_number

use super::words::{
    id_part_terms, money_reads_across, number_token_key, token_terms, written_as_money,
};
use crate::analysis::links::tokens::{TokenClass, tokens};
use hashbrown::{HashMap, HashSet};

/// At most this many distinct token texts are remembered (a run of attacker text of ever new
/// words is read without the memory, as before).
const MAX_REMEMBERED: usize = 1 << 16;
/// Token texts longer than this are read every time (ids and words are shorter).
const MAX_REMEMBERED_BYTES: usize = 48;

/// What one number of a passage is to the claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Number {
    /// A number the claims hold: the index of its term among the wanted ones.
    Wanted(u32),
    /// A number no claim names.
    Other,
}

/// The reading of one passage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// The wanted terms its tokens give, in order, repeats included (indexes into the wanted
    /// terms).
    pub main: Vec<u32>,
    /// The wanted terms inside its ids, in order.
    pub parts: Vec<u32>,
    /// Its numbers, in order, each with whether it is written as money.
    pub numbers: Vec<(Number, bool)>,
}

/// What one token text gives, kept by the text.
#[derive(Clone, Copy, Debug)]
struct Given {
    /// Where its wanted terms start in `Reader::arena`: `main` of them, then `parts`.
    start: u32,
    main: u16,
    parts: u16,
    /// A number token whose digits are one number: what it is to the claims.
    number: Option<Number>,
}

/// Reads passages for a fixed set of wanted terms.
#[derive(Debug, Default)]
pub(super) struct Reader {
    /// The wanted terms, each with its index.
    wanted: HashMap<String, u32>,
    /// The wanted terms by index.
    keys: Vec<String>,
    given: HashMap<Box<str>, Given>,
    arena: Vec<u32>,
    key: String,
    scratch: String,
}

impl Reader {
    /// A reader of the terms in `wanted`.
    pub(super) fn new(wanted: &HashSet<String>) -> Reader {
        let mut keys: Vec<String> = wanted.iter().cloned().collect();
        keys.sort_unstable();
        let wanted = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        Reader {
            wanted,
            keys,
            given: HashMap::new(),
            arena: Vec::new(),
            key: String::new(),
            scratch: String::new(),
        }
    }

    /// The wanted term of index `i`.
    pub(super) fn key(&self, i: u32) -> &str {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.keys.get(i))
            .map_or("", String::as_str)
    }

    /// The reading of `text`.
    pub(super) fn read(&mut self, text: &str) -> Reading {
        let mut out = Reading::default();
        for t in tokens(text) {
            let (g, kept) = match self.given.get(t.text) {
                Some(g) => (*g, true),
                None => {
                    let g = self.give(&t);
                    let keep =
                        self.given.len() < MAX_REMEMBERED && t.text.len() <= MAX_REMEMBERED_BYTES;
                    if keep {
                        self.given.insert(t.text.into(), g);
                    }
                    (g, keep)
                }
            };
            self.push_given(&g, &mut out);
            if let Some(n) = g.number {
                out.numbers.push((n, written_as_money(text, &t)));
            }
            if !kept {
                // Not remembered: its terms need not stay in the arena.
                self.arena
                    .truncate(usize::try_from(g.start).unwrap_or(usize::MAX));
            }
        }
        out
    }

    fn push_given(&self, g: &Given, out: &mut Reading) {
        let start = usize::try_from(g.start).unwrap_or(usize::MAX);
        let main = start + usize::from(g.main);
        let end = main + usize::from(g.parts);
        out.main
            .extend_from_slice(self.arena.get(start..main).unwrap_or(&[]));
        out.parts
            .extend_from_slice(self.arena.get(main..end).unwrap_or(&[]));
    }

    /// What token `t` gives, its terms added to the arena.
    fn give(&mut self, t: &crate::analysis::links::tokens::Token<'_>) -> Given {
        let start = self.arena.len();
        let wanted = &self.wanted;
        let arena = &mut self.arena;
        // The kind of a term plays no part in the index: a name is looked up as a word.
        token_terms(t, false, &mut self.key, &mut self.scratch, &mut |k, _| {
            arena.extend(wanted.get(k).copied());
        });
        let main = arena.len() - start;
        id_part_terms(t, &mut self.key, &mut self.scratch, &mut |k, _| {
            arena.extend(wanted.get(k).copied());
        });
        let parts = arena.len() - start - main;
        let number = (t.class == TokenClass::Number
            && number_token_key(t, &mut self.key, &mut self.scratch))
        .then(|| {
            self.wanted
                .get(self.key.as_str())
                .map_or(Number::Other, |&w| Number::Wanted(w))
        });
        Given {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            main: u16::try_from(main).unwrap_or(u16::MAX),
            parts: u16::try_from(parts).unwrap_or(u16::MAX),
            number,
        }
    }
}

/// The reading of `sentences` joined by single spaces, from the readings of each (`readings`,
/// in the same order), or `None` when a number by a join may read otherwise (a sentence that
/// ends in a digit or a currency sign): then the joined text is read itself. No token holds a
/// space, so the joined text's tokens are the sentences' tokens.
pub(super) fn joined(sentences: &[&str], readings: &[&Reading]) -> Option<Reading> {
    let (_, first) = sentences.split_last()?;
    if first
        .iter()
        .any(|s| s.chars().next_back().is_some_and(money_reads_across))
    {
        return None;
    }
    let mut out = Reading::default();
    for r in readings {
        out.main.extend_from_slice(&r.main);
    }
    for r in readings {
        out.parts.extend_from_slice(&r.parts);
    }
    for r in readings {
        out.numbers.extend_from_slice(&r.numbers);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::words::{each_id_part, each_number, each_term};
    use super::*;
    use proptest::prelude::*;

    /// The plain reading as keys: every wanted term of `each_term`, then of `each_id_part`,
    /// and every number of `each_number` (its key when wanted).
    fn plain(text: &str, wanted: &HashSet<String>) -> (Vec<String>, Vec<(Option<String>, bool)>) {
        let mut terms = Vec::new();
        each_term(text, |k, _| {
            if wanted.contains(k) {
                terms.push(k.to_owned());
            }
        });
        each_id_part(text, |k, _| {
            if wanted.contains(k) {
                terms.push(k.to_owned());
            }
        });
        let mut numbers = Vec::new();
        each_number(text, |n, money| {
            numbers.push((wanted.contains(n).then(|| n.to_owned()), money));
        });
        (terms, numbers)
    }

    fn as_keys(r: &Reader, got: &Reading) -> (Vec<String>, Vec<(Option<String>, bool)>) {
        let terms = got
            .main
            .iter()
            .chain(&got.parts)
            .map(|&i| r.key(i).to_owned())
            .collect();
        let numbers = got
            .numbers
            .iter()
            .map(|&(n, money)| match n {
                Number::Wanted(i) => (Some(r.key(i).to_owned()), money),
                Number::Other => (None, money),
            })
            .collect();
        (terms, numbers)
    }

    const WORDS: &[&str] = &[
        "Refund",
        "refunds",
        "refunded",
        "policy",
        "policies",
        "order",
        "ORD-77",
        "ord_12",
        "the",
        "is",
        "$",
        "€",
        "120",
        "1,200.50",
        "3.1.3",
        "dollars",
        "Dana",
        "K\u{212a}g",
        "cust7@example.com",
        "2026-10-25",
        "x-ray",
        "don't",
        "é",
        "ship-123",
        "12",
    ];
    const GAPS: &[&str] = &[" ", ". ", ", ", "\n", "$", " $", ": ", "-", "_", "; "];

    fn text_of(parts: &[(usize, usize)]) -> String {
        parts
            .iter()
            .map(|&(w, g)| format!("{}{}", WORDS[w % WORDS.len()], GAPS[g % GAPS.len()]))
            .collect()
    }

    fn wanted_of(picks: &[usize]) -> HashSet<String> {
        // Keys as the claims give them (lower case, stemmed, canonical numbers).
        let all: Vec<String> = WORDS
            .iter()
            .flat_map(|w| super::super::words::terms(w))
            .map(|t| t.key)
            .chain(["ord".to_owned(), "77".to_owned(), "1200.5".to_owned()])
            .collect();
        picks.iter().map(|&p| all[p % all.len()].clone()).collect()
    }

    proptest! {
        /// One pass with remembered tokens reads what the three plain readings read.
        #[test]
        fn a_reading_is_the_plain_reading(
            texts in proptest::collection::vec(
                proptest::collection::vec((0usize..64, 0usize..16), 0..30), 1..4),
            picks in proptest::collection::vec(0usize..64, 0..12),
        ) {
            let wanted = wanted_of(&picks);
            let mut r = Reader::new(&wanted);
            // Several texts through one reader: later ones read remembered tokens.
            for parts in &texts {
                let text = text_of(parts);
                let got = r.read(&text);
                prop_assert_eq!(as_keys(&r, &got), plain(&text, &wanted), "{:?}", text);
            }
        }

        /// Three sentences' readings put together are the reading of the three joined, or
        /// nothing when a number by a join may read otherwise.
        #[test]
        fn joined_sentences_read_as_their_text(
            sentences in proptest::collection::vec(
                proptest::collection::vec((0usize..64, 0usize..16), 1..10), 3..=3),
            picks in proptest::collection::vec(0usize..64, 0..12),
        ) {
            let wanted = wanted_of(&picks);
            let mut r = Reader::new(&wanted);
            let texts: Vec<String> = sentences.iter().map(|p| text_of(p).trim().to_owned()).collect();
            prop_assume!(texts.iter().all(|t| !t.is_empty()));
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let readings: Vec<Reading> = refs.iter().map(|t| r.read(t)).collect();
            let whole = refs.join(" ");
            let want = plain(&whole, &wanted);
            match joined(&refs, &readings.iter().collect::<Vec<_>>()) {
                Some(got) => prop_assert_eq!(as_keys(&r, &got), want, "{:?}", whole),
                None => prop_assert!(refs[..2].iter().any(|s| s
                    .chars()
                    .next_back()
                    .is_some_and(money_reads_across))),
            }
        }
    }

    #[test]
    fn a_number_by_a_join_is_read_in_the_joined_text() {
        let wanted: HashSet<String> = ["120".to_owned()].into();
        let mut r = Reader::new(&wanted);
        let s = ["It costs 120", "dollars now."];
        let readings: Vec<Reading> = s.iter().map(|t| r.read(t)).collect();
        assert_eq!(readings[0].numbers, vec![(Number::Wanted(0), false)]);
        assert!(joined(&s, &readings.iter().collect::<Vec<_>>()).is_none());
        assert_eq!(
            r.read(&s.join(" ")).numbers,
            vec![(Number::Wanted(0), true)]
        );
    }
}
