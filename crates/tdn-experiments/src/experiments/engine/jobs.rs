//! [`Jobs`]: the [`ExperimentPort`] over the [`Engine`] that the screen drives. Keeps the open
//! run as a [`Subject`], launches plans as jobs on the runtime it was given, remembers each
//! running job's cancel signal and batch, and on shutdown cancels them all and waits until each
//! has recorded its stopped samples and closed its batch. Decides nothing the engine does not.

use super::port::ExperimentPort;
use super::{Engine, EngineError, Plan, Request, RunEvidence, Subject, file_holds_several};
use crate::analysis::import::SourceFormat;
use crate::analysis::model::{Run, inert_line};
use crate::analysis::report::Report;
use crate::experiments::event::{Event, EventKind, EventSender, JobEnd, JobId, JobOutcome};
use crate::experiments::runner::Cancel;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a shutdown waits for cancelled jobs to record their samples and close their batches
/// (an append waits up to 10 s for a ledger another process has locked).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(12);

/// A running job: how to stop it, and its batch.
struct Live {
    cancel: Cancel,
    cohort: String,
}

/// The running jobs, with a signal for when one ends.
#[derive(Default)]
struct Table {
    live: Mutex<HashMap<JobId, Live>>,
    /// Jobs cancelled before they started running (still opening the ledger): they end at
    /// once, running nothing.
    early: Mutex<HashMap<JobId, String>>,
    ended: Condvar,
}

impl Table {
    /// Why `job` was cancelled before it started, taken (so it is honoured once).
    fn take_early_cancel(&self, job: JobId) -> Option<String> {
        self.early
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&job)
    }
}

/// The screen's jobs.
pub struct Jobs {
    engine: Engine,
    rt: tokio::runtime::Handle,
    several: bool,
    format: SourceFormat,
    opened: Mutex<Option<Arc<Subject>>>,
    table: Arc<Table>,
}

impl Jobs {
    /// Jobs of `engine`, run on `rt`, about runs of a file that held `runs_loaded` runs (the
    /// one picked with `index` out of a file of `format`, when one was).
    pub fn new(
        engine: Engine,
        rt: tokio::runtime::Handle,
        runs_loaded: usize,
        index: Option<usize>,
        format: Option<SourceFormat>,
    ) -> Jobs {
        let format = format.unwrap_or(SourceFormat::Native);
        let several = file_holds_several(runs_loaded, index, format);
        Jobs {
            engine,
            rt,
            several,
            format,
            opened: Mutex::new(None),
            table: Arc::new(Table::default()),
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn subject(&self) -> Result<Arc<Subject>, EngineError> {
        self.opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or(EngineError::NoRun)
    }

    fn running_cohorts(&self) -> Vec<String> {
        self.table
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|l| l.cohort.clone())
            .collect()
    }

    /// Jobs still running.
    pub fn running(&self) -> usize {
        self.table
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl ExperimentPort for Jobs {
    fn open(&self, run: Arc<Run>, report: Arc<Report>, source: Option<PathBuf>) {
        let Some(file) = source else { return };
        let subject = self
            .engine
            .subject(run, Some(report), &file, self.several, self.format);
        *self.opened.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(subject));
    }

    fn plan(&self, request: Request) -> Result<Plan, EngineError> {
        self.engine.plan(&self.subject()?, request)
    }

    fn launch(&self, job: JobId, plan: Plan, events: EventSender) -> Result<(), EngineError> {
        // A cancel that came while the job was starting is honoured before anything runs.
        if let Some(why) = self.table.take_early_cancel(job) {
            let _ = events.send(Event {
                job,
                kind: EventKind::Done(Arc::new(JobOutcome {
                    end: JobEnd::Cancelled(why),
                    session: None,
                    closed: None,
                    ledger: Some(plan.subject.ledger.path.clone()),
                    spent: None,
                })),
            });
            return Ok(());
        }
        let running = self.engine.start(&plan, job, events, &self.rt)?;
        {
            let mut live = self
                .table
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            live.insert(
                job,
                Live {
                    cancel: running.canceller(),
                    cohort: running.cohort().to_owned(),
                },
            );
            // A cancel that came while the ledger was being opened.
            if let Some(why) = self.table.take_early_cancel(job) {
                running.canceller().cancel_because(&why);
            }
        }
        let table = Arc::clone(&self.table);
        self.rt.spawn(async move {
            running.finish().await;
            table
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&job);
            table.ended.notify_all();
        });
        Ok(())
    }

    fn cancel(&self, job: JobId, why: &str) {
        let live = self
            .table
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match live.get(&job) {
            Some(l) => l.cancel.cancel_because(why),
            None => {
                self.table
                    .early
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(job, why.to_owned());
            }
        }
    }

    fn evidence(&self) -> Result<RunEvidence, EngineError> {
        let subject = self.subject()?;
        Ok(self.engine.evidence(&subject, &self.running_cohorts()))
    }

    fn aggregate(&self, cohorts: &[String]) -> Result<String, EngineError> {
        let subject = self.subject()?;
        let running = self.running_cohorts();
        if let Some(c) = cohorts.iter().find(|c| running.contains(c)) {
            return Err(EngineError::Stopped(format!(
                "batch '{}' belongs to a job that is still running",
                inert_line(c)
            )));
        }
        if cohorts.is_empty() {
            return Err(EngineError::Stopped(
                "no open batch is ready to aggregate".to_owned(),
            ));
        }
        let closed = self.engine.aggregate(&subject, cohorts)?;
        let written: usize = closed.iter().map(|c| c.attributions.len()).sum();
        Ok(format!(
            "aggregated {} open batch(es): {written} attribution(s) appended to '{}'",
            cohorts.len(),
            subject.ledger.path.display()
        ))
    }

    fn shutdown(&self, why: &str) {
        let mut live = self
            .table
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for l in live.values() {
            l.cancel.cancel_because(why);
        }
        let end = Instant::now() + SHUTDOWN_WAIT;
        while !live.is_empty() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            live = self
                .table
                .ended
                .wait_timeout(live, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
