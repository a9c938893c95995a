//! The word tokens and set overlap of influence.md §4, and the `lexical` embedder whose cosine
//! equals that overlap. The tokenizer is exact (the fixtures pin it); do not "improve" it here —
//! the hashed embedder has its own, documented features.

use super::types::{EmbedError, Embedder};
use hashbrown::HashMap;

/// The 43 stop-words of influence.md §4, dropped before the plural fold.
pub const STOP_WORDS: [&str; 43] = [
    "a", "an", "the", "and", "or", "but", "if", "to", "of", "for", "in", "on", "at", "by", "with",
    "is", "are", "was", "were", "be", "been", "it", "this", "that", "these", "those", "i", "you",
    "we", "my", "our", "me", "please", "can", "could", "would", "should", "do", "does", "how",
    "what", "need", "want",
];

/// Shortest token kept.
const MIN_TOKEN_CHARS: usize = 2;
/// Shortest token whose trailing `s` is folded.
const MIN_FOLD_CHARS: usize = 4;

/// The tokens of `text` in order of appearance, repeats included: Unicode lowercase, split on
/// every character outside `a`-`z` and `0`-`9`, drop pieces under 2 characters and stop-words,
/// then fold a plural `s` (not `ss`) off tokens of 4 or more characters.
pub fn tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|piece| piece.len() >= MIN_TOKEN_CHARS && !STOP_WORDS.contains(piece))
        .map(|piece| fold_plural(piece).to_owned())
        .collect()
}

/// `tools` → `tool`, `class` stays, `bus` stays (too short). Pieces are ASCII, so byte length is
/// character length.
pub(crate) fn fold_plural(piece: &str) -> &str {
    if piece.len() >= MIN_FOLD_CHARS && piece.ends_with('s') && !piece.ends_with("ss") {
        &piece[..piece.len() - 1]
    } else {
        piece
    }
}

/// The token set of `text`, sorted and without repeats.
pub fn token_set(text: &str) -> Vec<String> {
    let mut t = tokens(text);
    t.sort_unstable();
    t.dedup();
    t
}

/// `|A ∩ B| / sqrt(|A| · |B|)` over two sorted, repeat-free slices; 0 when either is empty.
pub fn overlap_sorted<T: Ord>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() as f64 * b.len() as f64).sqrt()
}

/// The lexical overlap of two texts (influence.md §4).
pub fn overlap(a: &str, b: &str) -> f64 {
    overlap_sorted(&token_set(a), &token_set(b))
}

/// Interns tokens to small integers so a request's token sets compare cheaply.
#[derive(Default)]
pub(crate) struct TokenSets {
    ids: HashMap<String, u32>,
}

impl TokenSets {
    /// The sorted, repeat-free token ids of `text`.
    pub(crate) fn set_of(&mut self, text: &str) -> Vec<u32> {
        let mut set: Vec<u32> = tokens(text)
            .into_iter()
            .map(|t| {
                let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
                *self.ids.entry(t).or_insert(next)
            })
            .collect();
        set.sort_unstable();
        set.dedup();
        set
    }

    /// How many distinct tokens were seen.
    pub(crate) fn vocabulary(&self) -> usize {
        self.ids.len()
    }
}

/// The `lexical` embedder: each text becomes the 0/1 indicator of its token set over a vocabulary
/// built from the batch, so cosines equal the §4 overlap. Vectors are comparable only with
/// vectors of the same batch (embed texts you will compare together).
#[derive(Clone, Copy, Debug, Default)]
pub struct LexicalEmbedder;

impl Embedder for LexicalEmbedder {
    fn name(&self) -> &str {
        "lexical"
    }

    fn per_call(&self) -> bool {
        true
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        let mut sets = TokenSets::default();
        let per_text: Vec<Vec<u32>> = texts.iter().map(|t| sets.set_of(t)).collect();
        let dims = sets.vocabulary();
        Ok(per_text
            .into_iter()
            .map(|set| {
                let mut v = vec![0.0; dims];
                for id in set {
                    if let Some(slot) = usize::try_from(id).ok().and_then(|i| v.get_mut(i)) {
                        *slot = 1.0;
                    }
                }
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_word_list_has_43_distinct_words() {
        let mut w = STOP_WORDS.to_vec();
        w.sort_unstable();
        w.dedup();
        assert_eq!(w.len(), 43);
    }

    #[test]
    fn interned_sets_give_the_same_overlap_as_string_sets() {
        let mut sets = TokenSets::default();
        let a = sets.set_of("Refund window policy, refunds");
        let b = sets.set_of("refund POLICY");
        assert_eq!(
            overlap_sorted(&a, &b),
            overlap("Refund window policy", "refund policy")
        );
    }
}
