//! The latest decision inside each container step.

use super::slots::Slots;
use crate::analysis::model::{Run, Step, decides};

/// How many parents are followed up from a step when looking for the containers around it.
pub(super) const MAX_NESTING: usize = 64;

pub(super) fn last_decision_inside(run: &Run) -> Slots {
    if !run.steps.iter().any(Step::is_container) {
        return Slots::default();
    }
    let mut out = Slots::nones(run.steps.len());
    for (i, s) in run.steps.iter().enumerate() {
        if !decides(s) {
            continue;
        }
        let parent_of = |st: &Step| st.parent.as_ref().and_then(|p| run.step_index(p.as_str()));
        let mut p = parent_of(s);
        for _ in 0..MAX_NESTING {
            let Some(k) = p.filter(|&k| k < i) else { break };
            let Some(ps) = run.steps.get(k) else { break };
            if ps.is_container() {
                out.set(k, i);
            }
            p = parent_of(ps);
        }
    }
    out
}
