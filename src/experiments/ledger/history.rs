//! What the screen shows of a run's earlier evidence when it opens: the run's trials and the
//! attributions of its cohorts, each with its verification status. Reads the ledger file (shared
//! lock); writes nothing.

use super::attribute::trial_effect;
use super::error::LedgerError;
use super::record::{Attribution, Record, Trial};
use super::verify::{Checked, Counts, Status, verify_path};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A trial with its line and status.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryTrial {
    /// 1-based line.
    pub line: usize,
    /// Verification status.
    pub status: Status,
    /// `round6(with − without)`.
    pub effect: f64,
    /// The record.
    pub trial: Trial,
}

/// An attribution with its line and status.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryAttribution {
    /// 1-based line.
    pub line: usize,
    /// Verification status (`legacy_unverified` is never a cause).
    pub status: Status,
    /// The record.
    pub attribution: Attribution,
}

/// A run's evidence in one ledger, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// Line counts of the whole ledger.
    pub counts: Counts,
    /// Failures anywhere in the ledger (the screen points to `ledger verify`).
    pub failures: usize,
    /// The run's trials.
    pub trials: Vec<HistoryTrial>,
    /// Attributions of cohorts in which the run has samples.
    pub attributions: Vec<HistoryAttribution>,
}

/// A batch with trials but no attribution: after a crash, the screen offers to aggregate it once
/// its last sample is older than `[runner] timeout_s` (never a sweep another instance still runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenCohort {
    /// The cohort.
    pub cohort: String,
    /// Its verified trials.
    pub trials: usize,
    /// The latest `finished_at` of its samples.
    pub last_finished_at: String,
}

/// Cohorts that hold verified trials and no attribution, in order of their first sample.
pub fn open_cohorts(checked: &Checked) -> Vec<OpenCohort> {
    let mut order: Vec<&str> = Vec::new();
    let mut last: HashMap<&str, &str> = HashMap::new();
    let mut trials: HashMap<&str, usize> = HashMap::new();
    let mut closed: HashSet<&str> = HashSet::new();
    for (_, p, status) in checked.records() {
        if status == Status::Failed {
            continue;
        }
        match &p.record {
            Record::Sample(s) => {
                let at = last.entry(&s.cohort).or_insert_with(|| {
                    order.push(&s.cohort);
                    &s.finished_at
                });
                *at = (*at).max(s.finished_at.as_str());
            }
            Record::Trial(t) if status == Status::Unbound => {
                *trials.entry(&t.cohort).or_default() += 1;
            }
            Record::Attribution(a) => {
                closed.insert(&a.cohort);
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter(|c| !closed.contains(c))
        .filter_map(|c| {
            Some(OpenCohort {
                cohort: c.to_owned(),
                trials: *trials.get(c).filter(|n| **n > 0)?,
                last_finished_at: last.get(c).map(|s| (*s).to_owned()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The evidence about `run_id` in the ledger at `path`; `Ok(None)` when there is no ledger yet.
pub fn history(path: &Path, run_id: &str) -> Result<Option<History>, LedgerError> {
    if !path.exists() {
        return Ok(None);
    }
    let checked = verify_path(path)?;
    let mut cohorts = HashSet::new();
    let mut trials = Vec::new();
    for (line, p, status) in checked.records() {
        match &p.record {
            Record::Sample(s) if s.run_id == run_id => {
                cohorts.insert(s.cohort.clone());
            }
            Record::Trial(t) if t.run_id == run_id => {
                cohorts.insert(t.cohort.clone());
                trials.push(HistoryTrial {
                    line: line.number,
                    status,
                    effect: trial_effect(t),
                    trial: (**t).clone(),
                });
            }
            _ => {}
        }
    }
    let attributions = checked
        .records()
        .filter_map(|(line, p, status)| match &p.record {
            Record::Attribution(a) if cohorts.contains(&a.cohort) => Some(HistoryAttribution {
                line: line.number,
                status,
                attribution: (**a).clone(),
            }),
            _ => None,
        })
        .collect();
    let counts = checked.counts();
    Ok(Some(History {
        counts,
        failures: counts.failed,
        trials,
        attributions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::testutil::T;
    use crate::experiments::spec::ExperimentKind;

    #[test]
    fn a_runs_history_lists_its_trials_and_attributions_with_status() {
        let t = T::new();
        assert_eq!(
            history(&t.path().with_extension("none"), "cal-1").unwrap(),
            None
        );
        t.batch("b-1", &["doc-a"], 2);
        t.add("b-2", ExperimentKind::Baseline, &[], 0, true);
        t.add("b-2", ExperimentKind::Ablate, &["doc-b"], 0, false);
        let h = history(t.path(), "cal-1").unwrap().unwrap();
        assert_eq!(h.trials.len(), 3);
        assert_eq!(h.attributions.len(), 1);
        assert_eq!(h.attributions[0].status, Status::Verified);
        let open: Vec<Status> = h.trials.iter().map(|t| t.status).collect();
        assert_eq!(open, [Status::Verified, Status::Verified, Status::Unbound]);
        assert_eq!(h.failures, 0);
        assert!(
            history(t.path(), "another-run")
                .unwrap()
                .unwrap()
                .trials
                .is_empty()
        );
        let checked = verify_path(t.path()).unwrap();
        let open = open_cohorts(&checked);
        assert_eq!(open.len(), 1);
        assert_eq!((open[0].cohort.as_str(), open[0].trials), ("b-2", 1));
        assert_eq!(open[0].last_finished_at, "2026-08-17T10:00:00Z");
    }

    #[test]
    fn the_ledger_can_be_shared_with_blocking_tasks() {
        fn send_sync<X: Send + Sync>() {}
        send_sync::<crate::experiments::ledger::Ledger>();
    }
}
