//! The `hashed` embedder, the project's offline default (docs/influence.md, "The hashed
//! embedder"): word tokens, word pairs and character trigrams, each hashed with FNV-1a into a
//! fixed number of signed buckets, counted sub-linearly (square root), then scaled to unit length.
//! Only `+`, `×`, `÷` and `√` are used, which IEEE 754 rounds the same way everywhere.
//!
//! It must stay deterministic across runs, platforms and CPUs: no random seeds, no iteration over
//! a `HashMap`, no platform-sized integers in the hash. Any change to the features, weights,
//! hash or dimension changes every score: bump [`HASHED_VERSION`] and the docs with it.

use super::lexical::fold_plural;
use super::types::{EmbedError, Embedder};
use std::collections::HashMap;

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

/// English function words that carry no topic. Negations (`no`, `not`, `never`) are kept on
/// purpose: "refund approved" and "refund not approved" should differ.
pub const HASHED_STOP_WORDS: [&str; 95] = [
    "a", "an", "the", "and", "or", "but", "if", "to", "of", "for", "in", "on", "at", "by", "with",
    "is", "are", "was", "were", "be", "been", "it", "this", "that", "these", "those", "i", "you",
    "we", "my", "our", "me", "please", "can", "could", "would", "should", "do", "does", "how",
    "what", "need", "want", "about", "after", "all", "also", "am", "any", "as", "because",
    "before", "being", "both", "did", "each", "from", "had", "has", "have", "he", "her", "here",
    "him", "his", "into", "its", "just", "may", "might", "more", "most", "must", "other", "she",
    "so", "some", "such", "than", "their", "them", "then", "there", "they", "through", "too", "us",
    "very", "when", "where", "which", "while", "who", "will", "your",
];

/// 64-bit FNV-1a over `kind` followed by the UTF-8 bytes of `text`.
pub fn fnv1a64(kind: u8, text: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for b in std::iter::once(kind).chain(text.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
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
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .filter(|p| !(p.is_ascii() && p.len() < MIN_ASCII_TOKEN_CHARS))
        .filter(|p| !HASHED_STOP_WORDS.contains(p))
        .map(|p| if p.is_ascii() { fold_plural(p) } else { p }.to_owned())
        .collect()
}

/// Features of one text, each distinct feature once with its count, in first-seen order (so
/// float sums never depend on a map's order). Features are told apart by their 64-bit hash.
#[derive(Default)]
struct Features {
    index: HashMap<u64, usize>,
    list: Vec<(u64, f64, u32)>, // mixed hash, weight, count
}

impl Features {
    fn add(&mut self, kind: u8, text: &str, weight: f64) {
        let h = mix(fnv1a64(kind, text));
        if let Some(entry) = self.index.get(&h).and_then(|&i| self.list.get_mut(i)) {
            entry.2 = entry.2.saturating_add(1);
            return;
        }
        self.index.insert(h, self.list.len());
        self.list.push((h, weight, 1));
    }
}

/// The hashed vector of one text: [`HASHED_DIM`] numbers of unit length, or all zeros when the
/// text has no features.
pub fn hashed_vector(text: &str) -> Vec<f64> {
    let toks = hashed_tokens(text);
    let mut f = Features::default();
    let mut gram = String::new();
    for (i, t) in toks.iter().enumerate() {
        f.add(KIND_WORD, t, WORD_WEIGHT);
        if let Some(next) = toks.get(i + 1) {
            gram.clear();
            gram.push_str(t);
            gram.push(' ');
            gram.push_str(next);
            f.add(KIND_PAIR, &gram, PAIR_WEIGHT);
        }
        let chars: Vec<char> = std::iter::once('<')
            .chain(t.chars())
            .chain(std::iter::once('>'))
            .collect();
        for w in chars.windows(3) {
            gram.clear();
            gram.extend(w);
            f.add(KIND_TRIGRAM, &gram, TRIGRAM_WEIGHT);
        }
    }
    let mut v = vec![0.0; HASHED_DIM];
    for &(h, weight, count) in &f.list {
        let (bucket, sign) = slot(h);
        if let Some(x) = v.get_mut(bucket) {
            *x += sign * weight * f64::from(count).sqrt();
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

/// The `hashed` embedder (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct HashedEmbedder;

impl Embedder for HashedEmbedder {
    fn name(&self) -> &str {
        "hashed"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|t| hashed_vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::cosine::cosine;
    use super::*;

    /// FNV-1a's published 64-bit test vectors, shifted by our leading kind byte: hashing kind
    /// `b'a'` with "" is FNV-1a of "a", and kind `b'f'` with "oobar" is FNV-1a of "foobar".
    #[test]
    fn the_hash_is_fnv1a_64() {
        assert_eq!(fnv1a64(b'a', ""), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b'f', "oobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn same_text_same_vector_and_no_features_zero_vector() {
        let a = hashed_vector("The refund was denied: outside the 30-day window.");
        let b = hashed_vector("The refund was denied: outside the 30-day window.");
        assert_eq!(a, b);
        assert_eq!(a.len(), HASHED_DIM);
        let norm: f64 = a.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-12);
        for empty in ["", "   ", "the and of", "a ! ? x"] {
            assert!(hashed_vector(empty).iter().all(|&x| x == 0.0), "{empty:?}");
        }
    }

    #[test]
    fn it_sees_shared_words_morphology_and_non_latin_text() {
        let answer =
            hashed_vector("Your refund request is denied; the order is outside the window.");
        let culprit =
            hashed_vector("Customer refunds were denied twice, outside the return window.");
        let innocent = hashed_vector("Hello! Thanks for contacting support, happy to help.");
        let c1 = cosine(&answer, &culprit).unwrap();
        let c2 = cosine(&answer, &innocent).unwrap();
        assert!(c1 > 0.3 && c2 < 0.1, "{c1} {c2}");
        let jp = hashed_vector("返金は拒否されました");
        assert!(jp.iter().any(|&x| x != 0.0));
        // Trigrams give a variant partial credit; an unrelated word gets none.
        let near = cosine(&hashed_vector("summarise"), &hashed_vector("summarised")).unwrap();
        let far = cosine(&hashed_vector("summarise"), &hashed_vector("invoice")).unwrap();
        assert!(near > 0.25 && far.abs() < 0.1, "{near} {far}");
    }

    #[test]
    fn the_stop_words_are_distinct_and_keep_negations() {
        let mut w = HASHED_STOP_WORDS.to_vec();
        w.sort_unstable();
        w.dedup();
        assert_eq!(w.len(), HASHED_STOP_WORDS.len());
        for kept in ["no", "not", "never"] {
            assert!(!HASHED_STOP_WORDS.contains(&kept));
        }
    }
}
