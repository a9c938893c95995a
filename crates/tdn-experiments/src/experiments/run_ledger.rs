//! The run's attribution ledger behind the session's `SampleSink` seam (runner.md "Verdicts",
//! attribution-ledger.md §4-5): each finished sample is appended and fsynced, with the trials it
//! completes, before the session shows it; its [`Receipt`] says which trials it formed or why it
//! formed none; closing the batch appends its attributions. When another process holds the
//! ledger's lock past the 10 s limit, a sample is held back and waits until it is written
//! (attribution-ledger.md §7, "Concurrency"). Blocking file I/O: the session calls it from
//! `spawn_blocking`. Prints nothing.

use crate::analysis::model::{Run, inert_line};
use crate::experiments::ledger::file::LOCK_WAIT;
use crate::experiments::ledger::store::LockWait;
use crate::experiments::ledger::{
    Appended, Cancelled, Closed, Cost, Ledger, LedgerError, Location, NewSample, Policy,
    SampleOutcome, Scope,
};
use crate::experiments::sink::{
    FinishedSample, HoldBack, Receipt, SampleRecordOutcome, SampleSink, SinkError,
};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use time::OffsetDateTime;
use time::macros::format_description;

/// A ledger open for one session's samples of one run.
#[derive(Debug)]
pub struct RunLedger {
    ledger: Ledger,
    run: Run,
    policy: Policy,
    closed: Mutex<Option<Closed>>,
    cancelled: Mutex<Option<Cancelled>>,
    /// How long an append waits for the lock before it says the sample is held back.
    patience: Duration,
}

/// Why a ledger cannot take a run's samples.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file cannot be opened, created or read as a ledger.
    #[error("cannot open the attribution ledger: {0}")]
    Ledger(#[from] LedgerError),
    /// A run ledger of another run.
    #[error("{path}: this ledger holds the evidence of run '{name}', not of run '{run_id}'")]
    OtherRun {
        /// The ledger.
        path: String,
        /// The run it holds.
        name: String,
        /// The run offered.
        run_id: String,
    },
}

impl RunLedger {
    /// Opens (creating when absent) the ledger at `location` for samples of `run`, aggregating
    /// under `policy`.
    pub fn open(location: &Location, run: &Run, policy: Policy) -> Result<RunLedger, OpenError> {
        let ledger = Ledger::open(&location.path, location.scope, &location.name)?;
        if let Some(h) = ledger.header()
            && h.scope == Scope::Run
            && h.name != run.id
        {
            return Err(OpenError::OtherRun {
                path: location.path.display().to_string(),
                name: inert_line(&h.name).into_owned(),
                run_id: inert_line(&run.id).into_owned(),
            });
        }
        Ok(RunLedger {
            ledger,
            run: run.clone(),
            policy,
            closed: Mutex::new(None),
            cancelled: Mutex::new(None),
            patience: LOCK_WAIT,
        })
    }

    /// How long an append waits for the lock before it says the sample is held back (10 s
    /// unless changed; tests shorten it).
    pub fn with_lock_patience(mut self, patience: Duration) -> RunLedger {
        self.patience = patience;
        self
    }

    /// The ledger's file.
    pub fn path_buf(&self) -> std::path::PathBuf {
        self.ledger.path().to_path_buf()
    }

    /// What closing a cancelled batch appended, once it has closed.
    pub fn cancelled(&self) -> Option<Cancelled> {
        self.cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What closing the batch appended, once it has closed.
    pub fn closed(&self) -> Option<Closed> {
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn finished_at(s: &str) -> OffsetDateTime {
    let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::PrimitiveDateTime::parse(s, &fmt)
        .map(|t| t.assume_utc())
        .unwrap_or_else(|_| OffsetDateTime::now_utc())
}

impl SampleSink for RunLedger {
    fn path(&self) -> Option<&Path> {
        Some(self.ledger.path())
    }

    fn append(
        &self,
        s: &FinishedSample,
        hold: Option<&HoldBack<'_>>,
    ) -> Result<Receipt, SinkError> {
        let wait = hold.map(|h| LockWait {
            patience: self.patience,
            on_wait: h.on_wait,
            give_up: h.give_up,
        });
        self.save(s, wait.as_ref()).map_err(|e| {
            if hold.is_some_and(|h| (h.give_up)()) {
                SinkError::GaveUp {
                    path: self.ledger.path().to_path_buf(),
                }
            } else {
                SinkError::Write {
                    path: Some(self.ledger.path().to_path_buf()),
                    message: e.to_string(),
                }
            }
        })
    }

    fn close_cohort(&self, cohort: &str) -> Result<(), SinkError> {
        let closed = self
            .ledger
            .close_cohort(cohort, &self.policy)
            .map_err(|e| SinkError::Write {
                path: Some(self.ledger.path().to_path_buf()),
                message: e.to_string(),
            })?;
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = Some(closed);
        Ok(())
    }

    fn cancel_cohort(&self, cohort: &str, why: &str) -> Result<(), SinkError> {
        let cancelled = self
            .ledger
            .cancel_cohort(cohort, why)
            .map_err(|e| SinkError::Write {
                path: Some(self.ledger.path().to_path_buf()),
                message: e.to_string(),
            })?;
        *self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(cancelled);
        Ok(())
    }
}

impl RunLedger {
    /// Appends one sample, waiting for the lock as `wait` says (or the usual 10 s).
    fn save(
        &self,
        s: &FinishedSample,
        wait: Option<&LockWait<'_>>,
    ) -> Result<Receipt, LedgerError> {
        let outcome = match &s.outcome {
            SampleRecordOutcome::Answered {
                output, flipped, ..
            } => Ok(SampleOutcome {
                output,
                reproduced: !flipped,
            }),
            SampleRecordOutcome::Errored { message, .. } => Err(message.clone()),
        };
        let sample = NewSample {
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
                usd: c.usd,
            }),
            duration_ms: s.duration_ms,
        };
        let appended = match wait {
            Some(w) => self.ledger.append_sample_waiting(&sample, w),
            None => self.ledger.append_sample(&sample),
        }?;
        Ok(receipt(&appended))
    }
}

/// What an append formed, for people.
fn receipt(a: &Appended) -> Receipt {
    Receipt {
        trials: a
            .trials
            .iter()
            .map(|t| {
                format!(
                    "formed a {} trial ({}) for '{}' (seed {}, effect {})",
                    t.evidence_level.as_str(),
                    t.evidence_level.meaning(),
                    inert_line(&t.component_id),
                    t.seed,
                    crate::analysis::js_number::js_number(t.effect)
                )
            })
            .collect(),
        refused: a
            .refused
            .iter()
            .map(|r| match &r.component_id {
                Some(id) => format!("no trial for '{}': {}", inert_line(id), r.message),
                None => format!("no trial: {}", r.message),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::verify_path;
    use crate::experiments::sink::{answered_sample, two_unit_run};
    use crate::experiments::spec::ExperimentKind;

    fn run() -> Run {
        two_unit_run(&["u1"])
    }

    fn sample(kind: ExperimentKind, remove: &[&str], flipped: bool) -> FinishedSample {
        answered_sample("b-1", kind, remove, 0, flipped)
    }

    fn location(dir: &Path) -> Location {
        Location {
            path: dir.join("r1.ledger.jsonl"),
            scope: Scope::Run,
            name: "r1".to_owned(),
        }
    }

    #[test]
    fn receipts_name_the_trial_a_sample_formed_or_why_it_formed_none() {
        let dir = tempfile::tempdir().unwrap();
        let l = RunLedger::open(&location(dir.path()), &run(), Policy::default()).unwrap();
        let base = l
            .append(&sample(ExperimentKind::Baseline, &[], false), None)
            .unwrap();
        assert_eq!(base, Receipt::default(), "nothing to pair with yet");
        let r = l
            .append(&sample(ExperimentKind::Ablate, &["u1"], true), None)
            .unwrap();
        assert_eq!(
            r.trials,
            [
                "formed a causal_ablation trial (isolated: each pair of re-runs differed in this unit only) for 'u1' (seed 0, effect -1)"
            ]
        );
        // 'u2' was never sent: removing it changes no bundle, so the ledger admits no trial.
        let r = l
            .append(&sample(ExperimentKind::Ablate, &["u2"], false), None)
            .unwrap();
        assert!(r.trials.is_empty());
        assert!(
            r.refused.len() == 1 && r.refused[0].starts_with("no trial for 'u2': "),
            "{r:?}"
        );
        l.close_cohort("b-1").unwrap();
        let closed = l.closed().unwrap();
        assert_eq!(closed.attributions.len(), 1);
        assert_eq!(closed.attributions[0].disposition.as_str(), "harmful");
        assert!(
            verify_path(&location(dir.path()).path)
                .unwrap()
                .problems
                .is_empty()
        );
    }

    #[test]
    fn an_append_that_fails_says_why_and_another_runs_ledger_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let l = RunLedger::open(&location(&sub), &run(), Policy::default()).unwrap();
        std::fs::remove_dir_all(&sub).unwrap();
        let e = l
            .append(&sample(ExperimentKind::Baseline, &[], false), None)
            .unwrap_err();
        assert!(e.to_string().contains("r1.ledger.jsonl"), "{e}");

        let mut other = run();
        other.id = "r2".into();
        RunLedger::open(&location(dir.path()), &run(), Policy::default()).unwrap();
        let e = RunLedger::open(&location(dir.path()), &other, Policy::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds the evidence of run 'r1', not of run 'r2'"),
            "{e}"
        );
    }

    #[test]
    fn a_sample_waits_for_a_lock_held_by_another_handle_says_so_and_is_written_once_granted() {
        let dir = tempfile::tempdir().unwrap();
        let loc = location(dir.path());
        let l = RunLedger::open(&loc, &run(), Policy::default())
            .unwrap()
            .with_lock_patience(Duration::from_millis(50));
        let samples = || {
            std::fs::read_to_string(&loc.path)
                .unwrap()
                .lines()
                .filter(|l| l.contains("\"type\":\"sample\""))
                .count()
        };
        assert_eq!(samples(), 0);
        // Another handle (as another process would) takes the exclusive lock.
        let other = std::fs::OpenOptions::new()
            .append(true)
            .open(&loc.path)
            .unwrap();
        other.lock().unwrap();
        let (told_tx, told_rx) = std::sync::mpsc::channel::<String>();
        let told_tx = Mutex::new(told_tx);
        std::thread::scope(|scope| {
            let append = scope.spawn(|| {
                let on_wait = |why: &str| {
                    let _ = told_tx.lock().unwrap().send(why.to_owned());
                };
                let give_up = || false;
                l.append(
                    &sample(ExperimentKind::Baseline, &[], false),
                    Some(&HoldBack {
                        on_wait: &on_wait,
                        give_up: &give_up,
                    }),
                )
            });
            let why = told_rx.recv().unwrap();
            assert!(
                why.contains("r1.ledger.jsonl") && why.contains("held the lock"),
                "{why}"
            );
            assert_eq!(
                samples(),
                0,
                "held back: nothing is written while the lock is held"
            );
            other.unlock().unwrap();
            let saved = append.join().unwrap();
            assert_eq!(saved, Ok(Receipt::default()));
        });
        assert_eq!(samples(), 1, "written once the lock was granted");
        assert!(told_rx.try_recv().is_err(), "told once");
        assert!(verify_path(&loc.path).unwrap().problems.is_empty());
    }

    #[test]
    fn giving_up_on_a_held_lock_leaves_the_sample_not_saved_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let loc = location(dir.path());
        let l = RunLedger::open(&loc, &run(), Policy::default())
            .unwrap()
            .with_lock_patience(Duration::from_millis(10));
        let other = std::fs::File::open(&loc.path).unwrap();
        other.lock().unwrap();
        let told = std::sync::atomic::AtomicBool::new(false);
        let on_wait = |_: &str| told.store(true, std::sync::atomic::Ordering::SeqCst);
        // Gives up once it has said the sample is held back.
        let give_up = || told.load(std::sync::atomic::Ordering::SeqCst);
        let e = l
            .append(
                &sample(ExperimentKind::Baseline, &[], false),
                Some(&HoldBack {
                    on_wait: &on_wait,
                    give_up: &give_up,
                }),
            )
            .unwrap_err();
        assert!(matches!(e, SinkError::GaveUp { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("given up while waiting for the ledger lock") && e.contains("not written"),
            "{e}"
        );
    }
}
