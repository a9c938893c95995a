//! Sessions with scripted runners: event order, the sink seam, errored samples and cancellation;
//! the whole-probe cases of the parity fixture verdicts.json are in `parity_tests.rs`.

use super::*;
use crate::analysis::influence::{EmbedError, Embedder};
use crate::analysis::report::Verdict;
use crate::experiments::event::{Event, EventKind, JobId, SampleEnd};
use crate::experiments::flip::{FlipJudge, FlipRule};
use crate::experiments::localize::{Subject, plan_tiers};
use crate::experiments::runner::fake::{FakeOutcome, FakeRunner};
use crate::experiments::sink::MemorySink;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

const FIXTURE: &str = include_str!("../../../../../tests/fixtures/parity/influence/verdicts.json");
const EPS: f64 = 1e-12;

/// influence.md §1 `mock`: 32 zeros, +1 at `c % 32` for each UTF-16 code unit.
struct Mock;
impl Embedder for Mock {
    fn name(&self) -> &str {
        "mock"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0; 32];
                for c in t.encode_utf16() {
                    if let Some(x) = v.get_mut(usize::from(c) % 32) {
                        *x += 1.0;
                    }
                }
                v
            })
            .collect())
    }
}

/// The fixture's `embedder_table`: listed texts get their vector, others the default.
struct Table(HashMap<String, Vec<f64>>, Vec<f64>);
impl Embedder for Table {
    fn name(&self) -> &str {
        "cmd"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| self.0.get(*t).cloned().unwrap_or_else(|| self.1.clone()))
            .collect())
    }
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn embedder_of(case: &Value) -> Arc<dyn Embedder> {
    match case.get("embedder_table") {
        Some(t) => Arc::new(Table(
            t["vectors"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), floats(v)))
                .collect(),
            floats(&t["default"]),
        )),
        None => {
            assert_eq!(case["embedder"], "mock");
            Arc::new(Mock)
        }
    }
}

fn rule_of(case: &Value) -> FlipRule {
    let f = &case["flip"];
    match f["kind"].as_str().unwrap() {
        "similarity" => FlipRule::Similarity {
            threshold: f["threshold"].as_f64().unwrap(),
        },
        "contains" => FlipRule::Contains(f["text"].as_str().unwrap().to_owned()),
        other => panic!("unknown rule {other}"),
    }
}

fn plan(original: &str, samples: usize, probes: Vec<Probe>) -> SessionPlan {
    let mut run = crate::analysis::model::Run::new("r", crate::analysis::model::RunStatus::Failed);
    run.final_answer = Some(original.to_owned());
    SessionPlan {
        run_path: "/runs/r.json".to_owned(),
        source_path: "/runs/r.json".to_owned(),
        run: std::sync::Arc::new(run),
        samples,
        probes,
    }
}

fn deps(
    runner: Arc<FakeRunner>,
    embedder: Arc<dyn Embedder>,
    rule: FlipRule,
    sink: Arc<MemorySink>,
    parallel: usize,
) -> SessionDeps {
    SessionDeps {
        runner,
        judge: Arc::new(FlipJudge::new(rule, embedder, Duration::from_secs(10))),
        sink,
        parallel,
        cohort: "b-20250101T000000Z-00000000".to_owned(),
        evaluator_epoch: "test|tdn-tui/0".to_owned(),
        job: JobId(1),
    }
}

async fn run(plan: SessionPlan, deps: SessionDeps) -> (SessionOutcome, Vec<EventKind>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let handle = start(&tokio::runtime::Handle::current(), plan, deps, tx);
    let outcome = handle.join().await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        assert_eq!(e.job, JobId(1), "every event names its job");
        events.push(e.kind);
    }
    (outcome, events)
}

/// A script answering from a table keyed by the probe (removed or restored ids joined, "" for the
/// baseline) and the seed; `None` entries are errored samples.
fn table_script(
    table: HashMap<String, Vec<Option<String>>>,
) -> impl Fn(&ExperimentSpec) -> FakeOutcome {
    move |spec| {
        let key = if spec.remove.is_empty() {
            spec.restore.join(",")
        } else {
            spec.remove.join(",")
        };
        let seed = usize::try_from(spec.seed).unwrap();
        match table.get(&key).and_then(|v| v.get(seed)).cloned().flatten() {
            Some(out) => FakeOutcome::answer(out),
            None => FakeOutcome::Error(format!("no output for '{key}' seed {seed}")),
        }
    }
}

fn strings(v: &Value) -> Vec<Option<String>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().map(str::to_owned))
        .collect()
}

fn cases(key: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(FIXTURE).unwrap();
    v[key].as_array().unwrap().clone()
}

fn check_stats(got: &crate::analysis::report::SimilarityStats, e: &Value, what: &str) {
    for (g, k) in [
        (got.mean, "mean"),
        (got.min, "min"),
        (got.max, "max"),
        (got.stdev, "stdev"),
    ] {
        assert!(
            (g - e[k].as_f64().unwrap()).abs() <= EPS,
            "{what} {k}: {g} vs {}",
            e[k]
        );
    }
}

fn two_probe_plan(samples: usize) -> SessionPlan {
    plan(
        "$120",
        samples,
        vec![
            Probe::baseline(),
            Probe::against(Intervention::Ablate(vec!["old-policy".into()]), ProbeId(0)),
        ],
    )
}

fn refund_script(spec: &ExperimentSpec) -> FakeOutcome {
    if spec.remove.is_empty() {
        FakeOutcome::answer("$120")
    } else {
        FakeOutcome::answer("$80")
    }
}

#[tokio::test]
async fn every_finished_sample_reaches_the_sink_before_it_is_shown() {
    let sink = Arc::new(MemorySink::new());
    let runner = Arc::new(FakeRunner::new(refund_script));
    let (out, events) = run(
        two_probe_plan(3),
        deps(
            runner,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::clone(&sink),
            2,
        ),
    )
    .await;
    let saved = sink.samples();
    assert_eq!(saved.len(), 6);
    assert!(
        saved
            .iter()
            .all(|s| s.cohort.starts_with("b-") && s.run_id == "r")
    );
    assert_eq!(
        sink.closed(),
        vec!["b-20250101T000000Z-00000000".to_owned()]
    );
    let finished = events
        .iter()
        .filter(|e| matches!(e, EventKind::SampleFinished { end, .. } if matches!(end.saved(), Saved::Yes(_))))
        .count();
    assert_eq!(finished, 6);
    // The baseline announces itself before the probe it judges, which comes last.
    let verdicts: Vec<ProbeId> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ProbeVerdict { probe, .. } => Some(*probe),
            _ => None,
        })
        .collect();
    assert_eq!(verdicts, vec![ProbeId(0), ProbeId(1)]);
    assert!(matches!(
        events.last(),
        Some(EventKind::ProbeVerdict { .. })
    ));
    assert_eq!(out.probes[1].result.verdict, Some(Verdict::Confirmed));
    let claim = out.probes[1].claim.as_deref().unwrap();
    assert!(
        claim.starts_with("CAUSAL") && claim.contains("3/3") && claim.contains("'old-policy'"),
        "{claim}"
    );
}

#[tokio::test]
async fn a_refused_append_marks_the_sample_not_saved_and_still_counts() {
    let sink = Arc::new(MemorySink::refusing("disk full"));
    let runner = Arc::new(FakeRunner::new(refund_script));
    let (out, events) = run(
        two_probe_plan(2),
        deps(runner, Arc::new(Mock), FlipRule::Exact, sink, 1),
    )
    .await;
    assert_eq!(out.not_saved, 4);
    assert!(events.iter().any(|e| matches!(
        e,
        EventKind::SampleFinished { end, .. }
            if matches!(end.saved(), Saved::No(r) if r.to_string() == "disk full")
    )));
    assert_eq!(out.probes[1].result.verdict, Some(Verdict::Confirmed));
}

#[tokio::test]
async fn errored_samples_are_recorded_and_block_not_confirmed() {
    let sink = Arc::new(MemorySink::new());
    let runner = Arc::new(FakeRunner::new(|spec: &ExperimentSpec| {
        if !spec.remove.is_empty() && spec.seed == 1 {
            FakeOutcome::Error("crashed".to_owned())
        } else {
            FakeOutcome::answer("$120")
        }
    }));
    let (out, _) = run(
        two_probe_plan(3),
        deps(
            runner,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::clone(&sink),
            3,
        ),
    )
    .await;
    let r = &out.probes[1].result;
    assert_eq!((r.completed, r.errors, r.flips), (2, 1, 0));
    assert_eq!(r.verdict, Some(Verdict::Inconclusive));
    assert_eq!(
        r.class,
        Some(crate::analysis::report::SuspectClass::NoDetectedEffect)
    );
    assert!(sink.samples().iter().any(|s| matches!(
        s.outcome,
        crate::experiments::sink::SampleRecordOutcome::Errored { .. }
    )));
}

#[tokio::test]
async fn cancelling_starts_nothing_new_and_gives_no_verdict() {
    let runner = Arc::new(FakeRunner::new(refund_script));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = start(
        &tokio::runtime::Handle::current(),
        two_probe_plan(3),
        deps(
            Arc::clone(&runner) as Arc<FakeRunner>,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::new(MemorySink::new()),
            1,
        ),
        tx,
    );
    handle.cancel("a test");
    let out = handle.join().await.unwrap();
    assert!(out.cancelled);
    assert!(runner.calls() < 6);
    assert_eq!(out.probes[1].result.verdict, None);
    assert_eq!(out.probes[1].claim, None);
}

#[tokio::test]
async fn a_sample_stopped_by_a_cancel_is_recorded_as_cancelled_and_counts_for_nothing() {
    // The runner answers only once the session is cancelled: every running sample is stopped.
    let sink = Arc::new(MemorySink::new());
    let runner = Arc::new(FakeRunner::new(|_: &ExperimentSpec| FakeOutcome::Hang));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = start(
        &tokio::runtime::Handle::current(),
        two_probe_plan(2),
        deps(
            runner,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::clone(&sink),
            2,
        ),
        tx,
    );
    // Both baseline samples start; then the job is cancelled.
    let mut started = 0;
    while started < 2 {
        if let Some(Event {
            kind: EventKind::SampleStarted { .. },
            ..
        }) = rx.recv().await
        {
            started += 1;
        }
    }
    handle.cancel("the user pressed x");
    let out = handle.join().await.unwrap();
    assert!(out.cancelled);
    assert_eq!(out.stopped, 2);
    let recorded = sink.samples();
    assert_eq!(recorded.len(), 2, "each stopped sample is recorded");
    for s in &recorded {
        match &s.outcome {
            crate::experiments::sink::SampleRecordOutcome::Errored { kind, message } => {
                assert_eq!(
                    *kind,
                    crate::experiments::runner::SampleErrorKind::Cancelled
                );
                assert!(message.contains("the user pressed x"), "{message}");
            }
            other => panic!("not recorded as cancelled: {other:?}"),
        }
    }
    let mut cancelled = 0;
    while let Ok(e) = rx.try_recv() {
        if let EventKind::SampleFinished {
            end: SampleEnd::Cancelled { why, .. },
            ..
        } = e.kind
        {
            assert_eq!(why, "the user pressed x");
            cancelled += 1;
        }
    }
    assert_eq!(cancelled, 2);
    let b = &out.probes[0].tally;
    assert_eq!(
        (b.completed, b.errors),
        (0, 0),
        "cancelled is neither an answer nor an error"
    );
}

#[path = "parity_tests.rs"]
mod parity;

#[test]
fn a_restoration_or_replay_that_changes_nothing_stays_a_candidate_not_a_ranked_proxy() {
    let probes = vec![
        Probe::baseline(),
        Probe::against(Intervention::Restore(vec!["dropped".into()]), ProbeId(0)),
        Probe::against(
            Intervention::Replay {
                from: "s4".into(),
                patch: Some("fix".to_owned()),
            },
            ProbeId(0),
        ),
    ];
    let runner = Arc::new(FakeRunner::new(|_: &ExperimentSpec| {
        FakeOutcome::answer("$120")
    }));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (outcome, _) = rt.block_on(run(
        plan("$120", 2, probes),
        deps(
            runner,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::new(MemorySink::new()),
            2,
        ),
    ));
    let restore = outcome.probes[1].claim.as_deref().unwrap();
    assert_eq!(
        outcome.probes[1].result.verdict,
        Some(Verdict::NotConfirmed)
    );
    assert!(
        restore.starts_with(
            "NOT CONFIRMED: restoring 'dropped' did not change the outcome in 2 reruns"
        ) && restore.contains("stays a candidate"),
        "{restore}"
    );
    let replay = outcome.probes[2].claim.as_deref().unwrap();
    assert!(
        replay.contains("replaying from step 's4' with the patched output")
            && !replay.contains("rank"),
        "{replay}"
    );
}
