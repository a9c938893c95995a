//! Sessions through the library with the real shell runner: cancelling a running session and
//! dropping its handle both kill every sample's process group; events arrive in order.

use crate::support::{Scenario, survivors, wait_until};
use std::sync::Arc;
use std::time::Duration;
use tdn_tui::analysis::influence::{EmbedError, Embedder};
use tdn_tui::analysis::model::RunStatus;
use tdn_tui::analysis::report::Verdict;
use tdn_tui::experiments::event::{Event, EventKind, JobId, SampleEnd};
use tdn_tui::experiments::flip::{FlipJudge, FlipRule};
use tdn_tui::experiments::intervention::Intervention;
use tdn_tui::experiments::runner::shell::ShellRunner;
use tdn_tui::experiments::session::{self, Probe, ProbeId, SessionDeps, SessionPlan};
use tdn_tui::experiments::sink::MemorySink;

/// Every text the same vector: similarity 1, so only the flip rule decides.
struct Flat;
impl Embedder for Flat {
    fn name(&self) -> &str {
        "flat"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0]).collect())
    }
}

fn plan(s: &Scenario, samples: usize) -> SessionPlan {
    let mut run = tdn_tui::analysis::model::Run::new("refund-outdated-policy", RunStatus::Failed);
    run.final_answer = Some("You will be refunded $120 for order 1182.".to_owned());
    SessionPlan {
        run_path: s.path(crate::support::RUN).display().to_string(),
        source_path: s.path(crate::support::RUN).display().to_string(),
        run: Arc::new(run),
        samples,
        probes: vec![
            Probe::baseline(),
            Probe::against(Intervention::Ablate(vec!["policy-2019".into()]), ProbeId(0)),
        ],
    }
}

fn deps(command: &str, sink: Arc<MemorySink>) -> SessionDeps {
    // Commands run under the binary's supervisor, as they do in the real tool.
    tdn_tui::experiments::process::supervise::install(env!("CARGO_BIN_EXE_tdn-tui").into());
    SessionDeps {
        runner: Arc::new(ShellRunner::new(command, Duration::from_secs(120))),
        judge: Arc::new(FlipJudge::new(
            FlipRule::Contains("$120".to_owned()),
            Arc::new(Flat),
            Duration::from_secs(10),
        )),
        sink,
        parallel: 4,
        cohort: "b-20250101T000000Z-0000abcd".to_owned(),
        evaluator_epoch: "contains:$120|tdn-tui/test".to_owned(),
        job: JobId(1),
    }
}

/// Starts a session on the current runtime; its events come on the receiver.
fn start(
    plan: SessionPlan,
    deps: SessionDeps,
) -> (
    session::SessionHandle,
    tokio::sync::mpsc::UnboundedReceiver<Event>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (
        session::start(&tokio::runtime::Handle::current(), plan, deps, tx),
        rx,
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_real_agent_session_reports_every_step_in_order() {
    let s = Scenario::new();
    let sink = Arc::new(MemorySink::new());
    let command = format!("cd '{}' && python3 agent.py", s.dir.path().display());
    let (outcome, events) = runtime().block_on(async {
        let (handle, mut rx) = start(plan(&s, 2), deps(&command, Arc::clone(&sink)));
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e.kind);
        }
        (handle.join().await.unwrap(), events)
    });
    assert_eq!(outcome.probes[1].result.verdict, Some(Verdict::Confirmed));
    assert_eq!(sink.samples().len(), 4);
    let started = events
        .iter()
        .filter(|e| matches!(e, EventKind::SampleStarted { .. }))
        .count();
    let finished = events
        .iter()
        .filter(|e| matches!(e, EventKind::SampleFinished { .. }))
        .count();
    assert_eq!((started, finished), (4, 4));
    // A probe's verdict comes after all of its samples.
    let verdict_at = events
        .iter()
        .position(|e| {
            matches!(
                e,
                EventKind::ProbeVerdict {
                    probe: ProbeId(1),
                    ..
                }
            )
        })
        .unwrap();
    let last_sample = events
        .iter()
        .rposition(|e| {
            matches!(
                e,
                EventKind::SampleFinished {
                    probe: ProbeId(1),
                    ..
                }
            )
        })
        .unwrap();
    assert!(verdict_at > last_sample);
}

#[test]
fn cancelling_a_session_kills_its_running_samples() {
    let s = Scenario::new();
    let sink = Arc::new(MemorySink::new());
    let command = format!(
        "cd '{}' && {{ sleep 300 & echo $! >> pids; echo $$ >> pids; wait; }}",
        s.dir.path().display()
    );
    let outcome = runtime().block_on(async {
        let (handle, mut rx) = start(plan(&s, 2), deps(&command, Arc::clone(&sink)));
        let mut started = 0;
        while started < 4 {
            if let Some(EventKind::SampleStarted { .. }) = rx.recv().await.map(|e| e.kind) {
                started += 1;
            }
        }
        wait_until("four samples to write their pids", || s.pids().len() >= 8);
        handle.cancel("a test");
        let mut cancelled = 0;
        while let Some(e) = rx.recv().await {
            if matches!(
                e.kind,
                EventKind::SampleFinished {
                    end: SampleEnd::Cancelled { .. },
                    ..
                }
            ) {
                cancelled += 1;
            }
        }
        assert_eq!(cancelled, 4);
        handle.join().await.unwrap()
    });
    assert!(outcome.cancelled);
    assert_eq!(
        outcome.probes[1].result.verdict, None,
        "a cancelled probe has no verdict"
    );
    assert_eq!(
        sink.samples().len(),
        4,
        "each stopped sample is recorded as cancelled"
    );
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}

#[test]
fn dropping_the_handle_kills_the_samples() {
    let s = Scenario::new();
    let command = format!(
        "cd '{}' && {{ sleep 300 & echo $! >> pids; echo $$ >> pids; wait; }}",
        s.dir.path().display()
    );
    let rt = runtime();
    rt.block_on(async {
        let (handle, mut rx) = start(plan(&s, 2), deps(&command, Arc::new(MemorySink::new())));
        while !matches!(
            rx.recv().await.map(|e| e.kind),
            Some(EventKind::SampleStarted { .. })
        ) {}
        wait_until("a sample to write its pids", || s.pids().len() >= 2);
        drop(handle);
        while rx.recv().await.is_some() {}
    });
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}

#[test]
fn shutting_the_runtime_down_kills_the_samples() {
    let s = Scenario::new();
    let command = format!(
        "cd '{}' && {{ sleep 300 & echo $! >> pids; echo $$ >> pids; wait; }}",
        s.dir.path().display()
    );
    let rt = runtime();
    let (handle, _rx) = rt.block_on(async {
        let started = start(plan(&s, 2), deps(&command, Arc::new(MemorySink::new())));
        wait_until("samples to write their pids", || s.pids().len() >= 4);
        started
    });
    // Quitting: the runtime goes away under a running session.
    std::mem::forget(handle);
    rt.shutdown_timeout(Duration::from_secs(5));
    assert!(s.pids().len() >= 4);
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}
