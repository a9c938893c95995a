//! Re-ablation planning (attribution-ledger.md §8): which earlier conclusions to re-test under a
//! hard budget of runner calls. [`plan`] is the pure function of the parity fixture; [`inputs`]
//! derives its inputs (generations, plateau, current bundle, candidates) from a verified ledger,
//! ignoring failed lines. No I/O.

use super::bundle::{Bundle, BundleError, Entry, REPLAY_KIND, baseline_of};
use super::canonical::utf16_cmp;
use super::record::{Attribution, Record};
use super::verify::{Checked, Status};
use crate::analysis::model::Run;
use crate::experiments::spec::ExperimentKind;
use std::collections::{HashMap, HashSet};

/// Divisor of the token term: `token_cost / 16`.
pub const TOKENS_PER_PRIORITY_POINT: f64 = 16.0;
/// Weight of the uncertainty term: `(1 − confidence) · 10`.
pub const UNCERTAINTY_WEIGHT: f64 = 10.0;
/// Weight of the interaction term: `interaction_risk · 10`.
pub const INTERACTION_WEIGHT: f64 = 10.0;
/// The term for a candidate last tested in another bundle.
pub const BUNDLE_CHANGED_TERM: f64 = 15.0;
/// Interactions at which the risk reaches 1: `min(1, |interactions| / 4)`.
pub const FULL_RISK_INTERACTIONS: f64 = 4.0;

/// One earlier conclusion that could be re-tested.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Kind.
    pub component_kind: String,
    /// Id.
    pub component_id: String,
    /// Digest.
    pub component_digest: String,
    /// The record's token cost (0 if missing).
    pub token_cost: u64,
    /// Runner calls a re-test costs (K; the shared baseline is not charged).
    pub estimated_cost: u64,
    /// The record's confidence (0 when legacy or from another epoch).
    pub confidence: f64,
    /// Generation of its cohort (0 if unknown).
    pub last_tested_generation: u64,
    /// The bundle its batch's baseline ran with.
    pub baseline_bundle: String,
    /// `min(1, |interactions| / 4)`.
    pub interaction_risk: f64,
    /// The unit is in the current bundle (re-test by ablation), else by restoration.
    pub in_current_bundle: bool,
}

impl Candidate {
    /// `ablate` when the unit is in the current bundle, else `restore`.
    pub fn experiment(&self) -> ExperimentKind {
        if self.in_current_bundle {
            ExperimentKind::Ablate
        } else {
            ExperimentKind::Restore
        }
    }
}

/// The ledger-wide inputs of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanInputs {
    /// Number of cohorts.
    pub current_generation: u64,
    /// Generation of the newest cohort holding a superseding attribution (0 if none).
    pub last_reablation_generation: u64,
    /// Cohorts without improvement, newest first.
    pub plateau_length: u64,
    /// B of `--run`, else the newest cohort's baseline bundle; unknown for an empty ledger.
    pub current_bundle: Option<String>,
}

/// The knobs: `cadence`, `plateau`, `budget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanPolicy {
    /// Re-ablate every C generations.
    pub cadence: u64,
    /// Re-ablate after P generations without improvement.
    pub plateau: u64,
    /// The most runner calls to spend.
    pub budget: u64,
}

/// Why a plan is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// plateau_length ≥ P.
    Plateau,
    /// current − last ≥ C.
    Cadence,
    /// Some candidate was tested in another bundle.
    BundleChanged,
    /// Nothing is due.
    NotDue,
}

impl Trigger {
    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Plateau => "plateau",
            Trigger::Cadence => "cadence",
            Trigger::BundleChanged => "bundle_changed",
            Trigger::NotDue => "not_due",
        }
    }
}

/// The five terms of a priority.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    /// token_cost / 16.
    pub tokens: f64,
    /// (1 − confidence) · 10.
    pub uncertainty: f64,
    /// max(0, current − last_tested_generation).
    pub age: f64,
    /// interaction_risk · 10.
    pub interaction: f64,
    /// 15 when tested in another bundle.
    pub bundle_changed: f64,
}

/// A candidate with its priority.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The candidate.
    pub candidate: Candidate,
    /// Sum of the terms, left to right.
    pub priority: f64,
    /// The terms.
    pub terms: Terms,
}

/// The plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Why (or `not_due`).
    pub trigger: Trigger,
    /// Runner calls selected.
    pub spent: u64,
    /// To re-test, in priority order.
    pub selected: Vec<Planned>,
    /// Not now, in priority order.
    pub deferred: Vec<Planned>,
}

/// A ledger integer as binary64: exact, since the strict reader keeps them below 2^53.
fn exact_f64(n: u64) -> f64 {
    n as f64
}

/// `plan(candidates, inputs, policy)` of §8.
pub fn plan(candidates: &[Candidate], inputs: &PlanInputs, policy: &PlanPolicy) -> Plan {
    let current = inputs.current_bundle.as_deref();
    let changed = |c: &Candidate| current.is_some_and(|b| b != c.baseline_bundle);
    let mut planned: Vec<Planned> = candidates
        .iter()
        .map(|c| {
            let terms = Terms {
                tokens: exact_f64(c.token_cost) / TOKENS_PER_PRIORITY_POINT,
                uncertainty: (1.0 - c.confidence) * UNCERTAINTY_WEIGHT,
                age: exact_f64(
                    inputs
                        .current_generation
                        .saturating_sub(c.last_tested_generation),
                ),
                interaction: c.interaction_risk * INTERACTION_WEIGHT,
                bundle_changed: if changed(c) { BUNDLE_CHANGED_TERM } else { 0.0 },
            };
            let priority = terms.tokens
                + terms.uncertainty
                + terms.age
                + terms.interaction
                + terms.bundle_changed;
            Planned {
                candidate: c.clone(),
                priority,
                terms,
            }
        })
        .collect();
    planned.sort_by(|a, b| {
        b.priority
            .total_cmp(&a.priority)
            .then_with(|| utf16_cmp(&a.candidate.component_kind, &b.candidate.component_kind))
            .then_with(|| utf16_cmp(&a.candidate.component_id, &b.candidate.component_id))
            .then_with(|| utf16_cmp(&a.candidate.component_digest, &b.candidate.component_digest))
    });
    let trigger = if inputs.plateau_length >= policy.plateau {
        Trigger::Plateau
    } else if inputs
        .current_generation
        .saturating_sub(inputs.last_reablation_generation)
        >= policy.cadence
    {
        Trigger::Cadence
    } else if candidates.iter().any(changed) {
        Trigger::BundleChanged
    } else {
        Trigger::NotDue
    };
    let mut out = Plan {
        trigger,
        spent: 0,
        selected: Vec::new(),
        deferred: Vec::new(),
    };
    for p in planned {
        let after = out.spent.checked_add(p.candidate.estimated_cost);
        match after {
            Some(s) if trigger != Trigger::NotDue && s <= policy.budget => {
                out.spent = s;
                out.selected.push(p);
            }
            _ => out.deferred.push(p),
        }
    }
    out
}

/// What `--run` contributes: its baseline bundle and the digests of its available-but-unsent
/// units.
#[derive(Clone, Debug)]
pub struct RunBundles {
    /// B of the run.
    pub baseline: Bundle,
    /// Component digests of units some step had available but no `llm` step sent.
    pub unsent: HashSet<String>,
}

/// B of `run` and the digests of the units some step had available but no `llm` step sent.
pub fn run_bundles(run: &Run) -> Result<RunBundles, BundleError> {
    let baseline = baseline_of(run)?.bundle;
    let sent: HashSet<&str> = baseline
        .entries()
        .iter()
        .map(|e| e.entry.id.as_str())
        .collect();
    let mut unsent = HashSet::new();
    for step in &run.steps {
        for id in step
            .context
            .iter()
            .flat_map(|c| c.available.iter().flatten())
        {
            if !sent.contains(id.as_str())
                && let Some(u) = run.unit(id.as_str())
                && let Ok(d) = Entry::of_unit(u).digest()
            {
                unsent.insert(d);
            }
        }
    }
    Ok(RunBundles { baseline, unsent })
}

/// `--samples` resolved as the runner resolves it: `max(2, floor(x))`, non-finite → 3.
pub fn samples_per_probe(x: f64) -> u64 {
    if !x.is_finite() {
        return 3;
    }
    let floor = x.floor().clamp(2.0, 1e6);
    super::canonical::exact_u64(floor).unwrap_or(2)
}

/// Derives the plan's inputs and candidates from a verified ledger (§8), for `epoch`, with `k`
/// runner calls per re-test. Failed lines never count.
pub fn inputs(
    checked: &Checked,
    epoch: &str,
    run: Option<&RunBundles>,
    k: u64,
) -> (PlanInputs, Vec<Candidate>) {
    let mut generation: HashMap<&str, u64> = HashMap::new();
    let mut first_bundle: Vec<&str> = Vec::new();
    let mut baseline_scores: Vec<(f64, u64)> = Vec::new();
    let mut latest: HashMap<(&str, &str, &str), (&Attribution, Status)> = HashMap::new();
    let mut order: Vec<(&str, &str, &str)> = Vec::new();
    for (_, p, status) in checked.records() {
        match &p.record {
            Record::Sample(s) if status != Status::Failed => {
                let g = match generation.get(s.cohort.as_str()) {
                    Some(g) => *g,
                    None => {
                        let g = u64::try_from(generation.len() + 1).unwrap_or(u64::MAX);
                        generation.insert(&s.cohort, g);
                        first_bundle.push(&s.baseline_bundle);
                        baseline_scores.push((0.0, 0));
                        g
                    }
                };
                if s.experiment == ExperimentKind::Baseline
                    && let Some(score) = s.score()
                    && let Some(slot) = usize::try_from(g - 1)
                        .ok()
                        .and_then(|i| baseline_scores.get_mut(i))
                {
                    slot.0 += score;
                    slot.1 += 1;
                }
            }
            Record::Attribution(a) => {
                let key = (
                    a.component_kind.as_str(),
                    a.component_id.as_str(),
                    a.component_digest.as_str(),
                );
                if latest.insert(key, (a, status)).is_none() {
                    order.push(key);
                }
            }
            _ => {}
        }
    }
    let current_generation = u64::try_from(generation.len()).unwrap_or(u64::MAX);
    let last_reablation_generation = checked
        .records()
        .filter(|(_, _, s)| *s != Status::Failed)
        .filter_map(|(_, p, _)| match &p.record {
            Record::Attribution(a) if a.supersedes.is_some() => {
                generation.get(a.cohort.as_str()).copied()
            }
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let current_bundle = match run {
        Some(r) => Some(r.baseline.digest().to_owned()),
        None => first_bundle.last().map(|b| (*b).to_owned()),
    };
    let current_manifest = match run {
        Some(r) => Some(
            r.baseline
                .entries()
                .iter()
                .map(|e| e.digest.as_str())
                .collect::<HashSet<&str>>(),
        ),
        None => current_bundle.as_deref().and_then(|d| manifest(checked, d)),
    };
    let mut candidates = Vec::new();
    for key in order {
        let Some(&(a, status)) = latest.get(&key) else {
            continue;
        };
        if status == Status::Failed || a.component_kind == REPLAY_KIND {
            continue;
        }
        let in_current = current_manifest
            .as_ref()
            .is_some_and(|m| m.contains(a.component_digest.as_str()));
        if let Some(r) = run
            && !in_current
            && !r.unsent.contains(&a.component_digest)
        {
            continue;
        }
        let trusted = status != Status::LegacyUnverified && a.evaluator_epoch == epoch;
        let risk = (exact_f64(u64::try_from(a.interactions.len()).unwrap_or(u64::MAX))
            / FULL_RISK_INTERACTIONS)
            .min(1.0);
        candidates.push(Candidate {
            component_kind: a.component_kind.clone(),
            component_id: a.component_id.clone(),
            component_digest: a.component_digest.clone(),
            token_cost: a.token_cost,
            estimated_cost: k,
            confidence: if trusted { a.confidence } else { 0.0 },
            last_tested_generation: generation.get(a.cohort.as_str()).copied().unwrap_or(0),
            baseline_bundle: a.baseline_bundle.clone(),
            interaction_risk: risk,
            in_current_bundle: in_current,
        });
    }
    let inputs = PlanInputs {
        current_generation,
        last_reablation_generation,
        plateau_length: plateau_length(&baseline_scores),
        current_bundle,
    };
    (inputs, candidates)
}

/// The baseline bundle of the newest cohort (by first sample), ignoring failed lines.
pub fn newest_baseline(checked: &Checked) -> Option<&str> {
    let mut seen = HashSet::new();
    let mut newest = None;
    for (_, p, status) in checked.records() {
        if let Record::Sample(s) = &p.record
            && status != Status::Failed
            && seen.insert(s.cohort.as_str())
        {
            newest = Some(s.baseline_bundle.as_str());
        }
    }
    newest
}

/// Walking back from the newest cohort, the cohorts whose mean baseline score is not above the
/// best mean of all earlier cohorts; cohorts without scored baselines are skipped.
fn plateau_length(scores: &[(f64, u64)]) -> u64 {
    let means: Vec<f64> = scores
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(sum, n)| sum / exact_f64(*n))
        .collect();
    let mut best_before = Vec::with_capacity(means.len());
    let mut best = f64::NEG_INFINITY;
    for m in &means {
        best_before.push(best);
        best = best.max(*m);
    }
    let mut count = 0;
    for (m, before) in means.iter().zip(&best_before).skip(1).rev() {
        if m > before {
            break;
        }
        count += 1;
    }
    count
}

/// The component digests of the verified bundle record with this digest.
fn manifest<'a>(checked: &'a Checked, digest: &str) -> Option<HashSet<&'a str>> {
    checked.records().find_map(|(_, p, s)| match &p.record {
        Record::Bundle(b) if b.digest == digest && s != Status::Failed => {
            Some(b.units.iter().map(|(_, d)| d.as_str()).collect())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plateau_counts_back_to_the_last_improvement() {
        assert_eq!(plateau_length(&[]), 0);
        assert_eq!(plateau_length(&[(1.0, 1)]), 0);
        assert_eq!(plateau_length(&[(0.5, 1), (0.5, 1), (0.4, 1)]), 2);
        assert_eq!(plateau_length(&[(0.5, 1), (0.9, 1), (0.4, 1)]), 1);
        assert_eq!(plateau_length(&[(0.5, 1), (0.0, 0), (0.4, 1)]), 1);
    }

    #[test]
    fn samples_resolve_like_the_runner() {
        assert_eq!(samples_per_probe(1.0), 2);
        assert_eq!(samples_per_probe(3.7), 3);
        assert_eq!(samples_per_probe(f64::NAN), 3);
        assert_eq!(samples_per_probe(-5.0), 2);
    }
}
