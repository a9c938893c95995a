//! How far a load and an analysis have come, as counters that another thread reads while the
//! work goes on (issue 11: a 100,000-step run must show progress, on the screen and on a
//! terminal's stderr). The analysis only stores numbers here; whoever shows them polls
//! [`Progress::snapshot`]. No I/O, no terminal, no waiting.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// What the work is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reading the file (bytes).
    Reading,
    /// Parsing and checking the steps (steps).
    Loading,
    /// Finding the links between steps (steps), while the final answer's claims are checked.
    Linking,
    /// Running the detectors and ranking the suspects.
    Detecting,
    /// Writing the report.
    Report,
    /// Finished.
    Done,
}

impl Stage {
    const ALL: [Stage; 6] = [
        Stage::Reading,
        Stage::Loading,
        Stage::Linking,
        Stage::Detecting,
        Stage::Report,
        Stage::Done,
    ];

    /// What the stage does, in words.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Reading => "reading the file",
            Stage::Loading => "loading steps",
            Stage::Linking => "linking steps",
            Stage::Detecting => "running detectors",
            Stage::Report => "writing the report",
            Stage::Done => "done",
        }
    }

    /// What the stage counts: bytes while reading the file, steps after.
    pub fn unit(self) -> &'static str {
        if self == Stage::Reading {
            "bytes"
        } else {
            "steps"
        }
    }

    fn code(self) -> u8 {
        Stage::ALL
            .iter()
            .position(|s| *s == self)
            .and_then(|i| u8::try_from(i).ok())
            .unwrap_or(0)
    }

    fn from_code(c: u8) -> Stage {
        Stage::ALL
            .get(usize::from(c))
            .copied()
            .unwrap_or(Stage::Done)
    }
}

/// Counters of one load and analysis. Shared by reference; every method takes `&self`.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
    influence_done: AtomicU64,
    influence_total: AtomicU64,
}

/// What [`Progress::snapshot`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The current stage.
    pub stage: Stage,
    /// Units of the stage done (bytes or steps).
    pub done: u64,
    /// Units of the stage in all (0: not known).
    pub total: u64,
    /// Pieces of context ranked by influence so far (it runs beside the other stages).
    pub influence_done: u64,
    /// Pieces of context to rank (0: none, or not started).
    pub influence_total: u64,
}

impl Snapshot {
    /// How far the stage has come as a bar of `cells` cells in brackets, `#` for done and `-` for
    /// to go (the count capped at the total); `None` while the stage's total is not known.
    pub fn bar(&self, cells: usize) -> Option<String> {
        if self.total == 0 {
            return None;
        }
        let done = self.done.min(self.total);
        let filled = usize::try_from(done.saturating_mul(cells as u64) / self.total).unwrap_or(0);
        Some(format!(
            "[{}{}]",
            "#".repeat(filled),
            "-".repeat(cells.saturating_sub(filled))
        ))
    }
}

impl Progress {
    /// Fresh counters, at [`Stage::Reading`].
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Enters a stage with `total` units to do.
    pub fn stage(&self, stage: Stage, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.stage.store(stage.code(), Ordering::Release);
    }

    /// Sets how many units of the stage are done.
    pub fn done(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
    }

    /// Adds to the units of the stage done.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets how many pieces of context the influence ranking has in all.
    pub fn influence_total(&self, total: u64) {
        self.influence_total.store(total, Ordering::Relaxed);
    }

    /// Adds to the pieces of context ranked.
    pub fn influence_add(&self, n: u64) {
        self.influence_done.fetch_add(n, Ordering::Relaxed);
    }

    /// The counters as they are now (each read on its own; a reader may see a stage with the
    /// previous stage's count for a moment).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            stage: Stage::from_code(self.stage.load(Ordering::Acquire)),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
            influence_done: self.influence_done.load(Ordering::Relaxed),
            influence_total: self.influence_total.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(stage: Stage, done: u64, total: u64) -> Snapshot {
        Snapshot {
            stage,
            done,
            total,
            influence_done: 0,
            influence_total: 0,
        }
    }

    #[test]
    fn the_bar_fills_in_proportion_and_never_past_its_cells() {
        assert_eq!(
            snap(Stage::Linking, 5, 10).bar(4).as_deref(),
            Some("[##--]")
        );
        // 1 of 3 on 10 cells: 3.33 cells, rounded down.
        assert_eq!(
            snap(Stage::Linking, 1, 3).bar(10).as_deref(),
            Some("[###-------]")
        );
        // A count past its total (the stage moved on between two reads) fills the bar, no more.
        assert_eq!(
            snap(Stage::Detecting, 9, 2).bar(3).as_deref(),
            Some("[###]")
        );
        assert_eq!(snap(Stage::Loading, 7, 0).bar(3), None);
        assert_eq!(Stage::Reading.unit(), "bytes");
        assert_eq!(Stage::Loading.unit(), "steps");
    }

    #[test]
    fn stages_and_counts_read_back() {
        let p = Progress::new();
        assert_eq!(p.snapshot().stage, Stage::Reading);
        p.stage(Stage::Linking, 100);
        p.add(30);
        p.add(12);
        p.influence_total(9);
        p.influence_add(4);
        let s = p.snapshot();
        assert_eq!(
            (
                s.stage,
                s.done,
                s.total,
                s.influence_done,
                s.influence_total
            ),
            (Stage::Linking, 42, 100, 4, 9)
        );
        p.stage(Stage::Done, 0);
        assert_eq!((p.snapshot().stage, p.snapshot().done), (Stage::Done, 0));
        for s in Stage::ALL {
            assert_eq!(Stage::from_code(s.code()), s);
        }
    }
}
