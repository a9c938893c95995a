//! The experiments pane of the screen against a port that stands for the ledger: it shows each
//! unit's attribution as the ledger records it, offers to aggregate only the batches the port
//! marked ready, and sends a typed patch with a replay. Headless (no terminal), on the sample
//! refund run.

use std::path::Path;
use std::sync::{Arc, Mutex};
use tdn_tui::analysis::influence::HashedEmbedder;
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::model::{Run, RunStatus};
use tdn_tui::analysis::report::{AnalyzeOptions, analyze};
use tdn_tui::experiments::engine::{
    BatchState, EngineError, ExperimentPort, OpenBatch, Plan, Request, RunEvidence, ScriptedPort,
};
use tdn_tui::experiments::event::{EventSender, JobId};
use tdn_tui::experiments::ledger::{Location, Policy, Scope};
use tdn_tui::experiments::run_ledger::RunLedger;
use tdn_tui::experiments::sink::{FinishedSample, SampleRecordOutcome, SampleSink};
use tdn_tui::experiments::spec::{ExperimentKind, ExperimentSpec};
use tdn_tui::tui::app::{App, AppOptions, Document, Overlay};
use tdn_tui::tui::effects::{Clipboard, EffectContext};
use tdn_tui::tui::headless::{Headless, parse_keys};

/// What the pane asked of the port.
#[derive(Default)]
struct Calls {
    plans: Vec<Request>,
    launches: Vec<Request>,
    aggregated: Vec<Vec<String>>,
}

/// A port whose ledger is a real file: 'policy-2019' removed in a closed batch (harmful,
/// causal_ablation) and a batch left open (`state` as given); plans come from the engine's rules.
struct LedgerPort {
    state: BatchState,
    aggregated: Mutex<bool>,
    calls: Arc<Mutex<Calls>>,
    plans: ScriptedPort,
    ledger: tempfile::TempDir,
}

fn sample(cohort: &str, kind: ExperimentKind, seed: u64, flipped: bool) -> FinishedSample {
    FinishedSample {
        cohort: cohort.to_owned(),
        evaluator_epoch: "exact|tdn-tui/test".to_owned(),
        run_id: "refund-outdated-policy".to_owned(),
        run_status: RunStatus::Failed,
        runner_command: "python3 agents/stand_in.py".to_owned(),
        spec: ExperimentSpec {
            run: "/refund-outdated-policy.json".to_owned(),
            run_id: "refund-outdated-policy".to_owned(),
            experiment: kind,
            remove: if kind == ExperimentKind::Ablate {
                vec!["policy-2019".to_owned()]
            } else {
                vec![]
            },
            restore: vec![],
            from_step: None,
            patch: None,
            seed,
            sample: seed,
            source: None,
        },
        finished_at: "2026-08-17T10:00:00Z".to_owned(),
        outcome: SampleRecordOutcome::Answered {
            output: "x".to_owned(),
            flipped,
            similarity: None,
        },
        cost: None,
        duration_ms: None,
    }
}

impl LedgerPort {
    fn new(state: BatchState, calls: Arc<Mutex<Calls>>, run: &Run) -> LedgerPort {
        let dir = tempfile::tempdir().unwrap();
        let location = Location {
            path: dir.path().join("refund-outdated-policy.ledger.jsonl"),
            scope: Scope::Run,
            name: run.id.clone(),
        };
        let sink = RunLedger::open(&location, run, Policy::default()).unwrap();
        for seed in 0..3 {
            for (kind, flipped) in [
                (ExperimentKind::Baseline, false),
                (ExperimentKind::Ablate, true),
            ] {
                sink.append(
                    &sample("b-20260817T080000Z-00000001", kind, seed, flipped),
                    None,
                )
                .unwrap();
            }
        }
        sink.close_cohort("b-20260817T080000Z-00000001").unwrap();
        for (kind, flipped) in [
            (ExperimentKind::Baseline, false),
            (ExperimentKind::Ablate, true),
        ] {
            sink.append(
                &sample("b-20260817T090000Z-0000abcd", kind, 0, flipped),
                None,
            )
            .unwrap();
        }
        LedgerPort {
            state,
            aggregated: Mutex::new(false),
            calls,
            plans: ScriptedPort::new("python3 agents/stand_in.py"),
            ledger: dir,
        }
    }

    fn path(&self) -> std::path::PathBuf {
        self.ledger
            .path()
            .join("refund-outdated-policy.ledger.jsonl")
    }
}

impl ExperimentPort for LedgerPort {
    fn open(
        &self,
        run: Arc<Run>,
        report: Arc<tdn_tui::analysis::report::Report>,
        source: Option<std::path::PathBuf>,
    ) {
        self.plans.open(run, report, source);
    }

    fn plan(&self, request: Request) -> Result<Plan, EngineError> {
        self.calls.lock().unwrap().plans.push(request.clone());
        self.plans.plan(request)
    }

    fn launch(&self, _job: JobId, plan: Plan, _events: EventSender) -> Result<(), EngineError> {
        self.calls.lock().unwrap().launches.push(plan.request);
        Ok(())
    }

    fn cancel(&self, _job: JobId, _why: &str) {}

    fn evidence(&self) -> Result<RunEvidence, EngineError> {
        let e = tdn_tui::experiments::ledger::evidence(&self.path(), "refund-outdated-policy")
            .unwrap()
            .unwrap();
        let open = if *self.aggregated.lock().unwrap() {
            Vec::new()
        } else {
            e.open
                .iter()
                .map(|c| OpenBatch {
                    cohort: c.clone(),
                    state: self.state,
                })
                .collect()
        };
        Ok(RunEvidence {
            path: self.path(),
            ledger: Some(e),
            open,
            note: None,
        })
    }

    fn aggregate(&self, cohorts: &[String]) -> Result<String, EngineError> {
        self.calls.lock().unwrap().aggregated.push(cohorts.to_vec());
        *self.aggregated.lock().unwrap() = true;
        Ok("aggregated 1 open batch(es)".to_owned())
    }
}

fn refund() -> Document {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs/refund-outdated-policy.json");
    let loaded = load_path(&path, &LoadOptions::default()).unwrap().remove(0);
    let report = analyze(&loaded, &AnalyzeOptions::new(&HashedEmbedder));
    Document::new(loaded.run, report, Some(path))
}

fn screen(ready: bool) -> (Headless, Arc<Mutex<Calls>>) {
    let calls = Arc::new(Mutex::new(Calls::default()));
    let doc = refund();
    let state = if ready {
        BatchState::LeftByDeadSession
    } else {
        BatchState::MaybeRunning
    };
    let port = Arc::new(LedgerPort::new(state, Arc::clone(&calls), &doc.run));
    let app = App::new(
        doc,
        AppOptions {
            size: (180, 48),
            ..AppOptions::default()
        },
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port,
        opener: Arc::new(|_| Err("no other run".to_owned())),
        events: tx,
        clipboard: Clipboard::None,
    };
    (Headless::new(app, ctx, rx), calls)
}

fn press(h: &mut Headless, keys: &str) {
    h.press_all(&parse_keys(keys).unwrap());
}

#[test]
fn the_pane_shows_each_units_recorded_disposition_and_evidence_level() {
    let (mut h, _) = screen(true);
    press(&mut h, "6");
    let s = h.screen();
    // Issue 26: the ledger's history is one dated row per batch, its trials folded inside, and
    // its words come with their meaning.
    assert!(
        s.contains(
            "2026-08-17 10:00 ablate 'policy-2019' · 3 trials → 'policy-2019' ⊗ harmful (removing it"
        ),
        "{s}"
    );
    assert!(
        s.contains(
            "2026-08-17 10:00 batch left open, 1 trial: left open by a tdn-tui that stopped"
        ),
        "{s}"
    );
    assert!(!s.contains("trial(s)"), "{s}");
    // The selected batch explains itself in the ledger's words, each with its meaning.
    press(&mut h, "j");
    let s = h.screen();
    assert!(
        s.contains(
            "evidence: causal_ablation (isolated: each pair of re-runs differed in this unit"
        ),
        "{s}"
    );
    assert!(
        s.contains("⊗ harmful (removing it moved the run off its recorded failure)"),
        "{s}"
    );
    assert_eq!(s.matches("trial, seed ").count(), 3, "{s}");
}

#[test]
fn only_batches_the_ledger_marked_ready_are_aggregated() {
    let (mut h, calls) = screen(false);
    press(&mut h, "6 c");
    assert!(calls.lock().unwrap().aggregated.is_empty());
    assert!(h.screen().contains("its session may still be running"));

    let (mut h, calls) = screen(true);
    press(&mut h, "6 c");
    assert_eq!(
        calls.lock().unwrap().aggregated,
        vec![vec!["b-20260817T090000Z-0000abcd".to_owned()]]
    );
    let s = h.screen();
    assert!(
        !s.contains("left open"),
        "the pane reloaded the ledger: {s}"
    );
}

#[test]
fn a_typed_patch_goes_with_the_replay_after_the_command_is_confirmed() {
    let (mut h, calls) = screen(true);
    // The timeline's last step is the model's answer (s4).
    press(&mut h, "1 G P");
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    assert!(h.screen().contains("Replay from step 's4' with a patch"));
    press(&mut h, "Y o u Space g e t Space $ 8 0 . Backspace .");
    press(&mut h, "Enter");
    let expected = Request::Replay {
        from: "s4".into(),
        patch: Some("You get $80.".to_owned()),
    };
    assert_eq!(calls.lock().unwrap().plans, vec![expected.clone()]);
    assert!(h.screen().contains("Run your agent?"));
    press(&mut h, "y");
    assert_eq!(calls.lock().unwrap().launches, vec![expected]);
}

#[test]
fn an_empty_patch_is_refused_and_the_prompt_stays() {
    let (mut h, calls) = screen(true);
    press(&mut h, "1 G P Enter");
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    assert!(calls.lock().unwrap().plans.is_empty());
    press(&mut h, "Esc");
    assert!(h.app.overlay.is_none());
}

#[test]
fn a_suspect_step_shows_what_the_ledger_records_about_the_units_it_produced() {
    // The ledger holds 'policy-2019' as harmful; step s3 produced it. Reopening the run (a new
    // screen) shows it under the suspect, with what was tried, not "untested".
    let (h, _) = screen(true);
    let s = h.screen();
    assert!(
        s.contains("ledger: ablate 'policy-2019' → ⊗ harmful · causal_ablation"),
        "{s}"
    );
    assert!(!s.contains("untested"), "{s}");
}

/// A screen on a sample run with a scripted port (verdicts as scripted, plans by the engine's
/// rules), `size` wide and tall.
fn scripted_screen(file: &str, port: ScriptedPort, size: (u16, u16)) -> Headless {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-runs")
        .join(file);
    let loaded = load_path(&path, &LoadOptions::default()).unwrap().remove(0);
    let report = analyze(&loaded, &AnalyzeOptions::new(&HashedEmbedder));
    let app = App::new(
        Document::new(loaded.run, report, Some(path)),
        AppOptions {
            size,
            ..AppOptions::default()
        },
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port: Arc::new(port),
        opener: Arc::new(|_| Err("no other run".to_owned())),
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

#[test]
fn the_only_causal_result_of_a_long_job_is_named_first_and_reached_by_scrolling() {
    let mut port = ScriptedPort::new("python3 agents/stand_in.py");
    port.script = vec![(
        tdn_tui::experiments::engine::Target::Unit("u-section-14".into()),
        tdn_tui::analysis::report::Verdict::Confirmed,
    )];
    let mut h = scripted_screen("contract-context-full.json", port, (120, 40));
    press(&mut h, "L y");
    let s = h.screen();
    assert!(
        s.contains("1 of 6 probes confirmed a cause (restoring"),
        "the verdicts' summary names it at the top: {s}"
    );
    assert!(s.contains("below: C-d scrolls"), "{s}");
    // The restoration is the last probe: paging down the detail reaches its verdict.
    for _ in 0..20 {
        if h.screen().contains("✔ CAUSAL: restoring 'u-section-14'") {
            break;
        }
        press(&mut h, "C-d");
    }
    let s = h.screen();
    assert!(s.contains("✔ CAUSAL: restoring 'u-section-14'"), "{s}");
    assert!(s.contains("above"), "{s}");
}

#[test]
fn cancelled_samples_are_counted_as_cancelled_and_quitting_asks_first() {
    use tdn_tui::experiments::event::{
        Event, EventKind, JobEnd, JobId, JobOutcome, SampleEnd, Saved,
    };
    use tdn_tui::experiments::session::ProbeId;
    use tdn_tui::tui::action::Action;
    use tdn_tui::tui::overlays::confirm::ConfirmState;
    let mut port = ScriptedPort::new("python3 agents/stand_in.py");
    port.hold = true;
    let mut h = scripted_screen("refund-outdated-policy.json", port, (120, 40));
    press(&mut h, "a y");
    // With the job running, quitting asks, naming it; n keeps it running.
    press(&mut h, "q");
    let Some(Overlay::Confirm(ConfirmState::Quit(jobs))) = &h.app.overlay else {
        panic!("quitting did not ask: {:?}", h.app.overlay);
    };
    assert!(jobs[0].starts_with("#1 "), "{jobs:?}");
    assert!(h.screen().contains("Quit and stop the experiments?"));
    press(&mut h, "n");
    assert!(!h.app.quit && h.app.overlay.is_none());
    // The job is cancelled while two baseline samples run.
    let job = JobId(1);
    for seed in 0..2 {
        h.act(Action::Experiment(Arc::new(Event {
            job,
            kind: EventKind::SampleFinished {
                probe: ProbeId(0),
                seed,
                end: SampleEnd::Cancelled {
                    why: "x pressed in the screen".to_owned(),
                    saved: Saved::yes(),
                },
                spent: Default::default(),
            },
        })));
    }
    h.act(Action::Experiment(Arc::new(Event {
        job,
        kind: EventKind::Done(Arc::new(JobOutcome {
            end: JobEnd::Cancelled("x pressed in the screen".to_owned()),
            session: None,
            closed: None,
            ledger: None,
            spent: None,
        })),
    })));
    let s = h.screen();
    assert!(s.contains("baseline ⊘⊘○"), "{s}");
    assert!(
        s.contains("0 answered (0 changed), 2 cancelled") && s.contains("1 never ran"),
        "{s}"
    );
    assert!(!s.contains("errored"), "cancelled is not an error: {s}");
    assert!(s.contains("cancelled: 2 stopped"), "{s}");
    // Nothing runs now: q quits at once.
    press(&mut h, "q");
    assert!(h.app.quit);
}
