//! The experiment one runner call performs, exactly as it is sent to the user's command on stdin,
//! in `$TDN_SPEC_FILE` and (flattened) in the environment (docs/experiments.md), and as the
//! ledger records it.

use serde::{Deserialize, Serialize};

/// What a sample changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExperimentKind {
    /// Change nothing.
    Baseline,
    /// Leave out the `remove` units.
    Ablate,
    /// Put the `restore` units back.
    Restore,
    /// Re-run from `from_step`, earlier steps from the recording.
    Replay,
}

impl ExperimentKind {
    /// Every kind, in the spec's order.
    pub const ALL: [ExperimentKind; 4] = [
        ExperimentKind::Baseline,
        ExperimentKind::Ablate,
        ExperimentKind::Restore,
        ExperimentKind::Replay,
    ];

    /// The kind of this name (`baseline`, `ablate`, `restore`, `replay`).
    pub fn parse(s: &str) -> Option<ExperimentKind> {
        ExperimentKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentKind::Baseline => "baseline",
            ExperimentKind::Ablate => "ablate",
            ExperimentKind::Restore => "restore",
            ExperimentKind::Replay => "replay",
        }
    }
}

/// `{"run", "run_id", "experiment", "remove", "restore", "from_step", "patch", "seed", "sample",
/// "source"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExperimentSpec {
    /// Absolute path of the run as a `tdn.run/1` file: the file the run was read from, or for an
    /// imported trace the run converted.
    pub run: String,
    /// The run's id.
    pub run_id: String,
    /// What this sample changes.
    pub experiment: ExperimentKind,
    /// Units left out.
    pub remove: Vec<String>,
    /// Units put back.
    pub restore: Vec<String>,
    /// For a replay: the step to re-run from.
    pub from_step: Option<String>,
    /// For a replay: the output that step should have produced, or null.
    pub patch: Option<String>,
    /// The seed (equal to `sample`).
    pub seed: u64,
    /// 0-based position of the sample in its probe.
    pub sample: u64,
    /// Absolute path of the file the run was read from (the export, for an imported trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl ExperimentSpec {
    /// The spec one sample of `intervention` sends: the run by its absolute path and id, the
    /// intervention flattened, and the seed (equal to the sample's position).
    pub fn new(
        run: &str,
        run_id: &str,
        intervention: &crate::experiments::intervention::Intervention,
        seed: u64,
    ) -> ExperimentSpec {
        let strings =
            |u: &[crate::analysis::model::UnitId]| u.iter().map(|x| x.0.clone()).collect();
        ExperimentSpec {
            run: run.to_owned(),
            run_id: run_id.to_owned(),
            experiment: intervention.kind(),
            remove: strings(intervention.removes()),
            restore: strings(intervention.restores()),
            from_step: intervention.from_step().map(|s| s.0.clone()),
            patch: intervention.patch().map(str::to_owned),
            seed,
            sample: seed,
            source: None,
        }
    }

    /// The intervention this spec sends.
    pub fn intervention(&self) -> crate::experiments::intervention::Intervention {
        crate::experiments::intervention::Intervention::from_fields(
            self.experiment,
            &self.remove,
            &self.restore,
            self.from_step.as_deref(),
            self.patch.as_deref(),
        )
    }
}
