//! Ledger speed: `ledger verify` over ledgers of growing size (linear expected: every check is a
//! map lookup or costs what its own record holds), and one fsynced append at two ledger sizes
//! (flat expected: a writer reads only what was appended since its last call).
//! Run: `cargo bench --bench ledger`.

/// The binary's allocator (src/main.rs), so the figures are the program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
use tdn_tui::analysis::model::{ContextUnit, Run, RunStatus, Step, StepContext, StepKind};
use tdn_tui::experiments::ledger::{Ledger, NewSample, Policy, SampleOutcome, Scope, verify_path};
use tdn_tui::experiments::spec::{ExperimentKind, ExperimentSpec};

const SIZES: [u64; 2] = [500, 2000];

fn run() -> Run {
    let mut r = Run::new("bench", RunStatus::Failed);
    r.final_answer = Some("REJECTED".to_owned());
    let ids: Vec<String> = (0..20).map(|i| format!("unit-{i}")).collect();
    for id in &ids {
        r.context_units.push(ContextUnit {
            id: id.as_str().into(),
            kind: "document".to_owned(),
            text: format!("text of {id}"),
            ..ContextUnit::default()
        });
    }
    let mut s = Step::new("s1", StepKind::Llm);
    s.context = Some(Box::new(StepContext {
        available: None,
        sent: ids.iter().map(|i| i.as_str().into()).collect(),
    }));
    r.steps.push(s);
    r.reindex();
    r
}

fn append(l: &Ledger, run: &Run, cohort: &str, kind: ExperimentKind, seed: u64, reproduced: bool) {
    let spec = ExperimentSpec {
        run: "bench.json".to_owned(),
        run_id: run.id.clone(),
        experiment: kind,
        remove: if kind == ExperimentKind::Ablate {
            vec![format!("unit-{}", seed % 20)]
        } else {
            vec![]
        },
        restore: vec![],
        from_step: None,
        patch: None,
        seed,
        sample: seed,
        source: None,
    };
    l.append_sample(&NewSample {
        cohort,
        evaluator_epoch: "exact|bench",
        run,
        runner_command: "./agent",
        spec: &spec,
        finished_at: time::OffsetDateTime::now_utc(),
        outcome: Ok(SampleOutcome {
            output: "x",
            reproduced,
        }),
        cost: None,
        duration_ms: None,
    })
    .unwrap();
}

/// A closed cohort of `seeds` baseline + single-unit ablation pairs.
fn build(path: &Path, run: &Run, seeds: u64) -> Ledger {
    let l = Ledger::open(path, Scope::Run, "bench").unwrap();
    for seed in 0..seeds {
        append(&l, run, "b-1", ExperimentKind::Baseline, seed, true);
        append(&l, run, "b-1", ExperimentKind::Ablate, seed, seed % 3 == 0);
    }
    l.close_cohort("b-1", &Policy::default()).unwrap();
    l
}

fn benches(c: &mut Criterion) {
    let run = run();
    let dir = tempfile::tempdir().unwrap();
    let mut verify = c.benchmark_group("ledger_verify");
    verify.sample_size(20);
    let mut ledgers = Vec::new();
    for seeds in SIZES {
        let path = dir.path().join(format!("l{seeds}.ledger.jsonl"));
        ledgers.push(build(&path, &run, seeds));
        let lines = std::fs::read_to_string(&path).unwrap().lines().count() as u64;
        verify.throughput(Throughput::Elements(lines));
        verify.bench_with_input(BenchmarkId::from_parameter(lines), &path, |b, p| {
            b.iter(|| assert!(verify_path(p).unwrap().ok()))
        });
    }
    verify.finish();
    let mut appends = c.benchmark_group("ledger_append_fsynced");
    appends.sample_size(30);
    for (l, seeds) in ledgers.iter().zip(SIZES) {
        let mut seed = 1_000_000;
        appends.bench_function(BenchmarkId::from_parameter(seeds * 3), |b| {
            b.iter(|| {
                seed += 1;
                append(l, &run, "b-2", ExperimentKind::Baseline, seed, true);
            })
        });
    }
    appends.finish();
}

criterion_group!(ledger, benches);
criterion_main!(ledger);
