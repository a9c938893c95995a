//! Aggregation of trials into attributions (attribution-ledger.md §5): `round6`, trial effects,
//! matched-pair keys, the trial checks and group failures, the mean/confidence/disposition rules,
//! attribution ids and `supersedes` links. Pure: the function the parity fixture tests. No I/O.

use super::canonical::{CanonError, utf16_cmp};
use super::digest::{digest, sorted_unique};
use super::record::{Attribution, Disposition, EvidenceLevel, Policy, Trial};
use serde_json::json;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// Samples at which confidence stops growing with the trial count: `min(1, n/4)`.
pub const FULL_CONFIDENCE_TRIALS: f64 = 4.0;

/// `floor(|x| × 1000000 + 0.5) / 1000000`, x's sign restored, −0 → 0; each operation binary64.
pub fn round6(x: f64) -> f64 {
    let r = (x.abs() * 1_000_000.0 + 0.5).floor() / 1_000_000.0;
    let r = if x.is_sign_negative() { -r } else { r };
    if r == 0.0 { 0.0 } else { r }
}

/// A trial's effect: `round6(with_score − without_score)`, derived, never stored.
pub fn trial_effect(t: &Trial) -> f64 {
    round6(t.with_score - t.without_score)
}

/// The matched-pair key of a trial (§4).
pub fn matched_pair_key(t: &Trial) -> Result<String, CanonError> {
    digest(&json!({
        "component_kind": t.component_kind,
        "component_id": t.component_id,
        "component_digest": t.component_digest,
        "tested_bundle": t.tested_bundle,
        "comparison_bundle": t.comparison_bundle,
        "evaluator_epoch": t.evaluator_epoch,
        "cohort": t.cohort,
        "run_id": t.run_id,
        "runner_sha256": t.runner_sha256,
        "seed": t.seed,
    }))
}

/// The classification, first match wins (§5).
pub fn disposition(effect: f64, token_cost: u64, policy: &Policy) -> Disposition {
    if effect < -policy.neutral_effect {
        Disposition::Harmful
    } else if effect > policy.neutral_effect {
        Disposition::Retained
    } else if token_cost >= policy.high_token_cost {
        Disposition::DemotionCandidate
    } else {
        Disposition::Uncertain
    }
}

/// Why a trial or group yields no attribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectionCode {
    /// The trial id was seen before.
    DuplicateTrialId,
    /// The trial's epoch is not the one aggregated.
    EpochMismatch,
    /// A `component_correlated` trial.
    CorrelatedTrial,
    /// Tested bundle = comparison bundle.
    SameBundles,
    /// The matched-pair key was seen before.
    DuplicatePair,
    /// The group's trials disagree on the comparison bundle.
    MixedComparison,
    /// ... on the cohort.
    MixedCohort,
    /// ... on the baseline bundle.
    MixedBaseline,
}

impl RejectionCode {
    /// The spec's code.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectionCode::DuplicateTrialId => "duplicate_trial_id",
            RejectionCode::EpochMismatch => "epoch_mismatch",
            RejectionCode::CorrelatedTrial => "correlated_trial",
            RejectionCode::SameBundles => "same_bundles",
            RejectionCode::DuplicatePair => "duplicate_pair",
            RejectionCode::MixedComparison => "mixed_comparison",
            RejectionCode::MixedCohort => "mixed_cohort",
            RejectionCode::MixedBaseline => "mixed_baseline",
        }
    }
}

/// One rejection: a trial (by input position and id) or a whole group (the first trial's).
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    /// The code.
    pub code: RejectionCode,
    /// Position in the input of the trial concerned (the group's first trial for `mixed_*`).
    pub index: usize,
    /// That trial's id.
    pub trial_id: String,
}

/// What `attribute` yields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aggregation {
    /// One per surviving group, in group-key order; `supersedes` is left `None` (see
    /// [`link_supersedes`]).
    pub attributions: Vec<Attribution>,
    /// Every rejection, trial checks first (input order), then group failures.
    pub rejections: Vec<Rejection>,
}

/// The group key: (kind, id, digest, tested bundle, level).
type GroupKey<'a> = (&'a str, &'a str, &'a str, &'a str, EvidenceLevel);

fn key_of(t: &Trial) -> GroupKey<'_> {
    (
        &t.component_kind,
        &t.component_id,
        &t.component_digest,
        &t.tested_bundle,
        t.evidence_level,
    )
}

fn key_cmp(a: &GroupKey<'_>, b: &GroupKey<'_>) -> Ordering {
    utf16_cmp(a.0, b.0)
        .then_with(|| utf16_cmp(a.1, b.1))
        .then_with(|| utf16_cmp(a.2, b.2))
        .then_with(|| utf16_cmp(a.3, b.3))
        .then_with(|| utf16_cmp(a.4.as_str(), b.4.as_str()))
}

/// `attribute(trials, epoch, policy)` of §5. Errors only when a value has no canonical form.
pub fn attribute(
    trials: &[Trial],
    epoch: &str,
    policy: &Policy,
) -> Result<Aggregation, CanonError> {
    let mut rejections = Vec::new();
    let mut rejected = vec![false; trials.len()];
    let mut ids = HashSet::new();
    let mut keys = HashSet::new();
    let mut pair_keys = Vec::with_capacity(trials.len());
    for (i, t) in trials.iter().enumerate() {
        let key = matched_pair_key(t)?;
        let code = if !ids.insert(t.trial_id.as_str()) {
            Some(RejectionCode::DuplicateTrialId)
        } else if t.evaluator_epoch != epoch {
            Some(RejectionCode::EpochMismatch)
        } else if t.evidence_level == EvidenceLevel::ComponentCorrelated {
            Some(RejectionCode::CorrelatedTrial)
        } else if t.tested_bundle == t.comparison_bundle {
            Some(RejectionCode::SameBundles)
        } else if !keys.insert(key.clone()) {
            Some(RejectionCode::DuplicatePair)
        } else {
            None
        };
        if let (Some(code), Some(flag)) = (code, rejected.get_mut(i)) {
            *flag = true;
            rejections.push(Rejection {
                code,
                index: i,
                trial_id: t.trial_id.clone(),
            });
        }
        pair_keys.push(key);
    }

    let mut group_of: HashMap<GroupKey<'_>, usize> = HashMap::new();
    let mut groups: Vec<(GroupKey<'_>, Vec<usize>)> = Vec::new();
    for (i, t) in trials.iter().enumerate() {
        let k = key_of(t);
        let g = *group_of.entry(k).or_insert_with(|| {
            groups.push((k, Vec::new()));
            groups.len() - 1
        });
        if let Some((_, members)) = groups.get_mut(g) {
            members.push(i);
        }
    }
    groups.sort_by(|a, b| key_cmp(&a.0, &b.0));

    let mut attributions = Vec::new();
    for (_, members) in &groups {
        let mut failed = members.iter().any(|&i| rejected.get(i) == Some(&true));
        let accepted: Vec<&Trial> = members
            .iter()
            .filter(|&&i| rejected.get(i) == Some(&false))
            .filter_map(|&i| trials.get(i))
            .collect();
        let first = members.first().copied().unwrap_or(0);
        let first_id = trials
            .get(first)
            .map(|t| t.trial_id.clone())
            .unwrap_or_default();
        let mixed = [
            (
                RejectionCode::MixedComparison,
                mixed(&accepted, |t| &t.comparison_bundle),
            ),
            (RejectionCode::MixedCohort, mixed(&accepted, |t| &t.cohort)),
            (
                RejectionCode::MixedBaseline,
                mixed(&accepted, |t| &t.baseline_bundle),
            ),
        ];
        for (code, is_mixed) in mixed {
            if is_mixed {
                failed = true;
                rejections.push(Rejection {
                    code,
                    index: first,
                    trial_id: first_id.clone(),
                });
            }
        }
        if failed || accepted.is_empty() {
            continue;
        }
        let with_keys: Vec<(&Trial, &String)> = members
            .iter()
            .filter_map(|&i| Some((trials.get(i)?, pair_keys.get(i)?)))
            .collect();
        attributions.push(aggregate(with_keys, epoch, policy)?);
    }
    Ok(Aggregation {
        attributions,
        rejections,
    })
}

fn mixed(trials: &[&Trial], field: impl Fn(&Trial) -> &String) -> bool {
    match trials.first() {
        Some(first) => trials.iter().any(|t| field(t) != field(first)),
        None => false,
    }
}

fn count_f64(n: usize) -> f64 {
    // Counts of trials stay far below 2^53, where usize → f64 is exact.
    u32::try_from(n)
        .map(f64::from)
        .unwrap_or(f64::from(u32::MAX))
}

/// One group's attribution, its trials taken in `trial_ids` order.
fn aggregate(
    mut trials: Vec<(&Trial, &String)>,
    epoch: &str,
    policy: &Policy,
) -> Result<Attribution, CanonError> {
    trials.sort_by(|a, b| utf16_cmp(&a.0.trial_id, &b.0.trial_id));
    let n = trials.len();
    let effects: Vec<f64> = trials.iter().map(|(t, _)| trial_effect(t)).collect();
    let sum = effects.iter().fold(0.0, |acc, e| acc + e);
    let effect = round6(sum / count_f64(n));
    let positive = effects.iter().filter(|e| **e > 0.0).count();
    let negative = effects.iter().filter(|e| **e < 0.0).count();
    let nonzero = positive + negative;
    let agreement = if nonzero == 0 {
        1.0
    } else {
        count_f64(positive.max(negative)) / count_f64(nonzero)
    };
    let confidence = round6((count_f64(n) / FULL_CONFIDENCE_TRIALS).min(1.0) * agreement);
    let first = trials.first().map(|(t, _)| *t);
    let field = |f: fn(&Trial) -> &String| first.map(|t| f(t).clone()).unwrap_or_default();
    let token_cost = trials.iter().map(|(t, _)| t.token_cost).max().unwrap_or(0);
    let tested_at = trials
        .iter()
        .map(|(t, _)| t.tested_at.as_str())
        .max()
        .unwrap_or("")
        .to_owned();
    let interactions = sorted_unique(
        trials
            .iter()
            .flat_map(|(t, _)| t.interactions.iter().cloned())
            .collect(),
    );
    let trial_ids = sorted_unique(trials.iter().map(|(t, _)| t.trial_id.clone()).collect());
    let matched_pair_keys = sorted_unique(trials.iter().map(|(_, k)| (*k).clone()).collect());
    let source_trial_digests = sorted_unique(
        trials
            .iter()
            .map(|(t, _)| t.source_digest.clone())
            .collect(),
    );
    let mut a = Attribution {
        attribution_id: String::new(),
        component_kind: field(|t| &t.component_kind),
        component_id: field(|t| &t.component_id),
        component_digest: field(|t| &t.component_digest),
        tested_bundle: field(|t| &t.tested_bundle),
        evidence_level: first
            .map(|t| t.evidence_level)
            .unwrap_or(EvidenceLevel::PairedShadow),
        comparison_bundle: field(|t| &t.comparison_bundle),
        cohort: field(|t| &t.cohort),
        baseline_bundle: field(|t| &t.baseline_bundle),
        evaluator_epoch: epoch.to_owned(),
        effect,
        confidence,
        token_cost,
        tested_at,
        interactions,
        trial_ids,
        matched_pair_keys,
        source_trial_digests,
        policy: *policy,
        disposition: disposition(effect, token_cost, policy),
        supersedes: None,
    };
    a.attribution_id = attribution_id(&a)?;
    Ok(a)
}

/// `attribution_id` of §5, from the record's binding fields.
pub fn attribution_id(a: &Attribution) -> Result<String, CanonError> {
    digest(&json!({
        "component_kind": a.component_kind,
        "component_id": a.component_id,
        "component_digest": a.component_digest,
        "tested_bundle": a.tested_bundle,
        "comparison_bundle": a.comparison_bundle,
        "evaluator_epoch": a.evaluator_epoch,
        "cohort": a.cohort,
        "evidence_level": a.evidence_level.as_str(),
        "neutral_effect": a.policy.neutral_effect,
        "high_token_cost": a.policy.high_token_cost,
        "trial_ids": a.trial_ids,
        "matched_pair_keys": a.matched_pair_keys,
        "source_trial_digests": a.source_trial_digests,
    }))
}

/// The component an attribution concerns, for `supersedes` links.
pub type ComponentKey = (String, String, String);

/// The component key of an attribution.
pub fn component_key(a: &Attribution) -> ComponentKey {
    (
        a.component_kind.clone(),
        a.component_id.clone(),
        a.component_digest.clone(),
    )
}

/// Sets each attribution's `supersedes` to the latest earlier attribution of its component
/// (`latest` holds the ledger's, and is updated as the new ones are linked, in order).
pub fn link_supersedes(atts: &mut [Attribution], latest: &mut HashMap<ComponentKey, String>) {
    for a in atts {
        let key = component_key(a);
        a.supersedes = latest.get(&key).cloned();
        latest.insert(key, a.attribution_id.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round6_follows_the_operations_not_decimal_rounding() {
        assert_eq!(round6(0.8 - 0.6), 0.2);
        assert_eq!(round6(-1.0 / 3.0), -0.333333);
        assert!(round6(-0.0).is_sign_positive());
        assert!(round6(-1e-9).is_sign_positive());
    }

    #[test]
    fn dispositions_take_the_first_matching_rule() {
        let p = Policy::default();
        assert_eq!(disposition(-0.1, 999, &p), Disposition::Harmful);
        assert_eq!(disposition(0.1, 999, &p), Disposition::Retained);
        assert_eq!(disposition(0.0, 256, &p), Disposition::DemotionCandidate);
        assert_eq!(disposition(0.0, 255, &p), Disposition::Uncertain);
        let half = Policy {
            neutral_effect: 0.5,
            high_token_cost: 256,
        };
        assert_eq!(disposition(-0.5, 0, &half), Disposition::Uncertain);
        assert_eq!(disposition(-0.666667, 0, &half), Disposition::Harmful);
    }
}
