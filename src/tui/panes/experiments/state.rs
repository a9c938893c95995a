//! What the experiments pane knows: the jobs started in this session with each probe's samples
//! and verdict, what the run's ledger holds (the engine's one-pass evidence, indexed by unit and
//! by step so the suspects can show their latest recorded verdict), and the latest result per
//! target of this session. It changes only through the engine's events and evidence; nothing
//! here draws, does I/O or decides a verdict.

use super::super::super::app::group;
use super::ledger;
use crate::analysis::model::Run;
use crate::analysis::report::ProbeResult;
use crate::experiments::engine::{Plan, Request, RunEvidence, Target};
use crate::experiments::event::{
    Event, EventKind, JobEnd, JobId, JobOutcome, ProbeInfo, SampleEnd,
};
use crate::experiments::ledger::LatestAttribution;
use crate::experiments::runner::Spent;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

/// What a plan does, in a few words, agreeing with its probes: a shortlist capped by
/// `[experiments] max_suspects` says how many of the list are ablated ("ablate 5 of 6,599
/// suspects, one at a time").
pub fn plan_label(p: &Plan) -> String {
    match &p.request {
        Request::AblateEach(asked) => {
            let planned = p.probes.iter().filter(|x| x.asked.is_some()).count();
            let noun = if asked.len() == 1 {
                "suspect"
            } else {
                "suspects"
            };
            if planned < asked.len() {
                format!(
                    "ablate {} of {} {noun}, one at a time",
                    group(planned),
                    group(asked.len())
                )
            } else {
                format!("ablate {} {noun}, one at a time", group(planned))
            }
        }
        other => other.label(),
    }
}

/// Which runs the configured runner re-runs, as the settings say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RunnerReach {
    /// No runner is configured.
    #[default]
    None,
    /// A runner re-runs any run.
    Any,
    /// A runner re-runs only these runs (`[runner] runs`).
    Only(Vec<String>),
}

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
    Done(SampleEnd),
}

/// One probe's progress.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRun {
    /// What it is.
    pub info: ProbeInfo,
    /// Its samples in seed order.
    pub samples: Vec<SampleState>,
    /// What each finished sample spent (time, tokens, dollars), in seed order.
    pub spent: Vec<Option<Spent>>,
    /// Its verdict once known.
    pub result: Option<ProbeResult>,
    /// The verdict as the engine words it.
    pub claim: Option<String>,
}

/// How a probe's samples came out so far, counted from their states (nothing decided here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Answered.
    pub answered: usize,
    /// Answered with a changed outcome.
    pub changed: usize,
    /// Errored (never a flip).
    pub errors: usize,
    /// Stopped by a cancel while running (recorded as cancelled).
    pub cancelled: usize,
    /// Running now (started, or finished and waiting to be written to the ledger).
    pub running: usize,
    /// Not run (yet, or never: the job ended first).
    pub not_run: usize,
    /// Not saved to the ledger.
    pub not_saved: usize,
}

impl ProbeRun {
    /// Its samples, counted.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for s in &self.samples {
            match s {
                SampleState::Done(end) => {
                    match end {
                        SampleEnd::Answered { judged, .. } => {
                            c.answered += 1;
                            c.changed += usize::from(judged.flipped);
                        }
                        SampleEnd::Errored { .. } => c.errors += 1,
                        SampleEnd::Cancelled { .. } => c.cancelled += 1,
                    }
                    if matches!(end.saved(), crate::experiments::event::Saved::No(_)) {
                        c.not_saved += 1;
                    }
                }
                // Issue 26: a sample shown running is counted running, not "not run".
                SampleState::Running | SampleState::Held(_) => c.running += 1,
                SampleState::Waiting => c.not_run += 1,
            }
        }
        c
    }
}

/// Where a job is.
#[derive(Clone, Debug)]
pub enum JobState {
    /// Asked for; the engine has not started it yet.
    Starting,
    /// Samples are running.
    Running,
    /// Over.
    Ended(JobEnd),
}

/// A job started in this session.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its number.
    pub id: JobId,
    /// What was asked.
    pub request: Request,
    /// What it does, in a few words ([`plan_label`]).
    pub label: String,
    /// Its probes.
    pub probes: Vec<ProbeRun>,
    /// Where it is.
    pub state: JobState,
    /// Its batch in the ledger, once started.
    pub cohort: Option<String>,
    /// What it found, once over.
    pub outcome: Option<Arc<JobOutcome>>,
}

impl Job {
    /// Still starting or running.
    pub fn is_running(&self) -> bool {
        !matches!(self.state, JobState::Ended(_))
    }

    /// Samples done and in all.
    pub fn progress(&self) -> (usize, usize) {
        let total = self.probes.iter().map(|p| p.samples.len()).sum();
        let done = self
            .probes
            .iter()
            .flat_map(|p| &p.samples)
            .filter(|s| matches!(s, SampleState::Done(_)))
            .count();
        (done, total)
    }

    /// What it spent, once over: its time and its samples' reported costs.
    pub fn spent(&self) -> Option<Spent> {
        self.outcome.as_ref().and_then(|o| o.spent)
    }

    /// Flags of its end: an unstable or incomplete baseline, unsaved samples, a batch not
    /// closed (from the session's outcome).
    pub fn flags(&self) -> Vec<String> {
        let Some(o) = self.outcome.as_ref().and_then(|o| o.session.as_ref()) else {
            return Vec::new();
        };
        let mut flags: Vec<String> = o.probes.iter().flat_map(|p| p.flags.clone()).collect();
        if o.not_saved > 0 {
            flags.push(format!("{} samples not saved", o.not_saved));
        }
        if let Some(e) = &o.close_error {
            flags.push(format!("the batch's attributions were not written: {e}"));
        }
        flags
    }
}

/// What the experiments pane remembers.
#[derive(Debug, Default)]
pub struct ExperimentsState {
    /// Jobs of this session, oldest first.
    pub jobs: Vec<Job>,
    /// What the run's ledger holds.
    pub ledger: RunEvidence,
    /// For each unit id, the positions in `ledger.ledger.latest` of its attributions.
    by_unit: HashMap<String, Vec<usize>>,
    /// For each step id, the positions of the attributions about it: replays from it and the
    /// units it produced.
    by_step: HashMap<String, Vec<usize>>,
    /// The ledger's earlier batches (not this session's, not open), newest first.
    pub history: Vec<ledger::Batch>,
    /// Why the ledger could not be read, or a note about it.
    pub ledger_note: Option<String>,
    /// Selected row: jobs newest first, then the ledger's rows.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
    /// First line of the selected row's detail drawn.
    pub detail_scroll: usize,
    /// Lines the detail had when last drawn, and the room it had (for paging and the hint).
    pub detail_extent: Cell<(usize, usize)>,
    /// The user has confirmed the command once this session.
    pub consented: bool,
    /// The latest result of this session per target, shown beside suspects and dropped units.
    pub results: HashMap<Target, ProbeResult>,
    /// The engine's sentence for that result, when it gave one.
    pub claims: HashMap<Target, String>,
    /// The runner in one line (its command and origin, or why there is none).
    pub runner_note: String,
    /// Which runs the runner re-runs.
    pub runner: RunnerReach,
    /// The last job number used.
    pub last_job: u64,
    /// A plan was asked for this run and has not arrived: a plan that arrives otherwise (the run
    /// was left, or a second press asked again) is dropped.
    pub planning: bool,
}

impl ExperimentsState {
    /// Starts tracking a new job for a plan and returns its id.
    pub fn start(&mut self, plan: &Plan) -> JobId {
        self.last_job += 1;
        let id = JobId(self.last_job);
        self.jobs.push(Job {
            id,
            request: plan.request.clone(),
            label: plan_label(plan),
            probes: Vec::new(),
            state: JobState::Starting,
            cohort: None,
            outcome: None,
        });
        self.cursor = 0;
        self.detail_scroll = 0;
        id
    }

    /// Why re-running run `run` from here cannot work, when it cannot (issue 26: a hint must
    /// not promise what cannot work): no runner is configured, the runner re-runs only other
    /// runs, or the last job on this run ended with an error on every sample. `None` when an
    /// experiment can run.
    pub fn cannot_run(&self, run: &str) -> Option<String> {
        match &self.runner {
            RunnerReach::None => {
                return Some(
                    "no runner is configured: start with --runner 'CMD' or set [runner] command in tdn.toml"
                        .to_owned(),
                );
            }
            RunnerReach::Only(runs) if !runs.iter().any(|r| r == run) => {
                return Some(format!(
                    "the runner re-runs only {} ([runner] runs in tdn.toml), not this one: start with --runner 'CMD' to use an agent that can",
                    crate::analysis::count::counted(runs.len(), "other run", "other runs")
                ));
            }
            _ => {}
        }
        let last = self.jobs.iter().rev().find(|j| !j.is_running())?;
        let mut errors = last
            .probes
            .iter()
            .flat_map(|p| &p.samples)
            .map(|s| match s {
                SampleState::Done(SampleEnd::Errored { error, .. }) => Some(error),
                _ => None,
            });
        let first = errors.next()??;
        if errors.all(|e| e.is_some()) {
            return Some(format!(
                "the runner failed on every sample of job #{} ({}): fix it before re-running",
                last.id.0,
                super::super::super::widgets::inert_text::clipped(&first.message, 160)
            ));
        }
        None
    }

    /// Jobs still starting or running.
    pub fn running(&self) -> impl Iterator<Item = &Job> {
        self.jobs.iter().filter(|j| j.is_running())
    }

    /// Takes what the ledger holds, indexed by the units and steps of `run`.
    pub fn set_evidence(&mut self, evidence: RunEvidence, run: Option<&Run>) {
        self.by_unit.clear();
        self.by_step.clear();
        if let Some(e) = &evidence.ledger {
            for (i, a) in e.latest.iter().enumerate() {
                let r = &a.attribution;
                if r.component_kind == crate::experiments::ledger::bundle::REPLAY_KIND {
                    self.by_step
                        .entry(r.component_id.clone())
                        .or_default()
                        .push(i);
                    continue;
                }
                self.by_unit
                    .entry(r.component_id.clone())
                    .or_default()
                    .push(i);
                if let Some(step) = run
                    .and_then(|run| run.unit(&r.component_id))
                    .and_then(|u| u.produced_by.as_ref())
                {
                    self.by_step.entry(step.0.clone()).or_default().push(i);
                }
            }
        }
        self.ledger_note = evidence.note.clone();
        let ours: std::collections::HashSet<&str> = self
            .jobs
            .iter()
            .filter_map(|j| j.cohort.as_deref())
            .collect();
        self.history = ledger::batches(&evidence, &ours);
        self.ledger = evidence;
    }

    fn latest_at(&self, at: Option<&Vec<usize>>) -> Vec<&LatestAttribution> {
        let Some(latest) = self.ledger.ledger.as_ref().map(|e| &e.latest) else {
            return Vec::new();
        };
        at.map(|v| v.iter().filter_map(|&i| latest.get(i)).collect())
            .unwrap_or_default()
    }

    /// The ledger's latest attributions about a unit, newest last.
    pub fn ledger_for_unit(&self, unit: &str) -> Vec<&LatestAttribution> {
        self.latest_at(self.by_unit.get(unit))
    }

    /// The ledger's latest attributions about a step (replays from it, the units it produced).
    pub fn ledger_for_step(&self, step: &str) -> Vec<&LatestAttribution> {
        self.latest_at(self.by_step.get(step))
    }

    /// The running job re-running a target, if one is.
    pub fn running_on(&self, t: &Target) -> Option<JobId> {
        self.running()
            .find(|j| j.probes.iter().any(|p| p.info.asked.as_ref() == Some(t)))
            .map(|j| j.id)
    }

    /// Rows listed: jobs, then the batches left open, then the ledger's earlier batches.
    pub fn row_count(&self) -> usize {
        self.jobs.len() + self.ledger.open.len() + self.history.len()
    }

    /// The ledger row at a row of the list, if it is one.
    pub fn ledger_row_at(&self, row: usize) -> Option<ledger::LedgerRow> {
        let i = row.checked_sub(self.jobs.len())?;
        let open = self.ledger.open.len();
        if i < open {
            Some(ledger::LedgerRow::OpenCohort(i))
        } else if i - open < self.history.len() {
            Some(ledger::LedgerRow::Batch(i - open))
        } else {
            None
        }
    }

    /// The open batches the ledger marked ready to aggregate.
    pub fn ready_cohorts(&self) -> Vec<String> {
        self.ledger.ready()
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
    pub fn apply(&mut self, ev: &Event) {
        let Some(job) = self.jobs.iter_mut().find(|j| j.id == ev.job) else {
            return;
        };
        match &ev.kind {
            EventKind::Started { probes, cohort } => {
                job.probes = probes
                    .iter()
                    .map(|p| ProbeRun {
                        info: p.clone(),
                        samples: vec![SampleState::Waiting; p.samples.min(MAX_SAMPLES)],
                        spent: vec![None; p.samples.min(MAX_SAMPLES)],
                        result: None,
                        claim: None,
                    })
                    .collect();
                job.cohort = Some(cohort.clone());
                job.state = JobState::Running;
            }
            EventKind::SampleStarted { probe, seed } => {
                if let Some(slot) = sample_slot(job, probe.0, *seed) {
                    *slot = SampleState::Running;
                }
            }
            EventKind::SampleFinished {
                probe,
                seed,
                end,
                spent,
            } => {
                if let Some(slot) = sample_slot(job, probe.0, *seed) {
                    *slot = SampleState::Done(end.clone());
                }
                if let Some(p) = job.probes.get_mut(probe.0)
                    && let Ok(i) = usize::try_from(*seed)
                {
                    if i >= p.spent.len() && i < MAX_SAMPLES {
                        p.spent.resize(i + 1, None);
                    }
                    if let Some(slot) = p.spent.get_mut(i) {
                        *slot = Some(*spent);
                    }
                }
            }
            EventKind::SampleHeld { probe, seed, why } => {
                if let Some(slot) = sample_slot(job, probe.0, *seed) {
                    *slot = SampleState::Held(why.clone());
                }
            }
            EventKind::ProbeVerdict {
                probe,
                result,
                claim,
            } => {
                if let Some(p) = job.probes.get_mut(probe.0) {
                    p.result = Some(result.clone());
                    if claim.is_some() {
                        p.claim = claim.clone();
                    }
                    if let Some(t) = &p.info.asked
                        && result.verdict.is_some()
                    {
                        self.results.insert(t.clone(), result.clone());
                        match claim {
                            Some(c) => self.claims.insert(t.clone(), c.clone()),
                            None => self.claims.remove(t),
                        };
                    }
                }
            }
            EventKind::Done(outcome) => {
                // Cost verdicts and classes need the whole tier: they arrive with the end.
                if let Some(o) = &outcome.session {
                    for (p, po) in job.probes.iter_mut().zip(&o.probes) {
                        if po.result.verdict.is_some() {
                            p.result = Some(po.result.clone());
                            if po.claim.is_some() {
                                p.claim = po.claim.clone();
                            }
                            if let Some(t) = &p.info.asked {
                                self.results.insert(t.clone(), po.result.clone());
                                if let Some(c) = &po.claim {
                                    self.claims.insert(t.clone(), c.clone());
                                }
                            }
                        }
                    }
                }
                job.state = JobState::Ended(outcome.end.clone());
                job.outcome = Some(Arc::clone(outcome));
            }
        }
    }
}

fn sample_slot(job: &mut Job, probe: usize, seed: u64) -> Option<&mut SampleState> {
    let sample = usize::try_from(seed).ok()?;
    let p = job.probes.get_mut(probe)?;
    if sample >= p.samples.len() && sample < MAX_SAMPLES {
        p.samples.resize(sample + 1, SampleState::Waiting);
    }
    p.samples.get_mut(sample)
}
