//! The link phase on its own (issue 11): loads a run once, then builds its step texts and link
//! graph RUNS times (default 5) and prints the best wall time of each, the best CPU time of the
//! whole process over both (every thread, from Linux's `/proc/self/task/*/schedstat`: the link
//! scans run in parallel), the number of values and uses, and a digest of the graph (every use,
//! every value's text and kind, the producers of each value, the uses out of each step; equal
//! digests: the same graph, bit for bit). Then the claim check of the same texts, timed on its
//! own (best wall time), with a digest of every checked claim.
//!
//! `cargo run --release --example links_phase -- FILE [RUNS]`

use std::path::Path;
use std::time::Instant;
use tdn_tui::analysis::claims::check_claims;
use tdn_tui::analysis::links::{LinkGraph, StepTexts};
use tdn_tui::analysis::load::{LoadOptions, load_path};

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn mix(digest: &mut u64, x: u64) {
    *digest = (*digest ^ x).wrapping_mul(FNV_PRIME);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: links_phase FILE [RUNS]")?;
    let runs: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let loaded = load_path(Path::new(&path), &LoadOptions::default())?;
    let (mut best_texts, mut best_links, mut best_cpu) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let mut best_claims = f64::INFINITY;
    let mut claims_digest = 0xcbf2_9ce4_8422_2325u64;
    let mut line = String::new();
    for _ in 0..runs.max(1) {
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        let (mut values, mut uses) = (0usize, 0usize);
        let (mut t_texts, mut t_links, mut t_claims) = (0.0, 0.0, 0.0);
        claims_digest = 0xcbf2_9ce4_8422_2325u64;
        let mut cpu = Some(0.0);
        for l in &loaded {
            let run = &l.run;
            let before = process_cpu();
            let start = Instant::now();
            let texts = StepTexts::build(run);
            t_texts += start.elapsed().as_secs_f64();
            let start = Instant::now();
            let g = LinkGraph::build(run, &texts);
            t_links += start.elapsed().as_secs_f64();
            cpu = cpu
                .zip(before.zip(process_cpu()))
                .map(|(c, (a, b))| c + b - a);
            uses += g.uses().len();
            mix(&mut digest, u64::from(g.truncated));
            let mut seen_values = 0usize;
            for u in g.uses() {
                for x in [u.from, u.to, u.value] {
                    mix(&mut digest, x as u64);
                }
                seen_values = seen_values.max(u.value + 1);
            }
            // Every value a use names (ids are dense from 0; the last ones may have no use).
            for id in 0..seen_values {
                let v = g.value(id);
                for b in v.bytes() {
                    mix(&mut digest, u64::from(b));
                }
                mix(&mut digest, g.value_kind(id).map_or(9, |k| k as u64));
                for &p in g.producers_of(v) {
                    mix(&mut digest, u64::from(p));
                }
            }
            values += seen_values;
            for p in 0..run.steps.len() {
                for u in g.out_of_step(p) {
                    mix(&mut digest, (u.to as u64) << 32 | u.value as u64);
                }
                mix(&mut digest, u64::from(g.is_used(p)));
            }
            for u in g.pairs() {
                mix(&mut digest, (u.from as u64) << 32 | u.to as u64);
            }
            let start = Instant::now();
            let checked = check_claims(run, &texts);
            t_claims += start.elapsed().as_secs_f64();
            for c in &checked {
                let line = format!(
                    "{}|{:?}|{:?}|{:?}|{:?}|{}|{}",
                    c.text,
                    c.label,
                    c.evidence_step,
                    c.evidence_text,
                    c.origin_step,
                    c.why,
                    c.action
                );
                for b in line.bytes() {
                    mix(&mut claims_digest, u64::from(b));
                }
            }
        }
        best_claims = f64::min(best_claims, t_claims);
        best_texts = f64::min(best_texts, t_texts);
        best_links = f64::min(best_links, t_links);
        if let Some(c) = cpu {
            best_cpu = best_cpu.min(c);
        }
        line = format!("{uses} uses of {values} used values; digest {digest:016x}");
    }
    println!(
        "best texts {best_texts:.3} s, links {best_links:.3} s wall, {best_cpu:.3} s CPU over {runs} runs; {line}"
    );
    println!("best claims {best_claims:.4} s wall; claims digest {claims_digest:016x}");
    Ok(())
}

/// The CPU time all threads of this process have run, in seconds, where Linux tells it.
fn process_cpu() -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e9)
}
