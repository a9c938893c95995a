//! Tool errors (docs/how-it-decides.md, "Detect"): a step that failed, or a tool call whose
//! arguments its schema rejects. These are symptoms: where the failure showed up. When a
//! state-changing call failed and the final answer still says it worked, the evidence says so.
//! The walk back (`rank::walk_back`) then looks for the step that caused it. No I/O.

use super::compiled_schema::Schemas;
use super::say::{args_of, article, quote, step, tool_of, tool_phrase};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::claims::SupportLabel;
use crate::analysis::model::{Step, StepKind};
use crate::analysis::params::{EXECUTION_ERROR, INVALID_ARGUMENTS, STEP_ERROR, TOOL_ERROR};

/// Failed steps and rejected arguments.
pub struct ToolErrors;

impl Detector for ToolErrors {
    fn id(&self) -> DetectorId {
        DetectorId::ToolErrors
    }

    fn doc(&self) -> &'static str {
        "A step that failed, or a tool call whose arguments its schema rejects (a symptom)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut out = Vec::new();
        let mut schemas = Schemas::default();
        for (i, s) in run.steps.iter().enumerate() {
            let check = schemas.check(f, i, s);
            let schema_line = check.rejected().then(|| {
                let what: Vec<_> = check.problems.iter().map(|p| p.what.as_str()).collect();
                format!("its arguments fail the tool's schema: {}", what.join("; "))
            });
            if s.is_container() {
                // Its own failure (a failure inside it was moved to the failed step by the
                // loader): what was decided inside it failed when the agent ran it.
                if let (Some(err), Some(m)) = (&s.error, f.decision_inside(i)) {
                    out.push(
                        Finding::new(
                            m,
                            Category::ExecutionError,
                            DetectorId::ToolErrors,
                            EXECUTION_ERROR,
                            Nature::Suspect,
                            format!(
                                "what it decided failed when run, inside {}: {}",
                                step_label(s),
                                quote(err)
                            ),
                        )
                        .because(format!(
                            "{} failed on its own (no step inside it failed): {}",
                            step(run, i),
                            quote(err)
                        ))
                        .because(format!("{} is the latest decision inside it", step(run, m))),
                    );
                }
                continue;
            }
            let finding = match (&s.error, s.kind) {
                (Some(err), StepKind::Tool) => {
                    let tool = tool_of(run, i);
                    let mut fi = Finding::new(
                        i,
                        Category::ToolError,
                        DetectorId::ToolErrors,
                        TOOL_ERROR,
                        Nature::Symptom,
                        format!("{} failed", tool_phrase(run, i)),
                    )
                    .because(format!(
                        "{} called {tool}, which failed: {}",
                        step(run, i),
                        quote(err)
                    ));
                    if let Some(l) = schema_line {
                        fi = fi.because(l);
                    }
                    if f.mutating(i)
                        && let Some(c) = f.claims.iter().find(|c| {
                            c.action
                                && c.label == SupportLabel::Contradicted
                                && c.evidence_step == Some(i)
                        })
                    {
                        fi = fi.because(format!(
                            "{tool} changes things and failed, yet the final answer says it worked: {}",
                            quote(&c.text)
                        ));
                    }
                    fi
                }
                (Some(err), kind) => Finding::new(
                    i,
                    Category::StepError,
                    DetectorId::ToolErrors,
                    STEP_ERROR,
                    Nature::Symptom,
                    if kind.is_model() {
                        "the model call failed".to_owned()
                    } else {
                        format!("{} {} step failed", article(kind.as_str()), kind.as_str())
                    },
                )
                .because(format!("{} failed: {}", step(run, i), quote(err))),
                (None, _) if check.rejected() => Finding::new(
                    i,
                    Category::InvalidArguments,
                    DetectorId::ToolErrors,
                    INVALID_ARGUMENTS,
                    Nature::Symptom,
                    format!("{} got arguments its schema rejects", tool_phrase(run, i)),
                )
                .because(format!(
                    "{} called {} with {}",
                    step(run, i),
                    tool_of(run, i),
                    args_of(run, i)
                ))
                .because(schema_line.unwrap_or_default()),
                (None, _) => continue,
            };
            out.push(finding);
        }
        out
    }
}

/// A step's name, quoted, else its id.
fn step_label(s: &Step) -> String {
    quote(s.name.as_deref().unwrap_or(s.id.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn a_failed_booking_the_answer_claims_is_a_symptom_with_that_evidence() {
        let run = RunBuilder::failed()
            .tool_def("create_event", "", json!({"type": "object", "properties": {"start": {"type": "string", "format": "date-time"}}}), true)
            .llm("s1", "calling")
            .tool_err("s2", "create_event", json!({"start": "Friday"}), "invalid start: 'Friday' is not a date-time")
            .answer("Your call with Dana is booked.")
            .build();
        let found = facts_for(&run, |f| ToolErrors.detect(f));
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(
            (f.step, f.category, f.nature),
            (1, Category::ToolError, Nature::Symptom)
        );
        assert_eq!(f.confidence, TOOL_ERROR);
        assert!(
            f.evidence[0].starts_with(
                "step 's2' (position 2) called 'create_event', which failed: 'invalid start"
            ),
            "{:?}",
            f.evidence
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("'Friday' is not a 'date-time'"))
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("yet the final answer says it worked"))
        );
    }

    #[test]
    fn rejected_arguments_without_an_error_are_flagged_and_clean_calls_are_not() {
        let schema = json!({"type": "object", "required": ["order_id"], "properties": {"order_id": {"type": "string"}}});
        let run = RunBuilder::succeeded()
            .tool_def("get_order", "", schema, false)
            .tool_ok("s1", "get_order", json!({"order_id": "A-1"}), json!("ok"))
            .tool_ok("s2", "get_order", json!({"id": 7}), json!("ok"))
            .build();
        let found = facts_for(&run, |f| ToolErrors.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (1, Category::InvalidArguments)
        );
    }
}
