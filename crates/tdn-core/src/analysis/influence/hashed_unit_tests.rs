//! The hashed embedder's own tests: the hash, the vectors' shape and what they see, the ASCII
//! splitter, the packed words and the stop-words.
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
    for empty in ["", "   ", "the and of", "a ! ? x"] {
        assert!(hashed_vector(empty).iter().all(|&x| x == 0.0), "{empty:?}");
    }
}

#[test]
fn it_sees_shared_words_morphology_and_non_latin_text() {
    let answer = hashed_vector("Your refund request is denied; the order is outside the window.");
    let culprit = hashed_vector("Customer refunds were denied twice, outside the return window.");
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
fn sparse_vectors_are_the_dense_ones_by_their_non_zero_buckets() {
    let texts = [
        "Refunds denied twice this year.",
        "",
        "Parcels ship by courier; refunds ship never.",
        "返金は拒否されました",
    ];
    let dense = HashedEmbedder.embed(&texts).unwrap();
    let sparse = HashedEmbedder.embed_sparse(&texts).unwrap();
    for (d, s) in dense.iter().zip(&sparse) {
        assert_eq!(s.dim(), HASHED_DIM);
        let back = s.to_dense();
        assert!(
            d.iter()
                .zip(&back)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (*x == 0.0 && *y == 0.0))
        );
    }
    assert!(sparse[1].entries().is_empty());
    assert!(!sparse[0].entries().is_empty() && sparse[0].entries().len() < 100);
}

#[test]
fn a_batch_gives_each_text_its_own_vector() {
    let (a, b) = (
        "Refunds denied twice this year.",
        "Parcels ship by courier.",
    );
    let batch = HashedEmbedder.embed(&[a, b, a, ""]).unwrap();
    assert_eq!(
        batch,
        vec![
            hashed_vector(a),
            hashed_vector(b),
            hashed_vector(a),
            hashed_vector("")
        ]
    );
}

#[test]
fn ascii_runs_are_the_non_empty_pieces_of_a_split() {
    for text in [
        "",
        "ab",
        "  ab,cd--e f9  ",
        "-x-",
        "a\u{e9}b c",
        "\u{8fd4}\u{91d1} ok",
        "1Z0a",
    ] {
        let split: Vec<&str> = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|p| !p.is_empty())
            .collect();
        let runs: Vec<&str> = AsciiRuns { text, at: 0 }.collect();
        assert_eq!(runs, split, "{text:?}");
    }
}

use proptest::prelude::*;

proptest::proptest! {
    /// Any text (ASCII of every kind, and some non-ASCII letters): the runs are the
    /// non-empty pieces of a split on every byte that is not an ASCII letter or digit.
    #[test]
    fn ascii_runs_of_any_text_are_the_pieces_of_a_split(
        text in proptest::collection::vec(
            proptest::prop_oneof![
                8 => (0u8..128).prop_map(char::from),
                1 => proptest::sample::select(vec!['\u{e9}', '\u{8fd4}', '\u{a0}']),
            ],
            0..80,
        ).prop_map(|c| c.into_iter().collect::<String>())
    ) {
        let split: Vec<&str> = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|p| !p.is_empty())
            .collect();
        let runs: Vec<&str> = AsciiRuns { text: &text, at: 0 }.collect();
        proptest::prop_assert_eq!(runs, split);
    }
}

#[test]
fn a_packed_head_is_the_packed_word() {
    for word in ["ab", "refund", "through", "becausee", "customers", "x"] {
        let mut padded = word.as_bytes().to_vec();
        padded.extend_from_slice(b"tail\0\0\0\0\0\0\0\0");
        let head = u64::from_le_bytes(padded[..8].try_into().unwrap());
        assert_eq!(packed(head, word.len()), pack(word).unwrap_or(0), "{word}");
    }
    assert_eq!(packed(u64::MAX, 0), 0);
}

#[test]
fn the_stop_words_are_sorted_distinct_and_keep_negations() {
    assert!(HASHED_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    assert!(HASHED_STOP_WORDS.iter().all(|w| is_stop_word(w)));
    assert_eq!(pack("ab"), Some(u64::from_le_bytes(*b"ab\0\0\0\0\0\0")));
    assert_eq!(pack("through"), Some(u64::from_le_bytes(*b"through\0")));
    assert_eq!(pack("becausee"), Some(u64::from_le_bytes(*b"becausee")));
    for word in ["refund", "thes", "th", "becausee", "", "thesethose"] {
        assert!(!is_stop_word(word), "{word}");
    }
    for kept in ["no", "not", "never"] {
        assert!(!HASHED_STOP_WORDS.contains(&kept));
    }
}
