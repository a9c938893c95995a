//! What the experiments pane knows: the jobs started in this session with each probe's samples
//! and verdict, the ledger's history, and the latest result per target. It changes only through
//! [`ExperimentEvent`]s and the [`LedgerHistory`] the experiment port reads; nothing here draws,
//! does I/O or decides a verdict.

use super::ledger;
use crate::analysis::report::ProbeResult;
use crate::tui::experiment_port::{
    ExperimentEvent, JobEnd, JobId, LedgerHistory, ProbeInfo, Request, SampleOutcome,
};
use std::cell::Cell;
use std::collections::HashMap;

/// Most samples per probe the pane keeps track of (a runner reporting more is ignored beyond).
const MAX_SAMPLES: usize = 1000;

/// One sample's state.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleState {
    /// Not started.
    Waiting,
    /// Started.
    Running,
    /// Ended, but held back until the ledger's lock is granted and it is written (why).
    Held(String),
    /// Ended.
    Done(SampleOutcome),
}

/// One probe's progress.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRun {
    /// What it is.
    pub info: ProbeInfo,
    /// Its samples in seed order.
    pub samples: Vec<SampleState>,
    /// Its verdict once known.
    pub result: Option<ProbeResult>,
    /// The verdict as the engine words it.
    pub claim: Option<String>,
}

/// Where a job is.
#[derive(Clone, Debug, PartialEq)]
pub enum JobState {
    /// Asked for; no plan has arrived yet.
    Starting,
    /// Samples are running.
    Running,
    /// Over.
    Ended(JobEnd),
}

/// A job started in this session.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Its number.
    pub id: JobId,
    /// What was asked.
    pub request: Request,
    /// Its probes.
    pub probes: Vec<ProbeRun>,
    /// Where it is.
    pub state: JobState,
    /// Flags such as `baseline-unstable`.
    pub flags: Vec<String>,
}

/// What the experiments pane remembers.
#[derive(Debug, Default)]
pub struct ExperimentsState {
    /// Jobs of this session, oldest first.
    pub jobs: Vec<Job>,
    /// What the run's ledger holds: attributions, open batches, trials.
    pub ledger: LedgerHistory,
    /// Why the ledger could not be read, or a note about it.
    pub ledger_note: Option<String>,
    /// Selected row: jobs newest first, then the ledger's rows.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
    /// The user has confirmed the command once this session.
    pub consented: bool,
    /// The latest result per target key (`step:ID`, `unit:ID`), shown beside suspects and
    /// dropped units.
    pub results: HashMap<String, ProbeResult>,
    /// The runner in one line (its command and origin, or why there is none).
    pub runner_note: String,
    /// The last job number used.
    pub last_job: u64,
    /// A plan was asked for this run and has not arrived: a plan that arrives otherwise (the run
    /// was left, or a second press asked again) is dropped.
    pub planning: bool,
}

impl ExperimentsState {
    /// Starts tracking a new job and returns its id.
    pub fn start(&mut self, request: Request) -> JobId {
        self.last_job += 1;
        let id = JobId(self.last_job);
        self.jobs.push(Job {
            id,
            request,
            probes: Vec::new(),
            state: JobState::Starting,
            flags: Vec::new(),
        });
        self.cursor = 0;
        id
    }

    /// Rows listed: jobs, then the ledger's rows.
    pub fn row_count(&self) -> usize {
        self.jobs.len() + ledger::row_count(&self.ledger)
    }

    /// The ledger row at a row of the list, if it is one.
    pub fn ledger_row_at(&self, row: usize) -> Option<ledger::LedgerRow> {
        row.checked_sub(self.jobs.len())
            .and_then(|i| ledger::row_at(&self.ledger, i))
    }

    /// The open batches the ledger marked ready to aggregate.
    pub fn ready_cohorts(&self) -> Vec<String> {
        self.ledger
            .open_cohorts
            .iter()
            .filter(|c| c.ready)
            .map(|c| c.cohort.clone())
            .collect()
    }

    /// The job at a row (rows list the newest job first).
    pub fn job_at(&self, row: usize) -> Option<&Job> {
        let n = self.jobs.len();
        if row < n {
            self.jobs.get(n - 1 - row)
        } else {
            None
        }
    }

    /// Applies one event; events for unknown jobs or out-of-range positions are ignored.
    pub fn apply(&mut self, ev: &ExperimentEvent) {
        let Some(job) = self.jobs.iter_mut().find(|j| j.id == ev.job()) else {
            return;
        };
        match ev {
            ExperimentEvent::Planned { probes, .. } => {
                job.probes = probes
                    .iter()
                    .map(|p| ProbeRun {
                        info: p.clone(),
                        samples: vec![SampleState::Waiting; p.samples.min(MAX_SAMPLES)],
                        result: None,
                        claim: None,
                    })
                    .collect();
                job.state = JobState::Running;
            }
            ExperimentEvent::SampleStarted { probe, sample, .. } => {
                if let Some(slot) = sample_slot(job, *probe, *sample) {
                    *slot = SampleState::Running;
                }
            }
            ExperimentEvent::SampleFinished {
                probe,
                sample,
                outcome,
                ..
            } => {
                if let Some(slot) = sample_slot(job, *probe, *sample) {
                    *slot = SampleState::Done(outcome.clone());
                }
            }
            ExperimentEvent::SampleHeld {
                probe, sample, why, ..
            } => {
                if let Some(slot) = sample_slot(job, *probe, *sample) {
                    *slot = SampleState::Held(why.clone());
                }
            }
            ExperimentEvent::ProbeFinished {
                probe,
                result,
                claim,
                ..
            } => {
                if let Some(p) = job.probes.get_mut(*probe) {
                    p.result = Some(result.clone());
                    if claim.is_some() {
                        p.claim = claim.clone();
                    }
                    if let Some(t) = &p.info.target {
                        self.results.insert(t.key(), result.clone());
                    }
                }
            }
            ExperimentEvent::JobFinished { end, flags, .. } => {
                job.state = JobState::Ended(end.clone());
                job.flags = flags.clone();
            }
        }
    }
}

fn sample_slot(job: &mut Job, probe: usize, sample: usize) -> Option<&mut SampleState> {
    let p = job.probes.get_mut(probe)?;
    if sample >= p.samples.len() && sample < MAX_SAMPLES {
        p.samples.resize(sample + 1, SampleState::Waiting);
    }
    p.samples.get_mut(sample)
}
