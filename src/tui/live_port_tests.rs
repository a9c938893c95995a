//! Tests of the screen's live experiment port: plans, jobs that save to the ledger and close their
//! batch, a ledger that cannot be opened, quitting mid-job, and the screen's events.

use super::*;
use crate::analysis::load::{LoadOptions, load_str};
use crate::analysis::report::Verdict;
use crate::config::{CommandOrigin, UserCommand};

const RUN: &str = r#"{"format": "tdn.run/1", "id": "r1", "status": "failed",
    "final_answer": "the recorded answer",
    "context_units": [{"id": "u1", "kind": "document", "text": "one", "produced_by": "s1"},
                      {"id": "u2", "kind": "memory", "text": "two"}],
    "steps": [{"id": "s1", "kind": "retrieval"}, {"id": "s2", "kind": "llm", "output": "x"}]}"#;

/// A port with `runner` on the run above, written into a fresh folder (its ledger goes there).
fn port(runner: &str) -> (LivePort, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("r1.json");
    std::fs::write(&run_path, RUN).unwrap();
    let settings = Settings {
        runner: Some(UserCommand {
            text: runner.to_owned(),
            origin: CommandOrigin::CommandLine,
        }),
        ..Settings::default()
    };
    let p = LivePort::new(&settings);
    let run = load_str(RUN, &run_path, &LoadOptions::default())
        .unwrap()
        .remove(0)
        .run;
    let report: Report = serde_json::from_str(include_str!(
        "../../tests/fixtures/tui/calendar.report.json"
    ))
    .unwrap();
    p.open(Arc::new(run), Arc::new(report), Some(run_path));
    (p, dir)
}

/// Launches `request` as job 1 and collects its events up to `JobFinished`.
fn run_job(p: &LivePort, request: Request) -> Vec<ExperimentEvent> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    rt.block_on(async {
        p.launch(JobId(1), request, tx).unwrap();
        let mut all = Vec::new();
        while let Some(e) = rx.recv().await {
            let end = matches!(e, ExperimentEvent::JobFinished { .. });
            all.push(e);
            if end {
                break;
            }
        }
        all
    })
}

#[test]
fn a_plan_names_the_command_and_one_probe_per_target() {
    let (p, dir) = port("./agent.sh");
    let plan = p
        .plan(&Request::Ablate(vec![
            Target::Unit("u2".into()),
            Target::Step("s1".into()),
        ]))
        .unwrap();
    assert_eq!(plan.command, "./agent.sh");
    assert_eq!(plan.origin, "the command line");
    // A baseline, then one probe per target; the step stands for the unit it produced.
    assert_eq!(
        plan.lines[..3],
        [
            "baseline: 3 samples",
            "ablate 'u2': 3 samples",
            "ablate 'u1': 3 samples"
        ]
    );
    assert_eq!(plan.runner_calls, 9);
    let ledger = dir.path().join("r1.ledger.jsonl");
    assert!(
        plan.lines
            .iter()
            .any(|l| l.contains(&ledger.display().to_string())),
        "the plan names the ledger: {:?}",
        plan.lines
    );
    assert!(!ledger.exists(), "planning writes nothing");
    let replay = p
        .plan(&Request::Replay {
            from: "s2".into(),
            patch: Some("the fix".to_owned()),
        })
        .unwrap();
    assert!(
        replay
            .lines
            .iter()
            .any(|l| l == "the replayed step's output becomes: 'the fix'"),
        "{:?}",
        replay.lines
    );
}

#[test]
fn requests_that_cannot_run_say_why() {
    let (p, _dir) = port("./agent.sh");
    let e = p
        .plan(&Request::Ablate(vec![Target::Step("s2".into())]))
        .unwrap_err();
    assert!(e.contains("step 's2' produced no context unit"), "{e}");
    let e = p.plan(&Request::Restore(vec!["nope".into()])).unwrap_err();
    assert!(e.contains("'nope'"), "{e}");
    let none = LivePort::new(&Settings::default());
    assert_eq!(none.plan(&Request::Localize).unwrap_err(), "no run is open");
}

#[test]
fn a_job_saves_every_sample_and_closes_its_batch_in_the_ledger() {
    // Without 'u2' the agent answers something else: removing it flips every sample.
    let agent = r#"if [ "$TDN_REMOVE" = u2 ]; then echo '{"output": "another answer"}'; else echo '{"output": "the recorded answer"}'; fi"#;
    let (p, dir) = port(agent);
    let events = run_job(&p, Request::Ablate(vec![Target::Unit("u2".into())]));
    let mut trials = 0;
    for e in &events {
        if let ExperimentEvent::SampleFinished { outcome, .. } = e {
            let SampleOutcome::Answer {
                not_saved, ledger, ..
            } = outcome
            else {
                panic!("{outcome:?}")
            };
            assert_eq!(*not_saved, None);
            trials += ledger
                .iter()
                .filter(|l| l.contains("causal_ablation trial for 'u2'"))
                .count();
        }
    }
    assert_eq!(
        trials, 3,
        "one trial per seed, shown with the sample that formed it"
    );
    let Some(ExperimentEvent::JobFinished { end, flags, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((end, flags.as_slice()), (&JobEnd::Finished, &[][..]));

    let h = p.earlier_trials().unwrap();
    assert_eq!(h.trials.len(), 3);
    assert!(h.open_cohorts.is_empty(), "the job closed its batch");
    let [a] = h.attributions.as_slice() else {
        panic!("{h:?}")
    };
    // With 'u2' the run stays on its recorded failure: harmful, at the causal level.
    assert_eq!(
        (
            a.unit.as_str(),
            a.disposition.as_str(),
            a.evidence_level.as_str()
        ),
        ("u2", "harmful", "causal_ablation")
    );
    let checked =
        crate::experiments::ledger::verify_path(&dir.path().join("r1.ledger.jsonl")).unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
}

#[test]
fn a_ledger_that_cannot_be_opened_fails_the_job_with_the_reason() {
    let (p, dir) = port("echo '{\"output\": \"the recorded answer\"}'");
    std::fs::write(dir.path().join("r1.ledger.jsonl"), "not a ledger\n").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let e = rt
        .block_on(async {
            p.launch(
                JobId(1),
                Request::Ablate(vec![Target::Unit("u2".into())]),
                tx,
            )
        })
        .unwrap_err();
    assert!(
        e.contains("not a tdn-tui ledger") && e.contains("--ledger"),
        "{e}"
    );
}

#[test]
fn a_job_cancelled_while_it_was_starting_runs_nothing() {
    // The screen's x reached the port before the job's session started (the launch was still
    // reading the settings or waiting for the ledger's lock).
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let (p, _run_dir) = port(&format!(
        "touch '{}'; echo '{{\"output\": \"x\"}}'",
        marker.display()
    ));
    p.cancel(JobId(1));
    let events = run_job(&p, Request::Ablate(vec![Target::Unit("u2".into())]));
    assert!(
        matches!(
            events.as_slice(),
            [ExperimentEvent::JobFinished {
                end: JobEnd::Cancelled,
                ..
            }]
        ),
        "{events:?}"
    );
    assert!(!marker.exists(), "the runner never ran");
}

#[test]
fn quitting_cancels_a_running_job_and_closes_its_batch() {
    // Seed 1 of the ablation hangs; everything else answers at once.
    let agent = r#"if [ "$TDN_EXPERIMENT" = ablate ] && [ "$TDN_SEED" = 1 ]; then sleep 60; fi; if [ "$TDN_REMOVE" = u2 ]; then echo '{"output": "another answer"}'; else echo '{"output": "the recorded answer"}'; fi"#;
    let (p, dir) = port(agent);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    rt.block_on(async {
        p.launch(
            JobId(1),
            Request::Ablate(vec![Target::Unit("u2".into())]),
            tx,
        )
        .unwrap();
        // Wait until the trial of seed 0 is formed, i.e. both of its samples are saved.
        while let Some(e) = rx.recv().await {
            if let ExperimentEvent::SampleFinished {
                outcome: SampleOutcome::Answer { ledger, .. },
                ..
            } = &e
                && !ledger.is_empty()
            {
                break;
            }
        }
    });
    // Without the cancel, the hanging sample would outlast the wait and the batch stay open.
    rt.block_on(async {
        let p = &p;
        tokio::task::block_in_place(|| p.shutdown());
    });
    let h = p.earlier_trials().unwrap();
    assert!(h.open_cohorts.is_empty(), "{h:?}");
    assert_eq!(
        h.attributions.len(),
        1,
        "the cancelled batch was closed: {h:?}"
    );
    let checked =
        crate::experiments::ledger::verify_path(&dir.path().join("r1.ledger.jsonl")).unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
}

#[test]
fn a_session_reports_through_the_screens_events() {
    // Every re-run answers something else, the baseline's too: an unstable baseline makes the
    // verdict inconclusive (influence.md §7).
    let (p, _dir) = port("echo '{\"output\": \"an entirely different zebra answer\"}'");
    let events = run_job(&p, Request::Ablate(vec![Target::Unit("u2".into())]));
    assert!(matches!(&events[0], ExperimentEvent::Planned { probes, .. } if probes.len() == 2));
    let verdicts: Vec<Option<Verdict>> = events
        .iter()
        .filter_map(|e| match e {
            ExperimentEvent::ProbeFinished {
                probe: 1, result, ..
            } => Some(result.verdict),
            _ => None,
        })
        .collect();
    assert!(
        verdicts.iter().all(|v| *v == Some(Verdict::Inconclusive)),
        "{verdicts:?}"
    );
    let Some(ExperimentEvent::JobFinished { end, flags, .. }) = events.last() else {
        panic!("no end: {events:?}");
    };
    assert_eq!(*end, JobEnd::Finished);
    assert!(flags.iter().any(|f| f == "baseline-unstable"), "{flags:?}");
}
