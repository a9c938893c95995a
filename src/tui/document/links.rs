//! The report's links by step for a [`Document`](super::Document): the dependency lanes and,
//! for each step, the links into and out of it.

use crate::analysis::model::Run;
use crate::analysis::report::Report;
use crate::tui::widgets::graph_gutter::Graph;
use rayon::prelude::*;

/// Links looked up at once, in report order, so that long lists are cut into parts.
const LINKS_PER_PART: usize = 4096;

/// The dependency lanes and the links of each step: every link's steps looked up once, on
/// the thread pool, then both look-ups built side by side.
pub(super) fn link_lookups(run: &Run, report: &Report) -> (Graph, StepLinks) {
    let n = run.steps.len();
    let ends: Vec<(Option<usize>, Option<usize>)> = report
        .links
        .par_iter()
        .with_min_len(LINKS_PER_PART)
        .map(|l| (run.step_index(&l.from), run.step_index(&l.to)))
        .collect();
    rayon::join(
        || Graph::build(n, ends.iter().filter_map(|&(f, t)| Some((f?, t?)))),
        || StepLinks::build(n, &ends),
    )
}

/// The report's links by step: for each step, the positions of the links into it and out of it.
#[derive(Clone, Debug, Default)]
pub struct StepLinks {
    in_start: Vec<usize>,
    ins: Vec<usize>,
    out_start: Vec<usize>,
    outs: Vec<usize>,
}

impl StepLinks {
    /// From each link's `(from, to)` step positions, in report order (`None`: names no step).
    fn build(n: usize, ends: &[(Option<usize>, Option<usize>)]) -> StepLinks {
        let (in_start, ins) = by_step(n, ends.iter().map(|&(_, t)| t));
        let (out_start, outs) = by_step(n, ends.iter().map(|&(f, _)| f));
        StepLinks {
            in_start,
            ins,
            out_start,
            outs,
        }
    }

    /// Positions in `report.links` of the links into step `i`, in report order.
    pub fn into_step(&self, i: usize) -> &[usize] {
        part(&self.in_start, &self.ins, i)
    }

    /// Positions in `report.links` of the links out of step `i`, in report order.
    pub fn out_of_step(&self, i: usize) -> &[usize] {
        part(&self.out_start, &self.outs, i)
    }
}

/// Item positions grouped by the step each names, in item order (a counting sort).
fn by_step(
    n: usize,
    steps: impl Iterator<Item = Option<usize>> + Clone,
) -> (Vec<usize>, Vec<usize>) {
    let mut start = vec![0usize; n + 1];
    for s in steps.clone().flatten() {
        if let Some(c) = start.get_mut(s + 1) {
            *c += 1;
        }
    }
    for k in 0..n {
        let before = start.get(k).copied().unwrap_or(0);
        if let Some(c) = start.get_mut(k + 1) {
            *c += before;
        }
    }
    let mut fill = start.clone();
    let mut out = vec![0usize; start.last().copied().unwrap_or(0)];
    for (pos, s) in steps.enumerate() {
        if let Some(at) = s.and_then(|s| fill.get_mut(s)) {
            if let Some(slot) = out.get_mut(*at) {
                *slot = pos;
            }
            *at += 1;
        }
    }
    (start, out)
}

fn part<'a>(start: &[usize], list: &'a [usize], i: usize) -> &'a [usize] {
    match (start.get(i), start.get(i + 1)) {
        (Some(&a), Some(&b)) => list.get(a..b).unwrap_or(&[]),
        _ => &[],
    }
}
