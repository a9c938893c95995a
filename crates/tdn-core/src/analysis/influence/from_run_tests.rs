//! Tests of the report sections built from runs: which pieces are evidence, their ids and
//! ancestors, contrastive ranking, flat tops, chunking, and the dropped diff per step and run.

use super::*;
use crate::analysis::model::{
    ContextUnit, Document, MemoryOp, Run, RunStatus, Step, StepContext, StepKind, UnitId,
};
use serde_json::json;

pub(super) fn unit(id: &str, text: &str) -> ContextUnit {
    ContextUnit {
        id: UnitId::from(id),
        kind: "document".to_owned(),
        text: text.to_owned(),
        ..ContextUnit::default()
    }
}

pub(super) fn llm(id: &str, output: &str, sent: &[&str], available: Option<&[&str]>) -> Step {
    let mut s = Step::new(id, StepKind::Llm);
    s.output = Some(json!(output).into());
    s.context = Some(Box::new(StepContext {
        available: available.map(|a| a.iter().map(|x| UnitId::from(*x)).collect()),
        sent: sent.iter().map(|x| UnitId::from(*x)).collect(),
    }));
    s
}

pub(super) fn bare_llm(id: &str, output: &str) -> Step {
    let mut s = Step::new(id, StepKind::Llm);
    s.output = Some(json!(output).into());
    s
}

pub(super) const ANSWER: &str =
    "Your refund is denied: the order is outside the 30 day return window.";

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
