//! The hashed embedder against a plain reading of its definition (docs/influence.md, "The hashed
//! embedder"): every feature string built and hashed in full, counted in a map, summed into a
//! dense vector. The embedder's batch path (tokens hashed once per batch, trigrams counted by
//! position, buffers kept from text to text, the cache emptied at any point) must give every
//! vector's bits.

use super::*;
use proptest::prelude::*;

/// The vector of `text` straight from the definition.
fn plain_vector(text: &str) -> Vec<f64> {
    let tokens = hashed_tokens(text);
    let mut list: Vec<(u64, f64, u32)> = Vec::new();
    let mut at: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut add = |h: u64, w: f64| match at.get(&h) {
        Some(&i) => list[i].2 += 1,
        None => {
            at.insert(h, list.len());
            list.push((h, w, 1));
        }
    };
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            let pair = format!("{} {t}", tokens[i - 1]);
            add(mix(fnv1a64(KIND_PAIR, &pair)), PAIR_WEIGHT);
        }
        add(mix(fnv1a64(KIND_WORD, t)), WORD_WEIGHT);
        let chars: Vec<char> = format!("<{t}>").chars().collect();
        for w in chars.windows(3) {
            let trigram: String = w.iter().collect();
            add(mix(fnv1a64(KIND_TRIGRAM, &trigram)), TRIGRAM_WEIGHT);
        }
    }
    let mut v = vec![0.0; HASHED_DIM];
    for (h, w, count) in list {
        let (bucket, sign) = slot(h);
        v[bucket] += sign * w * f64::from(count).sqrt();
    }
    v
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Texts made of words that repeat within a text and across texts (plurals, case, stop words,
/// one-letter pieces, non-ASCII letters whose lowercase differs), joined by separators that
/// split them or glue them into new tokens.
fn text() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "refund",
        "Refunds",
        "the",
        "ORD-1234",
        "a",
        "x",
        "é",
        "Straße",
        "返金",
        "İstanbul",
        "class",
        "ss",
        "42",
        "not",
        "REFUND",
        "windows",
        "e-mail",
        "ÅNGSTRÖM",
        "ǅemal",
        "café",
        // Around eight bytes, where a token stops fitting in one number: before and after
        // its plural `s` is folded.
        "customers",
        "Shipments",
        "delivered",
        "becausee",
        "warehouses",
        "ORD12345678",
        "is",
    ]);
    let sep = prop::sample::select(vec![" ", ", ", "-", "\n", "", ". ", "_", "’"]);
    prop::collection::vec((word, sep), 0..24).prop_map(|parts| {
        parts
            .into_iter()
            .flat_map(|(w, s)| [w, s])
            .collect::<String>()
    })
}

proptest! {
    #[test]
    fn batch_vectors_have_the_bits_of_the_plain_definition(
        texts in prop::collection::vec(text(), 1..8),
        room in prop::sample::select(vec![1usize, 2, 3, 7, super::super::token_cache::KEPT_TOKENS]),
    ) {
        let mut scratch = Scratch {
            cache: TokenCache::with_room(room),
            ..Scratch::default()
        };
        for t in &texts {
            let want = plain_vector(t);
            let sparse = scratch.sparse(t);
            prop_assert!(same_bits(&sparse.to_dense(), &want), "{:?}", t);
            prop_assert!(sparse.entries().iter().all(|&(_, x)| x != 0.0));
            prop_assert!(same_bits(&scratch.vector(t), &want), "{:?}", t);
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch = HashedEmbedder.embed_sparse(&refs).unwrap();
        for (t, v) in texts.iter().zip(&batch) {
            prop_assert!(same_bits(&v.to_dense(), &plain_vector(t)), "{:?}", t);
        }
    }
}

proptest! {
    /// Calls made while a session keeps the scratches (their token caches carried from one
    /// call to the next, on any thread) give every vector's bits.
    #[test]
    fn calls_in_a_session_have_the_bits_of_the_plain_definition(
        calls in prop::collection::vec(prop::collection::vec(text(), 0..5), 1..6),
    ) {
        let session = scratch_session();
        for texts in &calls {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let batch = HashedEmbedder.embed_sparse(&refs).unwrap();
            prop_assert_eq!(batch.len(), texts.len());
            for (t, v) in texts.iter().zip(&batch) {
                prop_assert!(same_bits(&v.to_dense(), &plain_vector(t)), "{:?}", t);
            }
        }
        drop(session);
    }
}

#[test]
fn a_long_text_of_one_repeated_word_counts_every_occurrence() {
    // 600 times "refund": the pair "refund refund" 599 times, the word and each of its 6
    // trigrams 600 times.
    let text = "refund ".repeat(600);
    let v = HashedEmbedder.embed_sparse(&[&text, "refund"]).unwrap();
    assert!(same_bits(&v[0].to_dense(), &plain_vector(&text)));
    assert!(same_bits(&v[1].to_dense(), &plain_vector("refund")));
}
