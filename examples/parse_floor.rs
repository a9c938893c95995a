//! The parse floor of docs/performance.md: how long reading a file and parsing it into one
//! `serde_json::Value` takes, with the same serde_json features the loader uses. `analyze`'s time
//! on the same file is compared with this.
//!
//! `cargo run --release --example parse_floor -- FILE [REPEATS]` prints the best of REPEATS
//! (default 5) in seconds.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: parse_floor FILE [REPEATS]")?;
    let repeats: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        let text = std::fs::read_to_string(&path)?;
        let value: serde_json::Value = serde_json::from_str(&text)?;
        let secs = start.elapsed().as_secs_f64();
        std::hint::black_box(&value);
        drop(value);
        best = best.min(secs);
    }
    println!("{best:.3}");
    Ok(())
}
