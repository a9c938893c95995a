//! What one probe changes in the recorded scenario: the one shape of "an experiment" from the
//! plan to the ledger. The engine plans requests into interventions, the session runs each as a
//! probe, the runner receives it flattened into an [`ExperimentSpec`], the ledger reads it back
//! from its samples, and the front ends describe it in the same words.
//!
//! Pure data and wording; no I/O.

use crate::analysis::model::{StepId, UnitId, inert_line};
use crate::experiments::spec::ExperimentKind;

/// One change to the scenario; every sample of a probe sends the same one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Intervention {
    /// Nothing changed: the recorded scenario, re-run.
    Baseline,
    /// These units left out, together.
    Ablate(Vec<UnitId>),
    /// These units (available, never sent) put back, together.
    Restore(Vec<UnitId>),
    /// Re-run from a step, the earlier steps taken from the recording.
    Replay {
        /// The step re-run from.
        from: StepId,
        /// The output that step should produce instead (the fix to try), or `None`.
        patch: Option<String>,
    },
}

impl Intervention {
    /// Its name on the wire and in the ledger.
    pub fn kind(&self) -> ExperimentKind {
        match self {
            Intervention::Baseline => ExperimentKind::Baseline,
            Intervention::Ablate(_) => ExperimentKind::Ablate,
            Intervention::Restore(_) => ExperimentKind::Restore,
            Intervention::Replay { .. } => ExperimentKind::Replay,
        }
    }

    /// The units left out.
    pub fn removes(&self) -> &[UnitId] {
        match self {
            Intervention::Ablate(u) => u,
            _ => &[],
        }
    }

    /// The units put back.
    pub fn restores(&self) -> &[UnitId] {
        match self {
            Intervention::Restore(u) => u,
            _ => &[],
        }
    }

    /// The units it changes (left out or put back).
    pub fn units(&self) -> &[UnitId] {
        match self {
            Intervention::Ablate(u) | Intervention::Restore(u) => u,
            _ => &[],
        }
    }

    /// The step a replay starts from.
    pub fn from_step(&self) -> Option<&StepId> {
        match self {
            Intervention::Replay { from, .. } => Some(from),
            _ => None,
        }
    }

    /// A replay's patch.
    pub fn patch(&self) -> Option<&str> {
        match self {
            Intervention::Replay { patch, .. } => patch.as_deref(),
            _ => None,
        }
    }

    /// Read back from the fields a spec or a ledger sample holds. Fields the kind does not use
    /// are ignored (a well-formed record leaves them empty).
    pub fn from_fields(
        kind: ExperimentKind,
        remove: &[String],
        restore: &[String],
        from_step: Option<&str>,
        patch: Option<&str>,
    ) -> Intervention {
        let ids = |v: &[String]| v.iter().map(|s| UnitId::from(s.as_str())).collect();
        match kind {
            ExperimentKind::Baseline => Intervention::Baseline,
            ExperimentKind::Ablate => Intervention::Ablate(ids(remove)),
            ExperimentKind::Restore => Intervention::Restore(ids(restore)),
            ExperimentKind::Replay => Intervention::Replay {
                from: StepId::from(from_step.unwrap_or_default()),
                patch: patch.map(str::to_owned),
            },
        }
    }

    /// In a few words, for progress lines and job lists: `baseline`, `ablate 'a', 'b'`,
    /// `restore 'x'`, `replay from 's4' with a patch`. Run text is made inert.
    pub fn label(&self) -> String {
        match self {
            Intervention::Baseline => "baseline".to_owned(),
            Intervention::Ablate(u) => format!("ablate {}", quoted(u)),
            Intervention::Restore(u) => format!("restore {}", quoted(u)),
            Intervention::Replay { from, patch } => format!(
                "replay from '{}'{}",
                inert_line(from.as_str()),
                if patch.is_some() { " with a patch" } else { "" }
            ),
        }
    }

    /// As a verdict's claim words it: `removing 'a', 'b'`, `restoring 'x'`, `replaying from step
    /// 's4' with the patched output`, `changing nothing`.
    pub fn describe(&self) -> String {
        match self {
            Intervention::Baseline => "changing nothing".to_owned(),
            Intervention::Ablate(u) => format!("removing {}", quoted(u)),
            Intervention::Restore(u) => format!("restoring {}", quoted(u)),
            Intervention::Replay { from, patch } => format!(
                "replaying from step '{}'{}",
                inert_line(from.as_str()),
                if patch.is_some() {
                    " with the patched output"
                } else {
                    ""
                }
            ),
        }
    }
}

/// `'a', 'b'` with each id made inert.
pub fn quoted(ids: &[UnitId]) -> String {
    ids.iter()
        .map(|i| format!("'{}'", inert_line(i.as_str())))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intervention_round_trips_through_its_wire_fields() {
        let all = [
            Intervention::Baseline,
            Intervention::Ablate(vec!["a".into(), "b".into()]),
            Intervention::Restore(vec!["x".into()]),
            Intervention::Replay {
                from: "s4".into(),
                patch: Some("$80".to_owned()),
            },
            Intervention::Replay {
                from: "s4".into(),
                patch: None,
            },
        ];
        for i in all {
            let strings = |u: &[UnitId]| u.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            let back = Intervention::from_fields(
                i.kind(),
                &strings(i.removes()),
                &strings(i.restores()),
                i.from_step().map(StepId::as_str),
                i.patch(),
            );
            assert_eq!(back, i);
        }
    }

    #[test]
    fn words_name_the_units_inertly() {
        let a = Intervention::Ablate(vec!["a".into(), "b\u{1b}[2J".into()]);
        assert_eq!(a.label(), "ablate 'a', 'b\\u{1b}[2J'");
        assert_eq!(
            Intervention::Replay {
                from: "s4".into(),
                patch: Some(String::new())
            }
            .describe(),
            "replaying from step 's4' with the patched output"
        );
    }
}
