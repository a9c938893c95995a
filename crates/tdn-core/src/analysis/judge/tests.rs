//! The judge's rules: when it is asked, how its answer is read, the plan rule. Expected values
//! from runner.md "The judge" and docs/how-it-decides.md.

use super::*;
use crate::analysis::claims::check_claims;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::testutil::RunBuilder;
use serde_json::json;

#[test]
fn asked_only_for_failed_or_crashed_runs_with_no_strong_suspect() {
    use crate::analysis::params::STRONG;
    assert!(should_ask(RunStatus::Failed, None));
    assert!(should_ask(RunStatus::Error, Some(STRONG)));
    assert!(!should_ask(RunStatus::Failed, Some(STRONG + 0.01)));
    assert!(!should_ask(RunStatus::Succeeded, None));
    assert!(!should_ask(RunStatus::Unfinished, Some(0.1)));
}

fn run3() -> Run {
    RunBuilder::failed()
        .user("s1", "a")
        .llm("s2", "b")
        .llm("s3", "c")
        .build()
}

#[test]
fn answers_name_a_step_by_id_or_index_and_need_a_reason() {
    let run = run3();
    let a = read_answer(&run, &json!({"step": "s2", "reason": "because"})).unwrap();
    assert_eq!(
        (a.step, a.reason.as_str(), a.confidence),
        (1, "because", JUDGE_CAP)
    );
    assert_eq!(
        read_answer(&run, &json!({"step": 2, "reason": "x"}))
            .unwrap()
            .step,
        2
    );
    for bad in [
        json!({"step": "s9", "reason": "x"}),
        json!({"step": 3, "reason": "x"}),
        json!({"step": -1, "reason": "x"}),
        json!({"step": "s1"}),
        json!({"step": "s1", "reason": "  "}),
        json!({"reason": "x"}),
        json!({"step": true, "reason": "x"}),
        json!(["s1"]),
    ] {
        assert!(read_answer(&run, &bad).is_err(), "{bad}");
    }
}

#[test]
fn confidence_is_taken_when_in_0_1_and_never_above_0_9() {
    let run = run3();
    let c = |v: Value| {
        read_answer(&run, &json!({"step": "s1", "reason": "r", "confidence": v}))
            .unwrap()
            .confidence
    };
    assert_eq!(c(json!(0.3)), 0.3);
    assert_eq!(c(json!(0.95)), JUDGE_CAP);
    assert_eq!(c(json!(1.5)), JUDGE_CAP);
    assert_eq!(c(json!(-0.1)), JUDGE_CAP);
    assert_eq!(c(json!("high")), JUDGE_CAP);
}

fn with_facts<T>(run: &Run, f: impl Fn(&Facts<'_>) -> T) -> T {
    let texts = StepTexts::build(run);
    let links = LinkGraph::build(run, &texts);
    let claims = check_claims(run, &texts);
    let facts = Facts::new(run, &texts, &links, &claims);
    f(&facts)
}

#[test]
fn a_plan_proposed_then_carried_out_blames_the_later_step() {
    let run = RunBuilder::failed()
        .tool_def("issue_refund", "", json!(null), true)
        .user("s1", "Refund order ORD-2210")
        .llm("s2", "Plan: refund order ORD-2211 for $19.00.")
        .llm(
            "s3",
            json!({"tool_call": {"name": "issue_refund", "arguments": {"order_id": "ORD-2211"}}}),
        )
        .tool_ok(
            "s4",
            "issue_refund",
            json!({"order_id": "ORD-2211"}),
            json!("ok"),
        )
        .build();
    let f = with_facts(&run, |facts| {
        let a = JudgeAnswer {
            step: 1,
            reason: "wrong order".to_owned(),
            confidence: 0.9,
        };
        finding_from(facts, &a, None)
    });
    assert_eq!(f.step, 2, "the decision that made the refund call");
    assert!(
        f.evidence.contains(
            &"plan first proposed at step 's2' (position 2); carried out by the call at step 's4' (position 4), made at step 's3' (position 3)"
                .to_owned()
        ),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence
            .contains(&"the rules found no suspect".to_owned())
    );
}

#[test]
fn a_step_that_proposed_no_plan_stays_blamed() {
    let run = RunBuilder::failed()
        .user("s1", "Refund order ORD-2210")
        .llm("s2", "The order is ORD-2211.")
        .tool_ok(
            "s3",
            "issue_refund",
            json!({"order_id": "ORD-2211"}),
            json!("ok"),
        )
        .build();
    let f = with_facts(&run, |facts| {
        let a = JudgeAnswer {
            step: 1,
            reason: "wrong order".to_owned(),
            confidence: 0.5,
        };
        finding_from(facts, &a, None)
    });
    assert_eq!(
        (f.step, f.confidence, f.detector),
        (1, 0.5, DetectorId::Judge)
    );
}

#[test]
fn a_long_run_sends_a_short_transcript_with_texts_cut() {
    let mut b = RunBuilder::failed();
    for i in 0..1_000 {
        b = b.llm(&format!("s{i}"), "x".repeat(5_000));
    }
    let run = b.build();
    let req = with_facts(&run, |facts| build_request(facts, &[]));
    assert!(req.transcript.len() <= JUDGE_MAX_TRANSCRIPT);
    assert_eq!(req.transcript.first().map(|t| t.index), Some(0));
    assert_eq!(req.transcript.last().map(|t| t.index), Some(999));
    assert!(
        req.transcript
            .iter()
            .all(|t| t.text.chars().count() <= JUDGE_TEXT_CHARS)
    );
}
