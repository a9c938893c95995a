//! Run status (docs/how-it-decides.md, "Detect"): the run ended in an error (`status: "error"`)
//! and no single step failed, so the crash came after the last recorded step; the finding goes on
//! that step. No I/O.

use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::RunStatus as Status;
use crate::analysis::params::RUN_ERROR;

/// The run crashed and no step failed.
pub struct RunStatus;

impl Detector for RunStatus {
    fn id(&self) -> DetectorId {
        DetectorId::RunStatus
    }

    fn doc(&self) -> &'static str {
        "The run ended in an error, and no single step failed."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if run.status != Status::Error || run.steps.iter().any(|s| s.failed()) {
            return Vec::new();
        }
        let Some(last) = run.steps.len().checked_sub(1) else {
            return Vec::new();
        };
        let err = run
            .error
            .as_deref()
            .map_or_else(|| "no message".to_owned(), quote);
        vec![
            Finding::new(
                last,
                Category::RunError,
                DetectorId::RunStatus,
                RUN_ERROR,
                Nature::Suspect,
                "the run crashed after its last recorded step".to_owned(),
            )
            .because(format!(
                "the run ended in an error ({err}) and no step recorded a failure, so the crash came after {}, the last recorded step",
                step(run, last)
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::model::RunStatus as S;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn a_crash_with_no_failed_step_points_at_the_last_step() {
        let run = RunBuilder::new(S::Error)
            .run_error("KeyError: 'shipping_address'")
            .user("s1", "a")
            .llm("s2", "b")
            .build();
        let found = facts_for(&run, |f| RunStatus.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].step, found[0].category), (1, Category::RunError));
        assert!(found[0].evidence[0].contains("'KeyError: 'shipping_address''"));
    }

    #[test]
    fn a_crash_with_a_failed_step_or_a_failed_run_is_left_to_other_detectors() {
        let with_step = RunBuilder::new(S::Error)
            .tool_err("s1", "x", json!({}), "boom")
            .build();
        assert!(facts_for(&with_step, |f| RunStatus.detect(f)).is_empty());
        let failed = RunBuilder::failed().user("s1", "a").build();
        assert!(facts_for(&failed, |f| RunStatus.detect(f)).is_empty());
    }
}
