//! Pairing (attribution-ledger.md §1, §3, §4): the trials an experiment sample and its baseline
//! sample form, one per unit under test, each admitted by the manifest diff at the level §1's
//! table allows and the diff supports, or refused with a reason shown next to the sample. Pure.

use super::bundle::{
    Baseline, Bundle, Entry, IndexedDiff, REPLAY_KIND, experiment_bundles, unit_token_cost,
};
use super::digest::digest;
use super::record::{EvidenceLevel, Sample, Trial};
use crate::analysis::model::Run;
use crate::experiments::spec::ExperimentKind;
use serde_json::json;

/// Why a sample formed no trial (it is kept all the same); shown next to the sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalCode {
    /// The manifest diff does not support the trial (§3).
    NotAdmissible,
    /// A trial with the same matched-pair key is already in the ledger.
    DuplicatePair,
    /// The cohort already has attributions.
    CohortClosed,
    /// A sample has no score (run status `error`/`unfinished`, or no final answer).
    NoScore,
    /// The two samples disagree on baseline bundle, epoch or runner.
    Mismatch,
    /// The run repeats a unit id.
    DuplicateUnits,
    /// A unit to restore is not in the run.
    UnknownUnit,
    /// The sample both removes and restores units: no trial.
    RemovesAndRestores,
}

impl RefusalCode {
    /// A stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::NotAdmissible => "not_admissible",
            RefusalCode::DuplicatePair => "duplicate_pair",
            RefusalCode::CohortClosed => "cohort_closed",
            RefusalCode::NoScore => "no_score",
            RefusalCode::Mismatch => "mismatch",
            RefusalCode::DuplicateUnits => "duplicate_units",
            RefusalCode::UnknownUnit => "unknown_unit",
            RefusalCode::RemovesAndRestores => "removes_and_restores",
        }
    }
}

/// A trial that was not written.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// Why.
    pub code: RefusalCode,
    /// The component id concerned, when one.
    pub component_id: Option<String>,
    /// For people.
    pub message: String,
}

pub(super) struct Formed {
    pub(super) trials: Vec<(Trial, Bundle, Bundle)>,
    pub(super) refused: Vec<Refusal>,
}

fn refusal(code: RefusalCode, id: Option<&str>, message: String) -> Refusal {
    Refusal {
        code,
        component_id: id.map(str::to_owned),
        message,
    }
}

/// The trials of §1 for an experiment sample and its baseline sample.
pub(super) fn form_trials(exp: &Sample, base: &Sample, run: &Run, b: &Baseline) -> Formed {
    let mut f = Formed {
        trials: Vec::new(),
        refused: Vec::new(),
    };
    if let Some(r) = pair_problem(exp, base, b) {
        f.refused.push(r);
        return f;
    }
    let mut restored = Vec::new();
    for id in &exp.restore {
        match run.unit(id) {
            Some(u) => restored.push(Entry::of_unit(u)),
            None => f.refused.push(refusal(
                RefusalCode::UnknownUnit,
                Some(id),
                format!("unit '{id}' to restore is not in the run"),
            )),
        }
    }
    let replay = match (exp.experiment, &exp.from_step) {
        (ExperimentKind::Replay, Some(step)) => {
            match Entry::replay(step, exp.patch.as_deref(), &exp.remove, &exp.restore) {
                Ok(e) => Some(e),
                Err(e) => {
                    f.refused.push(refusal(
                        RefusalCode::NotAdmissible,
                        Some(step),
                        e.to_string(),
                    ));
                    return f;
                }
            }
        }
        (ExperimentKind::Replay, None) => {
            f.refused.push(refusal(
                RefusalCode::NotAdmissible,
                None,
                "a replay sample names no step".to_owned(),
            ));
            return f;
        }
        _ => None,
    };
    let (components, single): (Vec<Entry>, bool) = match exp.experiment {
        ExperimentKind::Baseline => return f,
        ExperimentKind::Ablate => {
            let by_id: std::collections::HashMap<&str, &Entry> = b
                .bundle
                .entries()
                .iter()
                .map(|e| (e.entry.id.as_str(), &e.entry))
                .collect();
            let mut found = Vec::new();
            for id in &exp.remove {
                match by_id.get(id.as_str()) {
                    Some(e) => found.push((*e).clone()),
                    None => f.refused.push(refusal(
                        RefusalCode::NotAdmissible,
                        Some(id),
                        format!(
                            "unit '{id}' was not sent in the baseline: removing it changes nothing measured"
                        ),
                    )),
                }
            }
            (found, exp.remove.len() == 1)
        }
        ExperimentKind::Restore => (restored.clone(), exp.restore.len() == 1),
        ExperimentKind::Replay => (replay.iter().cloned().collect(), false),
    };
    if components.is_empty() && f.refused.is_empty() {
        f.refused.push(refusal(
            RefusalCode::NotAdmissible,
            None,
            format!(
                "the {} sample names no unit to test",
                exp.experiment.as_str()
            ),
        ));
        return f;
    }
    let bundles = experiment_bundles(
        exp.experiment,
        &b.bundle,
        &exp.remove,
        &restored,
        replay.as_ref(),
    );
    let (tested, comparison) = match bundles {
        Ok(pair) => pair,
        Err(e) => {
            f.refused
                .push(refusal(RefusalCode::NotAdmissible, None, e.to_string()));
            return f;
        }
    };
    let diff = IndexedDiff::new(&tested, &comparison);
    let (with, without) = match exp.experiment {
        ExperimentKind::Ablate => (base, exp),
        _ => (exp, base),
    };
    for c in components {
        let Ok(component_digest) = c.digest() else {
            continue;
        };
        let adm = match diff.admit(&c.kind, &c.id, &component_digest) {
            Ok(a) => a,
            Err(why) => {
                f.refused
                    .push(refusal(RefusalCode::NotAdmissible, Some(&c.id), why));
                continue;
            }
        };
        let level = if single && adm.highest == EvidenceLevel::CausalAblation {
            EvidenceLevel::CausalAblation
        } else {
            EvidenceLevel::PairedShadow
        };
        let token_cost = if c.kind == REPLAY_KIND {
            0
        } else {
            run.unit(&c.id).map(unit_token_cost).unwrap_or(0)
        };
        let Ok(trial_id) = digest(&json!({
            "with_sample": with.sample_id, "without_sample": without.sample_id,
            "component_digest": component_digest,
        })) else {
            continue;
        };
        let trial = Trial {
            trial_id,
            component_kind: c.kind.clone(),
            component_id: c.id.clone(),
            component_digest,
            tested_bundle: tested.digest().to_owned(),
            comparison_bundle: comparison.digest().to_owned(),
            baseline_bundle: b.bundle.digest().to_owned(),
            evidence_level: level,
            evaluator_epoch: exp.evaluator_epoch.clone(),
            cohort: exp.cohort.clone(),
            run_id: exp.run_id.clone(),
            runner_sha256: exp.runner_sha256.clone(),
            seed: exp.seed,
            experiment: super::record::TrialExperiment::Kind(exp.experiment),
            with_sample: Some(with.sample_id.clone()),
            without_sample: Some(without.sample_id.clone()),
            with_score: with.score().unwrap_or(0.0),
            without_score: without.score().unwrap_or(0.0),
            token_cost,
            tested_at: with.finished_at.clone().max(without.finished_at.clone()),
            interactions: adm.interactions,
            with_spent: super::record::Spent::of(with),
            without_spent: super::record::Spent::of(without),
            source_digest: String::new(),
        };
        f.trials.push((trial, tested.clone(), comparison.clone()));
    }
    f
}

/// Why a pair forms no trial at all, before looking at components.
fn pair_problem(exp: &Sample, base: &Sample, b: &Baseline) -> Option<Refusal> {
    if b.duplicates {
        return Some(refusal(
            RefusalCode::DuplicateUnits,
            None,
            "the run repeats a context unit id: it gets no trials".to_owned(),
        ));
    }
    if matches!(
        exp.experiment,
        ExperimentKind::Ablate | ExperimentKind::Restore
    ) && !exp.remove.is_empty()
        && !exp.restore.is_empty()
    {
        return Some(refusal(
            RefusalCode::RemovesAndRestores,
            None,
            "the sample both removes and restores units: it forms no trial".to_owned(),
        ));
    }
    if exp.score().is_none() || base.score().is_none() {
        return Some(refusal(
            RefusalCode::NoScore,
            None,
            format!(
                "a run with status '{}' (or without a final answer) has no score: no trial",
                exp.run_status
            ),
        ));
    }
    if exp.baseline_bundle != base.baseline_bundle
        || exp.baseline_bundle != b.bundle.digest()
        || exp.evaluator_epoch != base.evaluator_epoch
        || exp.runner_sha256 != base.runner_sha256
    {
        return Some(refusal(
            RefusalCode::Mismatch,
            None,
            "the sample and its baseline differ in baseline bundle, epoch or runner".to_owned(),
        ));
    }
    None
}
