//! The link index against a plain reading of docs/how-it-decides.md, "Link", on small random
//! runs: every value each step produced (with the same per-step caps), every place each value
//! occurs in each later input (ids, dates and numbers only outside longer words), taken in
//! order of where they end, longer first, each value once per input, linked to its latest
//! earlier producer. The reference compares every value with every position; the index must
//! find exactly the same uses.

use super::index::{Hit, Index, at_boundaries, text_hash};
use super::{LinkGraph, StepTexts, Use, ValueKind, link_values, link_values_in};
use crate::analysis::model::{Run, RunStatus, Step, StepKind};
use crate::analysis::params::{
    LINK_MAX_PER_STEP, LINK_MAX_SENTENCES_PER_STEP, LINK_MAX_VALUES_PER_STEP,
};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::HashMap;

struct Reference {
    values: Vec<(String, ValueKind)>,
    producers: Vec<Vec<usize>>,
    uses: Vec<Use>,
}

fn reference(texts: &StepTexts) -> Reference {
    let mut values: Vec<(String, ValueKind)> = Vec::new();
    let mut by_text: HashMap<String, usize> = HashMap::new();
    let mut producers: Vec<Vec<usize>> = Vec::new();
    for p in 0..texts.len() {
        let (mut atoms, mut sentences) = (0, 0);
        let mut here: Vec<usize> = Vec::new();
        link_values(&texts.produced(p), |v, kind| {
            let sentence = kind == ValueKind::Sentence;
            let full = if sentence {
                sentences >= LINK_MAX_SENTENCES_PER_STEP
            } else {
                atoms >= LINK_MAX_VALUES_PER_STEP
            };
            if full {
                return !sentence;
            }
            let id = *by_text.entry(v.to_owned()).or_insert_with(|| {
                values.push((v.to_owned(), kind));
                producers.push(Vec::new());
                values.len() - 1
            });
            if !here.contains(&id) {
                here.push(id);
                if sentence {
                    sentences += 1;
                } else {
                    atoms += 1;
                }
                producers[id].push(p);
            }
            true
        });
    }
    let mut uses = Vec::new();
    for j in 0..texts.len() {
        let text = texts.consumed(j);
        // (end, length, value) of every occurrence
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for (id, (v, kind)) in values.iter().enumerate() {
            for start in (0..=text.len()).filter(|&s| text.is_char_boundary(s)) {
                let end = start + v.len();
                if text.get(start..end) == Some(v.as_str())
                    && (*kind == ValueKind::Sentence || at_boundaries(&text, start, end))
                {
                    hits.push((end, v.len(), id));
                }
            }
        }
        hits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut seen: Vec<usize> = Vec::new();
        let mut linked = 0;
        for (_, _, id) in hits {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if let Some(&from) = producers[id].iter().rev().find(|&&p| p < j) {
                uses.push(Use {
                    from,
                    to: j,
                    value: id,
                });
                linked += 1;
                if linked >= LINK_MAX_PER_STEP {
                    break;
                }
            }
        }
    }
    Reference {
        values,
        producers,
        uses,
    }
}

/// Pieces that make values, near-values and traps: ids inside longer ids, numbers inside ids,
/// dates inside date-times, spans with spaces, addresses, non-ASCII words, sentences, and
/// giant words that leave a cut sentence without an inner word.
const PIECES: &[&str] = &[
    "ORD-1042",
    "ORD-10423",
    "1042",
    "xORD-1042",
    "A1-B2",
    "ann.lee@example.com",
    "https://shop.example/o/1042/",
    "2026-11-06",
    "2026-11-06T10:00Z",
    "Friday",
    "6 November",
    "November 6",
    "1200",
    "1,200.50",
    "12000",
    "the",
    "order",
    "refund",
    "déjà",
    "東京",
    "The order was refunded in full today.",
    "Please refund the order placed last Friday!",
    "the order was refunded in full today",
    "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ then it was done and over",
    "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
];
const GLUE: &[&str] = &["", " ", " ", "-", ".", ". ", "\n", ", ", "/", "é", ":"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec((0..PIECES.len(), 0..GLUE.len()), 0..10).prop_map(|parts| {
        let mut s = String::new();
        for (p, g) in parts {
            s.push_str(PIECES[p]);
            s.push_str(GLUE[g]);
        }
        s
    })
}

/// A text that gives many values, most of them more than once, and more than a step may
/// give ([`LINK_MAX_VALUES_PER_STEP`] ids, [`LINK_MAX_SENTENCES_PER_STEP`] sentences).
fn crowded() -> impl Strategy<Value = String> {
    prop::collection::vec(0usize..52, 0..90).prop_map(|picks| {
        let mut s = String::new();
        for k in picks {
            if k < 40 {
                s.push_str(&format!("ID-{k:04} "));
            } else {
                s.push_str(&format!(
                    "The order number {k} was refunded in full today. "
                ));
            }
        }
        s
    })
}

/// Text of a small vocabulary (issue 28): sentences of words drawn from five, some holding
/// an id, so that values share every short run of words and differ further on.
fn small_vocabulary() -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &["order", "refund", "the", "policy", "ORD-1042", "é"];
    const ENDS: &[&str] = &[" ", " ", " ", " ", ". ", ", ", "\n", "-", ""];
    prop::collection::vec((0..WORDS.len(), 0..ENDS.len()), 0..40).prop_map(|parts| {
        let mut s = String::new();
        for (w, e) in parts {
            s.push_str(WORDS[w]);
            s.push_str(ENDS[e]);
        }
        s
    })
}

/// A step's input or output: one string, or an object of strings and numbers (a text of
/// several leaves, read as the leaves joined by newlines).
fn payload() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => text().prop_map(Value::String),
        1 => prop_oneof![Just(1042u64), Just(1200), Just(6), Just(2026), Just(12000)]
            .prop_map(Value::from),
    ];
    prop_oneof![
        text().prop_map(Value::String),
        prop::collection::vec(leaf, 0..4).prop_map(|leaves| {
            let mut o = serde_json::Map::new();
            for (k, v) in leaves.into_iter().enumerate() {
                o.insert(format!("k{k}"), v);
            }
            Value::Object(o)
        }),
    ]
}

fn run_of(steps: &[(Value, Value)]) -> Run {
    let mut run = Run::new("prop", RunStatus::Failed);
    for (k, (input, output)) in steps.iter().enumerate() {
        let mut s = Step::new(format!("s{k}"), StepKind::Llm);
        if input != &Value::String(String::new()) {
            s.input = Some(input.clone().into());
        }
        if output != &Value::String(String::new()) {
            s.output = Some(output.clone().into());
        }
        run.steps.push(s);
    }
    run.reindex();
    run
}

/// The graph of `run` against the plain reference: the same uses, values, kinds and producers,
/// and each use found from both of its ends.
fn links_as_in_the_reference(run: &Run) -> Result<(), TestCaseError> {
    let texts = StepTexts::build(run);
    let g = LinkGraph::build(run, &texts);
    let r = reference(&texts);
    prop_assert_eq!(g.uses().iter().collect::<Vec<Use>>(), r.uses.clone());
    for (id, (v, kind)) in r.values.iter().enumerate() {
        prop_assert_eq!(g.value(id), v.as_str());
        prop_assert_eq!(g.value_kind(id), Some(*kind));
        let producers: Vec<usize> = g.producers_of(v).iter().map(|&p| p as usize).collect();
        prop_assert_eq!(producers, r.producers[id].clone());
    }
    for u in g.uses() {
        prop_assert!(g.out_of_step(u.from).any(|o| o == u));
        prop_assert!(g.into_step(u.to).iter().any(|x| x == u));
    }
    Ok(())
}

/// The index of every value the steps of `texts` produced (no per-step caps: as many values
/// and anchors as can be).
fn index_of<'t>(texts: &'t StepTexts) -> Index<'t> {
    let mut index = Index::new(usize::MAX);
    let hasher = index.hasher();
    for p in 0..texts.len() {
        link_values_in(texts.produced_text(p).leaves(), |v, kind| {
            index.intern_hashed(v, kind, text_hash(&hasher, v.as_bytes()));
            true
        });
    }
    index.finish();
    index
}

/// Each input scanned leaf by leaf gives the hits of the input joined, in order.
fn scans_as_joined(run: &Run) -> Result<(), TestCaseError> {
    let texts = StepTexts::build(run);
    let index = index_of(&texts);
    let (mut words, mut joined) = (Vec::new(), String::new());
    let (mut want, mut got) = (Vec::new(), Vec::new());
    for j in 0..texts.len() {
        index.scan(&texts.consumed(j), &mut words, &mut want);
        index.scan_text(texts.consumed_text(j), &mut joined, &mut words, &mut got);
        prop_assert_eq!(&got, &want);
    }
    Ok(())
}

/// Every occurrence of every value of `index` in `text`, as a plain reading finds them:
/// each value compared at each position (ids, dates and numbers outside longer words), sorted
/// by end, longer first.
fn hits_by_reading(index: &Index, text: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    for id in 0..index.len() {
        let v = index.value(id);
        let sentence = index.kind(id) == Some(ValueKind::Sentence);
        for start in (0..=text.len()).filter(|&s| text.is_char_boundary(s)) {
            let end = start + v.len();
            if text.get(start..end) == Some(v) && (sentence || at_boundaries(text, start, end)) {
                hits.push(Hit {
                    end: end as u32,
                    len: v.len() as u32,
                    value: id as u32,
                });
            }
        }
    }
    hits.sort_by(|a, b| a.end.cmp(&b.end).then(b.len.cmp(&a.len)));
    hits
}

/// The index of the values `texts` give, told to expect a scan of `scanned` bytes (the more,
/// the longer the runs of words its anchors are), finds in each input exactly what a plain
/// reading finds.
fn hits_as_by_reading(texts: &[String], scanned: usize) -> Result<(), TestCaseError> {
    let mut index = Index::new(usize::MAX);
    index.expect_scanned(scanned);
    let hasher = index.hasher();
    for t in texts {
        link_values(t, |v, kind| {
            index.intern_hashed(v, kind, text_hash(&hasher, v.as_bytes()));
            true
        });
    }
    index.finish();
    let (mut words, mut got) = (Vec::new(), Vec::new());
    for t in texts {
        index.scan(t, &mut words, &mut got);
        prop_assert_eq!(&got, &hits_by_reading(&index, t));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_small_vocabulary_hits_as_a_plain_reading_whatever_the_anchors(
        texts in prop::collection::vec(small_vocabulary(), 1..8),
        scanned in prop_oneof![Just(0usize), Just(10_000), Just(1 << 30), Just(usize::MAX)],
    ) {
        hits_as_by_reading(&texts, scanned)?;
    }

    #[test]
    fn a_small_vocabulary_links_as_in_the_reference(
        steps in prop::collection::vec((small_vocabulary(), small_vocabulary()), 1..8)
    ) {
        let steps: Vec<(Value, Value)> = steps
            .into_iter()
            .map(|(i, o)| (Value::String(i), Value::String(o)))
            .collect();
        links_as_in_the_reference(&run_of(&steps))?;
    }

    #[test]
    fn inputs_scanned_leaf_by_leaf_hit_as_joined(
        steps in prop::collection::vec((payload(), payload()), 1..8)
    ) {
        scans_as_joined(&run_of(&steps))?;
    }

    #[test]
    fn the_index_finds_exactly_the_uses_of_the_reference(
        steps in prop::collection::vec((payload(), payload()), 1..8)
    ) {
        let run = run_of(&steps);
        links_as_in_the_reference(&run)?;
    }

    #[test]
    fn values_given_again_and_past_the_caps_link_as_in_the_reference(
        steps in prop::collection::vec((crowded(), crowded()), 1..5)
    ) {
        let steps: Vec<(Value, Value)> = steps
            .into_iter()
            .map(|(i, o)| (Value::String(i), Value::String(o)))
            .collect();
        let run = run_of(&steps);
        links_as_in_the_reference(&run)?;
    }

    #[test]
    fn values_read_leaf_by_leaf_are_the_values_of_the_joined_text(
        leaves in prop::collection::vec(text(), 0..5)
    ) {
        let joined = leaves.join("\n");
        let mut want: Vec<(String, ValueKind)> = Vec::new();
        link_values(&joined, |v, k| {
            want.push((v.to_owned(), k));
            true
        });
        let mut got: Vec<(String, ValueKind)> = Vec::new();
        link_values_in(leaves.iter().map(String::as_str), |v, k| {
            assert!(!v.contains('\n'), "{v}");
            got.push((v.to_owned(), k));
            true
        });
        prop_assert_eq!(got, want);
    }
}
