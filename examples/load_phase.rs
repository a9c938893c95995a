//! Loading on its own: reads a run file (native or imported) the way `analyze` does, RUNS times
//! in one process (default 1), and prints the best wall time, the steps and context units read,
//! and the process's peak resident memory. Built with the system allocator (no `main.rs`), so a
//! heap profiler such as heaptrack sees every allocation of the importers and the loader.
//!
//! `cargo run --release --example load_phase -- FILE [RUNS]`

use std::path::Path;
use std::time::Instant;
use tdn_tui::analysis::load::{LoadOptions, load_path};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: load_phase FILE [RUNS]")?;
    let runs: usize = args.next().map_or(Ok(1), |s| s.parse())?;
    let mut best = f64::INFINITY;
    let (mut steps, mut units) = (0usize, 0usize);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let loaded = load_path(Path::new(&path), &LoadOptions::default())?;
        best = best.min(start.elapsed().as_secs_f64());
        steps = loaded.iter().map(|l| l.run.steps.len()).sum();
        units = loaded.iter().map(|l| l.run.context_units.len()).sum();
    }
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    println!("{best:.3} s best of {runs}; {steps} steps, {units} context units; peak {peak}");
    Ok(())
}
