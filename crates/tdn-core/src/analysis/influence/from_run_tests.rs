//! Tests of the report sections built from runs: which pieces are evidence, their ids and
//! ancestors, contrastive ranking, flat tops, chunking, and the dropped diff per step and run.

use super::*;
use crate::analysis::model::{
    ContextUnit, Document, MemoryOp, Run, RunStatus, Step, StepContext, StepKind, UnitId,
};
use serde_json::json;

fn unit(id: &str, text: &str) -> ContextUnit {
    ContextUnit {
        id: UnitId::from(id),
        kind: "document".to_owned(),
        text: text.to_owned(),
        ..ContextUnit::default()
    }
}

fn llm(id: &str, output: &str, sent: &[&str], available: Option<&[&str]>) -> Step {
    let mut s = Step::new(id, StepKind::Llm);
    s.output = Some(json!(output).into());
    s.context = Some(Box::new(StepContext {
        available: available.map(|a| a.iter().map(|x| UnitId::from(*x)).collect()),
        sent: sent.iter().map(|x| UnitId::from(*x)).collect(),
    }));
    s
}

fn bare_llm(id: &str, output: &str) -> Step {
    let mut s = Step::new(id, StepKind::Llm);
    s.output = Some(json!(output).into());
    s
}

const ANSWER: &str = "Your refund is denied: the order is outside the 30 day return window.";

/// A refund run: a stale memory that says refunds outside the window are denied is planted and
/// sent; the policy, a greeting and an unsent override note are around it.
fn refund_run() -> Run {
    let mut run = Run::new("refund-1", RunStatus::Failed);
    run.final_answer = Some(ANSWER.to_owned());
    run.context_units = vec![
        unit(
            "greeting",
            "Hello! Thanks for contacting support, we are happy to help.",
        ),
        unit(
            "stale-memory",
            "Memory: refund requests outside the 30 day return window are denied.",
        ),
        unit(
            "shipping",
            "Parcels ship by courier within two business days.",
        ),
        unit(
            "override",
            "Damaged items are refunded regardless of the window.",
        ),
    ];
    run.steps = vec![
        llm(
            "s1",
            "Looking up the customer's order and our notes.",
            &["greeting", "stale-memory", "shipping"],
            Some(&["greeting", "stale-memory", "shipping", "override"]),
        ),
        llm(
            "s2",
            ANSWER,
            &["stale-memory", "shipping", "extra"],
            Some(&["stale-memory", "override"]),
        ),
    ];
    run.reindex();
    run
}

#[test]
fn the_planted_unit_leads_and_carries_its_unit_id() {
    let run = refund_run();
    let s = influence_section(&run, None, &HashedEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(s.ranked_by, "semantic");
    assert_eq!(s.embedder.as_deref(), Some("hashed"));
    let ids: Vec<&str> = s.scores.iter().map(|e| &*e.id).collect();
    // Only sent units are evidence: the override never reached the model.
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(!ids.contains(&"override"));
    assert_eq!(ids.first(), Some(&"stale-memory"));
    let top = &s.scores[0];
    assert_eq!(top.unit.as_deref(), Some("stale-memory"));
    // Sent first at s1, whose output lies between it and the answer (s2's output is the answer).
    assert_eq!(top.signals.depth, 0.5);
    assert_eq!(s.confidence.lead.as_deref(), Some("stale-memory"));
    assert!(s.confidence.clear_winner, "{}", s.confidence.reason);
}

#[test]
fn no_answer_or_no_evidence_gives_no_section_and_a_failing_embedder_an_error() {
    let mut run = refund_run();
    struct Broken;
    impl Embedder for Broken {
        fn name(&self) -> &str {
            "cmd"
        }
        fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
            Err(EmbedError("model missing".to_owned()))
        }
    }
    let opts = ConfidenceOptions::default();
    assert!(influence_section(&run, None, &Broken, &opts).is_err());
    run.final_answer = Some("  ".to_owned());
    assert_eq!(influence_section(&run, None, &Broken, &opts), Ok(None));
    let mut empty = Run::new("e", RunStatus::Failed);
    empty.final_answer = Some("x".to_owned());
    empty.steps = vec![bare_llm("s1", "x")];
    empty.reindex();
    assert_eq!(influence_section(&empty, None, &Broken, &opts), Ok(None));
}

#[test]
fn documents_tool_results_and_memory_reads_not_recorded_as_units_are_evidence() {
    let mut run = Run::new("r", RunStatus::Failed);
    run.final_answer = Some("final".to_owned());
    run.context_units = vec![
        ContextUnit {
            produced_by: Some("t2".into()),
            ..unit("u-tool", "tool output as a unit")
        },
        unit("doc-unit", "a document recorded as a unit"),
    ];
    let mut search = Step::new("r1", StepKind::Retrieval);
    search.documents = Some(vec![
        Document {
            text: "first hit".to_owned(),
            ..Document::default()
        },
        Document {
            id: Some("doc-unit".to_owned()),
            text: "a document recorded as a unit".to_owned(),
            ..Document::default()
        },
        Document {
            text: "third hit".to_owned(),
            ..Document::default()
        },
    ]);
    let mut tool = Step::new("t1", StepKind::Tool);
    tool.error = Some("timeout talking to the bank".to_owned());
    let mut recorded = Step::new("t2", StepKind::Tool);
    recorded.output = Some(json!("tool output as a unit").into());
    let mut memory = Step::new("m1", StepKind::MemoryRead);
    memory.memory = Some(Box::new(MemoryOp {
        key: "tier".to_owned(),
        value: json!("gold customer").into(),
    }));
    let mut empty_tool = Step::new("t3", StepKind::Tool);
    empty_tool.output = Some(json!("").into());
    run.steps = vec![
        search,
        tool,
        recorded,
        memory,
        empty_tool,
        bare_llm("a1", "thinking"),
        bare_llm("a2", "final"),
    ];
    run.reindex();
    let s = influence_section(&run, None, &MockEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    let mut got: Vec<(&str, Option<&str>, Option<&str>)> = s
        .scores
        .iter()
        .map(|e| (&*e.id, e.unit.as_deref(), e.step.as_deref()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("doc-unit", Some("doc-unit"), None),
            ("m1", None, Some("m1")),
            ("r1#0", None, Some("r1")),
            ("r1#2", None, Some("r1")),
            ("t1", None, Some("t1")),
            ("u-tool", Some("u-tool"), Some("t2")),
        ]
    );
    // Every piece precedes the one reasoning step before the answer step.
    assert!(s.scores.iter().all(|e| e.signals.depth == 0.5));
}

#[test]
fn a_reference_makes_the_ranking_contrastive() {
    let run = refund_run();
    let s = influence_section(
        &run,
        Some("Your refund is approved: damaged items are refunded regardless of the window."),
        &HashedEmbedder,
        &ConfidenceOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(s.ranked_by, "contrastive");
    assert_eq!(&*s.scores[0].id, "stale-memory");
}

#[test]
fn a_flat_top_is_too_close_to_call() {
    let mut run = Run::new("flat", RunStatus::Failed);
    run.final_answer = Some("The meeting is on Friday at 10.".to_owned());
    run.context_units = vec![
        unit("cal-a", "Calendar: the meeting is on Friday at 10."),
        unit("cal-b", "Invite: the meeting is on Friday at 10."),
    ];
    run.steps = vec![bare_llm("s1", "The meeting is on Friday at 10.")];
    run.reindex();
    let s = influence_section(&run, None, &HashedEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    assert!(!s.confidence.clear_winner, "{:?}", s.scores);
    assert!(
        s.confidence.reason.contains("too close to call"),
        "{}",
        s.confidence.reason
    );
    let mut shortlist = s.confidence.shortlist.clone();
    shortlist.sort();
    assert_eq!(shortlist, ["cal-a", "cal-b"]);
}

#[test]
fn long_runs_are_scored_in_chunks_with_one_stable_order_and_capped_ancestors() {
    let mut run = Run::new("long", RunStatus::Failed);
    run.final_answer = Some("same".to_owned());
    run.context_units = (0..1100)
        .map(|i| unit(&format!("u{i}"), "same text"))
        .collect();
    run.steps = (0..30)
        .map(|i| bare_llm(&format!("s{i}"), "a step"))
        .collect();
    run.steps.push(bare_llm("end", "same"));
    run.reindex();
    let s = influence_section(&run, None, &MockEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    let ids: Vec<String> = s.scores.iter().map(|e| e.id.to_string()).collect();
    let want: Vec<String> = (0..1100).map(|i| format!("u{i}")).collect();
    assert_eq!(ids, want, "equal scores keep input order across chunks");
    let cap = 1.0 / (1.0 + MAX_ANCESTORS as f64);
    assert!(s.scores.iter().all(|e| e.signals.depth == cap));
}

#[test]
fn dropped_is_taken_per_llm_step_and_for_the_run() {
    let run = refund_run();
    let d = dropped_section(&run).unwrap();
    let ids: Vec<&str> = d.dropped.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["override"]);
    assert_eq!(
        d.dropped[0].content.as_deref(),
        Some("Damaged items are refunded regardless of the window.")
    );
    assert_eq!(
        (d.available_count, d.sent_count, d.any_dropped),
        (4, 4, true)
    );
    assert!(d.reason.contains("candidate"));
    assert_eq!(d.steps.len(), 2);
    assert_eq!(d.steps[0].dropped, ["override"]);
    assert_eq!((d.steps[1].step.as_str(), d.steps[1].index), ("s2", 1));
    assert_eq!(d.steps[1].dropped, ["override"]);
    assert_eq!((d.steps[1].available_count, d.steps[1].sent_count), (2, 3));

    let mut plain = refund_run();
    for s in &mut plain.steps {
        s.context = None;
    }
    assert_eq!(dropped_section(&plain), None);
    // With no context recorded anywhere, every unit is evidence.
    let s = influence_section(&plain, None, &MockEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(s.scores.len(), 4);
}

#[test]
fn the_answer_is_embedded_once_however_many_chunks_the_evidence_takes() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Counting(AtomicUsize);
    impl Embedder for Counting {
        fn name(&self) -> &str {
            "mock"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
            let answers = texts.iter().filter(|t| **t == ANSWER).count();
            self.0.fetch_add(answers, Ordering::Relaxed);
            MockEmbedder.embed(texts)
        }
    }
    let mut run = Run::new("long", RunStatus::Failed);
    run.final_answer = Some(ANSWER.to_owned());
    // Three chunks of evidence, all different texts.
    let chunk = super::from_run::EVIDENCE_CHUNK;
    run.context_units = (0..2 * chunk + 10)
        .map(|i| unit(&format!("u{i}"), &format!("piece number {i}")))
        .collect();
    run.steps = vec![bare_llm("end", ANSWER)];
    run.reindex();
    let counting = Counting(AtomicUsize::new(0));
    let s = influence_section(&run, None, &counting, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(s.scores.len(), 2 * chunk + 10);
    assert_eq!(counting.0.load(Ordering::Relaxed), 1);
    // The same scores as scoring without the reuse: one chunk's worth checked against a run
    // small enough to be one chunk.
    let mut small = run.clone();
    small.context_units.truncate(chunk);
    small.reindex();
    let one = influence_section(&small, None, &MockEmbedder, &ConfidenceOptions::default())
        .unwrap()
        .unwrap();
    for e in &one.scores {
        let same = s.scores.iter().find(|x| x.id == e.id).map(|x| x.score);
        assert_eq!(same, Some(e.score), "{}", e.id);
    }
}

#[test]
fn the_lexical_embedder_ranks_runs_of_more_than_one_chunk() {
    // Its vectors are indicators over the vocabulary of one call, so each chunk's words give
    // vectors of a different length: no vector may be kept from one chunk for the next.
    let chunk = super::from_run::EVIDENCE_CHUNK;
    let mut run = Run::new("long", RunStatus::Failed);
    run.final_answer = Some(ANSWER.to_owned());
    run.context_units = (0..2 * chunk + 10)
        .map(|i| unit(&format!("u{i}"), &format!("piece w{i} about the refund")))
        .collect();
    // The answer's own words, in the second chunk.
    run.context_units
        .insert(chunk + 3, unit("same", &ANSWER.to_lowercase()));
    run.steps = vec![bare_llm("end", ANSWER)];
    run.reindex();
    let s = influence_section(&run, None, &LexicalEmbedder, &ConfidenceOptions::default())
        .expect("the lexical embedder ranks a run of three chunks")
        .expect("the run has an answer and evidence");
    assert_eq!(s.scores.len(), 2 * chunk + 11);
    assert_eq!(s.embedder.as_deref(), Some("lexical"));
    assert_eq!(s.scores.first().map(|e| &*e.id), Some("same"));
    // A piece scores as it does in a run small enough to be one chunk: the last chunk's pieces
    // and the answer's copy, ranked together.
    let mut small = run.clone();
    small.context_units = run
        .context_units
        .iter()
        .filter(|u| {
            let n = u.id.as_str().strip_prefix('u').and_then(|n| n.parse().ok());
            u.id.as_str() == "same" || n.is_some_and(|n: usize| n >= 2 * chunk)
        })
        .cloned()
        .collect();
    small.reindex();
    let one = influence_section(
        &small,
        None,
        &LexicalEmbedder,
        &ConfidenceOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(one.scores.len(), 11);
    for e in &one.scores {
        let same = s.scores.iter().find(|x| x.id == e.id).map(|x| x.score);
        assert_eq!(same, Some(e.score), "{}", e.id);
    }
}

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
