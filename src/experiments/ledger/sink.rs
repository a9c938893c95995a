//! The ledger behind the session's [`SampleSink`] seam: each finished sample is appended (with the
//! trials it completes) and fsynced before `append` returns; `close_cohort` aggregates the batch.
//! Blocking: the session calls it from `spawn_blocking`.

use super::LedgerError;
use super::naming::Location;
use super::record::{Cost, Policy};
use super::session::{Appended, Closed, NewSample, SampleOutcome};
use super::store::Ledger;
use crate::analysis::model::Run;
use crate::experiments::sink::{FinishedSample, SampleRecordOutcome, SampleSink};
use std::path::Path;
use std::sync::Mutex;
use time::OffsetDateTime;
use time::macros::format_description;

/// A ledger open for one run's session.
#[derive(Debug)]
pub struct LedgerSink {
    ledger: Ledger,
    run: Run,
    policy: Policy,
    /// What each append and close wrote, in order (the screen shows refusals next to samples).
    log: Mutex<Vec<Written>>,
}

/// What one call wrote.
#[derive(Clone, Debug, PartialEq)]
pub enum Written {
    /// A sample and the trials it completed (or why it formed none).
    Sample(Appended),
    /// A cohort's attributions.
    Cohort(Closed),
}

impl LedgerSink {
    /// Opens (creating when absent) the ledger at `location` for samples of `run`, aggregating
    /// under `policy` (`[ledger] neutral_effect` and `high_token_cost`).
    pub fn open(location: &Location, run: &Run, policy: Policy) -> Result<LedgerSink, LedgerError> {
        Ok(LedgerSink {
            ledger: Ledger::open(&location.path, location.scope, &location.name)?,
            run: run.clone(),
            policy,
            log: Mutex::new(Vec::new()),
        })
    }

    /// The ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Everything written so far, in order.
    pub fn written(&self) -> Vec<Written> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn note(&self, w: Written) {
        if let Ok(mut l) = self.log.lock() {
            l.push(w);
        }
    }
}

fn finished_at(s: &str) -> OffsetDateTime {
    let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::PrimitiveDateTime::parse(s, &fmt)
        .map(|t| t.assume_utc())
        .unwrap_or_else(|_| OffsetDateTime::now_utc())
}

impl SampleSink for LedgerSink {
    fn path(&self) -> Option<&Path> {
        Some(self.ledger.path())
    }

    fn append(&self, s: &FinishedSample) -> Result<(), String> {
        let outcome = match &s.outcome {
            SampleRecordOutcome::Answered {
                output, flipped, ..
            } => Ok(SampleOutcome {
                output,
                reproduced: !flipped,
            }),
            SampleRecordOutcome::Errored { message, .. } => Err(message.clone()),
        };
        let appended = self
            .ledger
            .append_sample(&NewSample {
                cohort: &s.cohort,
                evaluator_epoch: &s.evaluator_epoch,
                run: &self.run,
                runner_command: &s.runner_command,
                spec: &s.spec,
                finished_at: finished_at(&s.finished_at),
                outcome,
                cost: s.cost.map(|c| Cost {
                    loops: c.loops,
                    tokens: c.tokens,
                }),
            })
            .map_err(|e| e.to_string())?;
        self.note(Written::Sample(appended));
        Ok(())
    }

    fn close_cohort(&self, cohort: &str) -> Result<(), String> {
        let closed = self
            .ledger
            .close_cohort(cohort, &self.policy)
            .map_err(|e| e.to_string())?;
        self.note(Written::Cohort(closed));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::record::Scope;
    use crate::experiments::ledger::testutil::{EPOCH, run};
    use crate::experiments::ledger::verify_path;
    use crate::experiments::spec::{ExperimentKind, ExperimentSpec};

    fn finished(kind: ExperimentKind, remove: &[&str], seed: u64, flipped: bool) -> FinishedSample {
        FinishedSample {
            cohort: "b-1".to_owned(),
            evaluator_epoch: EPOCH.to_owned(),
            run_id: "cal-1".to_owned(),
            run_status: crate::analysis::model::RunStatus::Failed,
            runner_command: "./agent".to_owned(),
            spec: ExperimentSpec {
                run: "/runs/cal-1.json".to_owned(),
                run_id: "cal-1".to_owned(),
                experiment: kind,
                remove: remove.iter().map(|s| s.to_string()).collect(),
                restore: vec![],
                from_step: None,
                patch: None,
                seed,
                sample: seed,
            },
            finished_at: "2026-08-17T10:00:00Z".to_owned(),
            outcome: SampleRecordOutcome::Answered {
                output: "x".to_owned(),
                flipped,
                similarity: None,
            },
            cost: None,
        }
    }

    #[test]
    fn a_session_through_the_sink_leaves_a_verified_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location {
            path: dir.path().join("cal-1.ledger.jsonl"),
            scope: Scope::Run,
            name: "cal-1".to_owned(),
        };
        let sink = LedgerSink::open(&loc, &run(), Policy::default()).unwrap();
        assert_eq!(sink.path(), Some(loc.path.as_path()));
        sink.append(&finished(ExperimentKind::Baseline, &[], 0, false))
            .unwrap();
        sink.append(&finished(ExperimentKind::Ablate, &["doc-a"], 0, true))
            .unwrap();
        sink.close_cohort("b-1").unwrap();
        let w = sink.written();
        let Written::Sample(a) = &w[1] else {
            panic!("{w:?}")
        };
        assert_eq!(a.trials.len(), 1);
        assert_eq!(
            a.trials[0].effect, -1.0,
            "a flip departs from the recorded failure"
        );
        let Written::Cohort(c) = &w[2] else {
            panic!("{w:?}")
        };
        assert_eq!(c.attributions[0].disposition.as_str(), "harmful");
        let checked = verify_path(&loc.path).unwrap();
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    }
}
