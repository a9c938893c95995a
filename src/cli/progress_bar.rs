//! The progress bar `analyze` draws on stderr while a big run loads and is analysed (issue 11):
//! one line, redrawn ten times a second from the counters of `analysis::progress`, shown only
//! when stderr is a terminal and only once the work has taken more than a moment, and wiped
//! before anything is printed.

use crate::analysis::progress::{Progress, Snapshot, Stage};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(100);
/// Work shorter than this shows no bar.
const QUIET_FOR: Duration = Duration::from_millis(150);
/// Cells of the bar itself.
const BAR_CELLS: usize = 24;

/// A bar being drawn (or nothing, when stderr is not a terminal).
pub struct Bar {
    stop: Arc<AtomicBool>,
    drawer: Option<JoinHandle<()>>,
}

impl Bar {
    /// Starts drawing `progress` on stderr, when stderr is a terminal.
    pub fn start(progress: Arc<Progress>) -> Bar {
        let stop = Arc::new(AtomicBool::new(false));
        let drawer = std::io::stderr().is_terminal().then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || draw_until(&progress, &stop))
        });
        Bar { stop, drawer }
    }

    /// Stops drawing and wipes the line.
    pub fn finish(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(d) = self.drawer.take() {
            // Woken from its wait rather than joined after it: the report is not held back by
            // up to one redraw interval.
            d.thread().unpark();
            let _ = d.join();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn draw_until(progress: &Progress, stop: &AtomicBool) {
    let started = Instant::now();
    let mut drawn = false;
    while !stop.load(Ordering::Acquire) {
        // Parked, so that `stop_now` can wake it at once; a spurious wake only redraws early.
        std::thread::park_timeout(REDRAW);
        if started.elapsed() < QUIET_FOR || stop.load(Ordering::Acquire) {
            continue;
        }
        let width = crossterm::terminal::size().map_or(80, |(w, _)| usize::from(w));
        let line = line(
            &progress.snapshot(),
            started.elapsed(),
            width.saturating_sub(1),
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
        drawn = true;
    }
    if drawn {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// The line for a snapshot: stage, bar (when the total is known), counts, influence, time; cut
/// to `width` characters.
pub fn line(s: &Snapshot, elapsed: Duration, width: usize) -> String {
    let mut out = format!("{:<18}", s.stage.label());
    if let Some(bar) = s.bar(BAR_CELLS) {
        out.push_str(&format!(
            " {bar} {}/{}",
            thousands(s.done.min(s.total)),
            thousands(s.total)
        ));
    } else if s.done > 0 {
        out.push_str(&format!(" {} {}", thousands(s.done), s.stage.unit()));
    }
    if s.influence_total > 0 && s.stage != Stage::Done {
        out.push_str(&format!(
            "  ranking context {}/{}",
            thousands(s.influence_done.min(s.influence_total)),
            thousands(s.influence_total)
        ));
    }
    out.push_str(&format!("  {:.1}s", elapsed.as_secs_f64()));
    out.chars().take(width).collect()
}

fn thousands(n: u64) -> String {
    crate::analysis::count::group(usize::try_from(n).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(stage: Stage, done: u64, total: u64, inf: (u64, u64)) -> Snapshot {
        Snapshot {
            stage,
            done,
            total,
            influence_done: inf.0,
            influence_total: inf.1,
        }
    }

    #[test]
    fn the_line_shows_stage_bar_counts_and_time() {
        let l = line(
            &snap(Stage::Linking, 50_000, 100_000, (1_024, 40_000)),
            Duration::from_millis(2_340),
            200,
        );
        assert_eq!(
            l,
            "linking steps      [############------------] 50,000/100,000  ranking context 1,024/40,000  2.3s"
        );
        let l = line(
            &snap(Stage::Loading, 12_345, 0, (0, 0)),
            Duration::ZERO,
            200,
        );
        assert_eq!(l, "loading steps      12,345 steps  0.0s");
        assert_eq!(
            line(&snap(Stage::Loading, 1, 0, (0, 0)), Duration::ZERO, 10)
                .chars()
                .count(),
            10
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
    }
}
