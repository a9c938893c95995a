//! An experiment session: the probes of one `experiment` or `localize` command (or one sweep of
//! the screen) run through a [`Runner`], judged by the flip rule, saved through the
//! [`SampleSink`] before they are shown, and turned into verdicts.
//!
//! Start one with [`start`] inside a tokio runtime; it reports progress as [`TrialEvent`]s on an
//! unbounded mpsc channel (the screen's experiments pane and the command line read the same
//! events) and ends with a [`SessionOutcome`]. [`SessionHandle::cancel`], or dropping the handle,
//! stops it: no new sample starts, and every running sample's process group is killed.
//!
//! Samples of all probes run in plan order (baselines first), up to `parallel` at once; results
//! are always used in seed order. Nothing here prints.

mod exec;
mod results;

pub use results::probe_claim;

use crate::analysis::model::RunStatus;
use crate::analysis::report::{CostStats, ProbeResult};
use crate::experiments::flip::FlipJudge;
use crate::experiments::runner::{Cancel, Cost, Runner, SampleError};
use crate::experiments::sink::{Receipt, SampleSink};
use crate::experiments::spec::{ExperimentKind, ExperimentSpec};
use crate::experiments::verdict::Tally;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// A probe's position in its session's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProbeId(pub usize);

/// What a probe is for, and which baseline judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeRole {
    /// Changes nothing; judges the probes that name it.
    Baseline,
    /// Removes units; judged against `baseline`; part of its ablation tier (cost verdicts).
    Ablation {
        /// The tier's baseline.
        baseline: ProbeId,
    },
    /// Puts dropped units back; judged against `baseline`; no cost verdict.
    Restoration {
        /// The tier's baseline.
        baseline: ProbeId,
    },
    /// Re-runs from a step; judged against `baseline`; no cost verdict, no class.
    Replay {
        /// The baseline.
        baseline: ProbeId,
    },
}

impl ProbeRole {
    /// The baseline that judges this probe (`None` for a baseline).
    pub fn baseline(&self) -> Option<ProbeId> {
        match *self {
            ProbeRole::Baseline => None,
            ProbeRole::Ablation { baseline }
            | ProbeRole::Restoration { baseline }
            | ProbeRole::Replay { baseline } => Some(baseline),
        }
    }
}

/// One probe: the same change, re-run once per seed.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbePlan {
    /// What it is for.
    pub role: ProbeRole,
    /// Units left out.
    pub remove: Vec<String>,
    /// Units put back.
    pub restore: Vec<String>,
    /// For a replay: the step re-run from.
    pub from_step: Option<String>,
    /// For a replay: the output that step should produce, or `None`.
    pub patch: Option<String>,
}

impl ProbePlan {
    /// The baseline probe.
    pub fn baseline() -> Self {
        ProbePlan {
            role: ProbeRole::Baseline,
            remove: Vec::new(),
            restore: Vec::new(),
            from_step: None,
            patch: None,
        }
    }

    /// The experiment kind its samples send.
    pub fn kind(&self) -> ExperimentKind {
        match self.role {
            ProbeRole::Baseline => ExperimentKind::Baseline,
            ProbeRole::Ablation { .. } => ExperimentKind::Ablate,
            ProbeRole::Restoration { .. } => ExperimentKind::Restore,
            ProbeRole::Replay { .. } => ExperimentKind::Replay,
        }
    }
}

/// Everything a session runs, fixed before it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionPlan {
    /// Absolute path of the run file.
    pub run_path: String,
    /// The run's id.
    pub run_id: String,
    /// The run's status.
    pub run_status: RunStatus,
    /// The recorded final answer each sample is compared with.
    pub original: String,
    /// Samples per probe (already resolved, at least 2).
    pub samples: usize,
    /// The probes, baselines before the probes they judge.
    pub probes: Vec<ProbePlan>,
}

impl SessionPlan {
    /// The spec one sample of `probe` sends.
    pub fn spec(&self, probe: &ProbePlan, seed: u64) -> ExperimentSpec {
        ExperimentSpec {
            run: self.run_path.clone(),
            run_id: self.run_id.clone(),
            experiment: probe.kind(),
            remove: probe.remove.clone(),
            restore: probe.restore.clone(),
            from_step: probe.from_step.clone(),
            patch: probe.patch.clone(),
            seed,
            sample: seed,
        }
    }
}

/// What a session runs with.
pub struct SessionDeps {
    /// Re-runs the agent.
    pub runner: Arc<dyn Runner>,
    /// Decides flips and measures similarity.
    pub judge: Arc<FlipJudge>,
    /// Receives every finished sample before it is shown.
    pub sink: Arc<dyn SampleSink>,
    /// Most samples at once (at least 1).
    pub parallel: usize,
    /// The batch id the ledger groups these samples under.
    pub cohort: String,
    /// `<comparator>|tdn-tui/<version>`.
    pub evaluator_epoch: String,
}

/// Whether a finished sample reached the sink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Saved {
    /// Durably recorded, with the trials it formed (or why it formed none).
    Yes(Receipt),
    /// Not saved: shown marked "not saved" with this reason; forms no trial.
    No(String),
}

impl Saved {
    /// Saved, with nothing to say about trials (a cancelled sample, which is never offered).
    pub fn yes() -> Saved {
        Saved::Yes(Receipt::default())
    }
}

/// A sample that produced an answer, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The answer (untrusted text: print through `inert_line` or `inert_block`).
    pub output: String,
    /// The flip test said the outcome changed.
    pub flipped: bool,
    /// Similarity to the recorded answer, when measured.
    pub similarity: Option<f64>,
    /// What it cost, as reported.
    pub cost: Cost,
}

/// One finished (or cancelled) sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleResult {
    /// Its seed (= its 0-based position in the probe).
    pub seed: u64,
    /// The judged answer, or why there is none.
    pub outcome: Result<Judged, SampleError>,
    /// Whether the sink recorded it (`Yes` with an empty receipt for a cancelled sample, which is
    /// not offered to the sink).
    pub saved: Saved,
}

/// Progress of a session, in the order things happen. The same events drive the screen's
/// experiments pane and the command line.
#[derive(Clone, Debug)]
pub enum TrialEvent {
    /// A sample's command was started.
    SampleStarted {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
    },
    /// A sample answered; it was offered to the sink first (`saved`).
    SampleFinished {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
        /// The judged answer.
        judged: Judged,
        /// Whether the sink recorded it.
        saved: Saved,
    },
    /// A sample finished, but the sink is waiting for a ledger another process has locked: it is
    /// held back until it is written (its `SampleFinished` or `SampleErrored` follows then).
    SampleHeld {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
        /// Who holds the lock and for how long.
        why: String,
    },
    /// A sample errored (never a flip); it was offered to the sink first (`saved`).
    SampleErrored {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
        /// What went wrong, with the stderr tail.
        error: SampleError,
        /// Whether the sink recorded it.
        saved: Saved,
    },
    /// A sample was stopped by cancellation; it is not recorded and counts for nothing.
    SampleCancelled {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
    },
    /// Every sample of a probe and of its baseline finished: its flip verdict. Cost verdicts and
    /// classes need the whole tier and come with [`TrialEvent::SessionDone`].
    ProbeVerdict {
        /// The probe.
        probe: ProbeId,
        /// Its result (for a baseline: counts and similarity, no verdict).
        result: ProbeResult,
        /// The display claim (`None` for a baseline).
        claim: Option<String>,
    },
    /// The session ended (ran out or was cancelled).
    SessionDone {
        /// Everything it found.
        outcome: Arc<SessionOutcome>,
    },
}

/// One probe's final state.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOutcome {
    /// The plan it ran.
    pub plan: ProbePlan,
    /// Its samples by seed (`None`: never started, the session was cancelled first).
    pub samples: Vec<Option<SampleResult>>,
    /// Counts in seed order.
    pub tally: Tally,
    /// Verdict (`None` for a baseline or an unfinished probe), counts, similarity, cost, class.
    pub result: ProbeResult,
    /// Cost stats over the seeds that reported cost.
    pub cost_stats: Option<CostStats>,
    /// The display claim (`None` for a baseline or an unfinished probe).
    pub claim: Option<String>,
    /// For a baseline: `baseline-unstable`, `baseline-incomplete`.
    pub flags: Vec<String>,
}

/// What a session found.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionOutcome {
    /// Every probe, in plan order.
    pub probes: Vec<ProbeOutcome>,
    /// How many times the runner was called.
    pub runner_calls: usize,
    /// It was cancelled before every sample ran.
    pub cancelled: bool,
    /// Finished samples the sink refused.
    pub not_saved: usize,
    /// Why the sink could not close the cohort, if it could not.
    pub close_error: Option<String>,
}

/// A running session.
pub struct SessionHandle {
    cancel: Cancel,
    join: Option<JoinHandle<SessionOutcome>>,
}

impl SessionHandle {
    /// Stops the session: no new sample starts; running samples' process groups are killed.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The session's cancel signal, to fire from elsewhere (a Ctrl-C handler, a key).
    pub fn canceller(&self) -> Cancel {
        self.cancel.clone()
    }

    /// Waits for the end. `Err` only when the session task itself died (a bug), with why.
    pub async fn join(mut self) -> Result<SessionOutcome, String> {
        match self.join.take() {
            Some(j) => j
                .await
                .map_err(|e| format!("the experiment session stopped: {e}")),
            None => Err("the experiment session was already joined".to_owned()),
        }
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Starts a session on the current tokio runtime.
pub fn start(
    plan: SessionPlan,
    deps: SessionDeps,
) -> (SessionHandle, mpsc::UnboundedReceiver<TrialEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let cancel = Cancel::new();
    let join = tokio::spawn(exec::execute(plan, deps, cancel.clone(), tx));
    (
        SessionHandle {
            cancel,
            join: Some(join),
        },
        rx,
    )
}

#[cfg(test)]
mod lock_tests;
#[cfg(test)]
mod tests;
