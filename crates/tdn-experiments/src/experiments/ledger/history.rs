//! What a ledger holds about one run, read and verified in one pass: the run's trials, the latest
//! attribution of each component its batches concluded about (with how many it supersedes and
//! what was tried to reach it), and the batches left open (verified trials, no attribution: a
//! session that ended before closing them). The screen and the command line read this instead
//! of the file. Reads the ledger file (shared lock); writes nothing.

use super::attribute::trial_effect;
use super::error::LedgerError;
use super::record::{Attribution, Record, Sample, Trial};
use super::verify::{Checked, Counts, Status, verify_path};
use crate::experiments::intervention::Intervention;
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
    /// What its experiment sample did, when that sample is in the ledger.
    pub tried: Option<Intervention>,
}

/// A component's latest attribution that did not fail verification.
#[derive(Clone, Debug, PartialEq)]
pub struct LatestAttribution {
    /// 1-based line.
    pub line: usize,
    /// Verification status (`legacy_unverified` is never a cause).
    pub status: Status,
    /// The record.
    pub attribution: Attribution,
    /// How many earlier attributions of the same component it follows.
    pub earlier: usize,
    /// What was tried to reach it (the experiment of its first trial), when known.
    pub tried: Option<Intervention>,
}

/// A batch with verified trials but no attribution: after a crash or a kill, it can be
/// aggregated once its session is known to be gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenCohort {
    /// The cohort.
    pub cohort: String,
    /// Its verified trials.
    pub trials: usize,
    /// The latest `finished_at` of its samples.
    pub last_finished_at: String,
}

/// What a ledger holds about one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// Line counts of the whole ledger.
    pub counts: Counts,
    /// The run's trials, in file order.
    pub trials: Vec<HistoryTrial>,
    /// The latest attribution of each component of the run's batches, in ledger order.
    pub latest: Vec<LatestAttribution>,
    /// The run's batches left open, in order of their first sample.
    pub open: Vec<OpenCohort>,
}

impl Evidence {
    /// The latest attributions about a unit.
    pub fn for_unit<'a>(&'a self, unit: &'a str) -> impl Iterator<Item = &'a LatestAttribution> {
        self.latest.iter().filter(move |a| {
            a.attribution.component_kind != super::bundle::REPLAY_KIND
                && a.attribution.component_id == unit
        })
    }

    /// The latest attributions about a step: replays from it, and the units it produced
    /// (`produced`).
    pub fn for_step<'a>(
        &'a self,
        step: &'a str,
        produced: &'a HashSet<&'a str>,
    ) -> impl Iterator<Item = &'a LatestAttribution> {
        self.latest.iter().filter(move |a| {
            let r = &a.attribution;
            if r.component_kind == super::bundle::REPLAY_KIND {
                r.component_id == step
            } else {
                produced.contains(r.component_id.as_str())
            }
        })
    }
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
            Record::Cancel(c) => {
                closed.insert(&c.cohort);
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

/// The experiment sample of a trial: the one without the component for an ablation, the one
/// with it for a restoration or a replay.
fn experiment_sample<'a>(t: &Trial, samples: &HashMap<&str, &'a Sample>) -> Option<&'a Sample> {
    use crate::experiments::spec::ExperimentKind;
    let id = match t.experiment.kind()? {
        ExperimentKind::Ablate => t.without_sample.as_deref()?,
        _ => t.with_sample.as_deref()?,
    };
    samples.get(id).copied()
}

/// The evidence about `run_id` in the ledger at `path`; `Ok(None)` when there is no ledger yet.
pub fn evidence(path: &Path, run_id: &str) -> Result<Option<Evidence>, LedgerError> {
    if !path.exists() {
        return Ok(None);
    }
    let checked = verify_path(path)?;
    let mut cohorts: HashSet<&str> = HashSet::new();
    let mut samples: HashMap<&str, &Sample> = HashMap::new();
    for (_, p, status) in checked.records() {
        if let Record::Sample(s) = &p.record
            && s.run_id == run_id
            && status != Status::Failed
        {
            cohorts.insert(&s.cohort);
            samples.insert(&s.sample_id, s);
        }
    }
    let mut trials = Vec::new();
    let mut tried_by_trial: HashMap<&str, Intervention> = HashMap::new();
    for (line, p, status) in checked.records() {
        if let Record::Trial(t) = &p.record
            && t.run_id == run_id
        {
            cohorts.insert(&t.cohort);
            let tried = experiment_sample(t, &samples).map(Sample::intervention);
            if let Some(i) = &tried {
                tried_by_trial.insert(&t.trial_id, i.clone());
            }
            trials.push(HistoryTrial {
                line: line.number,
                status,
                effect: trial_effect(t),
                trial: (**t).clone(),
                tried,
            });
        }
    }
    // The latest attribution of each component (kind, id, text digest) that did not fail.
    let mut latest: HashMap<(&str, &str, &str), (usize, usize)> = HashMap::new();
    let attributions: Vec<(usize, Status, &Attribution)> = checked
        .records()
        .filter_map(|(line, p, status)| match &p.record {
            Record::Attribution(a) if cohorts.contains(a.cohort.as_str()) => {
                Some((line.number, status, &**a))
            }
            _ => None,
        })
        .collect();
    for (i, (_, status, a)) in attributions.iter().enumerate() {
        if *status == Status::Failed {
            continue;
        }
        let key = (
            a.component_kind.as_str(),
            a.component_id.as_str(),
            a.component_digest.as_str(),
        );
        let e = latest.entry(key).or_insert((i, 0));
        if e.0 != i {
            *e = (i, e.1 + 1);
        }
    }
    let mut picked: Vec<(usize, usize)> = latest.into_values().collect();
    picked.sort_unstable();
    let latest = picked
        .into_iter()
        .filter_map(|(i, earlier)| {
            let (line, status, a) = attributions.get(i)?;
            let tried = a
                .trial_ids
                .iter()
                .find_map(|t| tried_by_trial.get(t.as_str()))
                .cloned();
            Some(LatestAttribution {
                line: *line,
                status: *status,
                attribution: (*a).clone(),
                earlier,
                tried,
            })
        })
        .collect();
    let open = open_cohorts(&checked)
        .into_iter()
        .filter(|c| cohorts.contains(c.cohort.as_str()))
        .collect();
    Ok(Some(Evidence {
        counts: checked.counts(),
        trials,
        latest,
        open,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::testutil::T;
    use crate::experiments::spec::ExperimentKind;

    #[test]
    fn a_runs_evidence_lists_its_trials_latest_attributions_and_open_batches() {
        let t = T::new();
        assert_eq!(
            evidence(&t.path().with_extension("none"), "cal-1").unwrap(),
            None
        );
        t.batch("b-1", &["doc-a"], 2);
        t.add("b-2", ExperimentKind::Baseline, &[], 0, true);
        t.add("b-2", ExperimentKind::Ablate, &["doc-b"], 0, false);
        let e = evidence(t.path(), "cal-1").unwrap().unwrap();
        assert_eq!(e.trials.len(), 3);
        let statuses: Vec<Status> = e.trials.iter().map(|t| t.status).collect();
        assert_eq!(
            statuses,
            [Status::Verified, Status::Verified, Status::Unbound]
        );
        assert_eq!(
            e.trials[2].tried,
            Some(Intervention::Ablate(vec!["doc-b".into()])),
            "what was tried comes from the trial's experiment sample"
        );
        assert_eq!(e.latest.len(), 1);
        let a = &e.latest[0];
        assert_eq!(a.status, Status::Verified);
        assert_eq!(a.attribution.component_id, "doc-a");
        assert_eq!(a.tried, Some(Intervention::Ablate(vec!["doc-a".into()])));
        assert_eq!(e.for_unit("doc-a").count(), 1);
        assert_eq!(e.for_unit("doc-b").count(), 0);
        assert_eq!(e.open.len(), 1);
        assert_eq!((e.open[0].cohort.as_str(), e.open[0].trials), ("b-2", 1));
        assert_eq!(e.open[0].last_finished_at, "2026-08-17T10:00:00Z");
        assert!(
            evidence(t.path(), "another-run")
                .unwrap()
                .unwrap()
                .trials
                .is_empty()
        );
    }

    #[test]
    fn the_ledger_can_be_shared_with_blocking_tasks() {
        fn send_sync<X: Send + Sync>() {}
        send_sync::<crate::experiments::ledger::Ledger>();
    }
}
