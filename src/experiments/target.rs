//! What one `experiment` changes, checked against the run: ids to ablate (a unit, or a step whose
//! produced units are removed), units to restore, or a step to replay from. Errors say which id is
//! wrong and what to do instead. Pure; reads only the run.

use crate::analysis::model::{Run, inert_line};
use crate::experiments::session::{ProbeId, ProbePlan, ProbeRole};
use std::collections::HashSet;

/// The experiment the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Only the baseline.
    Baseline,
    /// Leave these out together (unit ids or step ids).
    Ablate(Vec<String>),
    /// Put these units back together.
    Restore(Vec<String>),
    /// Re-run from this step, with an optional patched output.
    Replay {
        /// The step id.
        step: String,
        /// The output that step should produce.
        patch: Option<String>,
    },
}

/// The probe (after the baseline, `ProbeId(0)`) a target runs, with its ids checked and steps
/// expanded to the units they produced; `None` for the baseline alone.
pub fn probe_for(run: &Run, target: &Target) -> Result<Option<ProbePlan>, String> {
    let baseline = ProbeId(0);
    match target {
        Target::Baseline => Ok(None),
        Target::Ablate(ids) => Ok(Some(ProbePlan {
            role: ProbeRole::Ablation { baseline },
            remove: ablation_units(run, ids)?,
            ..ProbePlan::baseline()
        })),
        Target::Restore(ids) => {
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            for id in ids {
                if run.unit(id).is_none() {
                    return Err(format!(
                        "--restore '{}': the run has no context unit with that id; name a unit listed in its context_units",
                        inert_line(id)
                    ));
                }
                if seen.insert(id.as_str()) {
                    out.push(id.clone());
                }
            }
            Ok(Some(ProbePlan {
                role: ProbeRole::Restoration { baseline },
                restore: out,
                ..ProbePlan::baseline()
            }))
        }
        Target::Replay { step, patch } => {
            if run.step(step).is_none() {
                return Err(format!(
                    "--replay '{}': the run has no step with that id",
                    inert_line(step)
                ));
            }
            Ok(Some(ProbePlan {
                role: ProbeRole::Replay { baseline },
                from_step: Some(step.clone()),
                patch: patch.clone(),
                ..ProbePlan::baseline()
            }))
        }
    }
}

/// Unit ids for `--ablate`: a unit stands for itself; a step for every unit it produced
/// (`produced_by`), in the run's order. Duplicates are removed, first occurrence kept.
pub fn ablation_units(run: &Run, ids: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |id: &str, out: &mut Vec<String>| {
        if seen.insert(id.to_owned()) {
            out.push(id.to_owned());
        }
    };
    for id in ids {
        if run.unit(id).is_some() {
            push(id, &mut out);
            continue;
        }
        if run.step(id).is_none() {
            return Err(format!(
                "--ablate '{}': the run has no context unit or step with that id",
                inert_line(id)
            ));
        }
        let produced: Vec<&str> = run
            .context_units
            .iter()
            .filter(|u| u.produced_by.as_ref().is_some_and(|s| s.as_str() == id))
            .map(|u| u.id.as_str())
            .collect();
        if produced.is_empty() {
            return Err(format!(
                "--ablate '{0}': step '{0}' produced no context unit, so there is nothing to remove; it can only be replayed (--replay '{0}')",
                inert_line(id)
            ));
        }
        for u in produced {
            push(u, &mut out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::{LoadOptions, load_str};
    use std::path::Path;

    fn run() -> Run {
        let text = r#"{"format": "tdn.run/1", "id": "r", "status": "failed", "final_answer": "$120",
          "context_units": [
            {"id": "policy-2019", "kind": "document", "text": "Refunds: full price", "produced_by": "s2"},
            {"id": "policy-2024", "kind": "document", "text": "Refunds: 80 dollars", "produced_by": "s2"},
            {"id": "note", "kind": "memory", "text": "VIP"}],
          "steps": [{"id": "s1", "kind": "user"}, {"id": "s2", "kind": "retrieval"}, {"id": "s3", "kind": "llm"}]}"#;
        load_str(text, Path::new("r.json"), &LoadOptions::default())
            .unwrap()
            .remove(0)
            .run
    }

    #[test]
    fn a_step_stands_for_the_units_it_produced() {
        let r = run();
        assert_eq!(
            ablation_units(
                &r,
                &["note".to_owned(), "s2".to_owned(), "policy-2019".to_owned()]
            )
            .unwrap(),
            vec!["note", "policy-2019", "policy-2024"]
        );
    }

    #[test]
    fn a_step_that_produced_nothing_can_only_be_replayed() {
        let e = ablation_units(&run(), &["s3".to_owned()]).unwrap_err();
        assert!(e.contains("--replay 's3'"), "{e}");
        let e = ablation_units(&run(), &["nope".to_owned()]).unwrap_err();
        assert!(e.contains("'nope'"), "{e}");
    }

    #[test]
    fn restore_and_replay_ids_are_checked() {
        let r = run();
        assert!(probe_for(&r, &Target::Restore(vec!["s2".to_owned()])).is_err());
        assert!(
            probe_for(
                &r,
                &Target::Replay {
                    step: "s9".to_owned(),
                    patch: None
                }
            )
            .is_err()
        );
        let p = probe_for(
            &r,
            &Target::Replay {
                step: "s3".to_owned(),
                patch: Some("x".to_owned()),
            },
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.from_step.as_deref(), Some("s3"));
        assert_eq!(probe_for(&r, &Target::Baseline).unwrap(), None);
    }
}
