//! A test double of the [`ExperimentPort`]: plans with the engine's own rules, then replays
//! scripted outcomes at once instead of running anything. A probe whose target is scripted as
//! `Confirmed` flips every sample; any other flips none. The verdicts are the script's, not
//! computed: tests of the screen use it to drive the panes without processes or a ledger.

use super::plan::{Caps, plan_request};
use super::port::ExperimentPort;
use super::{EngineError, Plan, Request, RunEvidence, Subject, Target};
use crate::analysis::model::{Run, RunStatus};
use crate::analysis::report::{ProbeResult, Report, SuspectClass, Verdict};
use crate::config::{CommandOrigin, UserCommand};
use crate::experiments::event::{
    Event, EventKind, EventSender, JobEnd, JobId, JobOutcome, Judged, SampleEnd, Saved,
};
use crate::experiments::ledger::{Location, Scope};
use crate::experiments::runner::{Cost, Spent};
use crate::experiments::session::ProbeId;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// What each scripted sample takes and reports: 1.2 s, 600 tokens, $0.003.
pub const SCRIPTED_MS: u64 = 1200;
/// Tokens a scripted sample reports.
pub const SCRIPTED_TOKENS: f64 = 600.0;
/// Dollars a scripted sample reports.
pub const SCRIPTED_USD: f64 = 0.003;

/// Replays scripted outcomes.
pub struct ScriptedPort {
    /// The command shown in plans.
    pub command: String,
    /// Samples per probe.
    pub samples: usize,
    /// `(target, verdict)`; unlisted targets are `not-confirmed`.
    pub script: Vec<(Target, Verdict)>,
    /// What the ledger holds, as reported.
    pub evidence: RunEvidence,
    /// Jobs cancelled so far, with why.
    pub cancelled: Mutex<Vec<(JobId, String)>>,
    /// When true, launches emit only `Started` and the first `SampleStarted` (a job left running).
    pub hold: bool,
    /// The caps the plans use.
    pub caps: Caps,
    opened: Mutex<Option<Arc<Subject>>>,
}

impl ScriptedPort {
    /// A port with this command and 3 samples per probe.
    pub fn new(command: &str) -> ScriptedPort {
        ScriptedPort {
            command: command.to_owned(),
            samples: 3,
            script: Vec::new(),
            evidence: RunEvidence::default(),
            cancelled: Mutex::new(Vec::new()),
            hold: false,
            caps: Caps {
                max_suspects: 5,
                max_candidates: 5,
            },
            opened: Mutex::new(None),
        }
    }

    /// The jobs cancelled so far.
    pub fn cancelled_jobs(&self) -> Vec<JobId> {
        self.cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(j, _)| *j)
            .collect()
    }

    fn verdict_of(&self, target: Option<&Target>) -> Verdict {
        target
            .and_then(|t| self.script.iter().find(|(k, _)| k == t))
            .map(|(_, v)| *v)
            .unwrap_or(Verdict::NotConfirmed)
    }

    fn subject(&self) -> Arc<Subject> {
        if let Some(s) = self
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return s;
        }
        // Nothing opened: a run without a final answer, which every plan refuses.
        Arc::new(Subject {
            run: Arc::new(Run::new("scripted", RunStatus::Failed)),
            report: None,
            run_path: PathBuf::from("scripted.json"),
            run_file: Arc::new(super::run_file::RunFile::native(PathBuf::from(
                "scripted.json",
            ))),
            ledger: Location {
                path: PathBuf::from("scripted.ledger.jsonl"),
                scope: Scope::Run,
                name: "scripted".to_owned(),
            },
        })
    }
}

impl ExperimentPort for ScriptedPort {
    fn open(&self, run: Arc<Run>, report: Arc<Report>, source: Option<PathBuf>) {
        // Only the file's name: what a test shows must not depend on where the checkout is.
        let file = source
            .and_then(|p| p.file_name().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(format!("{}.json", run.id)));
        let ledger = crate::experiments::ledger::locate(&file, None, 1, &run.id);
        *self.opened.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(Subject {
            run,
            report: Some(report),
            run_file: Arc::new(super::run_file::RunFile::native(file.clone())),
            run_path: file,
            ledger,
        }));
    }

    fn plan(&self, request: Request) -> Result<Plan, EngineError> {
        let subject = self.subject();
        let planned = plan_request(&subject, &request, self.caps)?;
        Ok(Plan {
            subject,
            request,
            probes: planned.probes,
            samples: self.samples,
            left_out: planned.left_out,
            notes: planned.notes,
            tiers: planned.tiers,
            runner: UserCommand {
                text: self.command.clone(),
                origin: CommandOrigin::CommandLine,
            },
            rule_label: "exact".to_owned(),
            also_runs: Vec::new(),
        })
    }

    fn launch(&self, job: JobId, plan: Plan, events: EventSender) -> Result<(), EngineError> {
        let send = |kind: EventKind| {
            let _ = events.send(Event { job, kind });
        };
        send(EventKind::Started {
            probes: plan.infos(),
            cohort: format!("b-scripted-{}", job.0),
        });
        if self.hold {
            send(EventKind::SampleStarted {
                probe: ProbeId(0),
                seed: 0,
            });
            return Ok(());
        }
        let mut total = Spent::default();
        for (pi, p) in plan.probes.iter().enumerate() {
            let probe = ProbeId(pi);
            let baseline = p.probe.is_baseline();
            let verdict = self.verdict_of(p.asked.as_ref());
            let flipped = !baseline && verdict == Verdict::Confirmed;
            for s in 0..plan.samples {
                let seed = u64::try_from(s).unwrap_or(u64::MAX);
                send(EventKind::SampleStarted { probe, seed });
                // A scripted sample takes 1.2 s and reports 600 tokens and $0.003, so the
                // job's time and cost read 1.2 s per sample, 600 tokens each.
                let spent = Spent {
                    duration_ms: SCRIPTED_MS,
                    tokens: Some(SCRIPTED_TOKENS),
                    usd: Some(SCRIPTED_USD),
                };
                total.add(&spent);
                send(EventKind::SampleFinished {
                    probe,
                    seed,
                    spent,
                    end: SampleEnd::Answered {
                        judged: Judged {
                            output: if flipped {
                                format!("scripted answer {s} (changed)")
                            } else {
                                "scripted answer (unchanged)".to_owned()
                            },
                            flipped,
                            similarity: Some(if flipped { 0.2 } else { 0.97 }),
                            cost: Cost {
                                loops: None,
                                tokens: Some(SCRIPTED_TOKENS),
                                usd: Some(SCRIPTED_USD),
                            },
                            replayed_call: None,
                        },
                        saved: Saved::yes(),
                    },
                });
            }
            send(EventKind::ProbeVerdict {
                probe,
                result: ProbeResult {
                    verdict: (!baseline).then_some(verdict),
                    flips: if flipped { plan.samples } else { 0 },
                    samples: plan.samples,
                    completed: plan.samples,
                    errors: 0,
                    similarity: None,
                    cost: None,
                    class: (!baseline).then_some(if flipped {
                        SuspectClass::ContentBug
                    } else {
                        SuspectClass::NoDetectedEffect
                    }),
                },
                claim: None,
            });
        }
        send(EventKind::Done(Arc::new(JobOutcome {
            end: JobEnd::Finished,
            session: None,
            closed: None,
            ledger: Some(plan.subject.ledger.path.clone()),
            // The samples ran one after another.
            spent: Some(total),
        })));
        Ok(())
    }

    fn cancel(&self, job: JobId, why: &str) {
        self.cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((job, why.to_owned()));
    }

    fn evidence(&self) -> Result<RunEvidence, EngineError> {
        Ok(self.evidence.clone())
    }
}
