//! A session whose ledger is locked by another handle (attribution-ledger.md §7, "Concurrency"):
//! the finished sample is said to be held back, is not shown until it is written, and is shown,
//! saved, once the lock is granted; cancelling while held leaves it not saved, with why.

use super::*;
use crate::analysis::load::{LoadOptions, load_str};
use crate::experiments::event::EventKind;
use crate::experiments::flip::FlipRule;
use crate::experiments::ledger::{Location, Policy, Scope};
use crate::experiments::run_ledger::RunLedger;
use crate::experiments::runner::fake::{FakeOutcome, FakeRunner};
use std::path::Path;
use std::time::Duration;

const RUN: &str = r#"{"format": "tdn.run/1", "id": "r1", "status": "failed",
    "final_answer": "x",
    "context_units": [{"id": "u1", "kind": "document", "text": "one"}],
    "steps": [{"id": "s1", "kind": "llm", "output": "x",
               "context": {"available": ["u1"], "sent": ["u1"]}}]}"#;

/// A ledger for run `r1` in `dir` that says a sample is held back after 20 ms without the lock.
fn ledger(dir: &Path) -> (Arc<RunLedger>, std::path::PathBuf) {
    let run = load_str(RUN, Path::new("r1.json"), &LoadOptions::default())
        .unwrap()
        .remove(0)
        .run;
    let loc = Location {
        path: dir.join("r1.ledger.jsonl"),
        scope: Scope::Run,
        name: "r1".to_owned(),
    };
    let l = RunLedger::open(&loc, &run, Policy::default())
        .unwrap()
        .with_lock_patience(Duration::from_millis(20));
    (Arc::new(l), loc.path)
}

fn baseline_session(
    sink: Arc<RunLedger>,
) -> (
    SessionHandle,
    tokio::sync::mpsc::UnboundedReceiver<crate::experiments::event::Event>,
) {
    let mut run = crate::analysis::model::Run::new("r1", crate::analysis::model::RunStatus::Failed);
    run.final_answer = Some("x".to_owned());
    let plan = SessionPlan {
        run_path: "/runs/r1.json".to_owned(),
        source_path: "/runs/r1.json".to_owned(),
        run: std::sync::Arc::new(run),
        samples: 2,
        probes: vec![Probe::baseline()],
    };
    let embedder: Arc<dyn crate::analysis::influence::Embedder> = Arc::from(
        crate::experiments::embedder::from_settings(&crate::config::Settings::default()),
    );
    let deps = SessionDeps {
        runner: Arc::new(FakeRunner::new(|_| FakeOutcome::answer("x"))),
        judge: Arc::new(FlipJudge::new(
            FlipRule::Exact,
            embedder,
            Duration::from_secs(10),
        )),
        sink,
        parallel: 1,
        cohort: "b-20250101T000000Z-00000000".to_owned(),
        evaluator_epoch: "exact|tdn-tui/0".to_owned(),
        job: crate::experiments::event::JobId(1),
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (
        start(&tokio::runtime::Handle::current(), plan, deps, tx),
        rx,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_is_held_back_while_another_handle_holds_the_lock_then_shown_saved() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, path) = ledger(dir.path());
    let other = std::fs::File::open(&path).unwrap();
    other.lock().unwrap();
    let (handle, mut rx) = baseline_session(sink);
    let mut before_held = Vec::new();
    let held_seed = loop {
        match rx.recv().await.unwrap().kind {
            EventKind::SampleHeld { seed, why, .. } => {
                assert!(why.contains("r1.ledger.jsonl"), "{why}");
                break seed;
            }
            e => before_held.push(e),
        }
    };
    assert!(
        !before_held
            .iter()
            .any(|e| matches!(e, EventKind::SampleFinished { .. })),
        "nothing is shown before it is written: {before_held:?}"
    );
    other.unlock().unwrap();
    let outcome = handle.join().await.unwrap();
    let mut after = Vec::new();
    while let Ok(e) = rx.try_recv() {
        after.push(e.kind);
    }
    let finished: Vec<(u64, &Saved)> = after
        .iter()
        .filter_map(|e| match e {
            EventKind::SampleFinished { seed, end, .. } => Some((*seed, end.saved())),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2, "{after:?}");
    assert!(finished.iter().any(|(s, _)| *s == held_seed));
    assert!(finished.iter().all(|(_, s)| matches!(s, Saved::Yes(_))));
    assert_eq!(outcome.not_saved, 0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"type\":\"sample\"").count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_while_a_sample_is_held_back_leaves_it_not_saved_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, path) = ledger(dir.path());
    let other = std::fs::File::open(&path).unwrap();
    other.lock().unwrap();
    let (handle, mut rx) = baseline_session(sink);
    loop {
        if let EventKind::SampleHeld { .. } = rx.recv().await.unwrap().kind {
            break;
        }
    }
    handle.cancel("a test");
    // The held sample gives up; only then is the lock released (the batch is closed after).
    let why = loop {
        if let EventKind::SampleFinished { end, .. } = rx.recv().await.unwrap().kind {
            match end.saved() {
                Saved::No(why) => break why.to_string(),
                saved => panic!("saved while locked: {saved:?}"),
            }
        }
    };
    other.unlock().unwrap();
    let outcome = handle.join().await.unwrap();
    assert!(why.contains("waiting for the ledger lock"), "{why}");
    assert_eq!(outcome.not_saved, 1);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"type\":\"sample\"").count(), 0);
}
