//! The link index: every distinct value the steps produced, each kept once as a borrowed span of
//! the step texts it was found in (issue 11: no second copy of step text), and filed under one
//! *anchor*, a piece of the value that any occurrence of it must show as whole
//! words. Scanning a step's input looks up each word, and each word with its right neighbour,
//! and checks only the values filed there (issue 11: an automaton over every value cost time
//! and memory in the square of the values). Pure; no I/O.
//!
//! Why an anchor is always seen as whole words: a *word* here is a longest run of alphanumeric
//! characters. An id, date or number must not sit inside a longer word or number, so each word
//! of it is a whole word of the text wherever it matches. A sentence may match anywhere, so only
//! its inner words (not touching its first or last byte) are sure to be whole. The anchor is
//! either one such word or two neighbouring ones with what lies between them, chosen among the
//! value's candidates as the one filed with the fewest values so far. A sentence without an
//! inner word (a cut sentence of one or two giant words) is found by a rolling hash of its first
//! bytes instead.
//!
//! This file builds the index; `index/anchor.rs` chooses a value's anchor; `index/scan.rs`
//! finds the values in a step's text.

mod anchor;
mod scan;

pub(super) use scan::Hit;
#[cfg(test)]
pub(super) use scan::at_boundaries;
pub use scan::{LINK_CHECKS_PER_BYTE, LINK_MIN_CHECKS};

use super::tokens::{ALPHANUMERIC, DIGIT, HIGH, class_of};
use super::values::ValueKind;
use anchor::{Candidate, candidates_of, choose};
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

/// Bytes hashed to find a sentence that has no inner word.
const LOOSE_WINDOW: usize = 32;

/// The hash the index files a text under: 32 bits of its 64-bit hash, repeated in both halves
/// (a table takes its bucket from the low bits and its tag from the top ones). Kept as those
/// 32 bits while values are added (issue 11: half the memory of the full hash, which served
/// only to rehash a growing table).
pub(super) fn text_hash(hasher: &DefaultHashBuilder, bytes: &[u8]) -> u64 {
    let h = hasher.hash_one(bytes);
    spread((h >> 32) as u32 ^ h as u32)
}

/// A hash of [`text_hash`] from the 32 bits kept of it.
pub(super) fn spread(k: u32) -> u64 {
    u64::from(k) << 32 | u64::from(k)
}

/// The 32 bits of a [`text_hash`] that are kept.
pub(super) fn kept(h: u64) -> u32 {
    h as u32
}

/// The hash kept for `id` in `hashes` (what a table keyed by ids needs to rehash an id as it
/// grows, without reading and hashing its text again).
fn kept_hash(hashes: &[u32], id: u32) -> u64 {
    spread(hashes.get(id as usize).copied().unwrap_or(0))
}

/// The outcome of [`Index::intern_hashed`].
pub(super) enum Interned {
    /// The value was already known, under this id.
    Known(usize),
    /// The value is new and got this id.
    New(usize),
    /// The value is new but the values already take the index's cap in bytes: it was left out.
    Full,
}

/// The values and their anchors (see the module docs). Each value and anchor is a span of the
/// step texts (`'t`), never a copy. Once the scans are done only what looks values up
/// (`values`, `kinds`, `by_text`) is kept ([`Index::keep_lookup_only`]).
pub(super) struct Index<'t> {
    /// Bytes of all values together (what the cap is counted in).
    value_bytes: usize,
    cap_bytes: usize,
    /// Each value's text, by id.
    values: Vec<&'t str>,
    kinds: Vec<ValueKind>,
    by_text: HashTable<u32>,
    /// While values are added: the hash of each value's text, by id (as [`kept`]).
    value_hashes: Vec<u32>,
    anchors: HashTable<u32>,
    /// While values are added: where each anchor's text lies and how many values are filed
    /// under it.
    anchor_at: Vec<AnchorAt>,
    /// While values are added: the hash of each anchor's text, by anchor (as [`kept`]).
    anchor_hashes: Vec<u32>,
    /// While values are added: each value's anchor (`u32::MAX` for a loose value) and the
    /// anchor's offset in the value.
    placed: Vec<(u32, u32)>,
    /// Once finished: `filed[filed_start[a].0..filed_start[a + 1].0]` are the (value, offset)
    /// pairs of anchor `a`, and `filed_start[a].1` is the length of its text. An anchor's text
    /// is read where its first value holds it (issue 11: a list of the anchors' texts cost two
    /// more cache misses a look-up, the entry and the text, where the value's text is read
    /// to check it anyway).
    filed_start: Vec<(u32, u32)>,
    filed: Vec<(u32, u32)>,
    /// Values without an anchor, by the rolling hash of their first bytes, sorted.
    loose: Vec<(u64, u32)>,
    loose_window: usize,
    /// Once finished: two bit sets by hash, interleaved ([`ANCHOR_BIT`] and [`HEAD_BIT`] of
    /// each slot side by side, so the two bits of a scanned word are one read, issue 11): the
    /// anchors' texts (a scanned word or pair whose bit is clear is no anchor, and is not
    /// looked up in `anchors`: most words of a text are none, and the set is small enough to
    /// stay in cache where the table is not), and the first words of the anchors of two words
    /// (a scanned word whose bit is clear starts no such anchor).
    anchor_bits: Vec<u64>,
    hasher: DefaultHashBuilder,
    /// Scratch: the words of the value at hand, each with whether it holds an ASCII digit.
    words: Vec<(usize, usize, bool)>,
    /// Scratch: the anchor candidates of the value at hand, best rank first.
    candidates: Vec<Candidate>,
}

/// Where an anchor's text lies while values are added: bytes `off..off + len` of the first
/// value filed under it, with how many values are filed under it. Side by side so one read
/// gives both (issue 11: the offset was read from that value's entry and the load from a list
/// of its own, two more cache misses a look-up, for 4 bytes an anchor less; held only while
/// values are added, which is not when the process holds the most).
#[derive(Clone, Copy, Debug)]
struct AnchorAt {
    value: u32,
    off: u32,
    len: u32,
    load: u32,
}

impl<'t> Index<'t> {
    /// An empty index whose values may take up to `cap_bytes` bytes together.
    pub(super) fn new(cap_bytes: usize) -> Index<'t> {
        Index {
            value_bytes: 0,
            cap_bytes: cap_bytes.min(u32::MAX as usize),
            values: Vec::new(),
            kinds: Vec::new(),
            by_text: HashTable::new(),
            value_hashes: Vec::new(),
            anchors: HashTable::new(),
            anchor_at: Vec::new(),
            anchor_hashes: Vec::new(),
            placed: Vec::new(),
            filed_start: Vec::new(),
            filed: Vec::new(),
            loose: Vec::new(),
            loose_window: LOOSE_WINDOW,
            anchor_bits: Vec::new(),
            hasher: DefaultHashBuilder::default(),
            words: Vec::new(),
            candidates: Vec::new(),
        }
    }

    /// Number of values.
    pub(super) fn len(&self) -> usize {
        self.values.len()
    }

    /// A value's text.
    pub(super) fn value(&self, id: usize) -> &'t str {
        self.values.get(id).copied().unwrap_or("")
    }

    fn value_bytes(&self, id: u32) -> &'t [u8] {
        self.value(id as usize).as_bytes()
    }

    /// A value's kind.
    pub(super) fn kind(&self, id: usize) -> Option<ValueKind> {
        self.kinds.get(id).copied()
    }

    fn hash(&self, bytes: &[u8]) -> u64 {
        text_hash(&self.hasher, bytes)
    }

    /// What [`Index::intern_hashed`] needs to hash a value's text with [`text_hash`]; the same
    /// for every index (so it can be computed before, on another thread).
    pub(super) fn hasher(&self) -> DefaultHashBuilder {
        self.hasher.clone()
    }

    /// The id of a value, if it is known.
    pub(super) fn find(&self, text: &str) -> Option<usize> {
        let h = self.hash(text.as_bytes());
        self.by_text
            .find(h, |&id| self.value_bytes(id) == text.as_bytes())
            .map(|&id| id as usize)
    }

    /// Adds a value (once; a known value keeps its id and first kind), given the hash of its
    /// text (`text_hash(&hasher(), text.as_bytes())`).
    pub(super) fn intern_hashed(&mut self, text: &'t str, kind: ValueKind, h: u64) -> Interned {
        if let Some(&id) = self
            .by_text
            .find(h, |&id| self.value_bytes(id) == text.as_bytes())
        {
            return Interned::Known(id as usize);
        }
        if self.value_bytes + text.len() > self.cap_bytes {
            return Interned::Full;
        }
        let Ok(id) = u32::try_from(self.values.len()) else {
            return Interned::Full;
        };
        self.value_bytes += text.len();
        self.values.push(text);
        self.kinds.push(kind);
        self.value_hashes.push(kept(h));
        let hashes = &self.value_hashes;
        self.by_text.insert_unique(h, id, |&k| kept_hash(hashes, k));
        self.place(id, text, kind);
        Interned::New(id as usize)
    }

    /// Files a new value (`id`) under its anchor (or among the loose values).
    fn place(&mut self, id: u32, text: &'t str, kind: ValueKind) {
        let mut words = std::mem::take(&mut self.words);
        let mut candidates = std::mem::take(&mut self.candidates);
        words.clear();
        each_word(text, |a, b, digit| words.push((a, b, digit)));
        candidates_of(text, kind, &words, &mut candidates);
        let best = choose(&mut candidates, |c| {
            let (load, k, h) = self.anchor_load_of(text, c);
            (load, (k, h))
        });
        self.words = words;
        self.candidates = candidates;
        let Some((_, Candidate { a, b, .. }, (known, h))) = best else {
            self.placed.push((u32::MAX, 0));
            self.loose_window = self.loose_window.min(text.len().max(1));
            return;
        };
        let anchor = match known {
            Some(k) => k,
            None => {
                let (Ok(k), Ok(len)) = (
                    u32::try_from(self.anchor_at.len()),
                    u32::try_from(b.saturating_sub(a)),
                ) else {
                    self.placed.push((u32::MAX, 0));
                    return;
                };
                self.anchor_at.push(AnchorAt {
                    value: id,
                    off: u32::try_from(a).unwrap_or(u32::MAX),
                    len,
                    load: 0,
                });
                self.anchor_hashes.push(kept(h));
                let hashes = &self.anchor_hashes;
                self.anchors.insert_unique(h, k, |&x| kept_hash(hashes, x));
                k
            }
        };
        if let Some(at) = self.anchor_at.get_mut(anchor as usize) {
            at.load = at.load.saturating_add(1);
        }
        self.placed
            .push((anchor, u32::try_from(a).unwrap_or(u32::MAX)));
    }

    /// How many values are filed under candidate `c` of `text` (0 when it is no anchor yet),
    /// the anchor, and the candidate's hash.
    fn anchor_load_of(&self, text: &str, c: Candidate) -> (u32, Option<u32>, u64) {
        let key = text.as_bytes().get(c.a..c.b).unwrap_or_default();
        let h = self.hash(key);
        let k = self
            .anchors
            .find(h, |&k| self.anchor_text_while_adding(k).as_bytes() == key)
            .copied();
        let load = k.map_or(0, |k| {
            self.anchor_at
                .get(k as usize)
                .map_or(u32::MAX, |at| at.load)
        });
        (load, k, h)
    }

    /// Anchor `k`'s text while values are added (see [`Index::anchor_at`]).
    fn anchor_text_while_adding(&self, k: u32) -> &'t str {
        let Some(&AnchorAt {
            value, off, len, ..
        }) = self.anchor_at.get(k as usize)
        else {
            return "";
        };
        let a = off as usize;
        self.value(value as usize)
            .get(a..a.saturating_add(len as usize))
            .unwrap_or("")
    }

    /// The (value, offset) pairs filed under the anchor whose text is `key` (hash `h`), once
    /// finished; none when it is no anchor.
    fn filed_under(&self, key: &[u8], h: u64) -> &[(u32, u32)] {
        let Some(&k) = self.anchors.find(h, |&k| self.is_anchor_text(k, key)) else {
            return &[];
        };
        self.filed_of(k)
    }

    /// Anchor `k`'s (value, offset) pairs, once finished.
    fn filed_of(&self, k: u32) -> &[(u32, u32)] {
        let (Some(&(from, _)), Some(&(to, _))) = (
            self.filed_start.get(k as usize),
            self.filed_start.get(k as usize + 1),
        ) else {
            return &[];
        };
        self.filed
            .get(from as usize..to as usize)
            .unwrap_or_default()
    }

    /// True when anchor `k`'s text is `key`, once finished: read in its first value.
    fn is_anchor_text(&self, k: u32, key: &[u8]) -> bool {
        let len = self.filed_start.get(k as usize).map_or(0, |&(_, len)| len);
        if len as usize != key.len() {
            return false;
        }
        let Some(&(value, off)) = self.filed_of(k).first() else {
            return false;
        };
        let off = off as usize;
        self.value_bytes(value).get(off..off + key.len()) == Some(key)
    }

    /// True when some anchor is filed, once finished.
    fn has_anchors(&self) -> bool {
        self.filed_start.len() > 1
    }

    /// Ends the adding of values: files them for scanning.
    pub(super) fn finish(&mut self) {
        // What the detectors read afterwards is held at its exact size (issue 11: these grew
        // by doubling, up to half of them slack).
        self.values.shrink_to_fit();
        self.kinds.shrink_to_fit();
        let hashes = &self.value_hashes;
        self.by_text.shrink_to_fit(|&id| kept_hash(hashes, id));
        self.value_hashes = Vec::new();
        // (what is held at once stays below what adding the values held)
        let anchors = self.anchor_at.len();
        let mut bits = vec![0u64; 2 * bit_set_words(anchors)];
        for &h in &self.anchor_hashes {
            set_pair_bit(&mut bits, spread(h), ANCHOR_BIT);
        }
        self.anchor_hashes = Vec::new();
        // Each anchor's text is read once, for its first word (issue 11: it lies in some
        // step's text, rarely in cache).
        for k in 0..anchors {
            let key = self.anchor_text_while_adding(u32::try_from(k).unwrap_or(u32::MAX));
            let head = first_word(key);
            if head.len() < key.len() {
                set_pair_bit(&mut bits, self.hash(head.as_bytes()), HEAD_BIT);
            }
        }
        self.anchor_bits = bits;
        let mut start: Vec<(u32, u32)> = vec![(0, 0); anchors + 1];
        for (slot, at) in start.iter_mut().zip(&self.anchor_at) {
            slot.1 = at.len;
        }
        self.anchor_at = Vec::new();
        for &(a, _) in &self.placed {
            if let Some(slot) = start.get_mut(a as usize + 1) {
                slot.0 += 1;
            }
        }
        for k in 0..anchors {
            let before = start.get(k).map_or(0, |s| s.0);
            if let Some(slot) = start.get_mut(k + 1) {
                slot.0 += before;
            }
        }
        let mut fill: Vec<u32> = start.iter().map(|s| s.0).collect();
        self.filed = vec![(0, 0); self.placed.len()];
        let mut loose = Vec::new();
        for (v, &(a, off)) in self.placed.iter().enumerate() {
            let v = u32::try_from(v).unwrap_or(u32::MAX);
            match fill.get_mut(a as usize) {
                Some(at) => {
                    if let Some(slot) = self.filed.get_mut(*at as usize) {
                        *slot = (v, off);
                    }
                    *at += 1;
                }
                None => loose.push(v),
            }
        }
        self.placed = Vec::new();
        self.filed
            .truncate(start.last().map_or(0, |s| s.0) as usize);
        self.filed.shrink_to_fit();
        self.filed_start = start;
        self.loose = loose
            .into_iter()
            .map(|v| {
                let text = self.value(v as usize).as_bytes();
                (roll_hash(text.get(..self.loose_window).unwrap_or(text)), v)
            })
            .collect();
        self.loose.sort_unstable();
        self.words = Vec::new();
        self.candidates = Vec::new();
    }

    /// Ends the scans: frees the anchors and the loose values' table, keeping what finds a
    /// value by its text and reads its text and kind (issue 11: the tables of the scan are
    /// not held while the detectors run). Scanning afterwards finds nothing.
    pub(super) fn keep_lookup_only(&mut self) {
        self.anchors = HashTable::new();
        self.filed_start = Vec::new();
        self.filed = Vec::new();
        self.loose = Vec::new();
        self.anchor_bits = Vec::new();
    }

    /// The bits of the text whose hash is `h` in the two bit sets of [`Index::anchor_bits`]:
    /// [`ANCHOR_BIT`] when it may be an anchor, [`HEAD_BIT`] when some anchor of two words may
    /// start with it (both when the sets are empty).
    fn filter_bits(&self, h: u64) -> u64 {
        pair_bits(&self.anchor_bits, h)
    }
}

const ROLL_BASE: u64 = 0x0000_0100_0000_01b3;

/// A polynomial hash of `bytes` (the rolling hash of the loose values).
fn roll_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |h, &b| {
        h.wrapping_mul(ROLL_BASE).wrapping_add(u64::from(b))
    })
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
pub(super) fn word_runs(text: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    each_word(text, |a, b, _| out.push((a, b)));
}

/// Calls `f` with each word of `text` (a longest run of alphanumeric characters) as a byte
/// range, and whether it holds an ASCII digit. ASCII bytes are told by their class in a
/// table (which also tells a digit, so a word is read once, issue 11); a character is decoded
/// only where one starts with a byte of 128 or more.
#[inline]
pub(super) fn each_word(text: &str, mut f: impl FnMut(usize, usize, bool)) {
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
        let mut seen = 0u8;
        while let Some(&b) = bytes.get(i) {
            let c = class_of(b);
            if c & ALPHANUMERIC != 0 {
                seen |= c;
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
        f(start, i, seen & DIGIT != 0);
    }
}

/// The first word of `key` (which starts with one).
fn first_word(key: &str) -> &str {
    let mut i = 0;
    while let Some((true, len)) = alphanumeric_at(key, i) {
        i += len;
    }
    key.get(..i).unwrap_or(key)
}

/// Words of 64 bits of a bit set for `items` items: a power of two of bits, at least 8 per
/// item.
fn bit_set_words(items: usize) -> usize {
    items.saturating_mul(8).next_power_of_two().max(64) / 64
}

/// In [`Index::anchor_bits`]: the text may be an anchor.
const ANCHOR_BIT: u64 = 1;
/// In [`Index::anchor_bits`]: some anchor of two words may start with the text.
const HEAD_BIT: u64 = 2;

/// Sets `bit` ([`ANCHOR_BIT`] or [`HEAD_BIT`]) of the slot of hash `h` in `set`, two bit sets
/// interleaved: slot `s` is bits `2s` and `2s + 1` (a power of two of slots).
fn set_pair_bit(set: &mut [u64], h: u64, bit: u64) {
    let slots = set.len() * 32;
    let at = (h as usize) & (slots.max(1) - 1);
    if let Some(w) = set.get_mut(at / 32) {
        *w |= bit << (2 * (at % 32));
    }
}

/// The two bits of the slot of hash `h` in `set` (see [`set_pair_bit`]); both when `set` is
/// empty.
fn pair_bits(set: &[u64], h: u64) -> u64 {
    let slots = set.len() * 32;
    if slots == 0 {
        return ANCHOR_BIT | HEAD_BIT;
    }
    let at = (h as usize) & (slots - 1);
    set.get(at / 32)
        .map_or(ANCHOR_BIT | HEAD_BIT, |w| (w >> (2 * (at % 32))) & 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The words as a plain reading finds them, character by character.
    pub(super) fn words_by_chars(text: &str) -> Vec<(usize, usize)> {
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
