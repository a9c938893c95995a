//! The experiment engine: the one front door of experiments, for the command line and the screen
//! alike. Built once from the resolved settings ([`Engine::new`]: the runner, the flip rule and
//! the embedder as the config parsed them, the consent rule, the counts, the ledger's place and
//! policy), it takes a [`Request`] about a [`Subject`] (a run, its report, its file and its
//! ledger), plans it once ([`Engine::plan`]: every rule about what can be tested), starts the
//! plan ([`Engine::start`]: the ledger opened, a batch named and leased, the session run through
//! the user's runner), and reports one event type ([`crate::experiments::event::Event`]) that
//! the command line prints and the screen renders. It also reads what the ledger already holds
//! about a run in one pass ([`Engine::evidence`]) and closes batches a dead session left open
//! ([`Engine::aggregate`]).
//!
//! [`port::ExperimentPort`] is the seam the screen drives (implemented by [`jobs::Jobs`] over
//! this engine, and by [`scripted::ScriptedPort`] in tests); [`drive::run_to_end`] runs one plan
//! from synchronous code, with every stop signal cancelling it.
//!
//! Commands come only from the settings, never from a run file. Opening the ledger reads and may
//! create a file; nothing here prints.

pub mod drive;
mod error;
pub mod evidence;
pub mod jobs;
mod lease;
pub mod plan;
pub mod port;
pub mod run_file;
pub mod scripted;

pub use error::{EngineError, MAX_SAMPLES, PlanError, covered};
pub use evidence::{BatchState, OpenBatch, RunEvidence};
pub use plan::{Caps, Plan, PlannedProbe, Request, Target};
pub use port::{ExperimentPort, Unavailable};
pub use scripted::ScriptedPort;

use crate::analysis::import::SourceFormat;
use crate::analysis::influence::Embedder;
use crate::analysis::model::Run;
use crate::analysis::report::Report;
use crate::config::{FlipRule, Settings, UserCommand};
use crate::experiments::event::{Event, EventKind, EventSender, JobEnd, JobId, JobOutcome};
use crate::experiments::flip::FlipJudge;
use crate::experiments::ledger::{self, Closed, Location, Policy};
use crate::experiments::run_ledger::RunLedger;
use crate::experiments::runner::Cancel;
use crate::experiments::runner::shell::ShellRunner;
use crate::experiments::session::{self, SessionDeps, SessionHandle, SessionPlan};
use crate::experiments::verdict::resolve_samples;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Whether commands from a `tdn.toml` in the current folder may run (docs/experiments.md,
/// "Consent"): given by `--yes`, or by the screen's confirmation before the first experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consent {
    /// The user agreed to every configured command.
    Given,
    /// Only commands from the command line, the environment, `--config` or the user's config
    /// folder run.
    NotGiven,
}

/// A run experiments are about: the run, its report (for `localize`), its file's absolute path
/// (what the runner is told) and where its samples go.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The run.
    pub run: Arc<Run>,
    /// Its report, when one was made.
    pub report: Option<Arc<Report>>,
    /// The run file's absolute path.
    pub run_path: PathBuf,
    /// The `tdn.run/1` file its runner is told about (for an import, the run converted).
    pub run_file: Arc<run_file::RunFile>,
    /// Its attribution ledger.
    pub ledger: Location,
}

/// Whether the file a run came from holds several runs, which makes the ledger beside it a
/// scenario ledger (attribution-ledger.md §7): more than one run loaded, or one picked with
/// `--index` out of an imported file (a native file holds one run).
pub fn file_holds_several(runs_loaded: usize, index: Option<usize>, format: SourceFormat) -> bool {
    runs_loaded > 1 || (index.is_some() && format != SourceFormat::Native)
}

/// Where the samples of run `run_id`, read from `file` (a file of several runs when `several`),
/// are kept: `configured` (`[ledger] path` or `--ledger`) when given, else beside the file
/// (attribution-ledger.md §7). The one place this is decided.
pub fn locate_ledger(
    configured: Option<&Path>,
    file: &Path,
    several: bool,
    run_id: &str,
) -> Location {
    let runs_in_file = if several { 2 } else { 1 };
    ledger::locate(file, configured, runs_in_file, run_id)
}

/// What running needs, resolved from the settings once.
struct Ready {
    runner_command: UserCommand,
    runner: Arc<ShellRunner>,
    judge: Arc<FlipJudge>,
    rule_label: String,
    epoch: String,
    samples: usize,
    parallel: usize,
    also_runs: Vec<(&'static str, UserCommand)>,
    /// The runs the runner can re-run (`[runner] runs`), when the config names them.
    runs: Option<Vec<String>>,
}

/// The experiment engine.
pub struct Engine {
    ready: Result<Ready, EngineError>,
    embedder: Arc<dyn Embedder>,
    ledger_path: Option<PathBuf>,
    policy: Policy,
    caps: Caps,
    timeout_s: f64,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("ready", &self.ready.as_ref().map(|r| &r.epoch))
            .field("ledger_path", &self.ledger_path)
            .finish_non_exhaustive()
    }
}

fn consent(what: &'static str, c: &UserCommand, consent: Consent) -> Result<(), EngineError> {
    if c.needs_consent() && consent == Consent::NotGiven {
        return Err(EngineError::NeedsConsent {
            what,
            command: c.text.clone(),
            origin: c.origin_text(),
        });
    }
    Ok(())
}

fn ready(
    settings: &Settings,
    given: Consent,
    embedder: &Arc<dyn Embedder>,
) -> Result<Ready, EngineError> {
    let runner_command = settings.runner.clone().ok_or(EngineError::NoRunner)?;
    consent("runner", &runner_command, given)?;
    let rule = settings.experiments.flip.clone()?;
    if let FlipRule::Command(c) = &rule {
        consent("flip rule", c, given)?;
    }
    if let Some(c) = settings.embedder.command() {
        consent("embedder", c, given)?;
    }
    let t = settings.runner_timeout_s;
    if !(t.is_finite() && t > 0.0 && t <= f64::from(u32::MAX)) {
        return Err(EngineError::Timeout(t));
    }
    let samples = resolve_samples(Some(settings.experiments.samples));
    if samples > MAX_SAMPLES {
        return Err(EngineError::TooManySamples {
            asked: settings.experiments.samples,
        });
    }
    let timeout = Duration::from_secs_f64(t);
    let also_runs = settings
        .commands()
        .into_iter()
        .filter(|(what, _)| *what != "runner" && *what != "judge")
        .map(|(what, c)| (what, c.clone()))
        .collect();
    Ok(Ready {
        rule_label: rule.label(settings.embedder.name()),
        runner: Arc::new(ShellRunner::new(runner_command.text.clone(), timeout)),
        judge: Arc::new(FlipJudge::new(rule, Arc::clone(embedder), timeout)),
        // The same name `ledger plan` and `ledger select` read from the settings.
        epoch: ledger::evaluator_epoch(settings),
        runner_command,
        samples,
        parallel: settings.runner_parallel.max(1),
        also_runs,
        runs: settings.runner_runs.clone(),
    })
}

impl Engine {
    /// The engine of these settings. Never fails: what keeps experiments from running (no
    /// runner, a command not agreed to, a bad setting) is said by [`Engine::check`] and by every
    /// plan.
    pub fn new(settings: &Settings, given: Consent) -> Engine {
        let embedder: Arc<dyn Embedder> =
            Arc::from(crate::experiments::embedder::from_settings(settings));
        Engine {
            ready: ready(settings, given, &embedder),
            embedder,
            ledger_path: settings.ledger.path.clone(),
            policy: Policy {
                neutral_effect: settings.ledger.neutral_effect,
                high_token_cost: settings.ledger.high_token_cost,
            },
            caps: Caps {
                max_suspects: settings.experiments.max_suspects,
                max_candidates: settings.experiments.max_candidates,
            },
            timeout_s: settings.runner_timeout_s,
        }
    }

    /// Why nothing can run, if something keeps it from running.
    pub fn check(&self) -> Result<(), EngineError> {
        self.ready.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    fn ready(&self) -> Result<&Ready, EngineError> {
        self.ready.as_ref().map_err(Clone::clone)
    }

    /// The session's embedder (also what `localize` ranks with).
    pub fn embedder(&self) -> Arc<dyn Embedder> {
        Arc::clone(&self.embedder)
    }

    /// The runner command, when one can run.
    pub fn runner(&self) -> Option<&UserCommand> {
        self.ready.as_ref().ok().map(|r| &r.runner_command)
    }

    /// The flip rule for people, when experiments can run.
    pub fn rule_label(&self) -> Option<&str> {
        self.ready.as_ref().ok().map(|r| r.rule_label.as_str())
    }

    /// Samples per probe, when experiments can run.
    pub fn samples(&self) -> Option<usize> {
        self.ready.as_ref().ok().map(|r| r.samples)
    }

    /// The runner's time-out in seconds (a batch left open longer than this is stale).
    pub fn timeout_s(&self) -> f64 {
        self.timeout_s
    }

    /// The run `run` read from `file` in `format` (a file of several runs when `several`), with
    /// its report: its ledger is `[ledger] path` (or `--ledger`) when given, else beside the
    /// file. A runner gets it as `tdn.run/1`: the file itself, or the run converted.
    pub fn subject(
        &self,
        run: Arc<Run>,
        report: Option<Arc<Report>>,
        file: &Path,
        several: bool,
        format: SourceFormat,
    ) -> Subject {
        let ledger = locate_ledger(self.ledger_path.as_deref(), file, several, &run.id);
        let run_path = std::fs::canonicalize(file)
            .or_else(|_| std::path::absolute(file))
            .unwrap_or_else(|_| file.to_path_buf());
        let run_file = Arc::new(run_file::RunFile::new(run_path.clone(), format, &run.id));
        Subject {
            run,
            report,
            run_path,
            run_file,
            ledger,
        }
    }

    /// Plans `request` on `subject`: checks it against every rule about what can be tested and
    /// returns the probes it runs. Pure; linear in the run's size.
    pub fn plan(&self, subject: &Arc<Subject>, request: Request) -> Result<Plan, EngineError> {
        let ready = self.ready()?;
        // A runner said to re-run only some runs is never given another (issue 26: the sample
        // runs' stand-in knows three, and answered the others with an error per sample).
        if let Some(runs) = &ready.runs
            && !runs.iter().any(|r| *r == subject.run.id)
        {
            return Err(EngineError::NotCovered {
                run: subject.run.id.clone(),
                runs: runs.clone(),
            });
        }
        let planned = plan::plan_request(subject, &request, self.caps)?;
        Ok(Plan {
            subject: Arc::clone(subject),
            request,
            probes: planned.probes,
            samples: ready.samples,
            left_out: planned.left_out,
            notes: planned.notes,
            tiers: planned.tiers,
            runner: ready.runner_command.clone(),
            rule_label: ready.rule_label.clone(),
            also_runs: ready.also_runs.clone(),
        })
    }

    /// Starts `plan` as job `job` on the runtime `rt`: opens the run's ledger (creating it),
    /// names and leases a new batch, says [`EventKind::Started`], and runs the session; its
    /// events go to `events`. Blocking file I/O: call it off any UI task. [`Running::finish`]
    /// waits for the end and closes the batch.
    pub fn start(
        &self,
        plan: &Plan,
        job: JobId,
        events: EventSender,
        rt: &tokio::runtime::Handle,
    ) -> Result<Running, EngineError> {
        let ready = self.ready()?;
        let subject = &plan.subject;
        let runner_run = subject
            .run_file
            .for_runner()
            .map_err(EngineError::RunFile)?;
        let location = &subject.ledger;
        let sink = RunLedger::open(location, &subject.run, self.policy)
            .map(Arc::new)
            .map_err(|e| EngineError::Ledger {
                path: location.path.clone(),
                why: e.to_string(),
            })?;
        let cohort = ledger::new_cohort(time::OffsetDateTime::now_utc())
            .map_err(|e| EngineError::Stopped(format!("cannot name the batch: {e}")))?;
        let lease = lease::Lease::take(&location.path, &cohort);
        let session_plan = SessionPlan {
            run_path: runner_run.display().to_string(),
            source_path: subject.run_path.display().to_string(),
            samples: plan.samples,
            probes: plan.probes.iter().map(|p| p.probe.clone()).collect(),
            run: subject.run.clone(),
        };
        let deps = SessionDeps {
            runner: ready.runner.clone(),
            judge: ready.judge.clone(),
            sink: sink.clone(),
            parallel: ready.parallel,
            cohort: cohort.clone(),
            evaluator_epoch: ready.epoch.clone(),
            job,
        };
        let _ = events.send(Event {
            job,
            kind: EventKind::Started {
                probes: plan.infos(),
                cohort: cohort.clone(),
            },
        });
        let session = session::start(rt, session_plan, deps, events.clone());
        Ok(Running {
            job,
            cohort,
            cancel: session.canceller(),
            session,
            sink,
            lease,
            events,
        })
    }

    /// What the ledger holds about `subject`'s run, in one read: verified history, each unit's
    /// latest attribution, and the batches left open with whether their session can still be
    /// running (`running`: the batches of this process's jobs). Blocking file I/O.
    pub fn evidence(&self, subject: &Subject, running: &[String]) -> RunEvidence {
        evidence::read(
            &subject.ledger.path,
            &subject.run.id,
            running,
            self.timeout_s,
        )
    }

    /// Closes the open batches `cohorts` of `subject`'s ledger: their verified trials become
    /// attributions under the policy in force. Blocking file I/O.
    pub fn aggregate(
        &self,
        subject: &Subject,
        cohorts: &[String],
    ) -> Result<Vec<Closed>, EngineError> {
        let l = &subject.ledger;
        let bad = |e: crate::experiments::ledger::LedgerError| EngineError::Ledger {
            path: l.path.clone(),
            why: e.to_string(),
        };
        let ledger = ledger::Ledger::open(&l.path, l.scope, &l.name).map_err(bad)?;
        let mut out = Vec::new();
        for c in cohorts {
            out.push(ledger.close_cohort(c, &self.policy).map_err(bad)?);
            lease::Lease::forget(&l.path, c);
        }
        Ok(out)
    }
}

/// A started job.
pub struct Running {
    job: JobId,
    cohort: String,
    cancel: Cancel,
    session: SessionHandle,
    sink: Arc<RunLedger>,
    lease: Option<lease::Lease>,
    events: EventSender,
}

impl Running {
    /// The batch its samples go to.
    pub fn cohort(&self) -> &str {
        &self.cohort
    }

    /// Its cancel signal: firing it stops every running sample (all their processes) and
    /// records each as cancelled.
    pub fn canceller(&self) -> Cancel {
        self.cancel.clone()
    }

    /// Waits for the job's end, closes its batch (the session does, finished or cancelled),
    /// releases its lease, and says [`EventKind::Done`].
    pub async fn finish(self) -> Arc<JobOutcome> {
        let Running {
            job,
            cancel,
            session,
            sink,
            lease,
            events,
            ..
        } = self;
        let outcome = match session.join().await {
            Ok(o) => {
                let end = match cancel.reason() {
                    Some(why) if o.cancelled => JobEnd::Cancelled(why.to_owned()),
                    _ => JobEnd::Finished,
                };
                JobOutcome {
                    end,
                    spent: Some(o.spent),
                    session: Some(o),
                    closed: sink.closed(),
                    ledger: Some(sink.path_buf()),
                }
            }
            Err(e) => JobOutcome {
                end: JobEnd::Failed(Arc::new(e)),
                session: None,
                closed: sink.closed(),
                ledger: Some(sink.path_buf()),
                spent: None,
            },
        };
        drop(lease);
        let outcome = Arc::new(outcome);
        let _ = events.send(Event {
            job,
            kind: EventKind::Done(Arc::clone(&outcome)),
        });
        outcome
    }
}
