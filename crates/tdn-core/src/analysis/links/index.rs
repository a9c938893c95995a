//! The link index: every distinct value the steps produced, each kept once as a borrowed span of
//! the step texts it was found in (issue 11: no second copy of step text), and filed under one
//! *anchor*, a run of whole words of the value that any occurrence of it must show as whole
//! words. Scanning a step's input looks up each word, and each run of words starting there that
//! begins some anchor, and checks only the values filed under an anchor it finds (issue 11: an
//! automaton over every value cost time and memory in the square of the values). Pure; no I/O.
//!
//! Why an anchor is always seen as whole words: a *word* here is a longest run of alphanumeric
//! characters. An id, date or number must not sit inside a longer word or number, so each word
//! of it is a whole word of the text wherever it matches. A sentence may match anywhere, so only
//! its inner words (not touching its first or last byte) are sure to be whole. An anchor is a
//! run of such words with what lies between them. A sentence without an inner word (a cut
//! sentence of one or two giant words) is found by a rolling hash of its first bytes instead.
//!
//! Which run of words (issue 28): the scan of a text costs about one check for each place an
//! anchor shows in it, times the values filed under that anchor. So each value is filed under
//! a run that is rare in the run's text: the index counts the words of the values it holds, and
//! takes a run of words to show about as often as the product of its words' shares, times the
//! words to be scanned. The shortest run expected to show at most once in all the scanned text,
//! with the values already filed under it, is chosen (`index/anchor.rs`). Where an id makes a
//! value rare, that is the id (or the id and a word); where some forty words make up most of
//! the text, a run of four or five of them, where pairs of words, the old anchors, each carried
//! hundreds of values at 100,000 steps. A scan looks up at most [`anchor::MAX_ANCHOR_WORDS`]
//! runs from each word, following a run only while it begins some anchor (a bit set), and
//! checks few values at each: linear in the text whatever the vocabulary, and never more than
//! the budget of `index/scan.rs`.

//! This file builds the index; `index/anchor.rs` chooses a value's anchor; `index/keys.rs`
//! reads words and keys runs of them; `index/scan.rs` finds the values in a step's text.

mod anchor;
mod keys;
mod scan;

pub(super) use scan::Hit;
#[cfg(test)]
pub(super) use scan::at_boundaries;
pub use scan::{LINK_CHECKS_PER_BYTE, LINK_MIN_CHECKS};

use super::values::ValueKind;
use anchor::{Rarity, choose, count_slot, whole_words};
use hashbrown::{DefaultHashBuilder, HashTable};
pub(super) use keys::Word;
use keys::{each_word, kept_key, run_key};
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
/// step texts (`'t`), never a copy. An anchor is found by its key and told from another of the
/// same key by its text, and the words are counted by a hash of their own with a fixed seed
/// (`keys.rs`), so which anchor a value gets, and which values a scan checks, never depend on
/// the per-process seed of the tables' hashes (what the budget of a scan lets through is the
/// same from run to run). Once the scans are done only what looks values up (`values`,
/// `kinds`, `by_text`) is kept ([`Index::keep_lookup_only`]).
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
    /// The anchors, by kept key ([`kept_key`]).
    anchors: HashTable<u32>,
    /// While values are added: where each anchor's text lies and how many values are filed
    /// under it.
    anchor_at: Vec<AnchorAt>,
    /// While values are added: the kept keys of each anchor, and of each run of words an
    /// anchor of several words starts with (for the bit sets).
    anchor_keys: Vec<u32>,
    head_keys: Vec<u32>,
    /// While values are added: how common each word of the values is.
    rarity: Rarity,
    /// While values are added: each value's anchor (`u32::MAX` for a loose value) and the
    /// anchor's offset in the value.
    placed: Vec<(u32, u32)>,
    /// Once finished: `filed[filed_start[a].0..filed_start[a + 1].0]` are the (value, offset)
    /// pairs of anchor `a`, and `filed_start[a].1` is the length of its text. An anchor's text
    /// is read where its first value holds it (issue 11: a list of the anchors' texts cost two
    /// more cache misses a look-up, where the value's text is read to check it anyway).
    filed_start: Vec<(u32, u32)>,
    filed: Vec<(u32, u32)>,
    /// Values without an anchor, by the rolling hash of their first bytes, sorted.
    loose: Vec<(u64, u32)>,
    loose_window: usize,
    /// Once finished: two bit sets by key, interleaved ([`ANCHOR_BIT`] and [`HEAD_BIT`] of
    /// each slot side by side, so the two bits of a scanned run of words are one read, issue
    /// 11): the anchors (a scanned run whose bit is clear is no anchor, and is not looked up in
    /// `anchors`: most words of a text are none, and the set is small enough to stay in cache
    /// where the table is not), and the runs of words that anchors of more words start with (a
    /// scanned run whose bit is clear is not followed further).
    anchor_bits: Vec<u64>,
    hasher: DefaultHashBuilder,
    /// Scratch: the words of the value at hand.
    words: Vec<Word>,
    /// Scratch: the slots of the value's words' counts, and for [`choose`].
    slots: Vec<u32>,
    shares: Vec<i32>,
    windows: Vec<(i32, u32)>,
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
            anchor_keys: Vec::new(),
            head_keys: Vec::new(),
            rarity: Rarity::default(),
            placed: Vec::new(),
            filed_start: Vec::new(),
            filed: Vec::new(),
            loose: Vec::new(),
            loose_window: LOOSE_WINDOW,
            anchor_bits: Vec::new(),
            hasher: DefaultHashBuilder::default(),
            words: Vec::new(),
            slots: Vec::new(),
            shares: Vec::new(),
            windows: Vec::new(),
        }
    }

    /// Tells the index how many bytes of text will be scanned (all the inputs together), which
    /// sets how rare an anchor must be (see the module docs); before any value is added.
    pub(super) fn expect_scanned(&mut self, bytes: usize) {
        self.rarity.expect_scanned(bytes);
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
        let mut shares = std::mem::take(&mut self.shares);
        let mut windows = std::mem::take(&mut self.windows);
        let bytes = text.as_bytes();
        words.clear();
        // (a word's key is made only if a run of words holding it is looked up)
        each_word(text, |a, b| words.push(Word { a, b, key: 0 }));
        let hasher = &self.hasher;
        let mut slots = std::mem::take(&mut self.slots);
        slots.clear();
        for w in &words {
            let slot = count_slot(bytes.get(w.a..w.b).unwrap_or_default());
            self.rarity.add(slot);
            slots.push(slot);
        }
        let whole = whole_words(text.len(), kind, &words);
        let inner = words.get(whole.clone()).unwrap_or_default();
        shares.clear();
        shares.extend(
            slots
                .get(whole)
                .unwrap_or_default()
                .iter()
                .map(|&slot| self.rarity.log_share(slot)),
        );
        self.slots = slots;
        let best = choose(
            &shares,
            self.rarity.log_scanned(),
            &mut windows,
            |first, len| {
                let key = kept_key(run_key(hasher, bytes, inner, first, len, |_| {}));
                let run = run_bytes(bytes, inner, first, len);
                let known = self
                    .anchors
                    .find(spread(key), |&a| {
                        self.anchor_text_while_adding(a).as_bytes() == run
                    })
                    .copied();
                let load = known.map_or(0, |a| {
                    self.anchor_at
                        .get(a as usize)
                        .map_or(u32::MAX, |at| at.load)
                });
                (load, (known, key))
            },
        );
        let placed = match best {
            Some(choice) => {
                let (known, key) = choice.found;
                let anchor = known
                    .or_else(|| self.new_anchor(id, key, bytes, inner, choice.first, choice.len));
                let off = inner.get(choice.first).map_or(0, |w| w.a);
                match (anchor, u32::try_from(off)) {
                    (Some(anchor), Ok(off)) => {
                        if let Some(at) = self.anchor_at.get_mut(anchor as usize) {
                            at.load = at.load.saturating_add(1);
                        }
                        Some((anchor, off))
                    }
                    _ => None,
                }
            }
            None => None,
        };
        match placed {
            Some(p) => self.placed.push(p),
            None => {
                self.placed.push((u32::MAX, 0));
                self.loose_window = self.loose_window.min(text.len().max(1));
            }
        }
        self.words = words;
        self.shares = shares;
        self.windows = windows;
    }

    /// A new anchor, the run of `len` words of `words` from the `first` (kept key `key`) in
    /// value `value` (whose bytes are `bytes`), with the runs of words it starts with noted for
    /// the bit sets.
    fn new_anchor(
        &mut self,
        value: u32,
        key: u32,
        bytes: &[u8],
        words: &[Word],
        first: usize,
        len: usize,
    ) -> Option<u32> {
        let anchor = u32::try_from(self.anchor_at.len()).ok()?;
        let start = words.get(first)?.a;
        let run = run_bytes(bytes, words, first, len);
        self.anchor_at.push(AnchorAt {
            value,
            off: u32::try_from(start).ok()?,
            len: u32::try_from(run.len()).ok()?,
            load: 0,
        });
        self.anchor_keys.push(key);
        let keys = &self.anchor_keys;
        self.anchors.insert_unique(spread(key), anchor, |&a| {
            spread(keys.get(a as usize).copied().unwrap_or(0))
        });
        let heads = &mut self.head_keys;
        run_key(&self.hasher, bytes, words, first, len, |head| {
            heads.push(kept_key(head));
        });
        Some(anchor)
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

    /// The (value, offset) pairs filed under the anchor whose text is `run` (kept key `key`),
    /// once finished; none when it is no anchor.
    fn filed_under(&self, run: &[u8], key: u32) -> &[(u32, u32)] {
        let Some(&k) = self
            .anchors
            .find(spread(key), |&k| self.is_anchor_text(k, run))
        else {
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

    /// True when anchor `k`'s text is `run`, once finished: read in its first value.
    fn is_anchor_text(&self, k: u32, run: &[u8]) -> bool {
        let len = self.filed_start.get(k as usize).map_or(0, |&(_, len)| len);
        if len as usize != run.len() {
            return false;
        }
        let Some(&(value, off)) = self.filed_of(k).first() else {
            return false;
        };
        let off = off as usize;
        self.value_bytes(value).get(off..off + run.len()) == Some(run)
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
        self.rarity = Rarity::default();
        // (what is held at once stays below what adding the values held)
        let anchors = self.anchor_at.len();
        // An anchor of several words starts with a run of one word, and most with the same
        // few: each run once, so the set is sized by the runs there are.
        self.head_keys.sort_unstable();
        self.head_keys.dedup();
        let mut bits = vec![0u64; 2 * bit_set_words(anchors + self.head_keys.len())];
        for &k in &self.anchor_keys {
            set_pair_bit(&mut bits, spread(k), ANCHOR_BIT);
        }
        for &k in &self.head_keys {
            set_pair_bit(&mut bits, spread(k), HEAD_BIT);
        }
        self.anchor_keys = Vec::new();
        self.head_keys = Vec::new();
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
        self.slots = Vec::new();
        self.shares = Vec::new();
        self.windows = Vec::new();
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

    /// The bits of the run of words of kept key `key` in the two bit sets of
    /// [`Index::anchor_bits`]: [`ANCHOR_BIT`] when it may be an anchor, [`HEAD_BIT`] when some
    /// anchor of more words may start with it (both when the sets are empty).
    fn filter_bits(&self, key: u32) -> u64 {
        pair_bits(&self.anchor_bits, spread(key))
    }

    /// How many values are filed under each anchor, once finished (for tests).
    #[cfg(test)]
    pub(super) fn loads(&self) -> impl Iterator<Item = usize> + '_ {
        self.filed_start
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) as usize)
    }
}

/// Where an anchor's text lies while values are added: bytes `off..off + len` of the first
/// value filed under it, with how many values are filed under it (side by side: one read gives
/// both, issue 11).
#[derive(Clone, Copy, Debug)]
struct AnchorAt {
    value: u32,
    off: u32,
    len: u32,
    load: u32,
}

/// The bytes of the run of `len` words of `words` from the `first`, in `bytes`.
fn run_bytes<'b>(bytes: &'b [u8], words: &[Word], first: usize, len: usize) -> &'b [u8] {
    match (words.get(first), words.get(first + len.max(1) - 1)) {
        (Some(a), Some(b)) => bytes.get(a.a..b.b).unwrap_or_default(),
        _ => &[],
    }
}

const ROLL_BASE: u64 = 0x0000_0100_0000_01b3;

/// A polynomial hash of `bytes` (the rolling hash of the loose values).
fn roll_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |h, &b| {
        h.wrapping_mul(ROLL_BASE).wrapping_add(u64::from(b))
    })
}

/// Words of 64 bits of a bit set for `items` items: a power of two of bits, at least 8 per
/// item.
fn bit_set_words(items: usize) -> usize {
    items.saturating_mul(8).next_power_of_two().max(64) / 64
}

/// In [`Index::anchor_bits`]: the run of words may be an anchor.
const ANCHOR_BIT: u64 = 1;
/// In [`Index::anchor_bits`]: some anchor of more words may start with the run of words.
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
#[path = "index_tests.rs"]
mod tests;
