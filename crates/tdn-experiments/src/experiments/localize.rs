//! The experiments of `localize` (influence.md §7-8): from a report's ranked suspects and dropped
//! units, plan one session (a shared baseline, the ablation tier within `max_suspects`, the
//! restoration tier within `max_candidates`), and write its verdicts back onto the report's
//! `influence.scores` and `dropped.dropped` entries and its top-level `experiments`.
//!
//! Planning and applying are pure; the engine (`engine::plan`) calls the planning, the session
//! runs the plan.

use crate::analysis::model::UnitId;
use crate::analysis::report::{ExperimentsSummary, Report};
use crate::experiments::intervention::Intervention;
use crate::experiments::session::{Probe, ProbeId, SessionOutcome};

/// One ranked suspect as planning sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subject<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// The unit an ablation removes (`None`: nothing to remove; skipped, costs nothing).
    pub unit: Option<&'a str>,
}

/// The probes of a localize session and which entry each answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TierPlan {
    /// The probes in run order: the baseline first (when anything runs).
    pub probes: Vec<Probe>,
    /// The shared baseline, when anything runs.
    pub baseline: Option<ProbeId>,
    /// For each suspect in the order given: its probe, or `None` (no unit, or over the budget).
    pub suspects: Vec<Option<ProbeId>>,
    /// For each dropped unit in the order given: its probe, or `None` (over the budget).
    pub dropped: Vec<Option<ProbeId>>,
}

/// Plans the tiers: suspects with a unit, in rank order, one at a time, at most `max_suspects`
/// distinct units (a unit named by two entries is probed once); the first `max_candidates`
/// dropped units, one at a time; a baseline before them when either tier has a probe.
pub fn plan_tiers(
    suspects: &[Subject<'_>],
    dropped: &[&str],
    max_suspects: usize,
    max_candidates: usize,
) -> TierPlan {
    let mut plan = TierPlan::default();
    let will_ablate = max_suspects > 0 && suspects.iter().any(|s| s.unit.is_some());
    let will_restore = max_candidates > 0 && !dropped.is_empty();
    if !will_ablate && !will_restore {
        plan.suspects = vec![None; suspects.len()];
        plan.dropped = vec![None; dropped.len()];
        return plan;
    }
    let base = ProbeId(0);
    plan.baseline = Some(base);
    plan.probes.push(Probe::baseline());

    let mut by_unit: std::collections::HashMap<&str, ProbeId> = std::collections::HashMap::new();
    for s in suspects {
        let probe = s.unit.and_then(|u| {
            if let Some(&p) = by_unit.get(u) {
                return Some(p);
            }
            if by_unit.len() >= max_suspects {
                return None;
            }
            let p = ProbeId(plan.probes.len());
            plan.probes.push(Probe::against(
                Intervention::Ablate(vec![UnitId::from(u)]),
                base,
            ));
            by_unit.insert(u, p);
            Some(p)
        });
        plan.suspects.push(probe);
    }
    for (i, d) in dropped.iter().enumerate() {
        let probe = (i < max_candidates).then(|| {
            let p = ProbeId(plan.probes.len());
            plan.probes.push(Probe::against(
                Intervention::Restore(vec![UnitId::from(*d)]),
                base,
            ));
            p
        });
        plan.dropped.push(probe);
    }
    plan
}

/// The suspects of a report: its influence ranking in rank order.
pub fn report_subjects(report: &Report) -> Vec<Subject<'_>> {
    report
        .influence
        .as_ref()
        .map(|i| {
            i.scores
                .iter()
                .map(|e| Subject {
                    id: &e.id,
                    unit: e.unit.as_deref(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The dropped units of a report, in dropped order.
pub fn report_dropped(report: &Report) -> Vec<&str> {
    report
        .dropped
        .as_ref()
        .map(|d| d.dropped.iter().map(|e| e.id.as_str()).collect())
        .unwrap_or_default()
}

/// Writes the session's results onto the report: `verdict`, `flips`, `samples`, `similarity`,
/// `cost`, `class` on each probed entry, and the top-level `experiments`.
pub fn apply(
    report: &mut Report,
    plan: &TierPlan,
    outcome: &SessionOutcome,
    ledger: Option<String>,
) {
    let result = |p: &Option<ProbeId>| {
        p.and_then(|p| outcome.probes.get(p.0))
            .map(|o| o.result.clone())
    };
    if let Some(inf) = report.influence.as_mut() {
        for (e, p) in inf.scores.iter_mut().zip(&plan.suspects) {
            e.probe = result(p).map(Box::new);
        }
    }
    if let Some(d) = report.dropped.as_mut() {
        for (e, p) in d.dropped.iter_mut().zip(&plan.dropped) {
            e.probe = result(p);
        }
    }
    let base = plan.baseline.and_then(|b| outcome.probes.get(b.0));
    report.experiments = Some(ExperimentsSummary {
        baseline: base.map(|b| b.result.clone()),
        flags: base.map(|b| b.flags.clone()).unwrap_or_default(),
        runner_calls: outcome.runner_calls,
        ledger,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s<'a>(id: &'a str, unit: Option<&'a str>) -> Subject<'a> {
        Subject { id, unit }
    }

    #[test]
    fn nothing_to_remove_or_restore_runs_nothing_not_even_a_baseline() {
        let p = plan_tiers(&[s("doc#0", None)], &[], 5, 5);
        assert!(p.probes.is_empty());
        assert_eq!(p.baseline, None);
        assert_eq!(p.suspects, vec![None]);
    }

    #[test]
    fn the_budget_skips_unremovable_suspects_and_lists_the_rest() {
        let subjects = [
            s("a", Some("a")),
            s("s2", None),
            s("b", Some("b")),
            s("a-again", Some("a")),
            s("c", Some("c")),
        ];
        let p = plan_tiers(&subjects, &["d1", "d2"], 2, 1);
        assert_eq!(
            p.suspects,
            vec![
                Some(ProbeId(1)),
                None,
                Some(ProbeId(2)),
                Some(ProbeId(1)),
                None
            ]
        );
        assert_eq!(p.dropped, vec![Some(ProbeId(3)), None]);
        assert_eq!(p.probes.len(), 4);
        assert_eq!(
            p.probes[3].intervention,
            Intervention::Restore(vec!["d1".into()])
        );
    }
}
