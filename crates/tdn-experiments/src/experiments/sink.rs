//! The one seam between a session and the attribution ledger: every finished sample (answer,
//! error, or stopped by a cancel) goes to a [`SampleSink`] before it is shown
//! (docs/experiments.md, "Verdicts"). The run's ledger implements it (`run_ledger::RunLedger`);
//! [`MemorySink`] stands in for tests. Failures are typed ([`SinkError`]).
//!
//! A sink may hold a sample back while another process holds the ledger's lock ([`HoldBack`]);
//! the session says so and shows the sample once it is written. Also here: the [`Receipt`] of a
//! saved sample (the trials it formed, or why it formed none) and the UTC time stamp of a
//! finished sample. Nothing here prints.

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
    /// The time the runner took, in milliseconds (`None` when not measured).
    pub duration_ms: Option<u64>,
}

/// What saving one sample formed in the ledger, for people: shown next to the sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Receipt {
    /// The trials the sample completed, one line each (e.g. `causal_ablation trial for
    /// 'policy-2019', seed 0, effect -1`).
    pub trials: Vec<String>,
    /// The trials it could not form, each with the reason (the sample is kept all the same).
    pub refused: Vec<String>,
}

/// How [`SampleSink::append`] may wait for a ledger another process has locked: the sample is
/// held back (not shown) until it is written (attribution-ledger.md §7, "Concurrency").
pub struct HoldBack<'a> {
    /// Told once, with why, that the sample is being held back.
    pub on_wait: &'a (dyn Fn(&str) + Sync),
    /// Asked while waiting; true gives up, and the sample is then not saved.
    pub give_up: &'a (dyn Fn() -> bool + Sync),
}

/// Why a sample (or the closing of a batch) was not recorded. Shown next to the sample, which
/// then forms no trial.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SinkError {
    /// The write failed or was refused (a full disk, a ledger of another run...): the ledger's
    /// own message, which names the file and what to do.
    #[error("{message}")]
    Write {
        /// The ledger, when there is one.
        path: Option<PathBuf>,
        /// What went wrong.
        message: String,
    },
    /// Given up while another process held the ledger's lock (the job was cancelled).
    #[error(
        "given up while waiting for the ledger lock on '{}'; the sample was not written",
        path.display()
    )]
    GaveUp {
        /// The ledger.
        path: PathBuf,
    },
}

/// Where finished samples go. Called from a blocking thread (never the screen's task) once per
/// finished sample, before the sample is shown; returns only when the record is durable.
pub trait SampleSink: Send + Sync {
    /// The file the samples go to, when there is one.
    fn path(&self) -> Option<&Path>;
    /// Records one finished sample durably and says which trials it formed (or why none). With
    /// `hold`, a ledger locked by another process past the usual limit is waited for (said
    /// once through `hold.on_wait`) until the sample is written or `hold.give_up` says stop;
    /// without, the usual limit applies.
    fn append(
        &self,
        sample: &FinishedSample,
        hold: Option<&HoldBack<'_>>,
    ) -> Result<Receipt, SinkError>;
    /// Called once when the session ends with every sample run: the batch concludes.
    fn close_cohort(&self, cohort: &str) -> Result<(), SinkError>;
    /// Called once, instead of [`SampleSink::close_cohort`], when the session was cancelled
    /// before every sample ran: the batch is closed concluding nothing (its trials stay, marked
    /// cancelled; no attribution, now or later). `why` says what cancelled it.
    fn cancel_cohort(&self, cohort: &str, why: &str) -> Result<(), SinkError>;
}

/// Keeps samples in memory (tests), or refuses every append with a reason (to test "not saved").
#[derive(Debug, Default)]
pub struct MemorySink {
    samples: Mutex<Vec<FinishedSample>>,
    refuse: Option<String>,
    closed: Mutex<Vec<String>>,
    cancelled: Mutex<Vec<String>>,
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

    /// The cohorts closed as cancelled, in order.
    pub fn cancelled(&self) -> Vec<String> {
        self.cancelled.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl SampleSink for MemorySink {
    fn path(&self) -> Option<&Path> {
        None
    }

    fn append(
        &self,
        sample: &FinishedSample,
        _hold: Option<&HoldBack<'_>>,
    ) -> Result<Receipt, SinkError> {
        let refused = |message: String| SinkError::Write {
            path: None,
            message,
        };
        if let Some(r) = &self.refuse {
            return Err(refused(r.clone()));
        }
        self.samples
            .lock()
            .map_err(|_| refused("the sample list is poisoned".to_owned()))?
            .push(sample.clone());
        Ok(Receipt::default())
    }

    fn close_cohort(&self, cohort: &str) -> Result<(), SinkError> {
        if let Ok(mut v) = self.closed.lock() {
            v.push(cohort.to_owned());
        }
        Ok(())
    }

    fn cancel_cohort(&self, cohort: &str, _why: &str) -> Result<(), SinkError> {
        if let Ok(mut v) = self.cancelled.lock() {
            v.push(cohort.to_owned());
        }
        Ok(())
    }
}

/// Now, UTC, whole seconds: `YYYY-MM-DDTHH:MM:SSZ` (string order is time order), as the ledger
/// writes `finished_at`.
pub fn utc_now() -> String {
    crate::experiments::ledger::naming::timestamp(time::OffsetDateTime::now_utc())
}

/// For the ledger's tests: the run `r1` (failed, answering "the recorded answer") with the
/// context units `u1` and `u2`, both available to its one model step, which was sent `sent`.
#[cfg(test)]
pub(crate) fn two_unit_run(sent: &[&str]) -> crate::analysis::model::Run {
    use crate::analysis::load::{LoadOptions, load_str};
    let run = serde_json::json!({"format": "tdn.run/1", "id": "r1", "status": "failed",
        "final_answer": "the recorded answer",
        "context_units": [{"id": "u1", "kind": "document", "text": "one"},
                          {"id": "u2", "kind": "memory", "text": "two"}],
        "steps": [{"id": "s1", "kind": "llm", "output": "x",
                   "context": {"available": ["u1", "u2"], "sent": sent}}]});
    load_str(
        &run.to_string(),
        Path::new("r1.json"),
        &LoadOptions::default(),
    )
    .expect("the test run loads")
    .remove(0)
    .run
}

/// For the ledger's tests: an answered sample of the run `r1` (command `./agent`), `kind` with
/// `remove` left out, at `seed` (also its sample number), its answer flipped or not.
#[cfg(test)]
pub(crate) fn answered_sample(
    cohort: &str,
    kind: crate::experiments::spec::ExperimentKind,
    remove: &[&str],
    seed: u64,
    flipped: bool,
) -> FinishedSample {
    FinishedSample {
        cohort: cohort.to_owned(),
        evaluator_epoch: "exact|tdn-tui/test".to_owned(),
        run_id: "r1".to_owned(),
        run_status: RunStatus::Failed,
        runner_command: "./agent".to_owned(),
        spec: ExperimentSpec {
            run: "/r1.json".to_owned(),
            run_id: "r1".to_owned(),
            experiment: kind,
            remove: remove.iter().map(|s| s.to_string()).collect(),
            restore: vec![],
            from_step: None,
            patch: None,
            seed,
            sample: seed,
            source: None,
        },
        finished_at: "2026-08-17T10:00:00Z".to_owned(),
        outcome: SampleRecordOutcome::Answered {
            output: "x".to_owned(),
            flipped,
            similarity: None,
        },
        cost: None,
        duration_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_have_the_ledger_shape() {
        let t = utc_now();
        assert!(crate::experiments::ledger::naming::is_timestamp(&t), "{t}");
    }

    #[test]
    fn a_sink_without_trials_gives_an_empty_receipt_and_a_refusing_one_the_reason() {
        let keep = MemorySink::new();
        let s = FinishedSample {
            cohort: "b-1".to_owned(),
            evaluator_epoch: "exact|tdn-tui/0".to_owned(),
            run_id: "r".to_owned(),
            run_status: RunStatus::Failed,
            runner_command: "true".to_owned(),
            spec: ExperimentSpec {
                run: "/r.json".to_owned(),
                run_id: "r".to_owned(),
                experiment: crate::experiments::spec::ExperimentKind::Baseline,
                remove: vec![],
                restore: vec![],
                from_step: None,
                patch: None,
                seed: 0,
                sample: 0,
                source: None,
            },
            finished_at: utc_now(),
            outcome: SampleRecordOutcome::Answered {
                output: "x".to_owned(),
                flipped: false,
                similarity: None,
            },
            cost: None,
            duration_ms: None,
        };
        assert_eq!(keep.append(&s, None), Ok(Receipt::default()));
        assert_eq!(keep.samples().len(), 1);
        let full = MemorySink::refusing("disk full");
        assert_eq!(
            full.append(&s, None).map_err(|e| e.to_string()),
            Err("disk full".to_owned())
        );
    }
}
