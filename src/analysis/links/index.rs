//! The link index: every distinct value the steps produced, each kept once in one text arena and
//! filed under one *anchor*, a piece of the value that any occurrence of it must show as whole
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
//! Against hostile runs, at most [`LINK_CHECKS_PER_BYTE`] candidates per byte of the scanned
//! text are checked (and at least [`LINK_MIN_CHECKS`]), so a scan costs a bounded multiple of
//! the text whatever the values.

use super::values::ValueKind;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

/// Candidate values checked per byte of a scanned text, at most.
pub const LINK_CHECKS_PER_BYTE: usize = 16;
/// Candidate values checked in one scanned text, at least (a short text gets this many).
pub const LINK_MIN_CHECKS: usize = 4_096;
/// Bytes hashed to find a sentence that has no inner word.
const LOOSE_WINDOW: usize = 32;

/// A piece of the arena.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

/// The hash kept for `id` in `hashes` (what a table keyed by ids needs to rehash an id as it
/// grows, without reading and hashing its text again).
fn kept_hash(hashes: &[u64], id: u32) -> u64 {
    hashes.get(id as usize).copied().unwrap_or(0)
}

/// An occurrence of a value in a scanned text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hit {
    /// Byte offset just past the match.
    pub end: u32,
    /// Length of the match in bytes.
    pub len: u32,
    /// The value.
    pub value: u32,
}

/// The outcome of [`Index::intern`].
pub(super) enum Interned {
    /// The value was already known, under this id.
    Known(usize),
    /// The value is new and got this id.
    New(usize),
    /// The value is new but the arena is full: it was left out.
    Full,
}

/// The values and their anchors (see the module docs).
pub(super) struct Index {
    arena: String,
    arena_cap: usize,
    spans: Vec<Span>,
    kinds: Vec<ValueKind>,
    by_text: HashTable<u32>,
    /// The hash of each value's text, by id.
    value_hashes: Vec<u64>,
    anchors: HashTable<u32>,
    anchor_keys: Vec<Span>,
    /// The hash of each anchor's text, by anchor.
    anchor_hashes: Vec<u64>,
    /// While values are added: how many are filed under each anchor.
    anchor_load: Vec<u32>,
    /// While values are added: each value's anchor (`u32::MAX` for a loose value) and the
    /// anchor's offset in the value.
    placed: Vec<(u32, u32)>,
    /// Once finished: `filed[filed_start[a]..filed_start[a + 1]]` are the (value, offset) pairs
    /// of anchor `a`.
    filed_start: Vec<u32>,
    filed: Vec<(u32, u32)>,
    /// Values without an anchor, by the rolling hash of their first bytes, sorted.
    loose: Vec<(u64, u32)>,
    loose_window: usize,
    /// Once finished: a bit set, by the hash of a word, of the first words of the anchors of
    /// two words (a scanned word whose bit is clear starts no such anchor).
    pair_heads: Vec<u64>,
    hasher: DefaultHashBuilder,
    /// Scratch: the words of the value or text at hand.
    words: Vec<(usize, usize)>,
    /// Scratch: the anchor candidates of the value at hand, best rank first.
    candidates: Vec<Candidate>,
}

/// A piece of a new value that could be its anchor: bytes `a..b` of it.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    a: usize,
    b: usize,
    /// No ASCII digit in it (a candidate with one ranks first).
    plain: bool,
}

impl Index {
    /// An empty index whose values may take up to `arena_cap` bytes together.
    pub(super) fn new(arena_cap: usize) -> Index {
        Index {
            arena: String::new(),
            arena_cap: arena_cap.min(u32::MAX as usize),
            spans: Vec::new(),
            kinds: Vec::new(),
            by_text: HashTable::new(),
            value_hashes: Vec::new(),
            anchors: HashTable::new(),
            anchor_keys: Vec::new(),
            anchor_hashes: Vec::new(),
            anchor_load: Vec::new(),
            placed: Vec::new(),
            filed_start: Vec::new(),
            filed: Vec::new(),
            loose: Vec::new(),
            loose_window: LOOSE_WINDOW,
            pair_heads: Vec::new(),
            hasher: DefaultHashBuilder::default(),
            words: Vec::new(),
            candidates: Vec::new(),
        }
    }

    /// Number of values.
    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The bytes of a piece of the arena (no character boundary is looked at: for comparing).
    fn bytes_of(&self, s: Span) -> &[u8] {
        let start = s.start as usize;
        self.arena
            .as_bytes()
            .get(start..start + s.len as usize)
            .unwrap_or_default()
    }

    fn text_of(&self, s: Span) -> &str {
        let start = s.start as usize;
        self.arena
            .get(start..start + s.len as usize)
            .unwrap_or_default()
    }

    /// A value's text.
    pub(super) fn value(&self, id: usize) -> &str {
        self.spans.get(id).map_or("", |&s| self.text_of(s))
    }

    fn value_bytes(&self, id: u32) -> &[u8] {
        self.spans
            .get(id as usize)
            .map_or(&[][..], |&s| self.bytes_of(s))
    }

    /// A value's kind.
    pub(super) fn kind(&self, id: usize) -> Option<ValueKind> {
        self.kinds.get(id).copied()
    }

    fn hash(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }

    /// What [`Index::intern_hashed`] needs of a value's text; the same for every index (so it
    /// can be computed before, on another thread).
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
    /// text (`hasher().hash_one(text.as_bytes())`).
    pub(super) fn intern_hashed(&mut self, text: &str, kind: ValueKind, h: u64) -> Interned {
        if let Some(&id) = self
            .by_text
            .find(h, |&id| self.value_bytes(id) == text.as_bytes())
        {
            return Interned::Known(id as usize);
        }
        if self.arena.len() + text.len() > self.arena_cap {
            return Interned::Full;
        }
        let (Ok(id), Ok(start), Ok(len)) = (
            u32::try_from(self.spans.len()),
            u32::try_from(self.arena.len()),
            u32::try_from(text.len()),
        ) else {
            return Interned::Full;
        };
        self.arena.push_str(text);
        self.spans.push(Span { start, len });
        self.kinds.push(kind);
        self.value_hashes.push(h);
        let hashes = &self.value_hashes;
        self.by_text.insert_unique(h, id, |&k| kept_hash(hashes, k));
        self.place(start, text, kind);
        Interned::New(id as usize)
    }

    /// Files a new value under its anchor (or among the loose values).
    fn place(&mut self, at: u32, text: &str, kind: ValueKind) {
        let mut words = std::mem::take(&mut self.words);
        let mut candidates = std::mem::take(&mut self.candidates);
        word_runs(text, &mut words);
        let whole =
            |&(a, b): &(usize, usize)| kind != ValueKind::Sentence || (a > 0 && b < text.len());
        let candidate = |a: usize, b: usize| Candidate {
            a,
            b,
            plain: !text
                .as_bytes()
                .get(a..b)
                .unwrap_or_default()
                .iter()
                .any(u8::is_ascii_digit),
        };
        // Candidates: two neighbouring whole words; else one whole word.
        candidates.clear();
        for pair in words.windows(2) {
            if let [first, second] = pair
                && whole(first)
                && whole(second)
            {
                candidates.push(candidate(first.0, second.1));
            }
        }
        if candidates.is_empty() {
            for w in words.iter().filter(|w| whole(w)) {
                candidates.push(candidate(w.0, w.1));
            }
        }
        // The best is filed with the fewest values so far, then holds a digit, then is longer,
        // then comes first. The first by all but the load is the best when it is filed with
        // no value yet (as a new value's is, most often); else all are looked up.
        let order = |c: &Candidate| (c.plain, std::cmp::Reverse(c.b - c.a), c.a);
        let mut best: Option<(u32, Candidate, Option<u32>, u64)> = None;
        if let Some(&c) = candidates.iter().min_by_key(|c| order(c)) {
            let (load, k, h) = self.anchor_load_of(text, c);
            if load == 0 {
                best = Some((load, c, k, h));
            }
        }
        if best.is_none() {
            for &c in &candidates {
                let (load, k, h) = self.anchor_load_of(text, c);
                if best
                    .as_ref()
                    .is_none_or(|&(l, b, ..)| (load, order(&c)) < (l, order(&b)))
                {
                    best = Some((load, c, k, h));
                }
            }
        }
        self.words = words;
        self.candidates = candidates;
        let Some((_, Candidate { a, b, .. }, known, h)) = best else {
            self.placed.push((u32::MAX, 0));
            self.loose_window = self.loose_window.min(text.len().max(1));
            return;
        };
        let anchor = match known {
            Some(k) => k,
            None => {
                let (Ok(k), Ok(start), Ok(len)) = (
                    u32::try_from(self.anchor_keys.len()),
                    u32::try_from(at as usize + a),
                    u32::try_from(b - a),
                ) else {
                    self.placed.push((u32::MAX, 0));
                    return;
                };
                self.anchor_keys.push(Span { start, len });
                self.anchor_load.push(0);
                self.anchor_hashes.push(h);
                let hashes = &self.anchor_hashes;
                self.anchors.insert_unique(h, k, |&x| kept_hash(hashes, x));
                k
            }
        };
        if let Some(load) = self.anchor_load.get_mut(anchor as usize) {
            *load = load.saturating_add(1);
        }
        self.placed
            .push((anchor, u32::try_from(a).unwrap_or(u32::MAX)));
    }

    /// How many values are filed under candidate `c` of `text` (0 when it is no anchor yet),
    /// the anchor, and the candidate's hash.
    fn anchor_load_of(&self, text: &str, c: Candidate) -> (u32, Option<u32>, u64) {
        let key = text.as_bytes().get(c.a..c.b).unwrap_or_default();
        let h = self.hash(key);
        let k = self.anchor_id_hashed(key, h);
        let load = k.map_or(0, |k| {
            self.anchor_load
                .get(k as usize)
                .copied()
                .unwrap_or(u32::MAX)
        });
        (load, k, h)
    }

    fn anchor_id_hashed(&self, key: &[u8], h: u64) -> Option<u32> {
        self.anchors
            .find(h, |&k| {
                self.anchor_keys
                    .get(k as usize)
                    .is_some_and(|&s| self.bytes_of(s) == key)
            })
            .copied()
    }

    /// Ends the adding of values: files them for scanning.
    pub(super) fn finish(&mut self) {
        let anchors = self.anchor_keys.len();
        let mut start = vec![0u32; anchors + 1];
        for &(a, _) in &self.placed {
            if let Some(slot) = start.get_mut(a as usize + 1) {
                *slot += 1;
            }
        }
        for k in 0..anchors {
            let before = start.get(k).copied().unwrap_or(0);
            if let Some(slot) = start.get_mut(k + 1) {
                *slot += before;
            }
        }
        let mut fill = start.clone();
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
        self.filed
            .truncate(start.last().copied().unwrap_or(0) as usize);
        self.filed_start = start;
        self.loose = loose
            .into_iter()
            .map(|v| {
                let text = self.value(v as usize).as_bytes();
                (roll_hash(text.get(..self.loose_window).unwrap_or(text)), v)
            })
            .collect();
        self.loose.sort_unstable();
        self.pair_heads = self.pair_heads();
        self.placed = Vec::new();
        self.anchor_load = Vec::new();
        self.words = Vec::new();
        self.candidates = Vec::new();
    }

    /// The bit set of [`Index::pair_heads`]: a power of two of bits, at least 8 per anchor.
    fn pair_heads(&self) -> Vec<u64> {
        let bits = self
            .anchor_keys
            .len()
            .saturating_mul(8)
            .next_power_of_two()
            .max(64);
        let mut set = vec![0u64; bits / 64];
        for &key in &self.anchor_keys {
            let key = self.text_of(key);
            let head = first_word(key);
            if head.len() < key.len() {
                set_bit(&mut set, self.hash(head.as_bytes()));
            }
        }
        set
    }

    /// True when some anchor of two words may start with the word whose hash is `h`.
    fn may_head_pair(&self, h: u64) -> bool {
        has_bit(&self.pair_heads, h)
    }

    /// Every occurrence of a value in `text` (ids, dates and numbers only where they do not
    /// sit inside a longer word or number), sorted by end, longer first at one end.
    pub(super) fn scan(&self, text: &str, words: &mut Vec<(usize, usize)>, out: &mut Vec<Hit>) {
        out.clear();
        let mut budget = LINK_CHECKS_PER_BYTE
            .saturating_mul(text.len())
            .max(LINK_MIN_CHECKS);
        if !self.anchor_keys.is_empty() {
            word_runs(text, words);
            let bytes = text.as_bytes();
            for (t, &(a, b)) in words.iter().enumerate() {
                let word = bytes.get(a..b).unwrap_or_default();
                let h = self.hash(word);
                self.check_anchor(text, a, word, h, &mut budget, out);
                if let Some(&(_, b2)) = words.get(t + 1)
                    && self.may_head_pair(h)
                {
                    let pair = bytes.get(a..b2).unwrap_or_default();
                    self.check_anchor(text, a, pair, self.hash(pair), &mut budget, out);
                }
                if budget == 0 {
                    break;
                }
            }
        }
        if !self.loose.is_empty() {
            self.scan_loose(text, &mut budget, out);
        }
        out.sort_unstable_by(|x, y| x.end.cmp(&y.end).then(y.len.cmp(&x.len)));
    }

    /// Checks the values filed under the anchor `key` (hash `h`), which starts at byte `a` of
    /// `text`.
    fn check_anchor(
        &self,
        text: &str,
        a: usize,
        key: &[u8],
        h: u64,
        budget: &mut usize,
        out: &mut Vec<Hit>,
    ) {
        let Some(k) = self.anchor_id_hashed(key, h) else {
            return;
        };
        let (Some(&from), Some(&to)) = (
            self.filed_start.get(k as usize),
            self.filed_start.get(k as usize + 1),
        ) else {
            return;
        };
        for &(value, off) in self
            .filed
            .get(from as usize..to as usize)
            .unwrap_or_default()
        {
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

/// The words of `text`: longest runs of alphanumeric characters, as byte ranges. ASCII bytes
/// are read as they are; a character is decoded only where one starts with a byte of 128 or
/// more.
pub(super) fn word_runs(text: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut i = 0;
    loop {
        let start = loop {
            match alphanumeric_at(text, i) {
                None => return,
                Some((true, _)) => break i,
                Some((false, len)) => i += len,
            }
        };
        while let Some((true, len)) = alphanumeric_at(text, i) {
            i += len;
        }
        out.push((start, i));
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

fn set_bit(set: &mut [u64], h: u64) {
    let bits = set.len() * 64;
    let at = (h as usize) & (bits - 1);
    if let Some(w) = set.get_mut(at / 64) {
        *w |= 1 << (at % 64);
    }
}

fn has_bit(set: &[u64], h: u64) -> bool {
    let bits = set.len() * 64;
    if bits == 0 {
        return true;
    }
    let at = (h as usize) & (bits - 1);
    set.get(at / 64).is_none_or(|w| w & (1 << (at % 64)) != 0)
}

/// True when the match is not part of a longer word or number.
pub(super) fn at_boundaries(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
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
