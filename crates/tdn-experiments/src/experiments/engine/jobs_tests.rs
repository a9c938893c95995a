//! Tests of the screen's jobs over the engine, with real shell runners: plans, refusals, jobs
//! that save to the ledger and close their batch, a ledger that cannot be opened, a job cancelled
//! while starting, shutting down mid-job, and the evidence read back.

use super::*;
use crate::analysis::load::{LoadOptions, load_str};
use crate::config::{CommandOrigin, UserCommand};
use crate::config::{FlipRule, Settings};
use crate::experiments::engine::{Consent, PlanError, Target};
use crate::experiments::event::{Event, EventKind, SampleEnd, Saved};
use crate::experiments::intervention::Intervention;
use crate::experiments::ledger::Disposition;
use crate::experiments::ledger::verify::Status;

const RUN: &str = r#"{"format": "tdn.run/1", "id": "r1", "status": "failed",
    "final_answer": "the recorded answer",
    "context_units": [{"id": "u1", "kind": "document", "text": "one", "produced_by": "s1"},
                      {"id": "u2", "kind": "memory", "text": "two"}],
    "steps": [{"id": "s1", "kind": "retrieval"}, {"id": "s2", "kind": "llm", "output": "x",
               "context": {"available": ["u1", "u2"], "sent": ["u1", "u2"]}}]}"#;

struct Fixture {
    jobs: Jobs,
    rt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

/// Jobs with `runner` on the run above, written into a fresh folder (its ledger goes there).
fn jobs(runner: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("r1.json");
    std::fs::write(&run_path, RUN).unwrap();
    let mut settings = Settings {
        runner: Some(UserCommand {
            text: runner.to_owned(),
            origin: CommandOrigin::CommandLine,
        }),
        ..Settings::default()
    };
    settings.experiments.flip = Ok(FlipRule::Exact);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let jobs = Jobs::new(
        Engine::new(&settings, Consent::Given),
        rt.handle().clone(),
        1,
        None,
        None,
    );
    let run = load_str(RUN, &run_path, &LoadOptions::default())
        .unwrap()
        .remove(0)
        .run;
    let report: Report = serde_json::from_str(include_str!(
        "../../../../../tests/fixtures/tui/calendar.report.json"
    ))
    .unwrap();
    jobs.open(Arc::new(run), Arc::new(report), Some(run_path));
    Fixture { jobs, rt, dir }
}

impl Fixture {
    fn ledger(&self) -> std::path::PathBuf {
        self.dir.path().join("r1.ledger.jsonl")
    }

    /// Plans and launches `request` as job 1 and collects its events up to `Done`.
    fn run(&self, request: Request) -> Vec<EventKind> {
        let plan = self.jobs.plan(request).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        self.jobs.launch(JobId(1), plan, tx).unwrap();
        self.rt.block_on(async {
            let mut all = Vec::new();
            while let Some(e) = rx.recv().await {
                let end = matches!(e.kind, EventKind::Done(_));
                all.push(e.kind);
                if end {
                    break;
                }
            }
            all
        })
    }
}

const FLIPS_WITHOUT_U2: &str = r#"if [ "$TDN_REMOVE" = u2 ]; then echo '{"output": "another answer"}'; else echo '{"output": "the recorded answer"}'; fi"#;

#[test]
fn a_plan_names_the_command_the_ledger_and_one_probe_per_target() {
    let f = jobs("./agent.sh");
    let plan = f
        .jobs
        .plan(Request::AblateEach(vec![
            Target::Unit("u2".into()),
            Target::Step("s1".into()),
        ]))
        .unwrap();
    assert_eq!(plan.runner.text, "./agent.sh");
    assert_eq!(plan.runner.origin_text(), "the command line");
    // A baseline, then one probe per target; the step stands for the unit it produced.
    let lines = plan.lines();
    assert_eq!(
        lines[..3],
        [
            "baseline: 3 samples",
            "ablate 'u2': 3 samples",
            "ablate 'u1': 3 samples"
        ]
    );
    assert_eq!(plan.runner_calls(), 9);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&f.ledger().display().to_string())),
        "the plan names the ledger: {lines:?}"
    );
    assert!(!f.ledger().exists(), "planning writes nothing");
    let replay = f
        .jobs
        .plan(Request::Replay {
            from: "s2".into(),
            patch: Some("the fix".to_owned()),
        })
        .unwrap();
    assert!(
        replay
            .lines()
            .iter()
            .any(|l| l == "the replayed step's output becomes: 'the fix'"),
        "{:?}",
        replay.lines()
    );
}

#[test]
fn requests_that_cannot_run_say_why_in_the_engines_words() {
    let f = jobs("./agent.sh");
    let e = f
        .jobs
        .plan(Request::Ablate(vec![Target::Step("s2".into())]))
        .unwrap_err();
    assert_eq!(
        e,
        EngineError::Plan(PlanError::NothingProduced("s2".into()))
    );
    assert!(!e.to_string().contains("--"), "no flag names: {e}");
    let e = f
        .jobs
        .plan(Request::Restore(vec!["nope".into()]))
        .unwrap_err();
    assert_eq!(e, EngineError::Plan(PlanError::NoUnit("nope".into())));
    let none = Jobs::new(
        Engine::new(&Settings::default(), Consent::Given),
        f.rt.handle().clone(),
        1,
        None,
        None,
    );
    assert_eq!(
        none.plan(Request::Localize).unwrap_err(),
        EngineError::NoRun
    );
}

#[test]
fn a_job_saves_every_sample_and_closes_its_batch_and_the_evidence_reads_it_back() {
    let f = jobs(FLIPS_WITHOUT_U2);
    let events = f.run(Request::Ablate(vec![Target::Unit("u2".into())]));
    assert!(matches!(&events[0], EventKind::Started { probes, .. } if probes.len() == 2));
    let mut trials = 0;
    for e in &events {
        if let EventKind::SampleFinished { end, .. } = e {
            let Saved::Yes(r) = end.saved() else {
                panic!("not saved: {end:?}")
            };
            trials += r
                .trials
                .iter()
                .filter(|l| l.contains("causal_ablation trial (") && l.contains(") for 'u2'"))
                .count();
        }
    }
    assert_eq!(
        trials, 3,
        "one trial per seed, with the sample that formed it"
    );
    let Some(EventKind::Done(outcome)) = events.last() else {
        panic!("{events:?}")
    };
    assert!(matches!(outcome.end, JobEnd::Finished));
    let e = f.jobs.evidence().unwrap();
    let ledger = e.ledger.as_ref().unwrap();
    assert_eq!(ledger.trials.len(), 3);
    assert!(e.open.is_empty(), "the job closed its batch");
    let [a] = ledger.latest.as_slice() else {
        panic!("{e:?}")
    };
    // With 'u2' the run stays on its recorded failure: harmful, at the causal level, tried by
    // leaving it out.
    assert_eq!(a.attribution.component_id, "u2");
    assert_eq!(a.attribution.disposition, Disposition::Harmful);
    assert_eq!(a.tried, Some(Intervention::Ablate(vec!["u2".into()])));
    let checked = crate::experiments::ledger::verify_path(&f.ledger()).unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
}

#[test]
fn a_ledger_that_cannot_be_opened_fails_the_launch_with_the_reason() {
    let f = jobs("echo '{\"output\": \"the recorded answer\"}'");
    std::fs::write(f.ledger(), "not a ledger\n").unwrap();
    let plan = f
        .jobs
        .plan(Request::Ablate(vec![Target::Unit("u2".into())]))
        .unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let e = f.jobs.launch(JobId(1), plan, tx).unwrap_err();
    assert!(
        matches!(&e, EngineError::Ledger { why, .. } if why.contains("not a tdn-tui ledger")),
        "{e}"
    );
}

#[test]
fn a_job_cancelled_while_it_was_starting_runs_nothing() {
    // The screen's x reached the engine before the job's session started (the launch was still
    // opening the ledger).
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let f = jobs(&format!(
        "touch '{}'; echo '{{\"output\": \"x\"}}'",
        ran.display()
    ));
    f.jobs.cancel(JobId(1), "x pressed");
    let events = f.run(Request::Ablate(vec![Target::Unit("u2".into())]));
    assert!(
        matches!(events.as_slice(), [EventKind::Done(o)] if matches!(&o.end, JobEnd::Cancelled(w) if w == "x pressed")),
        "{events:?}"
    );
    assert!(!ran.exists(), "the runner never ran");
}

#[test]
fn shutting_down_cancels_a_running_job_records_its_samples_and_closes_its_batch_concluding_nothing()
{
    // Seed 1 of the ablation hangs; everything else answers at once.
    let agent = format!(
        r#"if [ "$TDN_EXPERIMENT" = ablate ] && [ "$TDN_SEED" = 1 ]; then sleep 60; fi; {FLIPS_WITHOUT_U2}"#
    );
    let f = jobs(&agent);
    let plan = f
        .jobs
        .plan(Request::Ablate(vec![Target::Unit("u2".into())]))
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    f.jobs.launch(JobId(1), plan, tx).unwrap();
    f.rt.block_on(async {
        // Until the trial of seed 0 is formed, i.e. both of its samples are saved.
        while let Some(e) = rx.recv().await {
            if let EventKind::SampleFinished {
                end:
                    SampleEnd::Answered {
                        saved: Saved::Yes(r),
                        ..
                    },
                ..
            } = &e.kind
                && !r.trials.is_empty()
            {
                break;
            }
        }
    });
    assert_eq!(f.jobs.running(), 1);
    f.jobs.shutdown("the debugger was quit");
    assert_eq!(f.jobs.running(), 0);
    let e = f.jobs.evidence().unwrap();
    assert!(e.open.is_empty(), "{e:?}");
    let l = e.ledger.as_ref().unwrap();
    assert!(
        l.latest.is_empty(),
        "a cancelled batch writes no attribution: {e:?}"
    );
    assert!(
        !l.trials.is_empty() && l.trials.iter().all(|t| t.status == Status::Cancelled),
        "its trials stay, marked cancelled: {e:?}"
    );
    assert_eq!(l.counts.cancelled, l.trials.len());
    let text = std::fs::read_to_string(f.ledger()).unwrap();
    // The hanging sample, and any other still running at the cancel, is recorded as cancelled.
    assert!(
        text.matches("cancelled (the debugger was quit)").count() >= 1,
        "{text}"
    );
    assert!(
        text.contains(r#""type":"cancel""#) && !text.contains(r#""type":"attribution""#),
        "{text}"
    );
    let checked = crate::experiments::ledger::verify_path(&f.ledger()).unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    // No later read turns it into a conclusion: nothing is left open to aggregate, and closing
    // the cohort by name writes nothing.
    let cohort = text
        .lines()
        .find(|l| l.contains(r#""type":"cancel""#))
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|v| v["cohort"].as_str().map(str::to_owned))
        .unwrap();
    let ledger = crate::experiments::ledger::Ledger::open(
        &f.ledger(),
        crate::experiments::ledger::Scope::Run,
        "r",
    )
    .unwrap();
    let closed = ledger
        .close_cohort(&cohort, &crate::experiments::ledger::Policy::default())
        .unwrap();
    assert!(closed.attributions.is_empty());
    assert!(
        !std::fs::read_to_string(f.ledger())
            .unwrap()
            .contains(r#""type":"attribution""#)
    );
}
