//! What the runner hands the ledger and gets back (attribution-ledger.md §1, §4, §5): a finished
//! sample becomes a sample record (output hashed, never stored); pairing with the first
//! successful baseline of its cohort, seed and run forms the trials of §1, each admitted by the
//! manifest diff or refused with a reason; closing a cohort aggregates its trials. Runs inside a
//! locked append (`store.rs`); no I/O of its own.

use super::attribute::{Rejection, attribute, matched_pair_key, trial_effect};
use super::bundle::{
    Baseline, Bundle, Entry, REPLAY_KIND, admit, baseline_of, experiment_bundles, unit_token_cost,
};
use super::canonical::f64_in_range;
use super::digest::{digest, sha256_hex, sorted_unique};
use super::error::LedgerError;
use super::naming::{new_sample_id, timestamp};
use super::record::{
    Cost, Disposition, EvidenceLevel, Outcome, Policy, RecordType, Sample, Scope, Trial, score_rule,
};
use super::store::Tx;
use crate::analysis::model::Run;
use crate::experiments::spec::{ExperimentKind, ExperimentSpec};
use serde_json::json;
use std::path::Path;
use time::OffsetDateTime;

/// Longest error line kept in a sample record, in bytes.
pub const MAX_ERROR_BYTES: usize = 4096;

/// A sample's answer: the text is hashed, never stored.
#[derive(Clone, Copy, Debug)]
pub struct SampleOutcome<'a> {
    /// The agent's answer.
    pub output: &'a str,
    /// The comparator in force says it has the recorded outcome (not a flip).
    pub reproduced: bool,
}

/// One finished runner call, as the runner hands it over.
#[derive(Clone, Debug)]
pub struct NewSample<'a> {
    /// The batch ([`super::new_cohort`]).
    pub cohort: &'a str,
    /// [`super::evaluator_epoch`] of the settings in force, fixed for the batch.
    pub evaluator_epoch: &'a str,
    /// The run (baseline bundle, units, status).
    pub run: &'a Run,
    /// The exact runner command after config resolution (hashed).
    pub runner_command: &'a str,
    /// The experiment as sent (`remove` holds unit ids).
    pub spec: &'a ExperimentSpec,
    /// When the sample finished.
    pub finished_at: OffsetDateTime,
    /// The answer, or the error line shown to the user.
    pub outcome: Result<SampleOutcome<'a>, String>,
    /// What the runner reported; members that are not non-negative numbers are left out.
    pub cost: Option<Cost>,
}

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

/// A trial that was written.
#[derive(Clone, Debug, PartialEq)]
pub struct NewTrial {
    /// Its id.
    pub trial_id: String,
    /// 1-based line.
    pub line: usize,
    /// The unit's kind (or `replay`).
    pub component_kind: String,
    /// The unit's id (or the replayed step).
    pub component_id: String,
    /// What the diff supports.
    pub evidence_level: EvidenceLevel,
    /// `round6(with − without)`.
    pub effect: f64,
    /// The seed.
    pub seed: u64,
}

/// What [`super::Ledger::append_sample`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Appended {
    /// The new sample's id.
    pub sample_id: String,
    /// Its 1-based line.
    pub line: usize,
    /// Trials it completed.
    pub trials: Vec<NewTrial>,
    /// Trials it could not form, with the reason.
    pub refused: Vec<Refusal>,
}

/// An attribution that was written.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedAttribution {
    /// Its id.
    pub attribution_id: String,
    /// 1-based line.
    pub line: usize,
    /// Kind.
    pub component_kind: String,
    /// Id.
    pub component_id: String,
    /// Level.
    pub evidence_level: EvidenceLevel,
    /// Effect.
    pub effect: f64,
    /// Confidence.
    pub confidence: f64,
    /// Disposition.
    pub disposition: Disposition,
    /// The attribution it supersedes.
    pub supersedes: Option<String>,
}

/// What [`super::Ledger::close_cohort`] wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Closed {
    /// Attributions appended now.
    pub attributions: Vec<ClosedAttribution>,
    /// How many were already in the ledger (an earlier, interrupted aggregation).
    pub already: usize,
    /// Trials and groups that yielded nothing, by code.
    pub rejections: Vec<Rejection>,
}

pub(super) fn append(
    tx: &mut Tx<'_>,
    path: &Path,
    s: &NewSample<'_>,
) -> Result<Appended, LedgerError> {
    if let Some(h) = &tx.state.header
        && h.scope == Scope::Run
        && h.name != s.run.id
    {
        return Err(LedgerError::WrongRun {
            path: path.to_path_buf(),
            name: h.name.clone(),
            run_id: s.run.id.clone(),
        });
    }
    let b = baseline_of(s.run)?;
    let sample = sample_record(s, &b)?;
    if tx.state.bundles.insert(b.bundle.digest().to_owned()) {
        tx.push(RecordType::Bundle, b.bundle.record_fields())?;
    }
    let line = tx.push(RecordType::Sample, sample.fields())?;
    let mut out = Appended {
        sample_id: sample.sample_id.clone(),
        line,
        trials: Vec::new(),
        refused: Vec::new(),
    };
    if sample.outcome.is_none() {
        return Ok(out);
    }
    let key = (sample.cohort.clone(), sample.seed, sample.run_id.clone());
    let pairs: Vec<(Sample, Sample)> = match tx.state.slots.get(&key) {
        None => Vec::new(),
        Some(slot) => match &slot.baseline {
            None => Vec::new(),
            Some(base) if sample.experiment == ExperimentKind::Baseline => {
                if base.sample_id == sample.sample_id {
                    slot.experiments
                        .iter()
                        .map(|e| (e.clone(), base.clone()))
                        .collect()
                } else {
                    Vec::new()
                }
            }
            Some(base) => vec![(sample.clone(), base.clone())],
        },
    };
    for (exp, base) in pairs {
        let formed = form_trials(&exp, &base, s.run, &b);
        out.refused.extend(formed.refused);
        for (trial, tested, comparison) in formed.trials {
            write_trial(tx, trial, &tested, &comparison, &mut out)?;
        }
    }
    Ok(out)
}

fn write_trial(
    tx: &mut Tx<'_>,
    trial: Trial,
    tested: &Bundle,
    comparison: &Bundle,
    out: &mut Appended,
) -> Result<(), LedgerError> {
    let refuse = |code, message: String| Refusal {
        code,
        component_id: Some(trial.component_id.clone()),
        message,
    };
    if tx.state.closed.contains(&trial.cohort) {
        out.refused.push(refuse(
            RefusalCode::CohortClosed,
            format!("cohort '{}' already has attributions", trial.cohort),
        ));
        return Ok(());
    }
    if tx.state.pair_keys.contains(&matched_pair_key(&trial)?) {
        out.refused.push(refuse(
            RefusalCode::DuplicatePair,
            "a trial for this experiment and seed is already in the ledger".to_owned(),
        ));
        return Ok(());
    }
    for bundle in [tested, comparison] {
        if tx.state.bundles.insert(bundle.digest().to_owned()) {
            tx.push(RecordType::Bundle, bundle.record_fields())?;
        }
    }
    let line = tx.push(RecordType::Trial, trial.fields())?;
    out.trials.push(NewTrial {
        trial_id: trial.trial_id.clone(),
        line,
        component_kind: trial.component_kind.clone(),
        component_id: trial.component_id.clone(),
        evidence_level: trial.evidence_level,
        effect: trial_effect(&trial),
        seed: trial.seed,
    });
    Ok(())
}

fn sample_record(s: &NewSample<'_>, b: &Baseline) -> Result<Sample, LedgerError> {
    let spec = s.spec;
    let (outcome, error) = match &s.outcome {
        Ok(o) => {
            let score = if s.run.final_answer.is_some() {
                score_rule(s.run.status.as_str(), o.reproduced)
            } else {
                None
            };
            (
                Some(Outcome {
                    output_sha256: sha256_hex(o.output.as_bytes()),
                    reproduced: o.reproduced,
                    score,
                }),
                None,
            )
        }
        Err(e) => (None, Some(one_line(e))),
    };
    let keep = |x: Option<f64>| x.filter(|v| *v >= 0.0 && f64_in_range(*v));
    let cost = s.cost.map(|c| Cost {
        loops: keep(c.loops),
        tokens: keep(c.tokens),
    });
    Ok(Sample {
        sample_id: new_sample_id()?,
        cohort: s.cohort.to_owned(),
        evaluator_epoch: s.evaluator_epoch.to_owned(),
        run_id: s.run.id.clone(),
        run_status: s.run.status.as_str().to_owned(),
        runner_sha256: sha256_hex(s.runner_command.as_bytes()),
        experiment: spec.experiment,
        remove: sorted_unique(spec.remove.clone()),
        restore: sorted_unique(spec.restore.clone()),
        from_step: spec.from_step.clone(),
        patch: spec.patch.clone(),
        seed: spec.seed,
        sample: spec.sample,
        baseline_bundle: b.bundle.digest().to_owned(),
        finished_at: timestamp(s.finished_at),
        outcome,
        error,
        cost,
    })
}

/// The error as one line: line breaks become spaces, cut at [`MAX_ERROR_BYTES`].
fn one_line(e: &str) -> String {
    let mut out: String = e
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if out.len() > MAX_ERROR_BYTES {
        let mut cut = MAX_ERROR_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

struct Formed {
    trials: Vec<(Trial, Bundle, Bundle)>,
    refused: Vec<Refusal>,
}

fn refusal(code: RefusalCode, id: Option<&str>, message: String) -> Refusal {
    Refusal {
        code,
        component_id: id.map(str::to_owned),
        message,
    }
}

/// The trials of §1 for an experiment sample and its baseline sample.
fn form_trials(exp: &Sample, base: &Sample, run: &Run, b: &Baseline) -> Formed {
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
            let mut found = Vec::new();
            for id in &exp.remove {
                match b.bundle.entries().iter().find(|e| &e.entry.id == id) {
                    Some(e) => found.push(e.entry.clone()),
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
    let (with, without) = match exp.experiment {
        ExperimentKind::Ablate => (base, exp),
        _ => (exp, base),
    };
    for c in components {
        let Ok(component_digest) = c.digest() else {
            continue;
        };
        let adm = match admit(&tested, &comparison, &c.kind, &c.id, &component_digest) {
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
            experiment: exp.experiment.as_str().to_owned(),
            with_sample: Some(with.sample_id.clone()),
            without_sample: Some(without.sample_id.clone()),
            with_score: with.score().unwrap_or(0.0),
            without_score: without.score().unwrap_or(0.0),
            token_cost,
            tested_at: with.finished_at.clone().max(without.finished_at.clone()),
            interactions: adm.interactions,
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

pub(super) fn close(
    tx: &mut Tx<'_>,
    path: &Path,
    cohort: &str,
    policy: &Policy,
) -> Result<Closed, LedgerError> {
    let trials = tx
        .state
        .cohort_trials
        .get(cohort)
        .cloned()
        .unwrap_or_default();
    if trials.is_empty() {
        return Ok(Closed::default());
    }
    let epoch = tx
        .state
        .cohort_epoch
        .get(cohort)
        .cloned()
        .or_else(|| trials.first().map(|t| t.evaluator_epoch.clone()))
        .unwrap_or_default();
    let agg = attribute(&trials, &epoch, policy)?;
    let existing = tx
        .state
        .cohort_attributions
        .get(cohort)
        .cloned()
        .unwrap_or_default();
    let prefix = existing.len() <= agg.attributions.len()
        && existing
            .iter()
            .zip(&agg.attributions)
            .all(|(e, a)| *e == a.attribution_id);
    if !prefix {
        return Err(LedgerError::CohortMismatch {
            path: path.to_path_buf(),
            cohort: cohort.to_owned(),
        });
    }
    let mut out = Closed {
        attributions: Vec::new(),
        already: existing.len(),
        rejections: agg.rejections,
    };
    for mut a in agg.attributions.into_iter().skip(existing.len()) {
        a.supersedes = tx
            .state
            .latest
            .get(&super::attribute::component_key(&a))
            .cloned();
        let line = tx.push(RecordType::Attribution, a.fields())?;
        out.attributions.push(ClosedAttribution {
            attribution_id: a.attribution_id,
            line,
            component_kind: a.component_kind,
            component_id: a.component_id,
            evidence_level: a.evidence_level,
            effect: a.effect,
            confidence: a.confidence,
            disposition: a.disposition,
            supersedes: a.supersedes,
        });
    }
    Ok(out)
}
