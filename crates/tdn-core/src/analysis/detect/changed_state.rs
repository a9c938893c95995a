//! Conflicting change (docs/how-it-decides.md, "Detect"): in a failed run, a call that failed on
//! something an earlier state-changing call had changed (the two calls name the same id), for a
//! reason that is not the service's: the earlier change left that thing in a state where the
//! later request could no longer be done ("non-pending order cannot be modified" after the order
//! was modified). The decision that made the earlier change sealed the failure. The pairs come
//! from [`Facts::state_source`]; the walk back follows the same pairs. No I/O.

use super::say::{quote, step, tool_of};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::params::CONFLICTING_CHANGE;
use hashbrown::HashSet;

/// A change that made a later call fail.
pub struct ConflictingChange;

impl Detector for ConflictingChange {
    fn id(&self) -> DetectorId {
        DetectorId::ConflictingChange
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the earlier state-changing call whose change made a later call on the same thing fail."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut flagged: HashSet<usize> = HashSet::new();
        for x in 0..run.steps.len() {
            let Some((w, v)) = f.state_source(x) else {
                continue;
            };
            let Some(d) = f.caller(w) else { continue };
            if f.caller(x) == Some(d) || flagged.contains(&d) {
                continue;
            }
            flagged.insert(d);
            let err = run
                .steps
                .get(x)
                .and_then(|s| s.error.as_deref())
                .unwrap_or("");
            out.push(
                Finding::new(
                    d,
                    Category::ConflictingChange,
                    DetectorId::ConflictingChange,
                    CONFLICTING_CHANGE,
                    Nature::Suspect,
                    format!("its change to {} made a later call on it fail", quote(v)),
                )
                .because(format!(
                    "it made the state-changing call to {} at {}, which changed {}",
                    tool_of(run, w),
                    step(run, w),
                    quote(v)
                ))
                .because(format!(
                    "the later call to {} at {} on {} failed: {}",
                    tool_of(run, x),
                    step(run, x),
                    quote(v),
                    quote(err)
                )),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn orders() -> RunBuilder {
        RunBuilder::failed()
            .tool_def("modify_items", "", json!(null), true)
            .tool_def("modify_address", "", json!(null), true)
    }

    #[test]
    fn the_change_that_left_the_order_unmodifiable_is_blamed() {
        let run = orders()
            .llm("m0", json!({"tool_calls": [{"name": "modify_items"}]}))
            .tool_ok(
                "t1",
                "modify_items",
                json!({"order_id": "#W6750959", "items": ["3254583681"]}),
                "ok",
            )
            .llm("m2", json!({"tool_calls": [{"name": "modify_address"}]}))
            .tool_err(
                "t3",
                "modify_address",
                json!({"order_id": "#W6750959", "zip": "10093"}),
                "Error: non-pending order cannot be modified",
            )
            .build();
        let found = facts_for(&run, |f| ConflictingChange.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [0]);
        assert!(found[0].title.contains("'#W6750959'"));
    }

    #[test]
    fn a_service_failure_or_another_object_is_no_conflict() {
        let run = orders()
            .llm("m0", json!({"tool_calls": [{"name": "modify_items"}]}))
            .tool_ok("t1", "modify_items", json!({"order_id": "#W1111111"}), "ok")
            .llm("m2", json!({"tool_calls": [{"name": "modify_address"}]}))
            .tool_err(
                "t3",
                "modify_address",
                json!({"order_id": "#W2222222"}),
                "cannot be modified",
            )
            .llm("m4", json!({"tool_calls": [{"name": "modify_address"}]}))
            .tool_err(
                "t5",
                "modify_address",
                json!({"order_id": "#W1111111"}),
                "503 service unavailable",
            )
            .build();
        assert!(facts_for(&run, |f| ConflictingChange.detect(f)).is_empty());
    }
}
