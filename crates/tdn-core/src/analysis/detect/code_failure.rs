//! Code failure (docs/how-it-decides.md, "Detect"): in a failed run, the first run of
//! model-written code that failed (a tool call with a `code` argument and an `error`, as imported
//! multi-agent logs record an executor's turn) is blamed on the step that wrote the code, not on
//! the executor: the code's author is a suspect, so the walk back from the failed run stops there.
//! Later failures are left to the walk back. One pass over the steps. No I/O.

use super::answer::code_author;
use super::say::{short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::params::CODE_FAILURE;

/// The author of the first code run that failed.
pub struct CodeFailure;

impl Detector for CodeFailure {
    fn id(&self) -> DetectorId {
        DetectorId::CodeFailure
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the step that wrote the code of the first code run that failed."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let found = run.steps.iter().enumerate().find_map(|(i, s)| {
            let error = s.error.as_deref()?;
            let author = code_author(f, i)?;
            Some((i, author, error))
        });
        let Some((i, author, error)) = found else {
            return Vec::new();
        };
        vec![
            Finding::new(
                author,
                Category::CodeFailure,
                DetectorId::CodeFailure,
                CODE_FAILURE,
                Nature::Suspect,
                "it wrote the code of the first code run that failed".to_owned(),
            )
            .because(format!(
                "{} ran the code {} wrote, and it failed: '{}'",
                step(run, i),
                step(run, author),
                short(error, 120)
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn the_author_of_the_first_failing_code_is_flagged() {
        let run = RunBuilder::failed()
            .llm("s1", "```python\nprint(totl)\n```")
            .tool_err(
                "s2",
                "execute_code",
                json!({"code": "print(totl)"}),
                "NameError: name 'totl' is not defined",
            )
            .llm("s3", "```python\nprint(x)\n```")
            .tool_err(
                "s4",
                "execute_code",
                json!({"code": "print(x)"}),
                "NameError",
            )
            .build();
        let found = facts_for(&run, |f| CodeFailure.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (0, Category::CodeFailure)
        );
    }

    #[test]
    fn failed_calls_without_code_and_successful_runs_are_not_flagged() {
        let run = RunBuilder::failed()
            .llm("s1", "Looking up the order.")
            .tool_err("s2", "get_order", json!({"id": "A1"}), "not found")
            .build();
        assert!(facts_for(&run, |f| CodeFailure.detect(f)).is_empty());
        let ok = RunBuilder::succeeded()
            .llm("s1", "```python\nprint(1)\n```")
            .tool_err("s2", "execute_code", json!({"code": "print(1)"}), "boom")
            .build();
        assert!(facts_for(&ok, |f| CodeFailure.detect(f)).is_empty());
    }
}
