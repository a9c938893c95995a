//! Planning (docs/how-it-decides.md, "Detect"): a decision step that chose an option whose
//! precondition had failed, that is, an option whose `requires` names a step with an `error`.
//! Needs `decision` steps with `requires`. No I/O.

use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::params::FAILED_PRECONDITION;

/// A decision whose chosen option needed a step that failed.
pub struct Planning;

impl Detector for Planning {
    fn id(&self) -> DetectorId {
        DetectorId::Planning
    }

    fn doc(&self) -> &'static str {
        "A decision step that chose an option whose required step had failed."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            let Some(d) = &s.decision else { continue };
            let Some(opt) = d.options.iter().find(|o| o.id == d.chosen) else {
                continue;
            };
            let failed: Vec<usize> = opt
                .requires
                .iter()
                .filter_map(|r| run.step_index(r.as_str()))
                .filter(|&r| r < i && run.steps.get(r).is_some_and(|x| x.failed()))
                .collect();
            let Some(&first) = failed.first() else {
                continue;
            };
            let err = run
                .steps
                .get(first)
                .and_then(|x| x.error.as_deref())
                .unwrap_or("");
            let mut fi = Finding::new(
                i,
                Category::FailedPrecondition,
                DetectorId::Planning,
                FAILED_PRECONDITION,
                Nature::Suspect,
                format!(
                    "the decision chose {} although its precondition failed",
                    quote(&d.chosen)
                ),
            )
            .because(format!(
                "{} chose {}, which requires {}; that step failed: {}",
                step(run, i),
                quote(&d.chosen),
                step(run, first),
                quote(err)
            ));
            let others: Vec<_> = d
                .options
                .iter()
                .filter(|o| o.id != d.chosen)
                .map(|o| quote(&o.id))
                .take(5)
                .collect();
            if !others.is_empty() {
                fi = fi.because(format!("the other options were {}", others.join(", ")));
            }
            out.push(fi);
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

    #[test]
    fn choosing_an_option_whose_required_step_failed_is_flagged() {
        let run = RunBuilder::failed()
            .tool_err(
                "s1",
                "check_stock",
                json!({"sku": "PX-9"}),
                "503 inventory service unavailable",
            )
            .decision(
                "s2",
                "ship_replacement",
                &[("ship_replacement", &["s1"]), ("refund", &[])],
            )
            .build();
        let found = facts_for(&run, |f| Planning.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (1, Category::FailedPrecondition)
        );
        assert!(found[0].evidence[1].contains("'refund'"));
    }

    #[test]
    fn choosing_an_option_whose_requirements_held_is_fine() {
        let run = RunBuilder::failed()
            .tool_err("s1", "check_stock", json!({"sku": "PX-9"}), "503")
            .tool_ok("s2", "get_order", json!({"id": "A"}), json!("ok"))
            .decision(
                "s3",
                "refund",
                &[("ship_replacement", &["s1"]), ("refund", &["s2"])],
            )
            .build();
        assert!(facts_for(&run, |f| Planning.detect(f)).is_empty());
    }
}
