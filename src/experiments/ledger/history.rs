//! What the screen shows of a run's earlier evidence when it opens: the run's trials and the
//! attributions of its cohorts, each with its verification status. Reads the ledger file (shared
//! lock); writes nothing.

use super::attribute::trial_effect;
use super::error::LedgerError;
use super::record::{Attribution, Record, Trial};
use super::verify::{Counts, Status, verify_path};
use std::collections::HashSet;
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
