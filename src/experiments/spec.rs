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

/// `{"run", "run_id", "experiment", "remove", "restore", "from_step", "patch", "seed", "sample"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExperimentSpec {
    /// Absolute path of the file the run was read from.
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
}
