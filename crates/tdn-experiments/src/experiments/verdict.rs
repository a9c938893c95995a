//! Turning a probe's samples into a verdict (influence.md §7): sample resolution, majority,
//! similarity statistics, baseline stability and its flags, the verdict order, and the claim text
//! that says what a verdict proves and no more (§9).
//!
//! Pure functions over counts; no processes, no I/O. The session feeds them.

use crate::analysis::model::Run;
use crate::analysis::report::{SimilarityStats, Verdict};
use crate::analysis::say::step_label;
use std::collections::BTreeSet;

/// Samples per probe when none is set, or the setting is not a finite number.
pub const DEFAULT_SAMPLES: usize = 3;
/// Never a single-run verdict.
pub const MIN_SAMPLES: usize = 2;

/// The flag of a tier whose baseline flipped at least once.
pub const FLAG_BASELINE_UNSTABLE: &str = "baseline-unstable";
/// The flag of a tier whose baseline had an errored (or unfinished) sample.
pub const FLAG_BASELINE_INCOMPLETE: &str = "baseline-incomplete";

/// `max(2, floor(x))`; unset or non-finite gives 3.
pub fn resolve_samples(x: Option<f64>) -> usize {
    match x {
        Some(x) if x.is_finite() => {
            let f = x.floor();
            if f <= MIN_SAMPLES as f64 {
                MIN_SAMPLES
            } else if f >= u32::MAX as f64 {
                // Far beyond any budget; saturate instead of wrapping.
                u32::MAX as usize
            } else {
                // In range (2, u32::MAX) and integral, so the conversion is exact.
                f as usize
            }
        }
        _ => DEFAULT_SAMPLES,
    }
}

/// A strict majority of the requested samples: `flips · 2 > samples` (2 of 4 is not one).
pub fn majority(flips: usize, samples: usize) -> bool {
    flips.saturating_mul(2) > samples
}

/// Mean (sum then divide), min, max and population standard deviation, in the order given; all
/// zero for no values.
pub fn similarity_stats(values: &[f64]) -> SimilarityStats {
    if values.is_empty() {
        return SimilarityStats::default();
    }
    let n = values.len() as f64;
    let mut sum = 0.0;
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for &v in values {
        sum += v;
        min = min.min(v);
        max = max.max(v);
    }
    let mean = sum / n;
    let mut sq = 0.0;
    for &v in values {
        sq += (v - mean) * (v - mean);
    }
    SimilarityStats {
        mean,
        min,
        max,
        stdev: (sq / n).sqrt(),
    }
}

/// What a probe's samples came to, in seed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Samples requested.
    pub samples: usize,
    /// Samples that flipped.
    pub flips: usize,
    /// Samples that produced an answer.
    pub completed: usize,
    /// Samples that errored.
    pub errors: usize,
    /// Each completed sample's similarity to the original, in seed order (when measured).
    pub similarities: Vec<f64>,
    /// What answered its completed samples: `None` for the agent's whole run, `Some(step)` for
    /// one recorded model call re-sent alone (the runner's `replayed_call`); one entry per kind.
    pub answered_by: BTreeSet<Option<String>>,
}

impl Tally {
    /// A baseline is stable only with zero flips and every sample completed.
    pub fn is_stable_baseline(&self) -> bool {
        self.flips == 0 && self.completed == self.samples && self.samples > 0
    }

    /// The flags this tally raises when it is a tier's baseline.
    pub fn baseline_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.flips > 0 {
            flags.push(FLAG_BASELINE_UNSTABLE.to_owned());
        }
        if self.completed < self.samples {
            flags.push(FLAG_BASELINE_INCOMPLETE.to_owned());
        }
        flags
    }

    /// Similarity statistics over the measured samples.
    pub fn similarity(&self) -> SimilarityStats {
        similarity_stats(&self.similarities)
    }
}

/// The verdict of `probe` against its tier's `baseline`, first rule that applies: nothing
/// completed at all (baseline included) → error; unstable or incomplete baseline →
/// inconclusive; majority → confirmed; any flip, error or missing sample → inconclusive;
/// otherwise not-confirmed.
pub fn verdict(baseline: &Tally, probe: &Tally) -> Verdict {
    if probe.completed == 0 && baseline.completed == 0 {
        return Verdict::Error;
    }
    if !baseline.is_stable_baseline() || Scope::of(baseline, probe) == Scope::Mixed {
        return Verdict::Inconclusive;
    }
    if majority(probe.flips, probe.samples) {
        return Verdict::Confirmed;
    }
    if probe.flips > 0 || probe.completed < probe.samples {
        return Verdict::Inconclusive;
    }
    Verdict::NotConfirmed
}

/// What a probe's samples and its baseline's were answers of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The agent's whole run (a runner that re-runs the agent).
    Run,
    /// One recorded model call, re-sent alone (the built-in chat runner).
    Call(String),
    /// Samples answered by different things: they cannot be compared.
    Mixed,
}

impl Scope {
    /// The scope of a probe judged against `baseline`.
    pub fn of(baseline: &Tally, probe: &Tally) -> Scope {
        let all: BTreeSet<&Option<String>> = baseline
            .answered_by
            .iter()
            .chain(&probe.answered_by)
            .collect();
        let mut it = all.into_iter();
        match (it.next(), it.next()) {
            (Some(_), Some(_)) => Scope::Mixed,
            (Some(Some(step)), None) => Scope::Call(step.clone()),
            _ => Scope::Run,
        }
    }
}

/// How a claim names what changed and how often, for the scope of its samples.
pub struct Words {
    /// `the outcome`, or `the output of model call 's3'` (a call with a span id by its name and
    /// position: `model call 'ChatOpenAI' (position 8)`).
    pub outcome: String,
    /// `outcome` (no article), or as `outcome`.
    pub bare: String,
    /// `reruns`, or `re-sends`.
    pub reruns: &'static str,
}

impl Words {
    /// The words for `scope`, naming a call as `run` names its step.
    pub fn of(scope: &Scope, run: &Run) -> Words {
        match scope {
            Scope::Call(step) => {
                let outcome = format!("the output of model call {}", step_label(run, step));
                Words {
                    bare: outcome.clone(),
                    outcome,
                    reruns: "re-sends",
                }
            }
            Scope::Run | Scope::Mixed => Words {
                outcome: "the outcome".to_owned(),
                bare: "outcome".to_owned(),
                reruns: "reruns",
            },
        }
    }
}

/// What a confirmed claim is about (before and after its flip rule and sample count): this
/// scenario, or only the call the runner re-sent.
fn about(scope: &Scope, run: &Run) -> (String, String) {
    match scope {
        Scope::Call(step) => (
            format!(
                "a causal claim about the output of model call {}",
                step_label(run, step)
            ),
            ", not about the whole run's answer: the runner re-sent that one recorded call, and no other step was re-run".to_owned(),
        ),
        Scope::Run | Scope::Mixed => ("a causal claim about this scenario".to_owned(), String::new()),
    }
}

/// The display claim of a verdict (influence.md §7, §9): the verdict in capitals, the
/// intervention, flips as `f/n`, and for a confirmation the mean `similarity` ± stdev; it says
/// why when inconclusive and never claims more than the verdict holds. `rule` names the flip test.
/// When the runner answered with one re-sent model call (`Scope::Call`), it says that call's
/// output changed, not the run's answer.
pub fn claim(
    verdict: Verdict,
    what: &crate::experiments::intervention::Intervention,
    probe: &Tally,
    similarity: &SimilarityStats,
    baseline: &Tally,
    rule: &str,
    run: &Run,
) -> String {
    let act = what.describe();
    let scope = Scope::of(baseline, probe);
    let Words {
        outcome,
        bare,
        reruns,
    } = Words::of(&scope, run);
    let f = probe.flips;
    let n = probe.samples;
    let errs = if probe.errors > 0 {
        format!("; {} of {n} {reruns} errored", probe.errors)
    } else {
        String::new()
    };
    if scope == Scope::Mixed && verdict != Verdict::Error {
        let mut kinds: Vec<String> = baseline
            .answered_by
            .iter()
            .chain(&probe.answered_by)
            .map(|a| match a {
                None => "the agent's whole run".to_owned(),
                Some(s) => format!("model call {} re-sent alone", step_label(run, s)),
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        return format!(
            "INCONCLUSIVE: the runner answered these reruns from different things ({}), so their answers cannot be compared ({act} flipped {f}/{n}{errs})",
            kinds.join(", ")
        );
    }
    match verdict {
        Verdict::Error => format!(
            "ERROR: no rerun completed, the baseline's included, so nothing was measured about {act}; the errors say why (the runner, or a flip rule that is a command)"
        ),
        Verdict::Confirmed if baseline.is_stable_baseline() => {
            let s = similarity;
            let (head, tail) = about(&scope, run);
            format!(
                "CAUSAL: {act} changed {outcome} in {f}/{n} {reruns} (similarity to the recorded answer {:.3} ± {:.3}) against a stable baseline{errs}; {head} under the flip rule '{rule}' with {n} samples{tail}",
                s.mean, s.stdev
            )
        }
        Verdict::Inconclusive | Verdict::Confirmed if baseline.flips > 0 => format!(
            "INCONCLUSIVE: the unchanged scenario itself changed {bare} in {}/{} baseline {reruns}, so no verdict can be trusted ({act} flipped {f}/{n}{errs})",
            baseline.flips, baseline.samples
        ),
        Verdict::Inconclusive | Verdict::Confirmed if !baseline.is_stable_baseline() => format!(
            "INCONCLUSIVE: {} of {} baseline {reruns} did not complete, so the unchanged outcome is not known and no verdict can be trusted ({act} flipped {f}/{n}{errs})",
            baseline.samples.saturating_sub(baseline.completed),
            baseline.samples
        ),
        Verdict::Inconclusive if f > 0 => format!(
            "INCONCLUSIVE: {act} changed {outcome} in {f}/{n} {reruns}, below a majority{errs}; raise the samples or check the baseline's stability"
        ),
        Verdict::Inconclusive => format!(
            "INCONCLUSIVE: {act} changed {outcome} in {f}/{n} {reruns}{errs}; the {reruns} that did not complete could have gone either way; fix what the errors name (the runner, or a flip rule that is a command) and run again"
        ),
        Verdict::Confirmed | Verdict::NotConfirmed => format!(
            "NOT CONFIRMED: {act} did not change {outcome} in {n} {reruns}; its rank stays a correlational proxy, not a cause or an acquittal"
        ),
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
