//! The cost verdict and the four classes (influence.md §8): per-probe cost stats, loops and
//! tokens saved against the baseline, the "holds across seeds" rule, the leave-one-out placebo
//! band, and `classify_suspect`. The cost verdict claims only "removal reduced cost".
//!
//! Pure functions; no processes, no I/O.

use crate::analysis::report::{CostStats, CostVerdict, Range3, SuspectClass, Verdict};
use std::collections::HashMap;

/// A suspect must save at least this many loops (median) to be a cost cause.
pub const MIN_LOOPS_SAVED: f64 = 1.0;

/// The median; of an even count, the mean of the two middle values; of none, 0.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    let hi = v.get(n / 2).copied().unwrap_or(0.0);
    if n % 2 == 1 {
        hi
    } else {
        let lo = v.get(n / 2 - 1).copied().unwrap_or(0.0);
        (lo + hi) / 2.0
    }
}

fn range3(values: &[f64]) -> Option<Range3> {
    if values.is_empty() {
        return None;
    }
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    Some(Range3 {
        median: median(values),
        min,
        max,
    })
}

/// Cost stats of a probe of `samples` samples from the values the seeds reported (each list holds
/// only the seeds that reported that field); `None` when no seed reported anything.
pub fn cost_stats(samples: usize, loops: &[f64], tokens: &[f64]) -> Option<CostStats> {
    if loops.is_empty() && tokens.is_empty() {
        return None;
    }
    Some(CostStats {
        samples,
        loops: range3(loops),
        tokens: range3(tokens),
    })
}

/// One suspect of an ablation tier, as the cost verdict sees it.
#[derive(Clone, Debug)]
pub struct CostSubject<'a> {
    /// Its id (the placebo band leaves out members with the same id).
    pub id: &'a str,
    /// Its flip verdict (`None`: not judged).
    pub verdict: Option<Verdict>,
    /// Its probe's cost stats.
    pub stats: Option<&'a CostStats>,
}

/// The cost verdict of every suspect of a tier, in order (`None` for a suspect without cost
/// stats). Linear in the number of suspects.
pub fn assign_costs(
    baseline: Option<&CostStats>,
    suspects: &[CostSubject<'_>],
) -> Vec<Option<CostVerdict>> {
    let median_of = |s: Option<&CostStats>, tokens: bool| {
        s.and_then(|s| if tokens { s.tokens } else { s.loops })
            .map(|r| r.median)
    };
    let base_loops = median_of(baseline, false);
    let base_tokens = median_of(baseline, true);
    let saved = |stats: &CostStats, tokens: bool| match (
        if tokens { base_tokens } else { base_loops },
        median_of(Some(stats), tokens),
    ) {
        (Some(b), Some(s)) => b - s,
        _ => 0.0,
    };

    // The placebo population: suspects with cost stats whose verdict is not `confirmed`.
    let population: Vec<(&str, f64)> = suspects
        .iter()
        .filter(|s| s.verdict != Some(Verdict::Confirmed))
        .filter_map(|s| s.stats.map(|st| (s.id, saved(st, false))))
        .collect();
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for (id, _) in &population {
        *per_id.entry(id).or_insert(0) += 1;
    }
    // The best member, and the best member whose id differs from the best's: enough to find the
    // maximum of "everyone but X's id" for any X without a quadratic scan.
    let best = population
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let second = best.and_then(|(bid, _)| {
        population
            .iter()
            .filter(|(id, _)| *id != bid)
            .map(|(_, v)| *v)
            .max_by(f64::total_cmp)
    });

    suspects
        .iter()
        .map(|s| {
            let stats = s.stats?;
            let loops_saved = saved(stats, false);
            let tokens_saved = saved(stats, true);
            let consistent = match (stats.loops, base_loops) {
                (Some(l), Some(b)) => l.max <= b,
                _ => false,
            };
            let band_len = population.len() - per_id.get(s.id).copied().unwrap_or(0);
            let placebo_max = match best {
                _ if band_len == 0 => 0.0,
                Some((bid, v)) if bid != s.id => v,
                _ => second.unwrap_or(0.0),
            };
            let stable = band_len > 0 && consistent;
            Some(CostVerdict {
                reduced_cost_on_removal: stable
                    && loops_saved >= MIN_LOOPS_SAVED
                    && loops_saved > placebo_max,
                loops_saved,
                tokens_saved,
                stable,
            })
        })
        .collect()
}

/// `classify_suspect`: flips = verdict `confirmed`; cost cause = a cost verdict that is
/// `reduced_cost_on_removal` and `stable`.
pub fn classify(verdict: Option<Verdict>, cost: Option<&CostVerdict>) -> SuspectClass {
    let flips = verdict == Some(Verdict::Confirmed);
    let cost_cause = cost.is_some_and(|c| c.reduced_cost_on_removal && c.stable);
    match (flips, cost_cause) {
        (true, true) => SuspectClass::Both,
        (true, false) => SuspectClass::ContentBug,
        (false, true) => SuspectClass::CostCause,
        (false, false) => SuspectClass::NoDetectedEffect,
    }
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
