//! The experiment port backed by the experiments layer: requests become session plans
//! (`experiments::target`, `experiments::localize`), sessions run on the screen's tokio runtime
//! through the user's runner (`experiments::setup::prepare`), and their `TrialEvent`s are turned
//! into the screen's [`ExperimentEvent`]s. The verdicts, claims, costs and classes are the
//! session's; nothing is decided here. Commands come only from the settings.
//!
//! The screen shows the exact command and asks before the first experiment of a session, which
//! is the user's consent for a command from a `tdn.toml` in the current folder too. Every sample
//! is saved to the run's attribution ledger before the screen is told of it; each job is one
//! batch (cohort), closed when the job ends or is cancelled. What the pane shows of the ledger
//! comes from `live_ledger`.

use super::experiment_port::{
    EventSender, ExperimentEvent, ExperimentPort, JobEnd, JobId, LedgerHistory, Plan, ProbeInfo,
    Request, SampleOutcome, Target,
};
use super::live_ledger;
use crate::analysis::model::{Run, StepId, UnitId, inert_line};
use crate::analysis::report::Report;
use crate::config::Settings;
use crate::experiments::ledger::Location;
use crate::experiments::localize::{plan_tiers, report_dropped, report_subjects};
use crate::experiments::session::{
    self, ProbePlan, ProbeRole, Saved, SessionDeps, SessionHandle, SessionPlan, TrialEvent,
};
use crate::experiments::setup::{self, Prepared};
use crate::experiments::target::{self, probe_for};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long quitting waits for cancelled jobs to stop their samples and close their batches.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);
/// How often quitting looks whether they have.
const SHUTDOWN_POLL: Duration = Duration::from_millis(20);

/// Runs the screen's experiments through the user's runner.
pub struct LivePort {
    settings: Settings,
    runs_in_file: usize,
    opened: Mutex<Option<Arc<Opened>>>,
    running: Arc<Mutex<HashMap<JobId, Running>>>,
    /// Jobs cancelled while they were still starting (reading the settings, waiting for the
    /// ledger's lock): they end before running anything. Locked only with `running` held.
    cancelled_early: Mutex<HashSet<JobId>>,
}

/// A job's session and the batch its samples are saved under.
struct Running {
    handle: SessionHandle,
    cohort: String,
}

/// The run experiments are about.
struct Opened {
    run: Arc<Run>,
    report: Arc<Report>,
    run_path: PathBuf,
    ledger: Location,
}

impl LivePort {
    /// A port using the runner, flip rule, embedder and ledger of `settings`.
    pub fn new(settings: &Settings) -> LivePort {
        let mut settings = settings.clone();
        // The screen asks before the first experiment, whatever the command's origin.
        settings.yes = true;
        LivePort {
            settings,
            runs_in_file: 1,
            opened: Mutex::new(None),
            running: Arc::new(Mutex::new(HashMap::new())),
            cancelled_early: Mutex::new(HashSet::new()),
        }
    }

    /// How many runs the file holds (the ledger of a file of several runs is per scenario).
    pub fn with_runs_in_file(mut self, n: usize) -> LivePort {
        self.runs_in_file = n.max(1);
        self
    }

    fn opened(&self) -> Result<Arc<Opened>, String> {
        self.opened
            .lock()
            .ok()
            .and_then(|o| o.clone())
            .ok_or_else(|| "no run is open".to_owned())
    }

    fn prepare(&self) -> Result<Prepared, String> {
        setup::prepare(&self.settings).map_err(|e| e.0)
    }

    /// The probes of a request with what each answers, checked against the run.
    fn probes(
        &self,
        o: &Opened,
        request: &Request,
    ) -> Result<Vec<(ProbePlan, Option<Target>)>, String> {
        let run = &o.run;
        if run.final_answer.is_none() {
            return Err(
                "this run records no final answer, so a re-run has nothing to be compared with"
                    .to_owned(),
            );
        }
        let mut out = vec![(ProbePlan::baseline(), None)];
        match request {
            Request::Ablate(targets) => {
                for t in targets {
                    let id = match t {
                        Target::Step(s) => {
                            check_step_has_units(run, s)?;
                            s.to_string()
                        }
                        Target::Unit(u) => u.to_string(),
                    };
                    let p = probe_for(run, &target::Target::Ablate(vec![id]))?;
                    out.extend(p.map(|p| (p, Some(t.clone()))));
                }
            }
            Request::Restore(units) => {
                for u in units {
                    let p = probe_for(run, &target::Target::Restore(vec![u.to_string()]))?;
                    out.extend(p.map(|p| (p, Some(Target::Unit(u.clone())))));
                }
            }
            Request::Replay { from, patch } => {
                let p = probe_for(
                    run,
                    &target::Target::Replay {
                        step: from.to_string(),
                        patch: patch.clone(),
                    },
                )?;
                out.extend(p.map(|p| (p, None)));
            }
            Request::Localize => {
                let tiers = plan_tiers(
                    &report_subjects(&o.report),
                    &report_dropped(&o.report),
                    self.settings.experiments.max_suspects,
                    self.settings.experiments.max_candidates,
                );
                if tiers.probes.is_empty() {
                    return Err("nothing to localize: no ranked piece of context has a unit to remove, and nothing was dropped".to_owned());
                }
                return Ok(tiers
                    .probes
                    .into_iter()
                    .map(|p| {
                        let t = p
                            .remove
                            .first()
                            .or(p.restore.first())
                            .map(|u| Target::Unit(UnitId::from(u.as_str())));
                        (p, t)
                    })
                    .collect());
            }
        }
        Ok(out)
    }
}

fn check_step_has_units(run: &Run, s: &StepId) -> Result<(), String> {
    let produced = run
        .context_units
        .iter()
        .any(|u| u.produced_by.as_ref().is_some_and(|p| p == s));
    if produced {
        Ok(())
    } else {
        Err(format!(
            "step '{}' produced no context unit, so ablating it removes nothing; replay from it instead (p), or ablate a unit from the context influence list",
            inert_line(s.as_str())
        ))
    }
}

fn label(p: &ProbePlan) -> String {
    match p.role {
        ProbeRole::Baseline => "baseline".to_owned(),
        ProbeRole::Ablation { .. } => format!("ablate '{}'", p.remove.join("', '")),
        ProbeRole::Restoration { .. } => format!("restore '{}'", p.restore.join("', '")),
        ProbeRole::Replay { .. } => format!(
            "replay from '{}'{}",
            p.from_step.as_deref().unwrap_or("?"),
            if p.patch.is_some() {
                " with a patch"
            } else {
                ""
            }
        ),
    }
}

impl ExperimentPort for LivePort {
    fn plan(&self, request: &Request) -> Result<Plan, String> {
        let o = self.opened()?;
        let prepared = self.prepare()?;
        let probes = self.probes(&o, request)?;
        let cmd = self
            .settings
            .runner
            .as_ref()
            .ok_or("no runner is configured")?;
        let mut lines: Vec<String> = probes
            .iter()
            .map(|(p, _)| format!("{}: {} samples", inert_line(&label(p)), prepared.samples))
            .collect();
        if let Request::Replay {
            patch: Some(patch), ..
        } = request
        {
            lines.push(format!(
                "the replayed step's output becomes: '{}'",
                inert_line(patch)
            ));
        }
        lines.push(format!("flip rule: {}", inert_line(&prepared.rule_label)));
        lines.push(format!(
            "each sample is saved to '{}'",
            inert_line(&o.ledger.path.display().to_string())
        ));
        for (what, c) in self.settings.commands() {
            if what != "runner" && what != "judge" {
                lines.push(format!(
                    "also runs the {what} command '{}' (from {})",
                    inert_line(&c.text),
                    c.origin_text()
                ));
            }
        }
        Ok(Plan {
            command: cmd.text.clone(),
            origin: cmd.origin_text(),
            lines,
            runner_calls: probes.len() * prepared.samples,
        })
    }

    fn launch(&self, job: JobId, request: Request, events: EventSender) -> Result<(), String> {
        let rt = tokio::runtime::Handle::try_current()
            .map_err(|_| "experiments run only in the live screen, not with --render".to_owned())?;
        let o = self.opened()?;
        let prepared = self.prepare()?;
        let probes = self.probes(&o, &request)?;
        let sink = setup::open_ledger(&o.ledger, &o.run, setup::ledger_policy(&self.settings))
            .map_err(|e| e.0)?;
        let cohort = setup::new_cohort().map_err(|e| e.0)?;
        let original = o.run.final_answer.clone().unwrap_or_default();
        let infos: Vec<ProbeInfo> = probes
            .iter()
            .map(|(p, t)| ProbeInfo {
                label: label(p),
                kind: p.kind(),
                target: t.clone(),
                samples: prepared.samples,
            })
            .collect();
        let plan = SessionPlan {
            run_path: o.run_path.display().to_string(),
            run_id: o.run.id.clone(),
            run_status: o.run.status,
            original,
            samples: prepared.samples,
            probes: probes.into_iter().map(|(p, _)| p).collect(),
        };
        let deps = SessionDeps {
            runner: prepared.runner.clone(),
            judge: prepared.judge.clone(),
            sink,
            parallel: prepared.parallel,
            cohort: cohort.clone(),
            evaluator_epoch: prepared.evaluator_epoch.clone(),
        };
        // A cancel that came while the job was starting is honoured now, before anything runs;
        // from here on the job is in `running`, where a cancel finds it.
        let mut running_now = self
            .running
            .lock()
            .map_err(|_| "the list of running jobs is unusable after a crash".to_owned())?;
        let cancelled = self
            .cancelled_early
            .lock()
            .map(|mut c| c.remove(&job))
            .unwrap_or(false);
        if cancelled {
            drop(running_now);
            let _ = events.send(ExperimentEvent::JobFinished {
                job,
                end: JobEnd::Cancelled,
                flags: Vec::new(),
            });
            return Ok(());
        }
        let _ = events.send(ExperimentEvent::Planned { job, probes: infos });
        let _guard = rt.enter();
        let (handle, mut rx) = session::start(plan, deps);
        running_now.insert(job, Running { handle, cohort });
        drop(running_now);
        let running = Arc::clone(&self.running);
        rt.spawn(async move {
            while let Some(ev) = rx.recv().await {
                let done = matches!(ev, TrialEvent::SessionDone { .. });
                for e in translate(job, ev) {
                    let _ = events.send(e);
                }
                if done {
                    break;
                }
            }
            let handle = running.lock().ok().and_then(|mut m| m.remove(&job));
            if let Some(r) = handle
                && let Err(e) = r.handle.join().await
            {
                let _ = events.send(ExperimentEvent::JobFinished {
                    job,
                    end: JobEnd::Failed(e),
                    flags: Vec::new(),
                });
            }
        });
        Ok(())
    }

    fn cancel(&self, job: JobId) {
        if let Ok(m) = self.running.lock() {
            match m.get(&job) {
                Some(r) => r.handle.cancel(),
                // Still starting: `launch` ends it before it runs anything.
                None => {
                    if let Ok(mut c) = self.cancelled_early.lock() {
                        c.insert(job);
                    }
                }
            }
        }
    }

    fn earlier_trials(&self) -> Result<LedgerHistory, String> {
        let o = self.opened()?;
        let running: HashSet<String> = self
            .running
            .lock()
            .map(|m| m.values().map(|r| r.cohort.clone()).collect())
            .unwrap_or_default();
        Ok(live_ledger::load(
            &o.ledger,
            &o.run.id,
            self.settings.runner_timeout_s,
            &running,
            time::OffsetDateTime::now_utc(),
        ))
    }

    fn aggregate(&self, cohorts: &[String]) -> Result<String, String> {
        let o = self.opened()?;
        let running: HashSet<String> = self
            .running
            .lock()
            .map(|m| m.values().map(|r| r.cohort.clone()).collect())
            .unwrap_or_default();
        if let Some(c) = cohorts.iter().find(|c| running.contains(*c)) {
            return Err(format!(
                "batch '{}' belongs to a job that is still running",
                inert_line(c)
            ));
        }
        live_ledger::aggregate(&o.ledger, cohorts, setup::ledger_policy(&self.settings))
    }

    fn shutdown(&self) {
        let running = |cancel: bool| {
            self.running
                .lock()
                .map(|m| {
                    if cancel {
                        m.values().for_each(|r| r.handle.cancel());
                    }
                    m.len()
                })
                .unwrap_or(0)
        };
        if running(true) == 0 {
            return;
        }
        let end = Instant::now() + SHUTDOWN_WAIT;
        while running(false) > 0 && Instant::now() < end {
            std::thread::sleep(SHUTDOWN_POLL);
        }
    }

    fn open(&self, run: Arc<Run>, report: Arc<Report>, source: Option<PathBuf>) {
        let Some(run_path) = source else { return };
        let ledger = setup::ledger_location(&self.settings, &run_path, self.runs_in_file, &run.id);
        if let Ok(mut o) = self.opened.lock() {
            *o = Some(Arc::new(Opened {
                run,
                report,
                run_path,
                ledger,
            }));
        }
    }
}

/// The screen's events for one session event.
fn translate(job: JobId, ev: TrialEvent) -> Vec<ExperimentEvent> {
    let sample = |seed: u64| usize::try_from(seed).unwrap_or(usize::MAX);
    let split = |s: Saved| match s {
        Saved::Yes(r) => (None, r.trials.into_iter().chain(r.refused).collect()),
        Saved::No(why) => (Some(why), Vec::new()),
    };
    match ev {
        TrialEvent::SampleStarted { probe, seed } => vec![ExperimentEvent::SampleStarted {
            job,
            probe: probe.0,
            sample: sample(seed),
        }],
        TrialEvent::SampleFinished {
            probe,
            seed,
            judged,
            saved,
        } => {
            let (not_saved, ledger) = split(saved);
            vec![ExperimentEvent::SampleFinished {
                job,
                probe: probe.0,
                sample: sample(seed),
                outcome: SampleOutcome::Answer {
                    output: judged.output,
                    similarity: judged.similarity,
                    flipped: judged.flipped,
                    not_saved,
                    ledger,
                },
            }]
        }
        TrialEvent::SampleHeld { probe, seed, why } => vec![ExperimentEvent::SampleHeld {
            job,
            probe: probe.0,
            sample: sample(seed),
            why,
        }],
        TrialEvent::SampleErrored {
            probe,
            seed,
            error,
            saved: s,
        } => vec![ExperimentEvent::SampleFinished {
            job,
            probe: probe.0,
            sample: sample(seed),
            outcome: SampleOutcome::Error {
                message: error.message,
                stderr_tail: error.stderr_tail,
                not_saved: split(s).0,
            },
        }],
        TrialEvent::SampleCancelled { probe, seed } => vec![ExperimentEvent::SampleFinished {
            job,
            probe: probe.0,
            sample: sample(seed),
            outcome: SampleOutcome::Error {
                message: "cancelled: its process group was stopped".to_owned(),
                stderr_tail: String::new(),
                not_saved: None,
            },
        }],
        TrialEvent::ProbeVerdict {
            probe,
            result,
            claim,
        } => vec![ExperimentEvent::ProbeFinished {
            job,
            probe: probe.0,
            result,
            claim,
        }],
        TrialEvent::SessionDone { outcome } => {
            // Cost verdicts and classes need the whole tier: they arrive here.
            let mut out: Vec<ExperimentEvent> = outcome
                .probes
                .iter()
                .enumerate()
                .filter(|(_, p)| p.plan.role != ProbeRole::Baseline && p.result.verdict.is_some())
                .map(|(i, p)| ExperimentEvent::ProbeFinished {
                    job,
                    probe: i,
                    result: p.result.clone(),
                    claim: p.claim.clone(),
                })
                .collect();
            let mut flags: Vec<String> = outcome
                .probes
                .iter()
                .flat_map(|p| p.flags.clone())
                .collect();
            if outcome.not_saved > 0 {
                flags.push(format!("{} samples not saved", outcome.not_saved));
            }
            if let Some(e) = &outcome.close_error {
                flags.push(format!("the batch's attributions were not written: {e}"));
            }
            out.push(ExperimentEvent::JobFinished {
                job,
                end: if outcome.cancelled {
                    JobEnd::Cancelled
                } else {
                    JobEnd::Finished
                },
                flags,
            });
            out
        }
    }
}

#[cfg(test)]
#[path = "live_port_tests.rs"]
mod tests;
