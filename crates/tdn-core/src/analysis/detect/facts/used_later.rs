//! Which steps a later step used.

use crate::analysis::claims::{CheckedClaim, SupportLabel};
use crate::analysis::links::LinkGraph;
use crate::analysis::model::Run;

pub(super) fn used_later(run: &Run, links: &LinkGraph, claims: &[CheckedClaim]) -> Vec<bool> {
    use rayon::prelude::*;
    let n = run.steps.len();
    let mut used: Vec<bool> = (0..n).map(|i| links.is_used(i)).collect();
    for c in claims {
        if !matches!(c.label, SupportLabel::NoClaim | SupportLabel::Unsupported)
            && let Some(slot) = c.evidence_step.and_then(|e| used.get_mut(e))
        {
            *slot = true;
        }
    }
    // Each unit's producer, found once rather than once per step that was sent the unit.
    let producer: Vec<Option<usize>> = run
        .context_units
        .iter()
        .map(|u| {
            u.produced_by
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
        })
        .collect();
    // The earlier steps each step names (a unit it was sent, a step its decision requires),
    // found a run of steps per task on the pool (issue 11: 130,000 look-ups at 100,000 steps,
    // on one core while the other waited).
    let named: Vec<Vec<usize>> = run
        .steps
        .par_chunks(STEPS_PER_TASK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut out = Vec::new();
            for (j, s) in chunk.iter().enumerate() {
                let k = c * STEPS_PER_TASK + j;
                let sent = s.context.iter().flat_map(|c| c.sent.iter());
                let producers = sent.filter_map(|id| {
                    run.unit_index(id.as_str())
                        .and_then(|u| producer.get(u).copied().flatten())
                });
                let required = s
                    .decision
                    .iter()
                    .flat_map(|d| d.options.iter())
                    .flat_map(|o| o.requires.iter())
                    .filter_map(|r| run.step_index(r.as_str()));
                out.extend(producers.chain(required).filter(|&p| p < k));
            }
            out
        })
        .collect();
    for p in named.into_iter().flatten() {
        if let Some(slot) = used.get_mut(p) {
            *slot = true;
        }
    }
    used
}

/// Steps whose names [`used_later`] looks up in one task.
const STEPS_PER_TASK: usize = 2048;
