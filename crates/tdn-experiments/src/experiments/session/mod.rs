//! An experiment session: the probes of one job (an `experiment` or `localize` command, or one
//! job of the screen) run through a [`Runner`], judged by the flip rule, saved through the
//! [`SampleSink`] before they are shown, and turned into verdicts.
//!
//! Start one with [`start`] inside a tokio runtime; it reports progress as
//! [`crate::experiments::event::Event`]s of its job (the one event type the command line and the
//! screen both read) and ends with a [`SessionOutcome`]. [`SessionHandle::cancel`], or dropping
//! the handle, stops it: no new sample starts, and every running sample's processes are killed;
//! each stopped sample is recorded as cancelled.
//!
//! Samples of all probes run in plan order (baselines first), up to `parallel` at once; results
//! are always used in seed order. Nothing here prints. The engine (`experiments::engine`) builds
//! the plan and the deps; front ends never call this directly.

mod exec;
mod results;

pub use results::probe_claim;

use crate::analysis::model::Run;
use crate::analysis::report::{CostStats, ProbeResult};
use crate::experiments::engine::EngineError;
use crate::experiments::event::{EventSender, JobId};
pub use crate::experiments::event::{Judged, Saved};
use crate::experiments::flip::FlipJudge;
use crate::experiments::intervention::Intervention;
use crate::experiments::runner::{Cancel, Runner, SampleError, Spent};
use crate::experiments::sink::{SampleSink, SinkError};
use crate::experiments::spec::ExperimentSpec;
use crate::experiments::verdict::Tally;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// A probe's position in its session's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProbeId(pub usize);

/// One probe: the same intervention re-run once per seed, judged against its baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// What its samples change.
    pub intervention: Intervention,
    /// The baseline probe that judges it (`None` for a baseline). Ablations sharing a baseline
    /// form one tier (its cost verdicts compare them with each other).
    pub baseline: Option<ProbeId>,
}

impl Probe {
    /// A baseline probe.
    pub fn baseline() -> Probe {
        Probe {
            intervention: Intervention::Baseline,
            baseline: None,
        }
    }

    /// A probe of `intervention` judged against the baseline `baseline`.
    pub fn against(intervention: Intervention, baseline: ProbeId) -> Probe {
        Probe {
            intervention,
            baseline: Some(baseline),
        }
    }

    /// True for a baseline.
    pub fn is_baseline(&self) -> bool {
        self.intervention == Intervention::Baseline
    }
}

/// Everything a session runs, fixed before it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionPlan {
    /// Absolute path of the `tdn.run/1` file the runner is told about.
    pub run_path: String,
    /// Absolute path of the file the run was read from (the same for a native run).
    pub source_path: String,
    /// Samples per probe (already resolved, at least 2).
    pub samples: usize,
    /// The probes, baselines before the probes they judge.
    pub probes: Vec<Probe>,
    /// The run: its id and status go into each sample's record, its final answer is what each
    /// sample is compared with, and it names the steps the claims speak of.
    pub run: Arc<Run>,
}

impl SessionPlan {
    /// The recorded final answer each sample is compared with (empty when the run has none).
    pub fn original(&self) -> &str {
        self.run.final_answer.as_deref().unwrap_or_default()
    }

    /// The spec one sample of `probe` sends.
    pub fn spec(&self, probe: &Probe, seed: u64) -> ExperimentSpec {
        let mut spec = ExperimentSpec::new(&self.run_path, &self.run.id, &probe.intervention, seed);
        spec.source = Some(self.source_path.clone());
        spec
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
    /// The job the session's events belong to.
    pub job: JobId,
    /// `<comparator>|tdn-tui/<version>`.
    pub evaluator_epoch: String,
}

/// One finished (or cancelled) sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleResult {
    /// Its seed (= its 0-based position in the probe).
    pub seed: u64,
    /// The judged answer, or why there is none.
    pub outcome: Result<Judged, SampleError>,
    /// Whether the sink recorded it.
    pub saved: Saved,
    /// The time the runner took and what the agent reported spending.
    pub spent: Spent,
}

/// One probe's final state.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOutcome {
    /// The probe it ran.
    pub plan: Probe,
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
    /// Its finished samples' time (summed) and costs.
    pub spent: Spent,
}

/// What a session found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionOutcome {
    /// Every probe, in plan order.
    pub probes: Vec<ProbeOutcome>,
    /// How many times the runner was called.
    pub runner_calls: usize,
    /// It was cancelled before every sample ran.
    pub cancelled: bool,
    /// Finished samples the sink refused.
    pub not_saved: usize,
    /// Samples stopped by the cancel while they ran (recorded as cancelled).
    pub stopped: usize,
    /// Why the sink could not close the cohort, if it could not.
    pub close_error: Option<SinkError>,
    /// The session's wall-clock time and its samples' summed costs.
    pub spent: Spent,
}

/// A running session.
pub struct SessionHandle {
    cancel: Cancel,
    join: Option<JoinHandle<SessionOutcome>>,
}

impl SessionHandle {
    /// Stops the session, saying why: no new sample starts; running samples' processes are
    /// killed and recorded as cancelled.
    pub fn cancel(&self, why: &str) {
        self.cancel.cancel_because(why);
    }

    /// The session's cancel signal, to fire from elsewhere (a Ctrl-C handler, a key).
    pub fn canceller(&self) -> Cancel {
        self.cancel.clone()
    }

    /// Waits for the end. `Err` only when the session task itself died (a bug), with why.
    pub async fn join(mut self) -> Result<SessionOutcome, EngineError> {
        match self.join.take() {
            Some(j) => j.await.map_err(|e| EngineError::Stopped(e.to_string())),
            None => Err(EngineError::Stopped("already joined".to_owned())),
        }
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        self.cancel.cancel_because("the session was dropped");
    }
}

/// Starts a session on the runtime `rt`; its events go to `events`.
pub fn start(
    rt: &tokio::runtime::Handle,
    plan: SessionPlan,
    deps: SessionDeps,
    events: EventSender,
) -> SessionHandle {
    let cancel = Cancel::new();
    let join = rt.spawn(exec::execute(plan, deps, cancel.clone(), events));
    SessionHandle {
        cancel,
        join: Some(join),
    }
}

#[cfg(test)]
mod lock_tests;
#[cfg(test)]
mod tests;
