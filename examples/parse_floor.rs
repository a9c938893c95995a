//! The parse floor of docs/performance.md: how long a fresh process takes to read a file and
//! parse it into one `serde_json::Value`, with the same serde_json features the loader uses.
//! `analyze`'s time on the same file is compared with this.
//!
//! `cargo run --release --example parse_floor -- FILE [RUNS]` starts RUNS (default 5) processes
//! of its own, each reading and parsing the file once, and prints the best of them in seconds:
//! the whole process, from its start to its exit, as `analyze` is timed. Each parse starts on a
//! fresh heap, as `analyze` does; parsing the same text again in one process would reuse the
//! memory the first parse left behind and page in nothing, which measures about a third of
//! what a first parse costs. As `analyze` leaves freeing its run to the process's exit, the
//! parsed value is not freed before the exit either.
//!
//! `parse_floor --once FILE` is one such process; it prints the time from reading the file to
//! the parsed value, seen from inside.

use std::process::Command;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let first = args.next().ok_or("usage: parse_floor FILE [RUNS]")?;
    if first == "--once" {
        let path = args.next().ok_or("usage: parse_floor --once FILE")?;
        return once(&path);
    }
    let runs: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let me = std::env::current_exe()?;
    let (mut best, mut best_inside) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let out = Command::new(&me).arg("--once").arg(&first).output()?;
        let secs = start.elapsed().as_secs_f64();
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        let inside: f64 = String::from_utf8_lossy(&out.stdout).trim().parse()?;
        best = best.min(secs);
        best_inside = best_inside.min(inside);
    }
    println!("{best:.3}");
    eprintln!(
        "best of {runs} processes: {best:.3} s; reading and parsing inside them: {best_inside:.3} s"
    );
    Ok(())
}

/// Reads and parses the file once, prints the seconds it took, and leaves the value to the exit.
fn once(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let text = std::fs::read_to_string(path)?;
    let value: serde_json::Value = serde_json::from_str(&text)?;
    let secs = start.elapsed().as_secs_f64();
    println!("{secs:.3}");
    std::mem::forget(value);
    std::mem::forget(text);
    Ok(())
}
