//! The hashes every distinct token of a batch of texts brings, made once per batch rather than
//! once per text (issue 11: hashing each word's trigrams again in every text was the hashed
//! embedder's largest cost). A token's word hash, its character trigrams' hashes and the state
//! of its pair hash up to the token are kept; a text then hashes per token only the word and
//! the pair with the previous token. Nothing here changes a hash: each is made by the same
//! FNV-1a and mix as before, only fewer times.
//!
//! Memory is bounded: past [`KEPT_TOKENS`] tokens, [`KEPT_BYTES`] token bytes or
//! [`KEPT_TRIGRAMS`] trigram hashes, the cache is emptied before the next token is kept (a token
//! larger than all of that is kept alone until the next one).

use std::ops::Range;

/// Tokens kept at most.
pub(super) const KEPT_TOKENS: usize = 1 << 14;
/// Token bytes kept at most.
const KEPT_BYTES: usize = 1 << 18;
/// Trigram hashes kept at most.
const KEPT_TRIGRAMS: usize = 1 << 17;

/// One kept token.
pub(super) struct Cached {
    /// Its bytes in [`TokenCache::bytes`].
    bytes: Range<usize>,
    /// Its bytes as one number when it has at most eight (little-endian, zero-padded; no
    /// token byte is zero, so equal numbers are equal tokens), else 0.
    key: u64,
    /// The mixed hash of the word feature.
    pub word: u64,
    /// The FNV-1a state after the pair kind, the token and the space: the pair with a next
    /// token continues from it.
    pub pair_prefix: u64,
    /// Its trigrams' mixed hashes in [`TokenCache::trigrams`], in order.
    trigrams: Range<usize>,
    /// The text (by number) whose features hold this token's trigrams at [`Cached::seen`].
    pub stamp: u64,
    /// Positions of its trigram features in the caller's list for text `stamp`.
    pub seen: Range<usize>,
}

/// The kept tokens, found by their word hash (see the module docs).
pub(super) struct TokenCache {
    /// 0 for an empty slot, else 1 + the token's position in `tokens`.
    slots: Vec<u32>,
    tokens: Vec<Cached>,
    bytes: Vec<u8>,
    trigrams: Vec<u64>,
    /// At most this many tokens before the cache is emptied.
    room: usize,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache::with_room(KEPT_TOKENS)
    }
}

impl TokenCache {
    /// A cache emptied past `room` tokens (tests use a small one).
    pub(super) fn with_room(room: usize) -> TokenCache {
        TokenCache {
            slots: Vec::new(),
            tokens: Vec::new(),
            bytes: Vec::new(),
            trigrams: Vec::new(),
            room: room.clamp(1, 1 << 30),
        }
    }

    /// The position of token `t` with mixed word hash `word`, kept now if it was not: `make`
    /// then gives its pair prefix and pushes its trigram hashes onto the list it is handed.
    /// `key` is `t`'s bytes as one number when it has at most eight, else 0 (see
    /// [`Cached::key`]): such a token is told apart by it, without comparing bytes. The look-up
    /// is inlined into the caller; keeping a token (a few in a hundred) is not.
    #[inline]
    pub(super) fn find_or_keep(
        &mut self,
        word: u64,
        t: &str,
        key: u64,
        make: impl FnOnce(&mut Vec<u64>) -> u64,
    ) -> usize {
        match self.find(word, t, key) {
            Some(at) => at,
            None => self.keep(word, t, key, make),
        }
    }

    /// Keeps token `t` (see [`TokenCache::find_or_keep`]) and returns its position.
    #[cold]
    #[inline(never)]
    fn keep(
        &mut self,
        word: u64,
        t: &str,
        key: u64,
        make: impl FnOnce(&mut Vec<u64>) -> u64,
    ) -> usize {
        if self.tokens.len() >= self.room
            || self.bytes.len() + t.len() > KEPT_BYTES
            || self.trigrams.len() > KEPT_TRIGRAMS
        {
            self.clear();
        }
        // At most half full, so a probe soon meets an empty slot.
        if (self.tokens.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let at = self.tokens.len();
        let bytes = self.bytes.len()..self.bytes.len() + t.len();
        self.bytes.extend_from_slice(t.as_bytes());
        let first = self.trigrams.len();
        let pair_prefix = make(&mut self.trigrams);
        self.tokens.push(Cached {
            bytes,
            key,
            word,
            pair_prefix,
            trigrams: first..self.trigrams.len(),
            stamp: 0,
            seen: 0..0,
        });
        let mask = self.slots.len() - 1;
        let mut i = home(word, key, mask);
        while self.slots.get(i).is_some_and(|&s| s != 0) {
            i = (i + 1) & mask;
        }
        // `room` keeps the count far below `u32::MAX`; a token it could not number would only
        // be hashed again next time.
        if let (Some(s), Ok(number)) = (self.slots.get_mut(i), u32::try_from(at + 1)) {
            *s = number;
        }
        at
    }

    /// The kept token at `at`.
    pub(super) fn get(&self, at: usize) -> Option<&Cached> {
        self.tokens.get(at)
    }

    /// The kept token at `at`, to stamp.
    pub(super) fn get_mut(&mut self, at: usize) -> Option<&mut Cached> {
        self.tokens.get_mut(at)
    }

    /// The trigram hashes of a kept token.
    pub(super) fn trigrams(&self, token: &Cached) -> &[u64] {
        self.trigrams
            .get(token.trigrams.clone())
            .unwrap_or_default()
    }

    /// The position of the kept token whose bytes are `key` (a token of at most eight bytes,
    /// as one number: see [`Cached::key`]; not 0), found without its word hash.
    #[inline]
    pub(super) fn find_short(&self, key: u64) -> Option<usize> {
        if self.slots.is_empty() || key == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = home(0, key, mask);
        loop {
            let s = *self.slots.get(i)?;
            if s == 0 {
                return None;
            }
            let at = s as usize - 1;
            if self.tokens.get(at).is_some_and(|c| c.key == key) {
                return Some(at);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn find(&self, word: u64, t: &str, key: u64) -> Option<usize> {
        if key != 0 {
            return self.find_short(key);
        }
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = home(word, key, mask);
        loop {
            let s = *self.slots.get(i)?;
            if s == 0 {
                return None;
            }
            let at = s as usize - 1;
            if let Some(c) = self.tokens.get(at)
                && c.word == word
                && c.key == key
                && (key != 0 || self.bytes.get(c.bytes.clone()) == Some(t.as_bytes()))
            {
                return Some(at);
            }
            i = (i + 1) & mask;
        }
    }

    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = 0);
        self.tokens.clear();
        self.bytes.clear();
        self.trigrams.clear();
    }

    /// Doubles the table and places every token again.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1 << 10);
        let mask = size - 1;
        let mut slots = vec![0u32; size];
        for (k, c) in self.tokens.iter().enumerate() {
            let mut i = home(c.word, c.key, mask);
            while slots.get(i).is_some_and(|&s| s != 0) {
                i = (i + 1) & mask;
            }
            if let (Some(s), Ok(n)) = (slots.get_mut(i), u32::try_from(k + 1)) {
                *s = n;
            }
        }
        self.slots = slots;
    }
}

/// The slot a token starts its probe at: for a token of at most eight bytes, the top bits of a
/// multiplicative hash of its bytes `key` (so it is found before its word hash is made); for a
/// longer one (`key` 0), its word hash's high bits.
fn home(word: u64, key: u64, mask: usize) -> usize {
    if key != 0 {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
    } else {
        (word >> 40) as usize & mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token's bytes as one number, as the embedder packs them (0 past eight bytes).
    fn key_of(t: &str) -> u64 {
        if t.len() > 8 {
            return 0;
        }
        t.bytes().rev().fold(0, |k, b| (k << 8) | u64::from(b))
    }

    #[test]
    fn kept_tokens_are_found_by_their_bytes_or_their_word_hash_across_growth() {
        let mut cache = TokenCache::default();
        // More tokens than a fresh table holds; short and long ones, with word hashes that
        // share their high bits (one probe chain for the long ones).
        let tokens: Vec<String> = (0..1500)
            .map(|k| {
                if k % 3 == 0 {
                    format!("longtoken{k}")
                } else {
                    format!("t{k}")
                }
            })
            .collect();
        for (k, t) in tokens.iter().enumerate() {
            let word = (k as u64) | 7 << 40;
            let at = cache.find_or_keep(word, t, key_of(t), |out| {
                out.push(k as u64);
                k as u64
            });
            assert_eq!(at, k);
        }
        for (k, t) in tokens.iter().enumerate() {
            let key = key_of(t);
            let word = (k as u64) | 7 << 40;
            assert_eq!(cache.find(word, t, key), Some(k), "{t}");
            if key != 0 {
                assert_eq!(cache.find_short(key), Some(k), "{t}");
            } else {
                assert_eq!(cache.find_short(key), None, "{t}");
            }
            let c = cache.get(k).unwrap();
            assert_eq!((c.word, c.pair_prefix), (word, k as u64));
            assert_eq!(cache.trigrams(c), &[k as u64]);
        }
        // Neither a token never kept nor a long one with another token's word hash is found.
        assert_eq!(cache.find_short(key_of("t99999")), None);
        assert_eq!(cache.find(7 << 40, "longtokenX", 0), None);
    }
}
