//! The seam between a front end that runs several jobs at once (the screen) and the experiment
//! engine: [`ExperimentPort`]. The screen never starts a process or decides a verdict itself: it
//! asks for a plan, shows it, asks for consent, launches the same plan, and renders the events.
//!
//! [`super::jobs::Jobs`] implements it over the [`super::Engine`]; [`Unavailable`] refuses
//! everything with the engine's reason; [`super::scripted::ScriptedPort`] stands in for tests.

use super::{EngineError, Plan, Request, RunEvidence};
use crate::analysis::model::Run;
use crate::analysis::report::Report;
use crate::experiments::event::{EventSender, JobId};
use std::path::PathBuf;
use std::sync::Arc;

/// What a front end needs from the experiment engine. `open`, `plan` and `cancel` return
/// quickly; `launch`, `evidence`, `aggregate` and `shutdown` read or write files (or wait) and
/// are called off any UI task.
pub trait ExperimentPort: Send + Sync {
    /// The run experiments are about from now on (called when a run is opened): its report and
    /// the file it came from.
    fn open(&self, _run: Arc<Run>, _report: Arc<Report>, _source: Option<PathBuf>) {}
    /// What `request` would run on the open run, with the exact command; an error says why it
    /// cannot run (no runner, no final answer, nothing to remove...).
    fn plan(&self, request: Request) -> Result<Plan, EngineError>;
    /// Starts `plan` (as planned, not planned again) as job `job`; its events go to `events`,
    /// ending with `Done`.
    fn launch(&self, job: JobId, plan: Plan, events: EventSender) -> Result<(), EngineError>;
    /// Cancels a job, saying why: its running samples are stopped with every process they
    /// started, and recorded as cancelled.
    fn cancel(&self, job: JobId, why: &str);
    /// What the open run's ledger holds.
    fn evidence(&self) -> Result<RunEvidence, EngineError>;
    /// Aggregates open batches that are ready (attribution-ledger.md §5); says what it appended.
    fn aggregate(&self, _cohorts: &[String]) -> Result<String, EngineError> {
        Err(EngineError::Stopped(
            "this experiment engine keeps no ledger".to_owned(),
        ))
    }
    /// The front end is closing: cancel every running job (saying why) and wait, briefly, until
    /// each has stopped its samples, recorded them and closed its batch.
    fn shutdown(&self, _why: &str) {}
}

/// No experiments can run (tests, benchmarks): every request is refused with `reason`.
pub struct Unavailable {
    /// Why.
    pub reason: String,
}

impl ExperimentPort for Unavailable {
    fn plan(&self, _request: Request) -> Result<Plan, EngineError> {
        Err(EngineError::Unavailable(self.reason.clone()))
    }
    fn launch(&self, _job: JobId, _plan: Plan, _events: EventSender) -> Result<(), EngineError> {
        Err(EngineError::Unavailable(self.reason.clone()))
    }
    fn cancel(&self, _job: JobId, _why: &str) {}
    fn evidence(&self) -> Result<RunEvidence, EngineError> {
        Ok(RunEvidence::default())
    }
}
