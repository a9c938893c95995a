//! Answer origin (docs/how-it-decides.md, "Detect"): in a failed run, the step that first put
//! the final answer's values into the run. Each item of the answer (see `answer.rs`) is looked
//! for in every step's output, in order; the earliest step holding one is blamed:
//!
//! - a model step: it stated the value first, with no earlier step holding it (made up, misread
//!   or miscalculated there);
//! - a step that ran code: the step that wrote the code (its output is what the code printed);
//! - a retrieval, a memory read or another tool call: the value came from a source, so that item
//!   is not blamed on anyone.
//!
//! Only multi-agent logs (two or more named agents) are read: in a single-agent run the claim
//! check already places unsupported claims on the model step that first wrote them.
//!
//! With a reference answer in force, items the reference holds are right and are not traced, and
//! an answer holding the whole reference is not traced at all. User and system messages are
//! never an origin. One pass over the steps with one multi-pattern search: linear in the run.

use super::answer::Item;
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::params::ANSWER_ORIGIN;

/// The step that first stated the final answer's values.
pub struct AnswerOrigin;

impl Detector for AnswerOrigin {
    fn id(&self) -> DetectorId {
        DetectorId::AnswerOrigin
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the step that first stated the final answer's values (for printed output, the step that wrote the code)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let Some(t) = f.answer_trace() else {
            return Vec::new();
        };
        let (b, h) = (t.origin, t.holder);
        let list: Vec<&Item> = t
            .introduced
            .iter()
            .filter_map(|&k| t.items.get(k))
            .collect();
        let shown: Vec<String> = list.iter().take(3).map(|i| quote(&i.shown)).collect();
        let values = shown.join(", ");
        let mut fi = Finding::new(
            b,
            Category::AnswerOrigin,
            DetectorId::AnswerOrigin,
            ANSWER_ORIGIN,
            Nature::Suspect,
            format!("it first stated the final answer's {values}"),
        );
        if h == b {
            fi = fi.because(format!(
                "the final answer says {values}; {} is the first step that says it, and no earlier step holds it",
                step(run, b)
            ));
        } else {
            fi = fi.because(format!(
                "the final answer says {values}; it first appears in the output of {}, which ran the code {} wrote",
                step(run, h),
                step(run, b)
            ));
        }
        if f.reference().is_some() {
            fi = fi.because("the reference answer does not hold it".to_owned());
        }
        vec![fi]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::{facts_for, team};
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn the_step_that_first_stated_the_answer_value_is_blamed() {
        let run = RunBuilder::failed()
            .task("What was the population difference between the two towns?")
            .llm("s1", "Let me look at the census figures for both towns.")
            .llm(
                "s2",
                "The figures are 737,015 and 4,965, so the difference is 732,050.",
            )
            .llm("s3", "I agree: 732050 is confirmed.")
            .answer("The difference is 732,050.")
            .build();
        let found = facts_for(&team(run.clone()), |f| AnswerOrigin.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (1, Category::AnswerOrigin)
        );
        // One agent alone is left to the claim check.
        assert!(facts_for(&run, |f| AnswerOrigin.detect(f)).is_empty());
    }

    #[test]
    fn printed_output_is_blamed_on_the_step_that_wrote_the_code() {
        let run = RunBuilder::failed()
            .task("How many wheels do the locomotives have?")
            .llm("s1", "```python\nprint(sum([8, 16, 20]) * 2)\n```")
            .tool_ok(
                "s2",
                "execute_code",
                json!({"code": "print(sum([8, 16, 20]) * 2)"}),
                "88",
            )
            .llm("s3", "The total is 88 wheels.")
            .answer("The total is 88 wheels.")
            .build();
        let found = facts_for(&team(run), |f| AnswerOrigin.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].step, 0);
    }

    #[test]
    fn a_value_a_tool_returned_or_the_right_answer_is_not_blamed() {
        let from_tool = RunBuilder::failed()
            .task("What is the order total?")
            .tool_ok(
                "s1",
                "get_order",
                json!({"id": "A1"}),
                json!({"total": 1250}),
            )
            .llm("s2", "The total is 1,250.")
            .answer("The total is 1,250.")
            .build();
        assert!(facts_for(&team(from_tool), |f| AnswerOrigin.detect(f)).is_empty());
        let mut right = RunBuilder::failed()
            .task("Which film?")
            .llm("s1", "It is Nosferatu the Vampyre.")
            .answer("Nosferatu the Vampyre")
            .build();
        right.reference_answer = Some("Nosferatu the Vampyre".to_owned());
        assert!(facts_for(&team(right), |f| AnswerOrigin.detect(f)).is_empty());
        let ok = RunBuilder::succeeded()
            .llm("s1", "The figure is 737,015.")
            .answer("737,015")
            .build();
        assert!(facts_for(&team(ok), |f| AnswerOrigin.detect(f)).is_empty());
    }
}
