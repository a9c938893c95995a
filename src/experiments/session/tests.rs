//! Sessions with scripted runners: the whole-probe cases of the parity fixture verdicts.json
//! (probes, ablation_runs, restoration_runs), event order, the sink seam, and cancellation.

use super::*;
use crate::analysis::influence::{EmbedError, Embedder};
use crate::analysis::report::Verdict;
use crate::experiments::flip::{FlipJudge, FlipRule};
use crate::experiments::localize::{Subject, plan_tiers};
use crate::experiments::runner::fake::{FakeOutcome, FakeRunner};
use crate::experiments::sink::MemorySink;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

const FIXTURE: &str = include_str!("../../../tests/fixtures/parity/influence/verdicts.json");
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

fn plan(original: &str, samples: usize, probes: Vec<ProbePlan>) -> SessionPlan {
    SessionPlan {
        run_path: "/runs/r.json".to_owned(),
        run_id: "r".to_owned(),
        run_status: RunStatus::Failed,
        original: original.to_owned(),
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
    }
}

async fn run(plan: SessionPlan, deps: SessionDeps) -> (SessionOutcome, Vec<TrialEvent>) {
    let (handle, mut rx) = start(plan, deps);
    let outcome = handle.join().await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
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

#[tokio::test]
async fn probes_cases() {
    let cs = cases("probes");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let original = c["original"].as_str().unwrap();
        let outputs = strings(&c["outputs"]);
        let n = outputs.len();
        let table = HashMap::from([
            (String::new(), vec![Some(original.to_owned()); n]),
            ("x".to_owned(), outputs),
        ]);
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let probes = vec![
            ProbePlan::baseline(),
            ProbePlan {
                role: ProbeRole::Ablation {
                    baseline: ProbeId(0),
                },
                remove: vec!["x".to_owned()],
                ..ProbePlan::baseline()
            },
        ];
        let (out, _) = run(
            plan(original, n, probes),
            deps(
                runner,
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                3,
            ),
        )
        .await;
        let probe = &out.probes[1];
        let e = &c["expect"];
        assert_eq!(
            probe.tally.samples as u64,
            e["samples"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            probe.tally.flips as u64,
            e["flips"].as_u64().unwrap(),
            "{name}"
        );
        let sims = floats(&e["similarities"]);
        assert_eq!(probe.tally.similarities.len(), sims.len(), "{name}");
        for (g, w) in probe.tally.similarities.iter().zip(&sims) {
            assert!((g - w).abs() <= EPS, "{name}: {g} vs {w}");
        }
        check_stats(&probe.tally.similarity(), &e["similarity"], name);
        assert_eq!(
            crate::experiments::verdict::majority(probe.tally.flips, probe.tally.samples),
            e["majority"].as_bool().unwrap(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn ablation_runs_cases() {
    let cs = cases("ablation_runs");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let samples = crate::experiments::verdict::resolve_samples(c["samples"].as_f64());
        let suspects = c["suspects"].as_array().unwrap();
        let mut table = HashMap::from([(String::new(), strings(&c["baseline_outputs"]))]);
        for s in suspects {
            table.insert(s["id"].as_str().unwrap().to_owned(), strings(&s["outputs"]));
        }
        let subjects: Vec<Subject<'_>> = suspects
            .iter()
            .map(|s| {
                let id = s["id"].as_str().unwrap();
                Subject {
                    id,
                    unit: s["ablatable"].as_bool().unwrap().then_some(id),
                }
            })
            .collect();
        let max = usize::try_from(c["max_suspects"].as_u64().unwrap()).unwrap();
        let tiers = plan_tiers(&subjects, &[], max, 5);
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let (out, _) = run(
            plan(
                c["original"].as_str().unwrap(),
                samples,
                tiers.probes.clone(),
            ),
            deps(
                Arc::clone(&runner),
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                4,
            ),
        )
        .await;
        let e = &c["expect"];
        let base = &out.probes[0];
        assert_eq!(
            base.tally.flips as u64,
            e["baseline"]["flips"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            base.tally.samples as u64,
            e["baseline"]["samples"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            base.tally.is_stable_baseline(),
            e["baseline"]["stable"].as_bool().unwrap(),
            "{name}"
        );
        let flags: Vec<String> = e["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(base.flags, flags, "{name}");
        for (want, probe) in e["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&tiers.suspects)
        {
            let id = want["id"].as_str().unwrap();
            match (want["verdict"].as_str(), probe) {
                (None, None) => {}
                (Some(v), Some(p)) => {
                    let r = &out.probes[p.0].result;
                    assert_eq!(r.verdict.map(Verdict::as_str), Some(v), "{name} / {id}");
                    assert_eq!(
                        r.flips as u64,
                        want["flips"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                    assert_eq!(
                        r.samples as u64,
                        want["samples"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                }
                (w, g) => panic!("{name} / {id}: expected {w:?}, probe {g:?}"),
            }
        }
        let calls = e["runner_calls"].as_u64().unwrap() as usize;
        assert_eq!(out.runner_calls, calls, "{name}");
        assert_eq!(runner.calls(), calls, "{name}");
    }
}

#[tokio::test]
async fn restoration_runs_cases() {
    let cs = cases("restoration_runs");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let ids = |k: &str| -> Vec<String> {
            c[k].as_array()
                .unwrap()
                .iter()
                .map(|u| u["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let sent = ids("sent");
        let dropped: Vec<String> = ids("available")
            .into_iter()
            .filter(|a| !sent.contains(a))
            .collect();
        let e = &c["expect"];
        let want_dropped: Vec<String> = e["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(dropped, want_dropped, "{name}");
        let table: HashMap<String, Vec<Option<String>>> = c["outputs_by_restored"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), strings(v)))
            .collect();
        let refs: Vec<&str> = dropped.iter().map(String::as_str).collect();
        let max = usize::try_from(c["max_candidates"].as_u64().unwrap()).unwrap();
        let tiers = plan_tiers(&[], &refs, 5, max);
        let samples = crate::experiments::verdict::resolve_samples(c["samples"].as_f64());
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let (out, _) = run(
            plan(
                c["original"].as_str().unwrap(),
                samples,
                tiers.probes.clone(),
            ),
            deps(
                Arc::clone(&runner),
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                2,
            ),
        )
        .await;
        match tiers.baseline {
            None => assert!(e["baseline"].is_null(), "{name}"),
            Some(b) => {
                let base = &out.probes[b.0];
                assert_eq!(
                    base.tally.flips as u64,
                    e["baseline"]["flips"].as_u64().unwrap(),
                    "{name}"
                );
                assert_eq!(
                    base.tally.is_stable_baseline(),
                    e["baseline"]["stable"].as_bool().unwrap(),
                    "{name}"
                );
                let flags: Vec<String> = e["flags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap().to_owned())
                    .collect();
                assert_eq!(base.flags, flags, "{name}");
            }
        }
        for (want, probe) in e["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&tiers.dropped)
        {
            let id = want["id"].as_str().unwrap();
            match (want["verdict"].as_str(), probe) {
                (None, None) => {}
                (Some(v), Some(p)) => {
                    let r = &out.probes[p.0].result;
                    assert_eq!(r.verdict.map(Verdict::as_str), Some(v), "{name} / {id}");
                    assert_eq!(
                        r.flips as u64,
                        want["flips"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                    check_stats(r.similarity.as_ref().unwrap(), &want["similarity"], name);
                    let class = if v == "confirmed" {
                        "content-bug"
                    } else {
                        "no-detected-effect"
                    };
                    assert_eq!(r.class.map(|c| c.as_str()), Some(class), "{name} / {id}");
                    assert_eq!(r.cost, None, "restored units get no cost verdict");
                }
                (w, g) => panic!("{name} / {id}: expected {w:?}, probe {g:?}"),
            }
        }
        assert_eq!(
            tiers.dropped.len(),
            e["candidates"].as_array().unwrap().len(),
            "{name}"
        );
        assert_eq!(
            runner.calls() as u64,
            e["runner_calls"].as_u64().unwrap(),
            "{name}"
        );
    }
}

fn two_probe_plan(samples: usize) -> SessionPlan {
    plan(
        "$120",
        samples,
        vec![
            ProbePlan::baseline(),
            ProbePlan {
                role: ProbeRole::Ablation {
                    baseline: ProbeId(0),
                },
                remove: vec!["old-policy".to_owned()],
                ..ProbePlan::baseline()
            },
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
        .filter(|e| {
            matches!(
                e,
                TrialEvent::SampleFinished {
                    saved: Saved::Yes,
                    ..
                }
            )
        })
        .count();
    assert_eq!(finished, 6);
    // The baseline announces itself before the probe it judges; the session ends last.
    let verdicts: Vec<ProbeId> = events
        .iter()
        .filter_map(|e| match e {
            TrialEvent::ProbeVerdict { probe, .. } => Some(*probe),
            _ => None,
        })
        .collect();
    assert_eq!(verdicts, vec![ProbeId(0), ProbeId(1)]);
    assert!(matches!(
        events.last(),
        Some(TrialEvent::SessionDone { .. })
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
    assert!(events.iter().any(
        |e| matches!(e, TrialEvent::SampleFinished { saved: Saved::No(r), .. } if r == "disk full")
    ));
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
    let (handle, _rx) = start(
        two_probe_plan(3),
        deps(
            Arc::clone(&runner) as Arc<FakeRunner>,
            Arc::new(Mock),
            FlipRule::Exact,
            Arc::new(MemorySink::new()),
            1,
        ),
    );
    handle.cancel();
    let out = handle.join().await.unwrap();
    assert!(out.cancelled);
    assert!(runner.calls() < 6);
    assert_eq!(out.probes[1].result.verdict, None);
    assert_eq!(out.probes[1].claim, None);
}
