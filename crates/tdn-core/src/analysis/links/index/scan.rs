//! The scan: every occurrence of a known value in a step's text. Each word of the text is looked
//! up as an anchor, and so is each run of words from it while the run begins some anchor of
//! more words (a bit set tells, issue 28); only the values filed under an anchor found are
//! checked against the text. Values without an anchor are found by the rolling hash of their
//! first bytes (see the parent module for why an anchor is always seen as whole words).
//!
//! Against hostile runs, at most [`LINK_CHECKS_PER_BYTE`] candidates per byte of the scanned
//! text are checked (and at least [`LINK_MIN_CHECKS`]), so a scan costs a bounded multiple of
//! the text whatever the values. Pure; no I/O.

use super::anchor::MAX_ANCHOR_WORDS;
use super::keys::{Word, each_word, extend, kept_key, sep_key, word_key};
use super::{ANCHOR_BIT, HEAD_BIT, Index, ROLL_BASE, roll_hash};
use crate::analysis::links::texts::Text;
use crate::analysis::links::values::ValueKind;

/// Candidate values checked per byte of a scanned text, at most.
pub const LINK_CHECKS_PER_BYTE: usize = 16;
/// Candidate values checked in one scanned text, at least (a short text gets this many).
pub const LINK_MIN_CHECKS: usize = 4_096;

/// An occurrence of a value in a scanned text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::analysis::links) struct Hit {
    /// Byte offset just past the match.
    pub end: u32,
    /// Length of the match in bytes.
    pub len: u32,
    /// The value.
    pub value: u32,
}

impl Index<'_> {
    /// Every occurrence of a value in `text` (ids, dates and numbers only where they do not
    /// sit inside a longer word or number), sorted by end, longer first at one end.
    #[cfg(test)]
    pub(in crate::analysis::links) fn scan(
        &self,
        text: &str,
        words: &mut Vec<Word>,
        out: &mut Vec<Hit>,
    ) {
        out.clear();
        let mut budget = budget_of(text.len());
        if self.has_anchors() {
            self.scan_anchors(text, 0, words, &mut budget, out);
        }
        if !self.loose.is_empty() {
            self.scan_loose(text, &mut budget, out);
        }
        sort_hits(out);
    }

    /// [`Index::scan`] of `text` joined, read leaf by leaf (issue 11: the text was joined into
    /// a buffer first, a copy of every input). The same hits: no value holds a newline, so none
    /// crosses the newline between two leaves, and a word's neighbours across it are no
    /// anchor's. Only the values without an anchor, when there are, are looked for in the text
    /// joined (into `joined`), so that their checks count against the budget as they did.
    pub(in crate::analysis::links) fn scan_text(
        &self,
        text: Text<'_>,
        joined: &mut String,
        words: &mut Vec<Word>,
        out: &mut Vec<Hit>,
    ) {
        out.clear();
        let mut budget = budget_of(text.len());
        if self.has_anchors() {
            let mut at = 0usize;
            for leaf in text.leaves() {
                let Ok(shift) = u32::try_from(at) else {
                    break;
                };
                self.scan_anchors(leaf, shift, words, &mut budget, out);
                if budget == 0 {
                    break;
                }
                at += leaf.len() + 1;
            }
        }
        if !self.loose.is_empty() {
            self.scan_loose(text.joined_in(joined), &mut budget, out);
        }
        sort_hits(out);
    }

    /// The anchors' part of a scan of `text`: each word, and each run of words from it while
    /// the run begins an anchor of more words, looked up as an anchor. The hits' ends are moved
    /// by `shift` bytes (where `text` starts in the text scanned).
    fn scan_anchors(
        &self,
        text: &str,
        shift: u32,
        words: &mut Vec<Word>,
        budget: &mut usize,
        out: &mut Vec<Hit>,
    ) {
        let first = out.len();
        let bytes = text.as_bytes();
        words.clear();
        each_word(text, |a, b| {
            let key = word_key(&self.hasher, bytes.get(a..b).unwrap_or_default());
            words.push(Word { a, b, key });
        });
        for (t, w) in words.iter().enumerate() {
            let mut key = w.key;
            let mut last = w.b;
            let mut len = 1;
            loop {
                let kept = kept_key(key);
                // (most runs are no anchor and begin none: told by the bit sets, one read)
                let bits = self.filter_bits(kept);
                if bits & ANCHOR_BIT != 0 {
                    let run = bytes.get(w.a..last).unwrap_or_default();
                    self.check_anchor(text, w.a, run, kept, budget, out);
                }
                if bits & HEAD_BIT == 0 || len >= MAX_ANCHOR_WORDS {
                    break;
                }
                let Some(next) = words.get(t + len) else {
                    break;
                };
                let sep = sep_key(&self.hasher, bytes.get(last..next.a).unwrap_or_default());
                key = extend(key, sep, next.key);
                last = next.b;
                len += 1;
            }
            if *budget == 0 {
                break;
            }
        }
        if shift > 0 {
            for hit in out.get_mut(first..).unwrap_or_default() {
                hit.end = hit.end.saturating_add(shift);
            }
        }
    }

    /// Checks the values filed under the anchor whose text is `run` (kept key `key`, whose bit
    /// is set in the anchors' bit set), which starts at byte `a` of `text`.
    fn check_anchor(
        &self,
        text: &str,
        a: usize,
        run: &[u8],
        key: u32,
        budget: &mut usize,
        out: &mut Vec<Hit>,
    ) {
        for &(value, off) in self.filed_under(run, key) {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            if let Some(start) = a.checked_sub(off as usize) {
                self.verify(text, start, value, out);
            }
        }
    }

    fn scan_loose(&self, text: &str, budget: &mut usize, out: &mut Vec<Hit>) {
        let bytes = text.as_bytes();
        let w = self.loose_window;
        if bytes.len() < w || w == 0 {
            return;
        }
        let top = ROLL_BASE.wrapping_pow(u32::try_from(w - 1).unwrap_or(0));
        let mut h = roll_hash(bytes.get(..w).unwrap_or_default());
        for start in 0..=bytes.len() - w {
            if start > 0
                && let (Some(&gone), Some(&new)) = (bytes.get(start - 1), bytes.get(start + w - 1))
            {
                h = h
                    .wrapping_sub(u64::from(gone).wrapping_mul(top))
                    .wrapping_mul(ROLL_BASE)
                    .wrapping_add(u64::from(new));
            }
            let first = self.loose.partition_point(|&(x, _)| x < h);
            for &(x, value) in self.loose.get(first..).unwrap_or_default() {
                if x != h || *budget == 0 {
                    break;
                }
                *budget -= 1;
                self.verify(text, start, value, out);
            }
            if *budget == 0 {
                return;
            }
        }
    }

    #[inline]
    fn verify(&self, text: &str, start: usize, value: u32, out: &mut Vec<Hit>) {
        let v = self.value_bytes(value);
        let end = start + v.len();
        if text.as_bytes().get(start..end) != Some(v) {
            return;
        }
        let sentence = self.kind(value as usize) == Some(ValueKind::Sentence);
        if !sentence && !at_boundaries(text, start, end) {
            return;
        }
        if let (Ok(end), Ok(len)) = (u32::try_from(end), u32::try_from(v.len())) {
            out.push(Hit { end, len, value });
        }
    }
}

/// Candidate values a scan of a text of `len` bytes may check.
fn budget_of(len: usize) -> usize {
    LINK_CHECKS_PER_BYTE
        .saturating_mul(len)
        .max(LINK_MIN_CHECKS)
}

/// Hits sorted by end, longer first at one end.
fn sort_hits(out: &mut [Hit]) {
    out.sort_unstable_by(|x, y| x.end.cmp(&y.end).then(y.len.cmp(&x.len)));
}

/// True when the match is not part of a longer word or number.
pub(in crate::analysis::links) fn at_boundaries(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}
