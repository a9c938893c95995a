//! The `hashed` embedder, the project's offline default (docs/influence.md, "The hashed
//! embedder"): word tokens, word pairs and character trigrams, each hashed with FNV-1a into a
//! fixed number of signed buckets, counted sub-linearly (square root). Vectors are not
//! normalised: cosine does not care about length.
//! Only `+`, `×`, `÷` and `√` are used, which IEEE 754 rounds the same way everywhere.
//!
//! It must stay deterministic across runs, platforms and CPUs: no random seeds, no iteration over
//! a `HashMap`, no platform-sized integers in the hash. Any change to the features, weights,
//! hash or dimension changes every score: bump [`HASHED_VERSION`] and the docs with it.

use super::feature_counts::{Feature, FeatureCounts};
use super::lexical::fold_plural;
use super::scratch_pool::{ScratchPool, Session};
use super::sparse::SparseVector;
use super::token_cache::TokenCache;
use super::types::{EmbedError, Embedder};

/// The design version; bump it whenever anything below changes a vector.
pub const HASHED_VERSION: u32 = 1;
/// The vector length (a power of two, so a bucket is the low bits of the hash).
pub const HASHED_DIM: usize = 1024;
/// Weight of a word token.
const WORD_WEIGHT: f64 = 1.0;
/// Weight of a pair of neighbouring word tokens.
const PAIR_WEIGHT: f64 = 0.5;
/// Weight of one character trigram of a word (a word has several).
const TRIGRAM_WEIGHT: f64 = 0.25;
/// Shortest ASCII token kept (a single non-ASCII letter, e.g. one CJK character, is kept).
const MIN_ASCII_TOKEN_CHARS: usize = 2;
/// Feature kinds, hashed as the first byte so a word never collides with its own trigram.
const KIND_WORD: u8 = b'w';
const KIND_PAIR: u8 = b'p';
const KIND_TRIGRAM: u8 = b't';

/// English function words that carry no topic, sorted, none longer than 8 bytes. Negations (`no`, `not`, `never`) are kept on
/// purpose: "refund approved" and "refund not approved" should differ.
pub const HASHED_STOP_WORDS: [&str; 95] = [
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "each", "for", "from", "had", "has", "have", "he", "her", "here", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "just", "may", "me", "might", "more", "most", "must",
    "my", "need", "of", "on", "or", "other", "our", "please", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "us", "very", "want", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "will", "with", "would", "you", "your",
];

/// 64-bit FNV-1a over `kind` followed by the UTF-8 bytes of `text`.
pub fn fnv1a64(kind: u8, text: &str) -> u64 {
    let mut h = Fnv::new(kind);
    h.feed(text.as_bytes());
    h.0
}

/// FNV-1a, fed piece by piece so features need no string of their own.
struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new(kind: u8) -> Self {
        let mut h = Fnv(Self::OFFSET);
        h.feed(&[kind]);
        h
    }

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

/// FNV-1a mixes its low bits poorly; the splitmix64 finalizer spreads every input bit over the
/// bucket bits and the sign bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The bucket and sign of a mixed hash: low bits pick the bucket, the top bit the sign.
fn slot(h: u64) -> (usize, f64) {
    let mask = (HASHED_DIM - 1) as u64;
    let bucket = usize::try_from(h & mask).unwrap_or(0);
    let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
    (bucket, sign)
}

/// The word tokens of the hashed embedder: Unicode lowercase, split on every character that is
/// not alphanumeric, drop one-character ASCII pieces and [`HASHED_STOP_WORDS`], fold a plural
/// `s` as the lexical tokens do.
pub fn hashed_tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    tokens_of(&lower).map(str::to_owned).collect()
}

/// The tokens of an already lowercased text (see [`hashed_tokens`]).
fn tokens_of(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .filter(|p| !(p.is_ascii() && p.len() < MIN_ASCII_TOKEN_CHARS))
        .filter(|p| !is_stop_word(p))
        .map(|p| if p.is_ascii() { fold_plural(p) } else { p })
}

/// Longest stop-word, in bytes; each packs into one `u64`.
const MAX_STOP_WORD_BYTES: usize = 8;

/// A short ASCII word as a number (its bytes, little-endian, zero-padded), for a fast look-up.
fn pack(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    if bytes.len() > MAX_STOP_WORD_BYTES {
        return None;
    }
    // Shifted into a register byte by byte: copying into a buffer and reading it back as one
    // number stalled on every token.
    Some(
        bytes
            .iter()
            .rev()
            .fold(0u64, |k, &b| (k << 8) | u64::from(b)),
    )
}

/// Zero bytes written after a lowercased ASCII text, so that any piece's first eight bytes
/// can be read as one number ([`packed`]); a zero byte is no letter or digit, so no piece runs
/// into them.
const PADDING: &str = "\0\0\0\0\0\0\0\0";

/// What [`pack`] gives a word of `len` bytes whose first eight bytes (followed by any bytes
/// when it is shorter), little-endian, are `head`; 0 for a word longer than eight bytes or
/// empty.
fn packed(head: u64, len: usize) -> u64 {
    match len {
        1..=7 => head & ((1u64 << (8 * len)) - 1),
        MAX_STOP_WORD_BYTES => head,
        _ => 0,
    }
}

/// Slots of the stop-word table (a power of two, several times the words, so a look-up mostly
/// reads one slot).
const STOP_SLOTS: usize = 512;

/// The slot a packed word starts its search at: the top bits of a multiplicative hash.
fn stop_slot(k: u64) -> usize {
    (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - STOP_SLOTS.trailing_zeros())) as usize
}

/// True for a word of [`HASHED_STOP_WORDS`]: an open-addressed table of the packed words (0
/// marks an empty slot; no word packs to 0), read from the word's slot to the first empty one.
/// No string comparisons on the hot path.
fn is_stop_word(word: &str) -> bool {
    pack(word).is_some_and(|k| is_stop_key(stop_table(), k))
}

/// The table of [`is_stop_word`], made once.
fn stop_table() -> &'static [u64] {
    static TABLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0u64; STOP_SLOTS];
        for k in HASHED_STOP_WORDS.iter().filter_map(|w| pack(w)) {
            let mut i = stop_slot(k);
            while t.get(i).is_some_and(|&x| x != 0 && x != k) {
                i = (i + 1) % STOP_SLOTS;
            }
            if let Some(slot) = t.get_mut(i) {
                *slot = k;
            }
        }
        t
    })
}

/// True for the packed word `k` (see [`pack`]) of a stop-word, looked up in `table`
/// ([`stop_table`]).
fn is_stop_key(table: &[u64], k: u64) -> bool {
    if k == 0 {
        return false;
    }
    let mut i = stop_slot(k);
    loop {
        match table.get(i) {
            Some(&x) if x == k => return true,
            Some(&0) | None => return false,
            Some(_) => i = (i + 1) % STOP_SLOTS,
        }
    }
}

/// The hashed vector of one text: [`HASHED_DIM`] numbers (not normalised), all zeros when the
/// text has no features. Per token, in order: the pair with the previous token, the word, then
/// its character trigrams (with `<` and `>` marking the word's ends).
pub fn hashed_vector(text: &str) -> Vec<f64> {
    Scratch::default().vector(text)
}

/// Buffers reused from one text to the next within a batch.
#[derive(Default)]
pub(super) struct Scratch {
    features: FeatureCounts,
    /// The lowercased text, when it is ASCII (no allocation per text).
    lower: String,
    padded: String,
    bounds: Vec<usize>,
    /// The hashes of the batch's tokens so far (see [`TokenCache`]).
    cache: TokenCache,
    /// The number of the text at hand (1 for the first): a kept token stamped with it has its
    /// trigrams counted in this text already.
    stamp: u64,
    /// Positions of the trigram features of the text's tokens so far, one token after the
    /// other (see [`Scratch::add_token`]).
    seen_trigrams: Vec<usize>,
    /// All zeros between texts; buckets are summed here in feature order.
    sums: Sums,
}

/// One sum per bucket, of a fixed length so that a bucket (the hash's low bits) needs no
/// bounds check.
struct Sums(Box<[f64; HASHED_DIM]>);

impl Default for Sums {
    fn default() -> Self {
        Sums(Box::new([0.0; HASHED_DIM]))
    }
}

/// `sign · weight · √count`; a feature seen once is `sign · weight` (`√1` is exactly 1).
fn contribution(sign: f64, f: &Feature) -> f64 {
    if f.count == 1 {
        sign * f.weight
    } else {
        sign * f.weight * f64::from(f.count).sqrt()
    }
}

impl Scratch {
    fn vector(&mut self, text: &str) -> Vec<f64> {
        self.collect(text);
        let mut v = vec![0.0; HASHED_DIM];
        for f in self.features.list() {
            let (bucket, sign) = slot(f.hash);
            if let Some(x) = v.get_mut(bucket) {
                *x += contribution(sign, f);
            }
        }
        v
    }

    /// The vector of [`Scratch::vector`] by its non-zero buckets: each bucket summed in the same
    /// order, so every number has the same bits. The buckets a feature touched are marked in a
    /// bit set and read back in bucket order.
    fn sparse(&mut self, text: &str) -> SparseVector {
        self.collect(text);
        let sums = &mut *self.sums.0;
        let mut touched = [0u64; HASHED_DIM / 64];
        for f in self.features.list() {
            let (bucket, sign) = slot(f.hash);
            if let (Some(x), Some(bits)) = (sums.get_mut(bucket), touched.get_mut(bucket / 64)) {
                *x += contribution(sign, f);
                *bits |= 1u64 << (bucket % 64);
            }
        }
        let n: u32 = touched.iter().map(|w| w.count_ones()).sum();
        let mut entries = Vec::with_capacity(n as usize);
        for (word, &bits) in touched.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let b = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(x) = sums.get_mut(b) {
                    // A bucket whose sum cancelled out to zero has no entry.
                    if *x != 0.0
                        && let Ok(b) = u32::try_from(b)
                    {
                        entries.push((b, *x));
                    }
                    *x = 0.0;
                }
            }
        }
        // Buckets read in increasing order, each below HASHED_DIM, zeros left out.
        SparseVector::from_ordered(HASHED_DIM, entries)
    }

    /// Fills `features` with the features of `text`. An ASCII text is lowercased into a kept
    /// buffer and split on bytes (for ASCII, `to_lowercase` and `is_alphanumeric` are the ASCII
    /// ones); any other text takes the Unicode path.
    fn collect(&mut self, text: &str) {
        self.features.clear();
        self.stamp += 1;
        self.seen_trigrams.clear();
        if text.is_ascii() {
            let mut lower = std::mem::take(&mut self.lower);
            lower.clear();
            lower.push_str(text);
            lower.make_ascii_lowercase();
            lower.push_str(PADDING);
            let stop = stop_table();
            let mut prev = None;
            let mut runs = AsciiRuns {
                text: &lower,
                at: 0,
            };
            while let Some((start, piece)) = runs.next_at() {
                if piece.len() < MIN_ASCII_TOKEN_CHARS {
                    continue;
                }
                // The piece's first eight bytes as one number: the padding is there to read.
                let head = lower
                    .as_bytes()
                    .get(start..start + PADDING.len())
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, u64::from_le_bytes);
                if is_stop_key(stop, packed(head, piece.len())) {
                    continue;
                }
                let t = fold_plural(piece);
                prev = Some(self.add_token(prev, t, packed(head, t.len())));
            }
            self.lower = lower;
        } else {
            let lower = text.to_lowercase();
            let mut prev = None;
            for t in tokens_of(&lower) {
                prev = Some(self.add_token(prev, t, pack(t).unwrap_or(0)));
            }
        }
    }

    /// The features of token `t` after the token whose pair prefix is `prev`: the pair, the
    /// word, then its trigrams; returns `t`'s own pair prefix. `key` is `t` packed (see
    /// [`pack`]) when it has at most eight bytes, else 0. The trigrams' hashes and the pair
    /// prefix come from the batch's [`TokenCache`]; a token the text had before has all its
    /// trigrams counted already: they are counted once more by their positions (the same
    /// counts as adding them again).
    fn add_token(&mut self, prev: Option<u64>, t: &str, key: u64) -> u64 {
        // A short token kept already is found by its bytes: its word hash is kept with it,
        // and only the pair's hash (from the previous token's prefix) is fed.
        let short = self
            .cache
            .find_short(key)
            .and_then(|at| Some((at, self.cache.get(at)?.word)));
        let (at, word, pair) = match short {
            Some((at, word)) => {
                let mut pair = Fnv(prev.unwrap_or(0));
                pair.feed(t.as_bytes());
                (at, word, pair)
            }
            None => {
                // The word's hash and the pair's fed side by side: two chains of
                // multiplications that do not wait on each other.
                let (mut w, mut pair) = (Fnv::new(KIND_WORD), Fnv(prev.unwrap_or(0)));
                for &b in t.as_bytes() {
                    w.0 = (w.0 ^ u64::from(b)).wrapping_mul(Fnv::PRIME);
                    pair.0 = (pair.0 ^ u64::from(b)).wrapping_mul(Fnv::PRIME);
                }
                let word = mix(w.0);
                let (padded, bounds) = (&mut self.padded, &mut self.bounds);
                let at = self.cache.find_or_keep(word, t, key, |out| {
                    token_trigrams(t, padded, bounds, out);
                    let mut h = Fnv::new(KIND_PAIR);
                    h.feed(t.as_bytes());
                    h.feed(b" ");
                    h.0
                });
                (at, word, pair)
            }
        };

        let f = &mut self.features;
        if prev.is_some() {
            f.add(mix(pair.0), PAIR_WEIGHT);
        }
        f.add(word, WORD_WEIGHT);
        let Some(token) = self.cache.get(at) else {
            return 0;
        };
        let pair_prefix = token.pair_prefix;
        if token.stamp == self.stamp {
            for &p in self
                .seen_trigrams
                .get(token.seen.clone())
                .unwrap_or_default()
            {
                f.bump(p);
            }
            return pair_prefix;
        }
        let first = self.seen_trigrams.len();
        let mut all = true;
        for &h in self.cache.trigrams(token) {
            match f.add(h, TRIGRAM_WEIGHT) {
                Some((p, _)) => self.seen_trigrams.push(p),
                None => all = false,
            }
        }
        match self.cache.get_mut(at) {
            Some(token) if all => {
                token.stamp = self.stamp;
                token.seen = first..self.seen_trigrams.len();
            }
            // A feature the list could not number: this token's trigrams are added again
            // next time rather than counted by position.
            _ => self.seen_trigrams.truncate(first),
        }
        pair_prefix
    }
}

/// Pushes the mixed hashes of the character trigrams of token `t` onto `out`, in order, with
/// `<` and `>` marking the word's ends; `padded` and `bounds` are scratch.
fn token_trigrams(t: &str, padded: &mut String, bounds: &mut Vec<usize>, out: &mut Vec<u64>) {
    padded.clear();
    padded.push('<');
    padded.push_str(t);
    padded.push('>');
    if padded.is_ascii() {
        // Every byte is a character: a trigram is three bytes.
        for w in padded.as_bytes().windows(3) {
            let mut h = Fnv::new(KIND_TRIGRAM);
            h.feed(w);
            out.push(mix(h.0));
        }
    } else {
        bounds.clear();
        bounds.extend(padded.char_indices().map(|(i, _)| i));
        bounds.push(padded.len());
        for w in bounds.windows(4) {
            if let (Some(&start), Some(&end)) = (w.first(), w.get(3)) {
                let mut h = Fnv::new(KIND_TRIGRAM);
                h.feed(padded.as_bytes().get(start..end).unwrap_or_default());
                out.push(mix(h.0));
            }
        }
    }
}

/// The runs of ASCII letters and digits of a text, found byte by byte (the pieces
/// `split(|c: char| !c.is_ascii_alphanumeric())` gives, without the empty ones).
struct AsciiRuns<'a> {
    text: &'a str,
    at: usize,
}

/// Per byte value: whether it is an ASCII letter or digit (one load per byte where two range
/// checks were).
static ASCII_ALNUM: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

impl<'a> AsciiRuns<'a> {
    /// The next run with the position of its first byte.
    fn next_at(&mut self) -> Option<(usize, &'a str)> {
        let bytes = self.text.as_bytes();
        let alnum = |b: u8| ASCII_ALNUM[usize::from(b)];
        let mut i = self.at;
        while !alnum(*bytes.get(i)?) {
            i += 1;
        }
        let start = i;
        while bytes.get(i).is_some_and(|&b| alnum(b)) {
            i += 1;
        }
        self.at = i;
        // Both ends are next to ASCII bytes (or the text's ends): character boundaries.
        Some((start, self.text.get(start..i)?))
    }
}

impl<'a> Iterator for AsciiRuns<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.next_at().map(|(_, run)| run)
    }
}

/// The `hashed` embedder (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct HashedEmbedder;

impl Embedder for HashedEmbedder {
    fn name(&self) -> &str {
        "hashed"
    }

    fn per_text(&self) -> bool {
        true
    }

    fn parallel(&self) -> bool {
        true
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        let mut scratch = Scratch::default();
        Ok(texts.iter().map(|t| scratch.vector(t)).collect())
    }

    fn embed_sparse(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        let mut scratch = SCRATCHES.take().unwrap_or_default();
        let vectors = texts.iter().map(|t| scratch.sparse(t)).collect();
        SCRATCHES.give_back(scratch);
        Ok(vectors)
    }
}

/// The embedder's scratches kept between calls while a ranking runs (see [`scratch_session`]).
static SCRATCHES: ScratchPool<Scratch> = ScratchPool::new();

/// Keeps the hashed embedder's scratches (its token cache above all) from one call to the next
/// until the session is dropped (and every other one with it), when they are let go (issue 11:
/// a ranking calls the embedder per part of 64 texts). Vectors do not depend on it.
pub(super) fn scratch_session() -> Session<'static, Scratch> {
    SCRATCHES.session()
}

#[cfg(test)]
#[path = "hashed_unit_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "hashed_tests.rs"]
mod batch_tests;
