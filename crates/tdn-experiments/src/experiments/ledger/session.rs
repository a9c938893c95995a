//! What the runner hands the ledger and gets back (attribution-ledger.md §1, §4, §5): a finished
//! sample becomes a sample record (output hashed, never stored); pairing with the first
//! successful baseline of its cohort, seed and run forms the trials of §1, each admitted by the
//! manifest diff or refused with a reason; closing a cohort aggregates its trials. Runs inside a
//! locked append (`store.rs`); no I/O of its own.

use super::attribute::{Rejection, attribute, matched_pair_key, trial_effect};
use super::bundle::{Baseline, Bundle, baseline_of};
use super::canonical::f64_in_range;
use super::digest::{sha256_hex, sorted_unique};
use super::error::LedgerError;
use super::naming::{new_sample_id, timestamp};
use super::pair::{Refusal, RefusalCode, form_trials};
use super::record::{
    Cost, Disposition, EvidenceLevel, Outcome, Policy, RecordType, Sample, Scope, Trial, score_rule,
};
use super::store::Tx;
use crate::analysis::model::Run;
use crate::experiments::spec::{ExperimentKind, ExperimentSpec};
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
    /// How long the runner took, in milliseconds, when measured.
    pub duration_ms: Option<u64>,
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
            if tx.state.cancelled.contains(&trial.cohort) {
                format!(
                    "batch '{}' was cancelled: it concludes nothing",
                    trial.cohort
                )
            } else {
                format!("cohort '{}' already has attributions", trial.cohort)
            },
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
        usd: keep(c.usd),
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
        duration_ms: s.duration_ms,
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

/// What [`super::Ledger::cancel_cohort`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cancelled {
    /// The `cancel` record's 1-based line (`None`: the cohort was already closed).
    pub line: Option<usize>,
    /// The trials it marked cancelled.
    pub trials: usize,
}

/// Closes `cohort` as cancelled (attribution-ledger.md §5): a `cancel` record naming every trial
/// of the cohort; no attribution. A cohort already closed is left alone.
pub(super) fn cancel(
    tx: &mut Tx<'_>,
    cohort: &str,
    reason: &str,
) -> Result<Cancelled, LedgerError> {
    if tx.state.closed.contains(cohort) {
        return Ok(Cancelled::default());
    }
    let mut trial_ids: Vec<String> = tx
        .state
        .cohort_trials
        .get(cohort)
        .map(|ts| ts.iter().map(|t| t.trial_id.clone()).collect())
        .unwrap_or_default();
    trial_ids = sorted_unique(trial_ids);
    let record = super::record::CancelRecord {
        cohort: cohort.to_owned(),
        reason: one_line(reason),
        trial_ids,
        cancelled_at: timestamp(OffsetDateTime::now_utc()),
    };
    let trials = record.trial_ids.len();
    let line = tx.push(RecordType::Cancel, record.fields())?;
    Ok(Cancelled {
        line: Some(line),
        trials,
    })
}

/// Closes `cohort` under `policy`, then appends the rest of every other cohort whose aggregation
/// a crash cut short (§6: "the next session appends the rest"). Aggregation happens under one
/// lock hold, so a cohort seen here with only some of its attributions is never one another
/// instance is still closing.
pub(super) fn close(
    tx: &mut Tx<'_>,
    path: &Path,
    cohort: &str,
    policy: &Policy,
) -> Result<Closed, LedgerError> {
    if tx.state.cancelled.contains(cohort) {
        // A cancelled batch concludes nothing (attribution-ledger.md §5).
        complete_interrupted(tx, path, cohort);
        return Ok(Closed::default());
    }
    let epoch = tx.state.cohort_epoch.get(cohort).cloned();
    let closed = aggregate_rest(tx, path, cohort, epoch, policy)?;
    complete_interrupted(tx, path, cohort);
    Ok(closed)
}

/// Appends the missing attributions of closed cohorts other than `own`, each under the epoch and
/// policy its first attribution was written with. A cohort whose stored attributions are not what
/// its trials yield is left for `ledger verify` to report.
fn complete_interrupted(tx: &mut Tx<'_>, path: &Path, own: &str) {
    let mut short: Vec<(String, String, Policy)> = tx
        .state
        .cohort_closing
        .iter()
        .filter(|(c, _)| c.as_str() != own)
        .filter(|(c, _)| {
            // A cohort has at most one attribution per trial group: as many as groups is complete.
            let groups: std::collections::HashSet<_> = tx
                .state
                .cohort_trials
                .get(c.as_str())
                .into_iter()
                .flatten()
                .map(|t| {
                    (
                        &t.component_kind,
                        &t.component_id,
                        &t.component_digest,
                        &t.tested_bundle,
                        t.evidence_level,
                    )
                })
                .collect();
            let written = tx
                .state
                .cohort_attributions
                .get(c.as_str())
                .map_or(0, Vec::len);
            groups.len() > written
        })
        .map(|(c, (epoch, policy))| (c.clone(), epoch.clone(), *policy))
        .collect();
    short.sort_by(|a, b| a.0.cmp(&b.0));
    for (cohort, epoch, policy) in short {
        if let Err(e) = aggregate_rest(tx, path, &cohort, Some(epoch), &policy) {
            tracing::warn!("cohort '{cohort}' left incomplete: {e}");
        }
    }
}

/// Aggregates every trial of `cohort` and appends the attributions not yet written.
fn aggregate_rest(
    tx: &mut Tx<'_>,
    path: &Path,
    cohort: &str,
    epoch: Option<String>,
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
    let epoch = epoch
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
