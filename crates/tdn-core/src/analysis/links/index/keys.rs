//! The keys of runs of words (see the parent module): a text's words, each word's key, and
//! the key of a run of words, built word by word so that the scan extends a run by one word
//! at the cost of one multiplication. Equal runs give equal keys in a value and in a scanned
//! text. Pure; no I/O.

use crate::analysis::links::tokens::{ALPHANUMERIC, HIGH, class_of};
use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;

/// A word of a value or of a scanned text: bytes `a..b`, and its [`word_key`].
#[derive(Clone, Copy, Debug)]
pub(in crate::analysis::links) struct Word {
    pub(super) a: usize,
    pub(super) b: usize,
    pub(super) key: u64,
}

/// The 32 bits kept of a run of words' key ([`word_key`], [`extend`]).
pub(super) fn kept_key(key: u64) -> u32 {
    (key >> 32) as u32 ^ key as u32
}

/// The key of one word: the key of a run of one word.
pub(super) fn word_key(hasher: &DefaultHashBuilder, word: &[u8]) -> u64 {
    hasher.hash_one(word)
}

/// The key of what lies between two words (a few bytes, most often one space): the bytes
/// themselves up to seven, else their hash.
pub(super) fn sep_key(hasher: &DefaultHashBuilder, sep: &[u8]) -> u64 {
    if sep.len() <= 7 {
        sep.iter()
            .fold(sep.len() as u64, |k, &b| k << 8 | u64::from(b))
    } else {
        hasher.hash_one(sep) | 1 << 63
    }
}

/// The key of a run of words `key` followed by the separator `sep` ([`sep_key`]) and the word
/// `word` ([`word_key`]): equal texts give equal keys, whichever text they lie in.
#[inline]
pub(super) fn extend(key: u64, sep: u64, word: u64) -> u64 {
    let x =
        u128::from(key ^ sep ^ 0x243f_6a88_85a3_08d3) * u128::from(word ^ 0x1319_8a2e_0370_7344);
    (x >> 64) as u64 ^ x as u64
}

/// The key of the run of `len` words of `words` from the `first` (their bytes, and what lies
/// between them, read in `bytes`, the text the words are ranges of; their own keys are not
/// read), after calling `shorter` with the key of each shorter run from the same word, shortest
/// first.
pub(super) fn run_key(
    hasher: &DefaultHashBuilder,
    bytes: &[u8],
    words: &[Word],
    first: usize,
    len: usize,
    mut shorter: impl FnMut(u64),
) -> u64 {
    let mut run = words.iter().skip(first).take(len);
    let Some(start) = run.next() else {
        return 0;
    };
    let mut key = word_key(hasher, bytes.get(start.a..start.b).unwrap_or_default());
    let mut before = start.b;
    for w in run {
        shorter(key);
        key = extend(
            key,
            sep_key(hasher, bytes.get(before..w.a).unwrap_or_default()),
            word_key(hasher, bytes.get(w.a..w.b).unwrap_or_default()),
        );
        before = w.b;
    }
    key
}

/// The character at byte `i` of `text`, whether it is alphanumeric, and its length in bytes
/// (an ASCII byte is read as it is).
#[inline]
fn alphanumeric_at(text: &str, i: usize) -> Option<(bool, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b.is_ascii() {
        return Some((b.is_ascii_alphanumeric(), 1));
    }
    let c = text.get(i..)?.chars().next()?;
    Some((c.is_alphanumeric(), c.len_utf8()))
}

/// The words of `text`: longest runs of alphanumeric characters, as byte ranges (see
/// [`each_word`]).
#[cfg(test)]
pub(super) fn word_runs(text: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    each_word(text, |a, b| out.push((a, b)));
}

/// Calls `f` with each word of `text` (a longest run of alphanumeric characters) as a byte
/// range. ASCII bytes are told by their class in a table (issue 11); a character is decoded
/// only where one starts with a byte of 128 or more.
#[inline]
pub(super) fn each_word(text: &str, mut f: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        let start = loop {
            let Some(&b) = bytes.get(i) else {
                return;
            };
            let c = class_of(b);
            if c & ALPHANUMERIC != 0 {
                break i;
            }
            if c & HIGH == 0 {
                i += 1;
                continue;
            }
            match alphanumeric_at(text, i) {
                None => return,
                Some((true, _)) => break i,
                Some((false, len)) => i += len,
            }
        };
        while let Some(&b) = bytes.get(i) {
            let c = class_of(b);
            if c & ALPHANUMERIC != 0 {
                i += 1;
                continue;
            }
            if c & HIGH == 0 {
                break;
            }
            match alphanumeric_at(text, i) {
                Some((true, len)) => i += len,
                _ => break,
            }
        }
        f(start, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The words as a plain reading finds them, character by character.
    fn words_by_chars(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            if c.is_alphanumeric() {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                out.push((s, i));
            }
        }
        if let Some(s) = start {
            out.push((s, text.len()));
        }
        out
    }

    proptest! {
        #[test]
        fn word_runs_read_what_decoding_every_character_reads(
            text in "[a-c0-9 .\u{e9}\u{4e00}\u{a0}\u{2014}\u{0663}]{0,40}"
        ) {
            let mut got = Vec::new();
            word_runs(&text, &mut got);
            prop_assert_eq!(got, words_by_chars(&text));
        }
    }
}
