//! Turning a session's samples into results: tallies in seed order, flip verdicts against each
//! probe's baseline, claims, cost stats, the cost verdicts of each ablation tier, and classes.
//! Pure functions over the collected samples.

use super::{Probe, ProbeId, ProbeOutcome, SampleResult, SessionOutcome, SessionPlan};
use crate::analysis::model::Run;
use crate::analysis::report::{CostStats, ProbeResult, SimilarityStats, Verdict};
use crate::experiments::cost::{CostSubject, assign_costs, classify, cost_stats};
use crate::experiments::event::EventKind;
use crate::experiments::intervention::{Intervention, quoted};
use crate::experiments::runner::{SampleErrorKind, Spent};
use crate::experiments::verdict::{self, Tally};

/// Counts over a probe's samples in seed order; cancelled and never-run samples count as neither
/// completed nor errored.
pub(super) fn tally_of(slots: &[Option<SampleResult>], samples: usize) -> Tally {
    let mut t = Tally {
        samples,
        ..Tally::default()
    };
    for r in slots.iter().flatten() {
        match &r.outcome {
            Ok(j) => {
                t.completed += 1;
                t.answered_by.insert(j.replayed_call.clone());
                if j.flipped {
                    t.flips += 1;
                }
                if let Some(s) = j.similarity {
                    t.similarities.push(s);
                }
            }
            Err(e) if e.kind == SampleErrorKind::Cancelled => {}
            Err(_) => t.errors += 1,
        }
    }
    t
}

/// Every sample ran to its end (none cancelled, none left).
fn complete(slots: &[Option<SampleResult>]) -> bool {
    slots.iter().all(|r| {
        r.as_ref()
            .is_some_and(|r| !matches!(&r.outcome, Err(e) if e.kind == SampleErrorKind::Cancelled))
    })
}

fn cost_of(slots: &[Option<SampleResult>], samples: usize) -> Option<CostStats> {
    let answered = || {
        slots
            .iter()
            .flatten()
            .filter_map(|r| r.outcome.as_ref().ok())
    };
    let loops: Vec<f64> = answered().filter_map(|j| j.cost.loops).collect();
    let tokens: Vec<f64> = answered().filter_map(|j| j.cost.tokens).collect();
    cost_stats(samples, &loops, &tokens)
}

/// The claim text of a judged probe.
pub fn probe_claim(
    plan: &Probe,
    verdict: Verdict,
    probe: &Tally,
    similarity: &SimilarityStats,
    baseline: &Tally,
    rule: &str,
    run: &Run,
) -> String {
    // A restored unit and a replayed step have no rank to stay a proxy: say what they stay
    // (influence.md §9: a dropped unit is a candidate until restoring it changes the outcome).
    if verdict == Verdict::NotConfirmed {
        let n = probe.samples;
        let scope = verdict::Scope::of(baseline, probe);
        let verdict::Words {
            outcome, reruns, ..
        } = verdict::Words::of(&scope, run);
        match &plan.intervention {
            Intervention::Restore(units) => {
                return format!(
                    "NOT CONFIRMED: restoring {} did not change {outcome} in {n} {reruns}; a dropped unit stays a candidate, neither shown to matter nor ruled out",
                    quoted(units)
                );
            }
            Intervention::Replay { from, patch } => {
                return format!(
                    "NOT CONFIRMED: replaying from step '{}'{} did not change {outcome} in {n} {reruns}; the step is neither shown to matter nor ruled out",
                    crate::analysis::model::inert_line(from.as_str()),
                    if patch.is_some() {
                        " with the patched output"
                    } else {
                        ""
                    }
                );
            }
            Intervention::Baseline | Intervention::Ablate(_) => {}
        }
    }
    verdict::claim(
        verdict,
        &plan.intervention,
        probe,
        similarity,
        baseline,
        rule,
        run,
    )
}

/// The flip verdict and claim of probe `p`, when it and its baseline ran to their end.
fn judged(
    plan: &SessionPlan,
    slots: &[Vec<Option<SampleResult>>],
    p: ProbeId,
    rule: &str,
) -> (Option<Verdict>, Option<String>) {
    let Some(probe) = plan.probes.get(p.0) else {
        return (None, None);
    };
    let Some(b) = probe.baseline else {
        return (None, None);
    };
    let (Some(ps), Some(bs)) = (slots.get(p.0), slots.get(b.0)) else {
        return (None, None);
    };
    if !complete(ps) || !complete(bs) {
        return (None, None);
    }
    let t = tally_of(ps, plan.samples);
    let bt = tally_of(bs, plan.samples);
    let v = verdict::verdict(&bt, &t);
    let claim = probe_claim(probe, v, &t, &t.similarity(), &bt, rule, &plan.run);
    (Some(v), Some(claim))
}

fn base_result(t: &Tally, verdict: Option<Verdict>) -> ProbeResult {
    ProbeResult {
        verdict,
        flips: t.flips,
        samples: t.samples,
        completed: t.completed,
        errors: t.errors,
        similarity: Some(t.similarity()),
        cost: None,
        class: None,
    }
}

/// The `ProbeVerdict` event of probe `p` (flip verdict only).
pub(super) fn probe_event(
    plan: &SessionPlan,
    slots: &[Vec<Option<SampleResult>>],
    p: ProbeId,
    rule: &str,
) -> Option<EventKind> {
    let ps = slots.get(p.0)?;
    let t = tally_of(ps, plan.samples);
    let (v, claim) = judged(plan, slots, p, rule);
    Some(EventKind::ProbeVerdict {
        probe: p,
        result: base_result(&t, v),
        claim,
    })
}

/// Every probe's final result: flip verdicts, then cost verdicts per ablation tier, then classes.
pub(super) fn finish(
    plan: &SessionPlan,
    slots: Vec<Vec<Option<SampleResult>>>,
    rule: &str,
    mut outcome: SessionOutcome,
) -> SessionOutcome {
    let mut probes: Vec<ProbeOutcome> = Vec::with_capacity(plan.probes.len());
    for (i, probe) in plan.probes.iter().enumerate() {
        let ps = slots.get(i).map(Vec::as_slice).unwrap_or_default();
        let t = tally_of(ps, plan.samples);
        let (v, claim) = judged(plan, &slots, ProbeId(i), rule);
        let flags = if probe.is_baseline() {
            t.baseline_flags()
        } else {
            Vec::new()
        };
        let mut spent = Spent::default();
        for r in ps.iter().flatten() {
            spent.add(&r.spent);
        }
        probes.push(ProbeOutcome {
            plan: probe.clone(),
            spent,
            samples: ps.to_vec(),
            result: base_result(&t, v),
            cost_stats: cost_of(ps, plan.samples),
            tally: t,
            claim,
            flags,
        });
    }
    assign_tier_costs(&mut probes);
    for p in &mut probes {
        let v = p.result.verdict;
        p.result.class = match (&p.plan.intervention, v) {
            (_, None | Some(Verdict::Error)) => None,
            (Intervention::Ablate(_), _) => Some(classify(v, p.result.cost.as_ref())),
            (Intervention::Restore(_), _) => Some(classify(v, None)),
            (Intervention::Baseline | Intervention::Replay { .. }, _) => None,
        };
    }
    outcome.probes = probes;
    outcome
}

/// Cost verdicts for each ablation tier (the ablation probes that share a baseline), with the
/// placebo band over that tier only. Probes without a flip verdict (cancelled) get none.
fn assign_tier_costs(probes: &mut [ProbeOutcome]) {
    let baselines: Vec<ProbeId> = probes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.plan.is_baseline())
        .map(|(i, _)| ProbeId(i))
        .collect();
    for b in baselines {
        let members: Vec<usize> = probes
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                matches!(p.plan.intervention, Intervention::Ablate(_))
                    && p.plan.baseline == Some(b)
                    && p.result.verdict.is_some()
            })
            .map(|(i, _)| i)
            .collect();
        if members.is_empty() {
            continue;
        }
        let ids: Vec<String> = members
            .iter()
            .filter_map(|&i| {
                probes.get(i).map(|p| {
                    let ids: Vec<&str> = p
                        .plan
                        .intervention
                        .removes()
                        .iter()
                        .map(|u| u.as_str())
                        .collect();
                    ids.join("\u{1f}")
                })
            })
            .collect();
        let base_stats = probes.get(b.0).and_then(|p| p.cost_stats.clone());
        let verdicts = {
            let subjects: Vec<CostSubject<'_>> = members
                .iter()
                .zip(&ids)
                .filter_map(|(&i, id)| {
                    probes.get(i).map(|p| CostSubject {
                        id,
                        verdict: p.result.verdict,
                        stats: p.cost_stats.as_ref(),
                    })
                })
                .collect();
            assign_costs(base_stats.as_ref(), &subjects)
        };
        for (&i, c) in members.iter().zip(verdicts) {
            if let Some(p) = probes.get_mut(i) {
                p.result.cost = c;
            }
        }
    }
}
