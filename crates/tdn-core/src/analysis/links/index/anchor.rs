//! The choice of a new value's anchor (see the parent module, issue 28): a run of whole words of
//! the value that is rare in the run's text. How often a run of words shows in the text is
//! estimated from how common its words are among the values so far: the product of their
//! shares, times the words to be scanned. The shortest run expected to show at most about once,
//! together with the values already filed under it, is the anchor; where no run is that rare
//! (a short value of common words), the rarest. Pure; no I/O.

use super::Word;
use crate::analysis::links::values::ValueKind;
use std::ops::Range;

/// Most words in an anchor: enough for a run of words drawn from a handful of words to be rare
/// in a run of millions of words; the scan follows a run of words no further.
pub(super) const MAX_ANCHOR_WORDS: usize = 12;

/// The expected checks an anchor may cost over the whole scan, at most, as [`log2q`] (0: one):
/// the places its run of words shows in the scanned text, times the values filed under it.
const RARE: i32 = 0;

/// Candidates of one length looked up at most, rarest first, before longer runs are tried.
const LOOKS_PER_LENGTH: usize = 4;

/// Slots of the word counts: a fixed table, words sharing a slot counted together (which only
/// makes a rare word look a little more common).
const COUNT_SLOTS: usize = 1 << 18;

/// The slot of a word's count: a hash of its bytes with a fixed seed, eight at a time, so the
/// counts (and so the anchors chosen) are the same in every process, whatever the seed of the
/// tables' hashes. (A text written to crowd one slot only makes its words look common, and
/// their anchors longer.)
pub(super) fn count_slot(word: &[u8]) -> u32 {
    #[inline]
    fn mix(h: u64, x: u64) -> u64 {
        let m = u128::from(h ^ x) * u128::from(0x2d35_8dcc_aa6c_78a5u64);
        (m >> 64) as u64 ^ m as u64
    }
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ word.len() as u64;
    let mut rest = word;
    while let Some((eight, tail)) = rest.split_first_chunk::<8>() {
        h = mix(h, u64::from_le_bytes(*eight));
        rest = tail;
    }
    if !rest.is_empty() {
        h = mix(h, rest.iter().fold(0, |x, &b| x << 8 | u64::from(b)));
    }
    (h >> 40) as u32 & (COUNT_SLOTS as u32 - 1)
}

/// `log2(x)` in 256ths, for `x` of 1 or more (0 for 0): the position of the top bit and the
/// next eight bits as its fraction (within 0.09 of the true value, which an estimate of how
/// often a run of words shows needs no closer).
pub(super) fn log2q(x: u64) -> i32 {
    if x == 0 {
        return 0;
    }
    let top = 63 - x.leading_zeros();
    let frac = if top >= 8 {
        (x >> (top - 8)) & 0xff
    } else {
        (x << (8 - top)) & 0xff
    };
    (top as i32) * 256 + frac as i32
}

/// How common each word of the values added so far is, and how many words will be scanned.
#[derive(Default)]
pub(super) struct Rarity {
    /// By slot of the word's key; allocated with the first word (untouched pages cost nothing).
    counts: Vec<u32>,
    counted: u64,
    /// `log2q` of the words to be scanned (0 until told).
    log_scanned: i32,
}

impl Rarity {
    /// Notes the bytes to be scanned: about one word in every six bytes of text.
    pub(super) fn expect_scanned(&mut self, bytes: usize) {
        self.log_scanned = log2q(u64::try_from(bytes / 6).unwrap_or(u64::MAX).max(1));
    }

    /// `log2q` of the words to be scanned.
    pub(super) fn log_scanned(&self) -> i32 {
        self.log_scanned
    }

    /// Counts one word of a new value, by its [`count_slot`].
    pub(super) fn add(&mut self, slot: u32) {
        if self.counts.is_empty() {
            self.counts = vec![0; COUNT_SLOTS];
        }
        if let Some(c) = self.counts.get_mut(slot as usize) {
            *c = c.saturating_add(1);
        }
        self.counted += 1;
    }

    /// `log2q` of the share of the word of [`count_slot`] `slot` in the words counted (0 or
    /// less).
    pub(super) fn log_share(&self, slot: u32) -> i32 {
        let count = self.counts.get(slot as usize).copied().unwrap_or(0);
        log2q(u64::from(count.max(1))) - log2q(self.counted.max(1))
    }
}

/// The words of a value (of `len` bytes) that any occurrence shows whole, as a range of
/// `words` (see the parent module): all of an id, date or number; the inner ones of a
/// sentence.
pub(super) fn whole_words(len: usize, kind: ValueKind, words: &[Word]) -> Range<usize> {
    if kind != ValueKind::Sentence {
        return 0..words.len();
    }
    let start = usize::from(words.first().is_some_and(|w| w.a == 0));
    let end = words.len() - usize::from(words.last().is_some_and(|w| w.b == len));
    start..end.max(start)
}

/// A chosen anchor: `len` words from the `first`, with what the look-up found for it.
#[derive(Debug)]
pub(super) struct Choice<T> {
    pub(super) first: usize,
    pub(super) len: usize,
    pub(super) found: T,
}

/// The anchor of a value whose whole words have the shares `shares` (`log2q`, from
/// [`Rarity::log_share`]), in a scan of `log_scanned` words (`log2q`); `look(first, len)`
/// gives the run's load (the values filed under it so far) and what it found. `windows` is
/// scratch. None when there is no whole word.
///
/// A run's expected places in the text are `log_scanned` plus its words' shares; its cost,
/// those places times its load and one. Runs are tried shortest first; of one length, those
/// expected at most [`RARE`] times are looked up rarest first (at most
/// [`LOOKS_PER_LENGTH`]), and the first whose cost is at most [`RARE`] is the anchor; else the
/// cheapest looked up so far, once a longer one is no better. When no run up to
/// [`MAX_ANCHOR_WORDS`] is expected that rarely, the rarest run (the shortest, then the first,
/// of those) is the anchor.
pub(super) fn choose<T>(
    shares: &[i32],
    log_scanned: i32,
    windows: &mut Vec<(i32, u32)>,
    mut look: impl FnMut(usize, usize) -> (u32, T),
) -> Option<Choice<T>> {
    let words = shares.len();
    let mut best: Option<(i32, Choice<T>)> = None;
    // (expected places, first, len) of the rarest run
    let mut rarest: Option<(i32, usize, usize)> = None;
    for len in 1..=words.min(MAX_ANCHOR_WORDS) {
        windows.clear();
        let mut sum: i32 = shares.iter().take(len).sum();
        for first in 0..=words - len {
            if first > 0 {
                let gone = shares.get(first - 1).copied().unwrap_or(0);
                let new = shares.get(first + len - 1).copied().unwrap_or(0);
                sum = sum - gone + new;
            }
            let places = log_scanned.saturating_add(sum);
            if rarest.is_none_or(|(r, _, _)| places < r) {
                rarest = Some((places, first, len));
            }
            if places <= RARE {
                windows.push((places, u32::try_from(first).unwrap_or(u32::MAX)));
            }
        }
        // (the few rarest in order; a long value's many windows are not all sorted)
        if windows.len() > LOOKS_PER_LENGTH {
            windows.select_nth_unstable(LOOKS_PER_LENGTH - 1);
            windows.truncate(LOOKS_PER_LENGTH);
        }
        windows.sort_unstable();
        for &(places, first) in windows.iter() {
            let first = first as usize;
            let (load, found) = look(first, len);
            let cost = places.saturating_add(log2q(u64::from(load) + 1));
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, Choice { first, len, found }));
            }
            if cost <= RARE {
                break;
            }
        }
        if best.as_ref().is_some_and(|(c, _)| *c <= RARE) {
            break;
        }
    }
    if let Some((_, choice)) = best {
        return Some(choice);
    }
    let (_, first, len) = rarest?;
    let (_, found) = look(first, len);
    Some(Choice { first, len, found })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2q_is_within_a_tenth_of_log2() {
        for x in [1u64, 2, 3, 5, 7, 100, 255, 256, 257, 1_000_003, u64::MAX] {
            let want = (x as f64).log2() * 256.0;
            let got = f64::from(log2q(x));
            assert!(
                (got - want).abs() <= 0.09 * 256.0,
                "{x}: {got} against {want}"
            );
        }
        assert!(log2q(1000) < log2q(1001) || log2q(1000) == log2q(1001));
        assert!(log2q(999) <= log2q(1000));
    }

    /// A run of one word with a share of 2^-30 in a scan of 2^20 words is expected 2^-10
    /// times: it is the anchor, whatever the common words around it.
    #[test]
    fn a_rare_word_is_the_anchor_on_its_own() {
        let shares = [-5 * 256, -30 * 256, -5 * 256, -5 * 256];
        let mut looked = Vec::new();
        let c = choose(&shares, 20 * 256, &mut Vec::new(), |first, len| {
            looked.push((first, len));
            (0, ())
        });
        let c = c.unwrap_or_else(|| panic!("an anchor"));
        assert_eq!((c.first, c.len), (1, 1));
        assert_eq!(looked, [(1, 1)]);
    }

    /// Words of a share of 2^-5 in a scan of 2^20 words: a run of four is expected once, so
    /// runs of four are the shortest rare ones; a loaded one gives way to the next.
    #[test]
    fn common_words_make_a_run_long_enough_to_be_rare_and_the_least_loaded() {
        let shares = [-5 * 256; 7];
        let mut looked = Vec::new();
        let c = choose(&shares, 20 * 256, &mut Vec::new(), |first, len| {
            looked.push((first, len));
            (if first == 0 { 3 } else { 0 }, first)
        });
        let c = c.unwrap_or_else(|| panic!("an anchor"));
        assert_eq!((c.first, c.len, c.found), (1, 4, 1));
        assert_eq!(looked, [(0, 4), (1, 4)]);
    }

    /// When every rare run of one length is loaded, a longer run is taken if it costs less.
    #[test]
    fn loaded_runs_give_way_to_longer_ones() {
        let shares = [-5 * 256; 6];
        let c = choose(&shares, 20 * 256, &mut Vec::new(), |_, len| {
            (if len == 4 { 1_000 } else { 0 }, ())
        });
        let c = c.unwrap_or_else(|| panic!("an anchor"));
        assert_eq!((c.first, c.len), (0, 5));
    }

    /// A value of two common words is never rare: the rarer run of both is its anchor.
    #[test]
    fn where_nothing_is_rare_the_rarest_run_is_the_anchor() {
        let shares = [-3 * 256, -2 * 256];
        let c = choose(&shares, 20 * 256, &mut Vec::new(), |_, _| (7, ()));
        let c = c.unwrap_or_else(|| panic!("an anchor"));
        assert_eq!((c.first, c.len), (0, 2));
        assert!(choose(&[], 0, &mut Vec::new(), |_, _| (0, ())).is_none());
    }

    #[test]
    fn a_sentence_has_its_inner_words_whole_and_an_id_all_of_its_words() {
        let text = "Refund the order today.";
        let mut words = Vec::new();
        super::super::keys::each_word(text, |a, b| words.push(Word { a, b, key: 0 }));
        assert_eq!(whole_words(text.len(), ValueKind::Sentence, &words), 1..4);
        assert_eq!(whole_words(text.len(), ValueKind::Id, &words), 0..4);
        let bare = "Refund the order today";
        assert_eq!(whole_words(bare.len(), ValueKind::Sentence, &words), 1..3);
        let one = [Word { a: 0, b: 5, key: 0 }];
        assert_eq!(whole_words(5, ValueKind::Sentence, &one), 1..1);
    }
}
