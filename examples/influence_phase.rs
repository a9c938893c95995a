//! The influence ranking on its own (issue 11): loads a run once, then builds its `influence`
//! section RUNS times (default 5) with the hashed embedder and prints the best wall time, the
//! best CPU time of the ranking's thread (from Linux's `/proc/thread-self/schedstat`; less
//! disturbed by a busy machine than the wall time), the number of entries and a digest of their
//! ids and scores' bits (equal digests: the same ranking, bit for bit).
//!
//! With `dropped` after RUNS, the `dropped` section is built RUNS times as well, and a second
//! line gives its best CPU time, its entries and a digest of every id, count and text in it.
//!
//! `cargo run --release --example influence_phase -- FILE [RUNS] [dropped]`

use std::path::Path;
use std::time::Instant;
use tdn_tui::analysis::influence::{
    ConfidenceOptions, HashedEmbedder, dropped_section, influence_section,
};
use tdn_tui::analysis::load::{LoadOptions, load_path};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: influence_phase FILE [RUNS]")?;
    let runs: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let with_dropped = args.next().as_deref() == Some("dropped");
    let loaded = load_path(Path::new(&path), &LoadOptions::default())?;
    let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
    let (mut entries, mut digest) = (0usize, 0u64);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let cpu = thread_cpu();
        let mut sections = Vec::new();
        for l in &loaded {
            let reference = l.run.reference_answer.as_deref();
            sections.push(influence_section(
                &l.run,
                reference,
                &HashedEmbedder,
                &ConfidenceOptions::default(),
            )?);
        }
        best = best.min(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu, thread_cpu()) {
            best_cpu = best_cpu.min(b - a);
        }
        entries = 0;
        digest = 0xcbf2_9ce4_8422_2325;
        for s in sections.iter().flatten() {
            for e in &s.scores {
                entries += 1;
                for x in [e.score, e.signals.fa, e.signals.avg, e.signals.persist] {
                    digest = (digest ^ x.to_bits()).wrapping_mul(0x0000_0100_0000_01b3);
                }
                for b in e.id.bytes() {
                    digest = (digest ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
        }
    }
    println!(
        "best {best:.3} s wall, {best_cpu:.3} s CPU over {runs} runs; {entries} entries; digest {digest:016x}"
    );
    if with_dropped {
        dropped_phase(&loaded, runs);
    }
    Ok(())
}

/// Builds the `dropped` section of every loaded run `runs` times and prints the best CPU time,
/// the entries (units and steps) and a digest of the sections.
fn dropped_phase(loaded: &[tdn_tui::analysis::load::Loaded], runs: usize) {
    let mut best_cpu = f64::INFINITY;
    let (mut entries, mut digest) = (0usize, 0u64);
    for _ in 0..runs.max(1) {
        let cpu = thread_cpu();
        let sections: Vec<_> = loaded.iter().map(|l| dropped_section(&l.run)).collect();
        if let (Some(a), Some(b)) = (cpu, thread_cpu()) {
            best_cpu = best_cpu.min(b - a);
        }
        entries = 0;
        digest = 0xcbf2_9ce4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for &b in bytes {
                digest = (digest ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for s in sections.iter().flatten() {
            feed(s.reason.as_bytes());
            feed(&[u8::from(s.any_dropped)]);
            feed(&s.available_count.to_le_bytes());
            feed(&s.sent_count.to_le_bytes());
            for d in &s.dropped {
                entries += 1;
                feed(d.id.as_bytes());
                feed(d.content.as_deref().unwrap_or("\u{0}none").as_bytes());
            }
            for step in &s.steps {
                entries += 1;
                feed(step.step.as_bytes());
                feed(&step.index.to_le_bytes());
                feed(&step.available_count.to_le_bytes());
                feed(&step.sent_count.to_le_bytes());
                feed(&[u8::from(step.any_dropped)]);
                for id in &step.dropped {
                    feed(id.as_bytes());
                    feed(b",");
                }
            }
        }
    }
    println!(
        "dropped: best {best_cpu:.3} s CPU over {runs} runs; {entries} entries; digest {digest:016x}"
    );
}

/// The CPU time this thread has run, in seconds, where Linux tells it.
fn thread_cpu() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
