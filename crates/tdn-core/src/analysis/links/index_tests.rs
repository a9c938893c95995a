use super::*;

/// `n` sentences of 10 to 17 words drawn from six (a fixed-seed generator).
fn sentences_of_six_words(n: usize) -> Vec<String> {
    const WORDS: [&str; 6] = ["order", "refund", "policy", "the", "customer", "check"];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as usize
    };
    (0..n)
        .map(|_| {
            let len = 10 + next(8);
            let words: Vec<&str> = (0..len).map(|_| WORDS[next(6)]).collect();
            format!("{}.", words.join(" "))
        })
        .collect()
}

/// Issue 28: with every pair of words common, values are filed under runs of words rare
/// enough that each anchor holds a few values (under pairs of words, as before, 4,000
/// sentences of six words put about 110 values on each of the 36 pairs), and each is found.
#[test]
fn sentences_of_a_few_words_are_filed_a_few_to_an_anchor() {
    let sentences = sentences_of_six_words(4_000);
    let mut index = Index::new(usize::MAX);
    index.expect_scanned(4_000 * 200);
    let hasher = index.hasher();
    for s in &sentences {
        index.intern_hashed(s, ValueKind::Sentence, text_hash(&hasher, s.as_bytes()));
    }
    index.finish();
    assert!(index.loose.is_empty());
    let loads: Vec<usize> = index.loads().collect();
    let most = loads.iter().copied().max().unwrap_or(0);
    assert!(most <= 8, "an anchor holds {most} values");
    assert!(loads.len() >= 4_000 / 4, "{} anchors", loads.len());
    let (mut words, mut hits) = (Vec::new(), Vec::new());
    for s in sentences.iter().step_by(97) {
        let text = format!("we said: {s} and then");
        index.scan(&text, &mut words, &mut hits);
        assert!(
            hits.iter()
                .any(|h| index.value(h.value as usize) == s.as_str()),
            "{s} is found"
        );
    }
}

/// Which anchor each value gets does not depend on the seed of the hashes (each index has
/// its own): two indexes of the same values file them alike, so a scan checks the same
/// values, and a budget that runs out lets the same ones through, in every process. (With
/// 100,000 ids, many of their numbers share a slot of the word counts; whether one is
/// counted once or twice decides whether it is rare enough on its own.)
#[test]
fn anchors_do_not_depend_on_the_seed_of_the_hashes() {
    let values: Vec<String> = (0..100_000u64).map(|k| format!("ORD-{}", k * 7)).collect();
    let build = || {
        let mut index = Index::new(usize::MAX);
        index.expect_scanned(6 * 2 * values.len());
        let hasher = index.hasher();
        for v in &values {
            index.intern_hashed(v, ValueKind::Id, text_hash(&hasher, v.as_bytes()));
        }
        index.finish();
        index
    };
    let (a, b) = (build(), build());
    assert_ne!(
        a.hasher.hash_one("order"),
        b.hasher.hash_one("order"),
        "two seeds"
    );
    // (some filed under their number alone, some under the whole id)
    let whole = (0..a.filed_start.len().saturating_sub(1))
        .filter(|&k| {
            let len = a.filed_start[k].1 as usize;
            let first = a.filed_of(k as u32).first().map_or(0, |f| f.0);
            a.value(first as usize).len() == len
        })
        .count();
    assert!(whole > 0 && whole < values.len(), "{whole} whole ids");
    let differ = a.filed.iter().zip(&b.filed).filter(|(x, y)| x != y).count();
    assert!(
        a.filed_start == b.filed_start && a.filed == b.filed,
        "{differ} values filed apart"
    );
}
