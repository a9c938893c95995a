//! The one seam between a session and the attribution ledger: every finished sample (answer or
//! error) goes to a [`SampleSink`] before it is shown (docs/experiments.md, "Verdicts"). The
//! ledger implements it; [`NoLedger`] and [`MemorySink`] stand in where no ledger is kept (tests,
//! the screen before a ledger is chosen).
//!
//! Also here: the pieces of a sample record the ledger needs and the session knows (cohort id,
//! evaluator epoch, the UTC time stamp, the ledger's default place). Nothing here prints.

use crate::analysis::model::RunStatus;
use crate::experiments::runner::{Cost, SampleErrorKind};
use crate::experiments::spec::ExperimentSpec;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a finished sample produced, as the ledger records it.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleRecordOutcome {
    /// An answer, with the flip test's decision (`reproduced` = not flipped).
    Answered {
        /// The answer text (the ledger stores its SHA-256, not the text).
        output: String,
        /// The flip test said the outcome changed.
        flipped: bool,
        /// Similarity to the recorded answer, when measured.
        similarity: Option<f64>,
    },
    /// No answer.
    Errored {
        /// Why, by kind.
        kind: SampleErrorKind,
        /// One line for people.
        message: String,
    },
}

/// One finished runner call with everything the ledger binds to it.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedSample {
    /// The batch: one `experiment` or `localize` command, or one sweep from the screen.
    pub cohort: String,
    /// `<comparator>|tdn-tui/<version>`.
    pub evaluator_epoch: String,
    /// The run's id.
    pub run_id: String,
    /// The run's status (decides the ledger's score rule).
    pub run_status: RunStatus,
    /// The exact runner command after config resolution.
    pub runner_command: String,
    /// The experiment exactly as sent to the command.
    pub spec: ExperimentSpec,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub finished_at: String,
    /// Answer or error.
    pub outcome: SampleRecordOutcome,
    /// What it cost, as reported (`None` for an errored sample).
    pub cost: Option<Cost>,
}

/// Where finished samples go. `append` is called from a blocking thread (never the screen's
/// task) once per finished sample, before the sample is shown; it returns only when the record is
/// durable. An `Err` marks the sample "not saved" with that reason.
pub trait SampleSink: Send + Sync {
    /// The file the samples go to, when there is one.
    fn path(&self) -> Option<&Path>;
    /// Records one finished sample durably.
    fn append(&self, sample: &FinishedSample) -> Result<(), String>;
    /// Called once when the session ends (finished or cancelled).
    fn close_cohort(&self, cohort: &str) -> Result<(), String>;
}

/// Keeps nothing and says so: [`SampleSink::path`] is `None`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoLedger;

impl SampleSink for NoLedger {
    fn path(&self) -> Option<&Path> {
        None
    }

    fn append(&self, _sample: &FinishedSample) -> Result<(), String> {
        Ok(())
    }

    fn close_cohort(&self, _cohort: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Keeps samples in memory (tests), or refuses every append with a reason (to test "not saved").
#[derive(Debug, Default)]
pub struct MemorySink {
    samples: Mutex<Vec<FinishedSample>>,
    refuse: Option<String>,
    closed: Mutex<Vec<String>>,
}

impl MemorySink {
    /// A sink that keeps everything.
    pub fn new() -> Self {
        MemorySink::default()
    }

    /// A sink whose every append fails with `reason`.
    pub fn refusing(reason: impl Into<String>) -> Self {
        MemorySink {
            refuse: Some(reason.into()),
            ..MemorySink::default()
        }
    }

    /// The samples appended so far, in order.
    pub fn samples(&self) -> Vec<FinishedSample> {
        self.samples.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// The cohorts closed so far.
    pub fn closed(&self) -> Vec<String> {
        self.closed.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl SampleSink for MemorySink {
    fn path(&self) -> Option<&Path> {
        None
    }

    fn append(&self, sample: &FinishedSample) -> Result<(), String> {
        if let Some(r) = &self.refuse {
            return Err(r.clone());
        }
        self.samples
            .lock()
            .map_err(|_| "the sample list is poisoned".to_owned())?
            .push(sample.clone());
        Ok(())
    }

    fn close_cohort(&self, cohort: &str) -> Result<(), String> {
        if let Ok(mut v) = self.closed.lock() {
            v.push(cohort.to_owned());
        }
        Ok(())
    }
}

/// The ledger's default place: beside the run, a trailing `.json` replaced by `.ledger.jsonl`
/// (appended when the name has no `.json`).
pub fn default_ledger_path(run: &Path) -> PathBuf {
    let name = run
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".to_owned());
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    run.with_file_name(format!("{stem}.ledger.jsonl"))
}

/// `<comparator>|tdn-tui/<version>`.
pub fn evaluator_epoch(comparator: &str) -> String {
    format!("{comparator}|tdn-tui/{}", env!("CARGO_PKG_VERSION"))
}

/// Now, UTC, whole seconds: `YYYY-MM-DDTHH:MM:SSZ` (string order is time order).
pub fn utc_now() -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// A new cohort id: `b-` + UTC start `YYYYMMDDTHHMMSSZ` + `-` + 8 random hex.
pub fn new_cohort_id() -> String {
    let fmt = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let start = time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_else(|_| "19700101T000000Z".to_owned());
    let mut bytes = [0u8; 4];
    // Without randomness the id is still unique per second and process; good enough to group.
    if getrandom::fill(&mut bytes).is_err() {
        bytes = std::process::id().to_be_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("b-{start}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ledger_sits_beside_the_run() {
        assert_eq!(
            default_ledger_path(Path::new("runs/refund-01.json")),
            PathBuf::from("runs/refund-01.ledger.jsonl")
        );
        assert_eq!(
            default_ledger_path(Path::new("trace.otlp")),
            PathBuf::from("trace.otlp.ledger.jsonl")
        );
    }

    #[test]
    fn ids_and_times_have_the_ledger_shapes() {
        let c = new_cohort_id();
        assert_eq!(c.len(), 2 + 16 + 1 + 8, "{c}");
        assert!(c.starts_with("b-2") && c.as_bytes()[10] == b'T', "{c}");
        let t = utc_now();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z'));
        assert!(evaluator_epoch("exact").starts_with("exact|tdn-tui/"));
    }
}
