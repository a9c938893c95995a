//! What a run's ledger already holds, as the front ends show it: the ledger's one-pass
//! [`Evidence`] (trials, each component's latest attribution, open batches), each open batch
//! marked by whether its session can still be writing it, and a note when lines failed or the
//! file could not be read. A batch is ready to aggregate when its session is known to be gone
//! (its lease is no longer held: the debugger that ran it was killed or crashed) or, without a
//! lease to ask, once its last sample is older than the runner's time-out; never while a job of
//! this process runs it. Reads files; decides no verdict.

use super::lease::{Lease, Liveness};
use crate::experiments::ledger::{self, Evidence, OpenCohort, naming};
use std::path::{Path, PathBuf};

/// Whether an open batch's session can still be writing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchState {
    /// A job of this process runs it.
    Running,
    /// Another process holds its lease: a debugger is running it.
    Elsewhere,
    /// Its lease is no longer held: the debugger that ran it ended without closing it.
    LeftByDeadSession,
    /// No lease to ask, and its last sample is younger than the runner's time-out: its session
    /// may still be running.
    MaybeRunning,
    /// No lease to ask, and its last sample is older than the runner's time-out.
    Stale,
}

impl BatchState {
    /// True when it can be aggregated without racing its own session.
    pub fn ready(self) -> bool {
        matches!(self, BatchState::LeftByDeadSession | BatchState::Stale)
    }
}

/// An open batch of the run with its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenBatch {
    /// The batch.
    pub cohort: OpenCohort,
    /// Whether its session can still be writing it.
    pub state: BatchState,
}

/// What a run's ledger holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunEvidence {
    /// The ledger's file.
    pub path: PathBuf,
    /// Its evidence about the run (`None`: no ledger yet, or it could not be read).
    pub ledger: Option<Evidence>,
    /// The run's open batches with their state.
    pub open: Vec<OpenBatch>,
    /// Failed lines or a read error, in words.
    pub note: Option<String>,
}

impl RunEvidence {
    /// The open batches ready to aggregate.
    pub fn ready(&self) -> Vec<String> {
        self.open
            .iter()
            .filter(|b| b.state.ready())
            .map(|b| b.cohort.cohort.clone())
            .collect()
    }

    /// The open batches whose debugger ended without closing them.
    pub fn left_by_dead_sessions(&self) -> impl Iterator<Item = &OpenBatch> {
        self.open
            .iter()
            .filter(|b| b.state == BatchState::LeftByDeadSession)
    }
}

/// Reads the evidence about `run_id` in the ledger at `path`; `running` are the batches of this
/// process's jobs, `timeout_s` the runner's time-out.
pub fn read(path: &Path, run_id: &str, running: &[String], timeout_s: f64) -> RunEvidence {
    let mut out = RunEvidence {
        path: path.to_path_buf(),
        ..RunEvidence::default()
    };
    let e = match ledger::evidence(path, run_id) {
        Ok(None) => return out,
        Ok(Some(e)) => e,
        Err(e) => {
            out.note = Some(format!("cannot read the ledger: {e}"));
            return out;
        }
    };
    if e.counts.failed > 0 {
        out.note = Some(format!(
            "{} line(s) of '{}' failed verification and are not shown as evidence; run 'tdn-tui ledger verify' on it",
            e.counts.failed,
            path.display()
        ));
    }
    let now = time::OffsetDateTime::now_utc();
    let cutoff = naming::timestamp(now - time::Duration::seconds_f64(timeout_s.clamp(0.0, 1e9)));
    out.open = e
        .open
        .iter()
        .map(|c| OpenBatch {
            state: if running.contains(&c.cohort) {
                BatchState::Running
            } else {
                match Lease::liveness(path, &c.cohort) {
                    Liveness::Alive => BatchState::Elsewhere,
                    Liveness::Gone => BatchState::LeftByDeadSession,
                    Liveness::Unknown if c.last_finished_at < cutoff => BatchState::Stale,
                    Liveness::Unknown => BatchState::MaybeRunning,
                }
            },
            cohort: c.clone(),
        })
        .collect();
    out.ledger = Some(e);
    out
}
