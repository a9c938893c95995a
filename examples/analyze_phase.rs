//! A whole `analyze --json` on its own, built with the system allocator (no `main.rs`), so a heap
//! profiler such as heaptrack sees every allocation of loading and of the analysis: loads the
//! run file, analyses each run with the hashed embedder and rules only, writes the JSON report
//! to a sink, and prints the times, the heap's peak while loading, the heap the loaded runs
//! hold, the heap's peak from there to the end (the analysis's, the runs included; the
//! allocator's own bookkeeping not counted), and the process's peak resident memory.
//!
//! `cargo run --release --example analyze_phase -- FILE`

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tdn_tui::analysis::influence::HashedEmbedder;
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::progress::Progress;
use tdn_tui::analysis::report::{AnalyzeOptions, analyze_with_progress, write_json};

/// The system allocator, counting the bytes held and the most held since the last restart.
struct Counting {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Counting {
    fn now(&self) -> usize {
        self.now.load(Ordering::Relaxed)
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    fn restart_peak(&self) {
        self.peak.store(self.now(), Ordering::Relaxed);
    }

    fn add(&self, n: usize) {
        let now = self.now.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to the system allocator as it came; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised.
        unsafe { System.dealloc(ptr, layout) };
        self.now.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller promised.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.now.fetch_sub(layout.size(), Ordering::Relaxed);
            self.add(new_size);
        }
        p
    }
}

#[global_allocator]
static HEAP: Counting = Counting {
    now: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
};

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: analyze_phase FILE")?;
    let start = Instant::now();
    let runs = load_path(Path::new(&path), &LoadOptions::default())?;
    let loaded_at = start.elapsed().as_secs_f64();
    let load_peak = status("VmHWM:");
    let (load_heap_peak, run_heap) = (HEAP.peak(), HEAP.now());
    HEAP.restart_peak();
    let opts = AnalyzeOptions::new(&HashedEmbedder);
    let mut bytes = 0usize;
    for loaded in &runs {
        let report = analyze_with_progress(loaded, &opts, &Progress::new());
        let mut out = Counted(0);
        write_json(&report, &mut out)?;
        bytes += out.0;
    }
    println!(
        "loaded in {loaded_at:.3} s (heap peak {:.1} MB, resident peak {load_peak}), the run {:.1} MB of heap; analysed in {:.3} s (heap peak {:.1} MB); resident peak {}; {bytes} bytes of JSON",
        mb(load_heap_peak),
        mb(run_heap),
        start.elapsed().as_secs_f64(),
        mb(HEAP.peak()),
        status("VmHWM:")
    );
    std::mem::forget(runs);
    Ok(())
}

/// A line of `/proc/self/status` (`VmHWM:`, `VmRSS:`), as written there.
fn status(key: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.trim_start_matches(key).trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A writer that only counts the bytes it is given.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
