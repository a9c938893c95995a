//! The seam between the screen and the experiment runner: what the screen asks for
//! ([`Request`]), what it is told back ([`ExperimentEvent`] over a channel), and the
//! [`ExperimentPort`] trait an experiment engine implements. The screen never starts a process or
//! decides a verdict itself; it shows the plan, asks for consent, and renders the events.
//!
//! Two implementations live here: [`Unavailable`] (no runner: every launch is refused with the
//! reason) and [`ScriptedPort`] (a test double that replays scripted outcomes at once). The real
//! engine (`experiments::runner`) plugs in through `cli::open::experiment_port`.

use crate::analysis::model::{Run, StepId, UnitId};
use crate::analysis::report::{ProbeResult, Report, SuspectClass, Verdict};
use crate::experiments::spec::ExperimentKind;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;

/// A job the screen started, numbered from 1 in a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

/// What an ablation removes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The units this step produced (`produced_by`).
    Step(StepId),
    /// One context unit.
    Unit(UnitId),
}

impl Target {
    /// The target in words.
    pub fn label(&self) -> String {
        match self {
            Target::Step(s) => format!("the units step '{s}' produced"),
            Target::Unit(u) => format!("unit '{u}'"),
        }
    }

    /// A key for results: `step:ID` or `unit:ID`.
    pub fn key(&self) -> String {
        match self {
            Target::Step(s) => format!("step:{s}"),
            Target::Unit(u) => format!("unit:{u}"),
        }
    }
}

/// What the user asked to run.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// A baseline, then one ablation probe per target, in order.
    Ablate(Vec<Target>),
    /// A baseline, then one restoration probe per unit, in order.
    Restore(Vec<UnitId>),
    /// Re-run from this step, earlier steps from the recording.
    Replay {
        /// The step to re-run from.
        from: StepId,
        /// The output that step should produce instead (the fix to try), or `None`.
        patch: Option<String>,
    },
    /// The whole pipeline: baseline, ablation of the top suspects, restoration of dropped units.
    Localize,
}

impl Request {
    /// The request in a few words, for the job list.
    pub fn label(&self) -> String {
        match self {
            Request::Ablate(t) if t.len() == 1 => {
                format!(
                    "ablate {}",
                    t.first().map(Target::label).unwrap_or_default()
                )
            }
            Request::Ablate(t) => format!("ablate {} suspects, one at a time", t.len()),
            Request::Restore(u) if u.len() == 1 => format!(
                "restore unit '{}'",
                u.first().map(|x| x.as_str()).unwrap_or_default()
            ),
            Request::Restore(u) => format!("restore {} units, one at a time", u.len()),
            Request::Replay { from, patch: None } => format!("replay from step '{from}'"),
            Request::Replay {
                from,
                patch: Some(_),
            } => format!("replay from step '{from}' with a patch"),
            Request::Localize => "localize: baseline, ablations, restorations".to_owned(),
        }
    }
}

/// What a request would run, shown before the first experiment of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The exact command text, run under `sh -c`.
    pub command: String,
    /// Where the command came from (the command line, a config file...).
    pub origin: String,
    /// What will run, one line each (probes, samples).
    pub lines: Vec<String>,
    /// How many times the command will be called.
    pub runner_calls: usize,
}

/// One probe of a job: the baseline or one intervention, with its samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeInfo {
    /// For people: `baseline`, `ablate unit 'u3'`...
    pub label: String,
    /// What the samples change.
    pub kind: ExperimentKind,
    /// What it removes or restores (none for a baseline or replay).
    pub target: Option<Target>,
    /// Samples it runs.
    pub samples: usize,
}

/// How one sample ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleOutcome {
    /// The agent answered.
    Answer {
        /// The answer (untrusted text).
        output: String,
        /// Similarity to the original answer, when measured.
        similarity: Option<f64>,
        /// The flip test's decision.
        flipped: bool,
        /// `None` when the sample was saved to the ledger, else why it was not.
        not_saved: Option<String>,
        /// What saving it formed in the ledger: its trials, or why it formed none.
        ledger: Vec<String>,
    },
    /// No usable answer (non-zero exit, time-out, unreadable answer).
    Error {
        /// What went wrong.
        message: String,
        /// The last bytes of stderr (untrusted text).
        stderr_tail: String,
        /// `None` when the sample was saved to the ledger (or never offered: cancelled), else
        /// why it was not.
        not_saved: Option<String>,
    },
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq)]
pub enum JobEnd {
    /// Every probe ran.
    Finished,
    /// The user cancelled; the process groups were stopped.
    Cancelled,
    /// It could not go on.
    Failed(String),
}

/// Progress of one job, in the order things happen.
#[derive(Clone, Debug, PartialEq)]
pub enum ExperimentEvent {
    /// The probes the job will run.
    Planned {
        /// The job.
        job: JobId,
        /// Its probes, in order (a baseline first).
        probes: Vec<ProbeInfo>,
    },
    /// A sample started.
    SampleStarted {
        /// The job.
        job: JobId,
        /// Position of the probe.
        probe: usize,
        /// 0-based sample (the seed).
        sample: usize,
    },
    /// A sample ended.
    SampleFinished {
        /// The job.
        job: JobId,
        /// Position of the probe.
        probe: usize,
        /// 0-based sample.
        sample: usize,
        /// How it ended.
        outcome: SampleOutcome,
    },
    /// A sample ended, but the ledger's lock was not granted in time: the sample is held back
    /// (not shown) until it is written; its `SampleFinished` follows then (runner.md "Verdicts",
    /// attribution-ledger.md §7 "Concurrency").
    SampleHeld {
        /// The job.
        job: JobId,
        /// Position of the probe.
        probe: usize,
        /// 0-based sample.
        sample: usize,
        /// Who holds the lock and for how long, as the ledger says it.
        why: String,
    },
    /// A probe has its verdict.
    ProbeFinished {
        /// The job.
        job: JobId,
        /// Position of the probe.
        probe: usize,
        /// The verdict and its numbers.
        result: ProbeResult,
        /// The verdict as a sentence for people, when the engine gives one.
        claim: Option<String>,
    },
    /// The job is over.
    JobFinished {
        /// The job.
        job: JobId,
        /// How.
        end: JobEnd,
        /// Flags such as `baseline-unstable`.
        flags: Vec<String>,
    },
}

impl ExperimentEvent {
    /// The job this event belongs to.
    pub fn job(&self) -> JobId {
        match self {
            ExperimentEvent::Planned { job, .. }
            | ExperimentEvent::SampleStarted { job, .. }
            | ExperimentEvent::SampleFinished { job, .. }
            | ExperimentEvent::SampleHeld { job, .. }
            | ExperimentEvent::ProbeFinished { job, .. }
            | ExperimentEvent::JobFinished { job, .. } => *job,
        }
    }
}

/// An earlier trial from the run's attribution ledger: one matched pair of samples, with and
/// without a component (attribution-ledger.md §4).
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerTrial {
    /// When it was tested (as the ledger records it).
    pub when: Option<String>,
    /// `ablate`, `restore`, `replay`...
    pub experiment: String,
    /// The component: a unit id, or the replayed step.
    pub units: Vec<String>,
    /// Score with the component minus score without it.
    pub effect: f64,
    /// Its verification status (`verified`, `unbound`, `legacy_unverified`...).
    pub status: String,
    /// The probe verdict, when the engine reports one.
    pub result: Option<ProbeResult>,
}

/// A unit's latest attribution in the run's ledger (attribution-ledger.md §5): the conclusion a
/// batch drew from its trials, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerAttribution {
    /// The unit's kind (or `replay`).
    pub kind: String,
    /// The unit's id (or the replayed step).
    pub unit: String,
    /// `harmful`, `retained`, `demotion_candidate` or `uncertain`.
    pub disposition: String,
    /// `causal_ablation` or `paired_shadow`.
    pub evidence_level: String,
    /// Mean effect of its trials (score with the unit minus score without it).
    pub effect: f64,
    /// Agreement of its trials, scaled by their number.
    pub confidence: f64,
    /// How many trials it was drawn from.
    pub trials: usize,
    /// When its latest trial was tested.
    pub tested_at: String,
    /// Its verification status (`verified`, `legacy_unverified`...).
    pub status: String,
    /// Its 1-based line in the ledger.
    pub line: usize,
    /// How many earlier attributions of the same unit it supersedes, directly or not.
    pub earlier: usize,
}

/// A batch with trials but no attributions: its session ended before closing it (a crash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerCohort {
    /// The batch's name.
    pub cohort: String,
    /// Its trials.
    pub trials: usize,
    /// When its last sample finished.
    pub last_finished_at: String,
    /// Its last sample is older than the runner's time-out and no job of this screen runs it, so
    /// it can be aggregated without racing its own session.
    pub ready: bool,
}

/// What the run's ledger already holds, and anything worth saying about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LedgerHistory {
    /// The ledger's file, when known.
    pub path: Option<String>,
    /// The run's trials, in file order.
    pub trials: Vec<LedgerTrial>,
    /// The latest attribution of each unit the run's batches concluded about, in ledger order.
    pub attributions: Vec<LedgerAttribution>,
    /// Batches left open (trials, no attributions).
    pub open_cohorts: Vec<LedgerCohort>,
    /// A note for the pane (failed lines, samples not being saved).
    pub note: Option<String>,
}

/// Where experiment events go.
pub type EventSender = UnboundedSender<ExperimentEvent>;

/// What the screen needs from an experiment engine. Calls return quickly: `launch` starts work
/// that reports through `events`; `plan` and `earlier_trials` may read files and are called off
/// the UI task.
pub trait ExperimentPort: Send + Sync {
    /// What `request` would run, with the exact command; an error says why it cannot run (no
    /// runner configured, no final answer, nothing to remove...).
    fn plan(&self, request: &Request) -> Result<Plan, String>;
    /// Starts `request` as `job`; progress arrives on `events`, ending with `JobFinished`.
    fn launch(&self, job: JobId, request: Request, events: EventSender) -> Result<(), String>;
    /// Stops a job's samples (their whole process groups).
    fn cancel(&self, job: JobId);
    /// What the run's ledger already holds.
    fn earlier_trials(&self) -> Result<LedgerHistory, String>;
    /// Aggregates batches left open (attribution-ledger.md §5) into attributions; says what it
    /// appended. Only batches the last [`LedgerHistory`] marked `ready` are asked for.
    fn aggregate(&self, _cohorts: &[String]) -> Result<String, String> {
        Err("this experiment engine keeps no ledger".to_owned())
    }
    /// The run experiments are about from now on (called when a run is opened).
    fn open(&self, _run: Arc<Run>, _report: Arc<Report>, _source: Option<PathBuf>) {}
    /// The screen is closing: cancel every running job and wait (blocking, briefly) until each
    /// has stopped its samples and closed its batch.
    fn shutdown(&self) {}
}

/// No experiment engine: every request is refused with `reason`.
pub struct Unavailable {
    /// Why, and what to do about it.
    pub reason: String,
}

impl ExperimentPort for Unavailable {
    fn plan(&self, _request: &Request) -> Result<Plan, String> {
        Err(self.reason.clone())
    }
    fn launch(&self, _job: JobId, _request: Request, _events: EventSender) -> Result<(), String> {
        Err(self.reason.clone())
    }
    fn cancel(&self, _job: JobId) {}
    fn earlier_trials(&self) -> Result<LedgerHistory, String> {
        Ok(LedgerHistory::default())
    }
}

/// A test double: every launch replays scripted outcomes at once. A target scripted as
/// `Confirmed` flips every sample; any other target flips none. The verdicts are the script's,
/// not computed.
pub struct ScriptedPort {
    /// The command shown in plans.
    pub command: String,
    /// Samples per probe.
    pub samples: usize,
    /// `(target key, verdict)`; unlisted targets are `not-confirmed`.
    pub script: Vec<(String, Verdict)>,
    /// Earlier trials to report.
    pub trials: Vec<LedgerTrial>,
    /// Jobs cancelled so far.
    pub cancelled: Mutex<Vec<JobId>>,
    /// When true, launches emit only `Planned` and the first `SampleStarted` (a job left running).
    pub hold: bool,
}

impl ScriptedPort {
    /// A port with this command and 3 samples per probe.
    pub fn new(command: &str) -> ScriptedPort {
        ScriptedPort {
            command: command.to_owned(),
            samples: 3,
            script: Vec::new(),
            trials: Vec::new(),
            cancelled: Mutex::new(Vec::new()),
            hold: false,
        }
    }

    fn verdict_of(&self, target: &Target) -> Verdict {
        self.script
            .iter()
            .find(|(k, _)| *k == target.key())
            .map(|(_, v)| *v)
            .unwrap_or(Verdict::NotConfirmed)
    }

    fn probes(&self, request: &Request) -> Vec<ProbeInfo> {
        let baseline = ProbeInfo {
            label: "baseline".to_owned(),
            kind: ExperimentKind::Baseline,
            target: None,
            samples: self.samples,
        };
        let mut out = vec![baseline];
        match request {
            Request::Ablate(ts) => out.extend(ts.iter().map(|t| ProbeInfo {
                label: format!("ablate {}", t.label()),
                kind: ExperimentKind::Ablate,
                target: Some(t.clone()),
                samples: self.samples,
            })),
            Request::Restore(us) => out.extend(us.iter().map(|u| ProbeInfo {
                label: format!("restore unit '{u}'"),
                kind: ExperimentKind::Restore,
                target: Some(Target::Unit(u.clone())),
                samples: self.samples,
            })),
            Request::Replay { from, .. } => {
                out = vec![ProbeInfo {
                    label: format!("replay from step '{from}'"),
                    kind: ExperimentKind::Replay,
                    target: None,
                    samples: self.samples,
                }];
            }
            Request::Localize => {}
        }
        out
    }
}

impl ExperimentPort for ScriptedPort {
    fn plan(&self, request: &Request) -> Result<Plan, String> {
        let probes = self.probes(request);
        Ok(Plan {
            command: self.command.clone(),
            origin: "the command line".to_owned(),
            lines: probes
                .iter()
                .map(|p| format!("{}: {} samples", p.label, p.samples))
                .collect(),
            runner_calls: probes.iter().map(|p| p.samples).sum(),
        })
    }

    fn launch(&self, job: JobId, request: Request, events: EventSender) -> Result<(), String> {
        let probes = self.probes(&request);
        let send = |e: ExperimentEvent| {
            let _ = events.send(e);
        };
        send(ExperimentEvent::Planned {
            job,
            probes: probes.clone(),
        });
        if self.hold {
            send(ExperimentEvent::SampleStarted {
                job,
                probe: 0,
                sample: 0,
            });
            return Ok(());
        }
        for (pi, p) in probes.iter().enumerate() {
            let verdict = p
                .target
                .as_ref()
                .map(|t| self.verdict_of(t))
                .unwrap_or(Verdict::NotConfirmed);
            let flips = usize::from(verdict == Verdict::Confirmed) * p.samples;
            for s in 0..p.samples {
                send(ExperimentEvent::SampleStarted {
                    job,
                    probe: pi,
                    sample: s,
                });
                let flipped = verdict == Verdict::Confirmed;
                send(ExperimentEvent::SampleFinished {
                    job,
                    probe: pi,
                    sample: s,
                    outcome: SampleOutcome::Answer {
                        output: if flipped {
                            format!("scripted answer {s} (changed)")
                        } else {
                            "scripted answer (unchanged)".to_owned()
                        },
                        similarity: Some(if flipped { 0.2 } else { 0.97 }),
                        flipped,
                        not_saved: None,
                        ledger: Vec::new(),
                    },
                });
            }
            if p.target.is_some() {
                send(ExperimentEvent::ProbeFinished {
                    job,
                    probe: pi,
                    result: ProbeResult {
                        verdict: Some(verdict),
                        flips,
                        samples: p.samples,
                        completed: p.samples,
                        errors: 0,
                        similarity: None,
                        cost: None,
                        class: Some(if verdict == Verdict::Confirmed {
                            SuspectClass::ContentBug
                        } else {
                            SuspectClass::NoDetectedEffect
                        }),
                    },
                    claim: None,
                });
            }
        }
        send(ExperimentEvent::JobFinished {
            job,
            end: JobEnd::Finished,
            flags: Vec::new(),
        });
        Ok(())
    }

    fn cancel(&self, job: JobId) {
        if let Ok(mut c) = self.cancelled.lock() {
            c.push(job);
        }
    }

    fn earlier_trials(&self) -> Result<LedgerHistory, String> {
        Ok(LedgerHistory {
            trials: self.trials.clone(),
            ..LedgerHistory::default()
        })
    }
}
