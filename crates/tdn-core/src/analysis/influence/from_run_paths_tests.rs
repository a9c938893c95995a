//! Tests that the ranking's faster paths give the section of the plain one: chunked and per-text
//! scorers, JSON values ranked as their text, and calls cut into parallel parts.

use super::from_run_tests::{ANSWER, bare_llm, llm, unit};
use super::*;
use crate::analysis::model::{Document, MemoryOp, Run, RunStatus, Step, StepKind};
use serde_json::json;

/// An embedder that hides whether its inner one is per text, so the ranking takes the chunked
/// path through the generic scorers.
struct Chunked<'e>(&'e dyn Embedder);

impl Embedder for Chunked<'_> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        self.0.embed(texts)
    }
    fn embed_sparse(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        self.0.embed_sparse(texts)
    }
}

/// A long run with every kind of evidence, spread over the steps so ancestor windows differ and
/// are capped: units sent at different steps (some sharing a text, one equal to the answer),
/// documents, tool results and memory reads, and model outputs that repeat and that equal
/// evidence texts.
fn long_mixed_run() -> Run {
    const WORDS: [&str; 12] = [
        "refund", "window", "order", "denied", "parcel", "courier", "damaged", "policy", "gold",
        "customer", "invoice", "返金",
    ];
    let mut seed = 7u64;
    let mut sentence = |n: usize| -> String {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                WORDS[(seed >> 33) as usize % WORDS.len()]
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut run = Run::new("long-mixed", RunStatus::Failed);
    run.final_answer = Some(ANSWER.to_owned());
    let mut units = Vec::new();
    let mut steps = Vec::new();
    for i in 0..1200 {
        let text = match i % 9 {
            0 => "a text several units share".to_owned(),
            4 if i == 400 => ANSWER.to_owned(),
            _ => format!("unit {i}: {}", sentence(6)),
        };
        units.push(unit(&format!("u{i}"), &text));
    }
    for i in 0..1200usize {
        let id = format!("s{i}");
        let step = match i % 5 {
            0 => llm(
                &id,
                &if i % 35 == 0 {
                    "an output said more than once".to_owned()
                } else {
                    format!("thinking {}", sentence(8))
                },
                &[
                    &format!("u{i}"),
                    &format!("u{}", i + 1),
                    &format!("u{}", i / 2),
                ],
                None,
            ),
            1 => {
                let mut s = Step::new(&id, StepKind::Retrieval);
                s.documents = Some(vec![
                    Document {
                        text: format!("doc {}", sentence(5)),
                        ..Document::default()
                    },
                    Document {
                        text: "a text several units share".to_owned(),
                        ..Document::default()
                    },
                ]);
                s
            }
            2 => {
                let mut s = Step::new(&id, StepKind::Tool);
                s.output = Some(if i % 3 == 0 {
                    json!({"status": "shipped", "note": sentence(4)}).into()
                } else {
                    json!(format!("tool said {}", sentence(3))).into()
                });
                s
            }
            3 => {
                let mut s = Step::new(&id, StepKind::MemoryRead);
                s.memory = Some(Box::new(MemoryOp {
                    key: "tier".to_owned(),
                    value: json!("gold customer").into(),
                }));
                s
            }
            _ => bare_llm(&id, &format!("unit {}: {}", i, sentence(2))),
        };
        steps.push(step);
    }
    steps.push(bare_llm("end", ANSWER));
    run.context_units = units;
    run.steps = steps;
    run.reindex();
    run
}

#[test]
fn embedding_each_text_once_ranks_as_the_chunked_scorers_do() {
    let run = long_mixed_run();
    let opts = ConfidenceOptions::default();
    let hashed = HashedEmbedder;
    let mock = MockEmbedder;
    for embedder in [&hashed as &dyn Embedder, &mock] {
        assert!(embedder.per_text());
        for reference in [None, Some("Refunds are approved for damaged parcels.")] {
            let fast = influence_section(&run, reference, embedder, &opts)
                .unwrap()
                .unwrap();
            let slow = influence_section(&run, reference, &Chunked(embedder), &opts)
                .unwrap()
                .unwrap();
            assert!(fast.scores.len() > 2 * super::from_run::EVIDENCE_CHUNK);
            assert!(fast.scores.iter().any(|e| e.signals.avg > 0.0));
            assert_eq!(fast, slow, "{} {reference:?}", embedder.name());
            assert_eq!(
                serde_json::to_string(&fast).unwrap(),
                serde_json::to_string(&slow).unwrap()
            );
        }
    }
}

/// `run` with every output and memory value that is a JSON value other than a string or null
/// replaced by the string of its compact JSON: the texts the ranking reads.
fn stringified(run: &Run) -> Run {
    let as_string = |v: &crate::analysis::model::Json| -> crate::analysis::model::Json {
        match v {
            crate::analysis::model::Json::String(_) | crate::analysis::model::Json::Null => {
                v.clone()
            }
            other => json!(other.to_string()).into(),
        }
    };
    let mut out = run.clone();
    for s in &mut out.steps {
        if let Some(o) = &s.output {
            s.output = Some(as_string(o));
        }
        if let Some(m) = &mut s.memory {
            m.value = as_string(&m.value);
        }
    }
    out
}

/// Model outputs, tool results and memory reads that are JSON values are ranked by their
/// compact JSON text, written only when read: the same section as when the run holds those
/// texts as strings. Values repeat, one's text is also a string output's, and the last model
/// output, a value, is the final answer (so it and what follows are not ancestors).
#[test]
fn json_values_rank_as_the_strings_of_their_text() {
    let mut run = long_mixed_run();
    let answer = json!({"answer": "refund denied", "window": 30});
    run.final_answer = Some(answer.to_string());
    for (i, s) in run.steps.iter_mut().enumerate() {
        match (s.kind, i % 7) {
            (StepKind::Llm, 1) => {
                s.output =
                    Some(json!({"thought": format!("check order {}", i % 4), "n": i % 3}).into())
            }
            (StepKind::Llm, 2) => s.output = Some(json!([i % 5, true, null, -0.5]).into()),
            (StepKind::Llm, 3) => s.output = Some(json!("[1,true,null,-0.5]").into()),
            (StepKind::MemoryRead, 4) => {
                if let Some(m) = &mut s.memory {
                    m.value = json!({"tier": "gold", "since": i % 2}).into();
                }
            }
            _ => {}
        }
    }
    let end = run.steps.len() - 1;
    run.steps.insert(end, {
        let mut s = Step::new("answer-as-value", StepKind::Llm);
        s.output = Some(answer.clone().into());
        s
    });
    run.reindex();
    let plain = stringified(&run);
    let opts = ConfidenceOptions::default();
    for reference in [None, Some("Refunds are approved for damaged parcels.")] {
        let got = influence_section(&run, reference, &HashedEmbedder, &opts)
            .unwrap()
            .unwrap();
        let want = influence_section(&plain, reference, &HashedEmbedder, &opts)
            .unwrap()
            .unwrap();
        let chunked = influence_section(&run, reference, &Chunked(&HashedEmbedder), &opts)
            .unwrap()
            .unwrap();
        assert!(got.scores.len() > 2 * super::from_run::EVIDENCE_CHUNK);
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&chunked).unwrap()
        );
    }
    // The answer's own output is no one's ancestor: the outputs stop before it.
    let outputs = super::evidence::model_outputs(&run, &answer.to_string());
    let texts: Vec<String> = (0..outputs.len())
        .filter_map(|i| outputs.text(i))
        .map(|t| t.to_cow().into_owned())
        .collect();
    assert!(!texts.is_empty() && !texts.contains(&answer.to_string()));
    assert!(texts.iter().any(|t| t.starts_with("{\"thought\":")));
}

/// An embedder that forwards to a per-text one and records the size of every call; it lets the
/// ranking cut a call into parts or not, as asked.
struct Recording<'e> {
    inner: &'e dyn Embedder,
    parallel: bool,
    calls: std::sync::Mutex<Vec<usize>>,
}

impl Embedder for Recording<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn per_text(&self) -> bool {
        self.inner.per_text()
    }
    fn parallel(&self) -> bool {
        self.parallel
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        self.inner.embed(texts)
    }
    fn embed_sparse(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(texts.len());
        }
        self.inner.embed_sparse(texts)
    }
}

/// A call cut into parts made on the thread pool gives the section of whole calls, bit for bit,
/// and the parts together embed the same texts.
#[test]
fn calls_cut_into_parallel_parts_rank_as_whole_calls() {
    let run = long_mixed_run();
    let opts = ConfidenceOptions::default();
    for reference in [None, Some("Refunds are approved for damaged parcels.")] {
        let whole = Recording {
            inner: &HashedEmbedder,
            parallel: false,
            calls: Default::default(),
        };
        let parts = Recording {
            inner: &HashedEmbedder,
            parallel: true,
            calls: Default::default(),
        };
        let want = influence_section(&run, reference, &whole, &opts)
            .unwrap()
            .unwrap();
        let got = influence_section(&run, reference, &parts, &opts)
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap()
        );
        let whole = whole.calls.into_inner().unwrap();
        let parts = parts.calls.into_inner().unwrap();
        // Some whole call was long enough to be cut, and was.
        assert!(whole.iter().any(|&n| n >= 2 * 64), "{whole:?}");
        assert!(parts.iter().all(|&n| n < 2 * 64), "{parts:?}");
        assert!(parts.len() > whole.len());
        assert_eq!(parts.iter().sum::<usize>(), whole.iter().sum::<usize>());
    }
}
