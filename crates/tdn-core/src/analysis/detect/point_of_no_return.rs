//! Point of no return (docs/how-it-decides.md, "Detect"): in a failed run, the first call that
//! tried to change something (a refund, a booking), that is, the first call to a tool the run
//! marks `mutates`. A prime suspect, not proof, so it ranks below direct evidence. Needs the
//! run's `tools`. No I/O.

use super::say::{args_of, short, step, tool_of};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::params::POINT_OF_NO_RETURN;

/// The first state-changing call of a failed run.
pub struct PointOfNoReturn;

impl Detector for PointOfNoReturn {
    fn id(&self) -> DetectorId {
        DetectorId::PointOfNoReturn
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the first call that tried to change something (a tool marked mutates)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let Some(i) = (0..run.steps.len()).find(|&i| f.mutating(i)) else {
            return Vec::new();
        };
        let tool = tool_of(run, i);
        let mut fi = Finding::new(
            i,
            Category::PointOfNoReturn,
            DetectorId::PointOfNoReturn,
            POINT_OF_NO_RETURN,
            Nature::Suspect,
            format!("the first state-changing call, to {tool}"),
        )
        .because(format!(
            "{} is the first call in this failed run to a tool that changes things ({tool}), with arguments {}",
            step(run, i),
            args_of(run, i)
        ));
        if let Some(e) = run.steps.get(i).and_then(|s| s.error.as_deref()) {
            fi = fi.because(format!("the call failed: '{}'", short(e, 80)));
        }
        vec![fi.because(
            "a prime suspect, not proof: check that this call was the right one, with the right arguments"
                .to_owned(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn run(b: RunBuilder) -> Vec<Finding> {
        let r = b
            .tool_def("get_order", "", json!(null), false)
            .tool_def("issue_refund", "", json!(null), true)
            .tool_ok("s1", "get_order", json!({"id": "A"}), json!("ok"))
            .tool_ok("s2", "issue_refund", json!({"id": "B"}), json!("ok"))
            .tool_ok("s3", "issue_refund", json!({"id": "A"}), json!("ok"))
            .build();
        facts_for(&r, |f| PointOfNoReturn.detect(f))
    }

    #[test]
    fn the_first_state_changing_call_of_a_failed_run_is_flagged() {
        let found = run(RunBuilder::failed());
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (1, Category::PointOfNoReturn)
        );
    }

    #[test]
    fn a_run_that_did_not_fail_has_no_point_of_no_return() {
        assert!(run(RunBuilder::succeeded()).is_empty());
    }
}
