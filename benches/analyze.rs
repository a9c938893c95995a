//! `analyze` on generated runs of 1,000, 10,000 and 100,000 steps in six shapes
//! (`support/gen.rs`): values that repeat; many distinct values flowing between steps; text drawn
//! from a small vocabulary (issue 28); and that text as an OTLP export of GenAI spans, as a
//! Langfuse trace and as span rows, each read by its importer (up to 100,000 spans). From the
//! file's text to the report, as the command does, beside the parse floor, reading the same text
//! into one `serde_json::Value`. Both run over and over
//! in one process, on a heap the previous iteration left behind: a fair pair for spotting a
//! change, lower than a fresh process's figures (`examples/parse_floor.rs` and `analyze` itself
//! are the measure). docs/performance.md has the numbers and the commands:
//! `cargo bench --bench analyze`, or one group, `cargo bench --bench analyze -- analyze/vocab`
//! (the imports: `-- "analyze/(otlp|langfuse|span-rows)"`).

/// The binary's allocator (src/main.rs), so the figures are the program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/gen.rs"]
mod gen_runs;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gen_runs::{Shape, run_json};
use std::path::Path;
use tdn_tui::analysis::load::{LoadOptions, load_str};
use tdn_tui::analysis::report::{AnalyzeOptions, analyze};
use tdn_tui::config::Settings;

/// Steps of the generated runs.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn bench(c: &mut Criterion) {
    // The allocator tuned as the binary tunes it, before any thread starts.
    tdn_tui::cli::heap::tune_allocator();
    let settings = Settings::default();
    let embedder = tdn_tui::experiments::embedder::from_settings(&settings);
    for shape in Shape::ALL {
        let mut analyzed = c.benchmark_group(format!("analyze/{}", shape.name()));
        analyzed.sample_size(10);
        let mut floor = Vec::new();
        for n in SIZES {
            let text = run_json(shape, n);
            analyzed.throughput(Throughput::Bytes(text.len() as u64));
            // Freeing the run and report is left out of the time, as `analyze` leaves it to the
            // process's exit; the parse floor likewise does not count freeing its value.
            analyzed.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
                b.iter_with_large_drop(|| {
                    let runs = load_str(text, Path::new("bench.json"), &LoadOptions::default())
                        .unwrap_or_else(|e| panic!("a generated run loads: {e}"));
                    let reports: Vec<_> = runs
                        .iter()
                        .map(|l| analyze(l, &AnalyzeOptions::new(embedder.as_ref())))
                        .collect();
                    (runs, reports)
                });
            });
            floor.push((n, text));
        }
        analyzed.finish();
        let mut parsed = c.benchmark_group(format!("parse_floor/{}", shape.name()));
        parsed.sample_size(10);
        for (n, text) in &floor {
            parsed.throughput(Throughput::Bytes(text.len() as u64));
            parsed.bench_with_input(BenchmarkId::from_parameter(n), text, |b, text| {
                b.iter_with_large_drop(|| serde_json::from_str::<serde_json::Value>(text));
            });
        }
        parsed.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
