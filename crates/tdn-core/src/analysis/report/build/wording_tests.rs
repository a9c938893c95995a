//! What the report says, held to its evidence: the suspects' ranking confidence speaks of rule
//! scores (not similarity), a run that did not fail is never explained as a failure, and a
//! service failure is not worded as the agent's own mistake. Expected wording follows
//! docs/how-it-decides.md and influence.md §5.

use super::*;
use crate::analysis::influence::EmbedError;
use crate::analysis::report::{Party, render_text};
use crate::analysis::testutil::RunBuilder;
use serde_json::json;

struct OneDim;

impl Embedder for OneDim {
    fn name(&self) -> &str {
        "one"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0]).collect())
    }
}

fn report(run: Run) -> Report {
    let loaded = Loaded {
        run,
        warnings: Vec::new(),
        source_format: crate::analysis::import::SourceFormat::Native,
    };
    analyze(&loaded, &AnalyzeOptions::new(&OneDim))
}

/// A failed run with two suspects: a timed-out lookup (service) and an empty search.
fn failed_two_suspects() -> Run {
    RunBuilder::failed()
        .retrieval("r1", "warranty BX-200", vec![])
        .llm("m1", "Let me check the order.")
        .tool_err(
            "t1",
            "get_order",
            json!({"id": "ORD-1042"}),
            "upstream timed out (504)",
        )
        .build()
}

#[test]
fn the_suspects_confidence_speaks_of_rule_scores_not_similarity() {
    let r = report(failed_two_suspects());
    assert!(r.suspects.len() >= 2, "{:?}", r.suspects);
    let reason = &r.confidence.reason;
    assert!(!reason.contains("similarity"), "{reason}");
    assert!(reason.contains(&r.confidence.strategy), "{reason}");
    assert!(
        reason.contains("clear winner") || reason.contains("too close to call"),
        "{reason}"
    );
    assert!(reason.contains("not the chance of being right") || reason.contains("only put"));
    assert!(reason.contains("re-run"), "{reason}");
    // The margin to 3 decimals, as the spec asks.
    let m = r.confidence.margin.unwrap();
    assert!(reason.contains(&format!("{m:.3}")), "{reason}");
}

#[test]
fn a_succeeded_run_is_never_explained_as_a_failure() {
    let run = RunBuilder::succeeded()
        .retrieval("r1", "returns policy", vec![])
        .retrieval(
            "r2",
            "returns policy",
            vec![crate::analysis::testutil::doc(
                "p",
                "Returns are accepted within 30 days.",
                false,
            )],
        )
        .answer("Returns are accepted within 30 days. The moon is made of green cheese.")
        .build();
    let r = report(run);
    // report.md: a run that succeeded has no failure to explain: fault none, no verdict, no
    // suspects; its claims and influence are still given.
    assert_eq!(r.fault.party, Party::None);
    assert!(r.suspects.is_empty(), "{:?}", r.suspects);
    assert!(r.verdict.is_none());
    assert!(!r.claims.is_empty());
    assert!(!r.confidence.reason.contains("caused the failure"));
    let text = render_text(&r);
    for strong in [
        "caused the failure",
        "Top suspect",
        "Next suspects",
        "root cause",
    ] {
        assert!(!text.contains(strong), "'{strong}' in:\n{text}");
    }
    assert!(text.contains("The run succeeded"), "{text}");
    assert!(text.contains("No verdict"), "{text}");
    assert!(text.contains("Fault: none."), "{text}");
}

#[test]
fn an_unfinished_run_is_not_explained_as_a_failure_either() {
    let run = RunBuilder::new(crate::analysis::model::RunStatus::Unfinished)
        .retrieval("r1", "warranty", vec![])
        .llm("m1", "Which order do you mean?")
        .build();
    let r = report(run);
    let text = render_text(&r);
    assert!(!text.contains("caused the failure"), "{text}");
}

#[test]
fn a_service_failure_is_not_worded_as_the_agents_own_mistake() {
    let run = RunBuilder::failed()
        .llm("m1", "Let me look up the order.")
        .tool_err(
            "t1",
            "get_order",
            json!({"id": "ORD-1042"}),
            "upstream timed out (504)",
        )
        .build();
    let r = report(run);
    assert_eq!(r.verdict.as_ref().unwrap().category, "service_error");
    let why = &r.fault.why;
    assert!(!why.contains("the agent's own steps went wrong"), "{why}");
    assert!(why.contains("'get_order'"), "{why}");
    assert!(why.contains("service"), "{why}");
    assert!(why.contains("upstream timed out (504)"), "{why}");
}

#[test]
fn a_service_failure_names_the_agents_part_when_a_rule_found_one() {
    // The agent's own part: a claim it guessed before anything was looked up (a weak suspect,
    // ranked below the service's failure).
    let run = RunBuilder::failed()
        .llm(
            "m1",
            "The moon is made of green cheese. Let me look up the order.",
        )
        .tool_err(
            "t1",
            "get_order",
            json!({"id": "ORD-1042"}),
            "503 Service Unavailable",
        )
        .llm("m2", "The moon is made of green cheese.")
        .answer("The moon is made of green cheese.")
        .build();
    let r = report(run);
    assert_eq!(r.verdict.as_ref().unwrap().category, "service_error");
    let why = &r.fault.why;
    assert!(why.contains("service"), "{why}");
    assert!(why.contains("check step 'm1' (position 1) next"), "{why}");
}
