//! Aligning two runs' steps by what they did ([`Profile`] keys), in time and memory that stay
//! near-linear however long and however different the runs are.
//!
//! 1. The common start and end (steps equal to the last detail) are paired first.
//! 2. What is left, when small enough (`rows × columns` within [`CELL_LIMIT`] and the whole
//!    comparison within [`CELL_BUDGET`]), is aligned exactly: the alignment that scores most,
//!    where a pair scores 1 for the same kind, +1 for the same agent, name and tool, +1 for the
//!    same arguments or facts, +1 when equal in every detail (a weighted longest common
//!    subsequence; steps of different kinds are never paired).
//! 3. A bigger stretch is cut at anchors, as patience diff does: steps whose key occurs exactly
//!    once on each side, in an order both sides keep (the longest increasing run of their
//!    positions). The strictest key is tried first, then looser ones; the stretches between
//!    anchors start again at 1.
//! 4. A stretch with no anchors, or any stretch once the work spent passes [`WORK_BUDGET`], is
//!    walked once: a pair is made where the next steps share agent, name and tool, else the
//!    nearest such step within [`LOOKAHEAD`] on either side is reached by leaving the steps
//!    before it unpaired.

use super::profile::Profile;
use std::collections::HashMap;
use std::ops::Range;

/// The most cells one exact alignment fills (4 MB of traceback).
const CELL_LIMIT: usize = 1 << 22;
/// The most cells all exact alignments of one comparison fill together.
const CELL_BUDGET: usize = 1 << 26;
/// How far the last-resort walk looks ahead for a step to pair.
const LOOKAHEAD: usize = 64;
/// Work (steps visited while cutting at anchors) allowed per step of the two runs, beyond a
/// fixed allowance; past it the rest is walked.
const WORK_PER_STEP: usize = 48;
const WORK_BASE: usize = 1 << 20;

/// One row of the alignment: a step of each run, or of one.
pub type Pair = (Option<usize>, Option<usize>);

/// What may be spent.
struct Budget {
    cells: usize,
    work: usize,
}

enum Task {
    Stretch(Range<usize>, Range<usize>, Level),
    Pair(usize, usize),
}

/// Which key anchors are looked for by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Fine,
    Medium,
    Coarse,
}

impl Level {
    fn key(self, p: &Profile) -> u64 {
        match self {
            Level::Fine => p.fine,
            Level::Medium => p.medium,
            Level::Coarse => p.coarse,
        }
    }

    fn looser(self) -> Option<Level> {
        match self {
            Level::Fine => Some(Level::Medium),
            Level::Medium => Some(Level::Coarse),
            Level::Coarse => None,
        }
    }
}

/// How well step `x` of one run matches step `y` of the other: 0 (never paired) to 4.
fn score(x: &Profile, y: &Profile) -> u32 {
    if x.kind != y.kind {
        return 0;
    }
    1 + u32::from(x.coarse == y.coarse)
        + u32::from(x.medium == y.medium)
        + u32::from(x.fine == y.fine)
}

/// Aligns `good` with `bad` (see the module doc). Every step of each appears exactly once, in
/// order.
pub fn align(good: &[Profile], bad: &[Profile]) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::with_capacity(good.len().max(bad.len()));
    let mut budget = Budget {
        cells: CELL_BUDGET,
        work: WORK_BASE + WORK_PER_STEP * (good.len() + bad.len()),
    };
    let mut stack = vec![Task::Stretch(0..good.len(), 0..bad.len(), Level::Fine)];
    while let Some(task) = stack.pop() {
        match task {
            Task::Pair(i, j) => out.push((Some(i), Some(j))),
            Task::Stretch(a, b, level) => {
                stretch(good, bad, a, b, level, &mut budget, &mut stack, &mut out);
            }
        }
    }
    out
}

/// Aligns one stretch: emits what can be emitted now into `out`, and pushes what comes after it
/// onto `stack` (in reverse, so it is popped in order).
#[allow(clippy::too_many_arguments)]
fn stretch(
    good: &[Profile],
    bad: &[Profile],
    mut a: Range<usize>,
    mut b: Range<usize>,
    level: Level,
    budget: &mut Budget,
    stack: &mut Vec<Task>,
    out: &mut Vec<Pair>,
) {
    // 1. The common start, emitted now; the common end, pushed to come after the middle.
    while a.start < a.end && b.start < b.end && good[a.start].fine == bad[b.start].fine {
        out.push((Some(a.start), Some(b.start)));
        a.start += 1;
        b.start += 1;
    }
    while a.start < a.end && b.start < b.end && good[a.end - 1].fine == bad[b.end - 1].fine {
        a.end -= 1;
        b.end -= 1;
        stack.push(Task::Pair(a.end, b.end));
    }
    if a.is_empty() || b.is_empty() {
        out.extend(a.map(|i| (Some(i), None)));
        out.extend(b.map(|j| (None, Some(j))));
        return;
    }
    // 2. Small enough: exactly.
    let cells = a.len().saturating_mul(b.len());
    if cells <= CELL_LIMIT && cells <= budget.cells {
        budget.cells -= cells;
        exact(good, bad, a, b, out);
        return;
    }
    // 3. Cut at anchors, strictest key first.
    let mut level = Some(level);
    while let Some(l) = level {
        if budget.work < a.len() + b.len() {
            break;
        }
        budget.work -= a.len() + b.len();
        let anchors = anchors(good, bad, a.clone(), b.clone(), l);
        if !anchors.is_empty() {
            let mut end = (a.end, b.end);
            for &(i, j) in anchors.iter().rev() {
                stack.push(Task::Stretch(i + 1..end.0, j + 1..end.1, Level::Fine));
                stack.push(Task::Pair(i, j));
                end = (i, j);
            }
            stack.push(Task::Stretch(a.start..end.0, b.start..end.1, Level::Fine));
            return;
        }
        level = l.looser();
    }
    // 4. Walk.
    walk(good, bad, a, b, out);
}

/// Pairs of positions whose key occurs once in each stretch, in an order both keep (the longest
/// such chain).
fn anchors(
    good: &[Profile],
    bad: &[Profile],
    a: Range<usize>,
    b: Range<usize>,
    level: Level,
) -> Vec<(usize, usize)> {
    // key -> (count in a, position in a, count in b, position in b)
    let mut seen: HashMap<u64, (u32, usize, u32, usize)> = HashMap::new();
    for i in a.clone() {
        let e = seen.entry(level.key(&good[i])).or_insert((0, i, 0, 0));
        e.0 = e.0.saturating_add(1);
    }
    for j in b {
        if let Some(e) = seen.get_mut(&level.key(&bad[j])) {
            e.2 = e.2.saturating_add(1);
            e.3 = j;
        }
    }
    let mut unique: Vec<(usize, usize)> = a
        .filter_map(|i| {
            let e = seen.get(&level.key(&good[i]))?;
            (e.0 == 1 && e.2 == 1).then_some((i, e.3))
        })
        .collect();
    unique.sort_unstable();
    longest_increasing(&unique)
}

/// The longest chain of `pairs` (sorted by the first position) whose second positions increase
/// too: patience sorting, `n log n`.
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index into pairs of the smallest tail of a chain of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; pairs.len()];
    for (n, &(_, j)) in pairs.iter().enumerate() {
        let k = tails.partition_point(|&t| pairs[t].1 < j);
        if k > 0 {
            prev[n] = Some(tails[k - 1]);
        }
        if k == tails.len() {
            tails.push(n);
        } else {
            tails[k] = n;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(n) = at {
        chain.push(pairs[n]);
        at = prev[n];
    }
    chain.reverse();
    chain
}

/// The best-scoring alignment of a small stretch (module doc, step 2). Scored from the end, so
/// that of two equal alignments the one that pairs earlier steps is kept, and of a good-run
/// step and a bad-run step left unpaired at one point, the good run's comes first.
fn exact(good: &[Profile], bad: &[Profile], a: Range<usize>, b: Range<usize>, out: &mut Vec<Pair>) {
    const PAIR: u8 = 0;
    const SKIP_GOOD: u8 = 1;
    const SKIP_BAD: u8 = 2;
    let (n, m) = (a.len(), b.len());
    let mut way = vec![SKIP_GOOD; n * m];
    // next[j]: the best score of good[i + 1..] against bad[j..]; here[j]: of good[i..].
    let mut next = vec![0u32; m + 1];
    let mut here = vec![0u32; m + 1];
    for i in (0..n).rev() {
        here[m] = 0;
        let x = &good[a.start + i];
        for j in (0..m).rev() {
            let s = score(x, &bad[b.start + j]);
            let skip_good = next[j];
            let skip_bad = here[j + 1];
            let (best, w) = if s > 0 && next[j + 1] + s >= skip_good.max(skip_bad) {
                (next[j + 1] + s, PAIR)
            } else if skip_good >= skip_bad {
                (skip_good, SKIP_GOOD)
            } else {
                (skip_bad, SKIP_BAD)
            };
            here[j] = best;
            way[i * m + j] = w;
        }
        std::mem::swap(&mut next, &mut here);
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        match way[i * m + j] {
            PAIR => {
                out.push((Some(a.start + i), Some(b.start + j)));
                i += 1;
                j += 1;
            }
            SKIP_GOOD => {
                out.push((Some(a.start + i), None));
                i += 1;
            }
            _ => {
                out.push((None, Some(b.start + j)));
                j += 1;
            }
        }
    }
    out.extend((i..n).map(|i| (Some(a.start + i), None)));
    out.extend((j..m).map(|j| (None, Some(b.start + j))));
}

/// The last resort (module doc, step 4): one pass, at most [`LOOKAHEAD`] looks per step.
fn walk(good: &[Profile], bad: &[Profile], a: Range<usize>, b: Range<usize>, out: &mut Vec<Pair>) {
    let (mut i, mut j) = (a.start, b.start);
    while i < a.end && j < b.end {
        if good[i].coarse == bad[j].coarse {
            out.push((Some(i), Some(j)));
            i += 1;
            j += 1;
            continue;
        }
        let reach = (1..=LOOKAHEAD).find_map(|d| {
            if i + d < a.end && good[i + d].coarse == bad[j].coarse {
                Some((d, 0))
            } else if j + d < b.end && good[i].coarse == bad[j + d].coarse {
                Some((0, d))
            } else {
                None
            }
        });
        match reach {
            Some((da, db)) => {
                out.extend((i..i + da).map(|x| (Some(x), None)));
                out.extend((j..j + db).map(|y| (None, Some(y))));
                i += da;
                j += db;
            }
            None if good[i].kind == bad[j].kind => {
                out.push((Some(i), Some(j)));
                i += 1;
                j += 1;
            }
            None => {
                out.push((Some(i), None));
                out.push((None, Some(j)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend((i..a.end).map(|x| (Some(x), None)));
    out.extend((j..b.end).map(|y| (None, Some(y))));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::profile::Role;

    /// A profile whose keys are made of numbers: kind, coarse, medium, fine, each key holding
    /// the ones before it.
    fn p(kind: u64, coarse: u64, medium: u64, fine: u64) -> Profile {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let key = |parts: &[u64]| {
            let mut h = DefaultHasher::new();
            parts.hash(&mut h);
            h.finish()
        };
        Profile {
            kind,
            coarse: key(&[kind, coarse]),
            medium: key(&[kind, coarse, medium]),
            fine: key(&[kind, coarse, medium, fine]),
            role: Role::Action,
            user: false,
            calls: Vec::new(),
        }
    }

    fn check_complete(rows: &[Pair], n: usize, m: usize) {
        let good: Vec<usize> = rows.iter().filter_map(|r| r.0).collect();
        let bad: Vec<usize> = rows.iter().filter_map(|r| r.1).collect();
        assert_eq!(good, (0..n).collect::<Vec<_>>());
        assert_eq!(bad, (0..m).collect::<Vec<_>>());
    }

    #[test]
    fn equal_runs_pair_one_to_one() {
        let a: Vec<Profile> = (0..50).map(|i| p(1, i % 3, i, 0)).collect();
        let rows = align(&a, &a.clone());
        assert_eq!(rows.len(), 50);
        assert!(rows.iter().all(|r| r.0 == r.1));
    }

    #[test]
    fn a_skipped_exchange_is_left_unpaired_and_the_same_call_paired() {
        // good: user, llm text, user, llm text, llm call X; bad: user, llm text, llm call X
        let user = |f| p(1, 0, 0, f);
        let text = |f| p(2, 0, 0, f);
        let call_x = p(2, 7, 1, 1);
        let good = vec![user(1), text(2), user(3), text(4), call_x.clone()];
        let bad = vec![user(9), text(8), call_x];
        let rows = align(&good, &bad);
        check_complete(&rows, 5, 3);
        assert!(rows.contains(&(Some(4), Some(2))), "{rows:?}");
        assert!(rows.contains(&(Some(0), Some(0))), "{rows:?}");
    }

    #[test]
    fn a_different_tool_at_the_same_point_is_paired_by_kind() {
        let good = vec![p(1, 0, 0, 0), p(3, 1, 0, 0), p(1, 0, 0, 1)];
        let bad = vec![p(1, 0, 0, 0), p(3, 2, 0, 0), p(1, 0, 0, 1)];
        let rows = align(&good, &bad);
        assert_eq!(
            rows,
            vec![(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), Some(2))]
        );
    }

    #[test]
    fn long_runs_are_cut_at_anchors_and_stay_complete() {
        // Two 30,000-step runs (beyond one exact alignment), the bad one with a step changed
        // every 1,000 and one inserted every 7,000.
        let good: Vec<Profile> = (0..30_000).map(|i| p(1 + i % 4, i % 5, i, 0)).collect();
        let mut bad: Vec<Profile> = Vec::new();
        for (i, x) in good.iter().enumerate() {
            if i % 7_000 == 3 {
                bad.push(p(9, 9, 9, 9));
            }
            let mut y = x.clone();
            if i % 1_000 == 5 {
                y.fine ^= 1;
            }
            bad.push(y);
        }
        let rows = align(&good, &bad);
        check_complete(&rows, good.len(), bad.len());
        let paired = rows
            .iter()
            .filter(|r| r.0.is_some() && r.1.is_some())
            .count();
        assert_eq!(paired, good.len());
        assert_eq!(rows.len(), bad.len());
    }

    #[test]
    fn unrelated_long_runs_finish_and_stay_complete() {
        // Nothing in common and no unique keys: the walk, in one pass.
        let good: Vec<Profile> = (0..60_000).map(|i| p(1 + i % 2, 0, 0, 0)).collect();
        let bad: Vec<Profile> = (0..50_000).map(|i| p(3 + i % 2, 0, 0, 0)).collect();
        let rows = align(&good, &bad);
        check_complete(&rows, good.len(), bad.len());
        // Repeated keys on both sides, shifted: still complete.
        let bad: Vec<Profile> = (0..70_000)
            .map(|i| p(1 + (i + 1) % 2, 0, i % 3, 0))
            .collect();
        let rows = align(&good, &bad);
        check_complete(&rows, good.len(), bad.len());
    }

    #[test]
    fn longest_increasing_chain() {
        let pairs = [(0, 5), (1, 1), (2, 2), (3, 9), (4, 3), (5, 4)];
        assert_eq!(
            longest_increasing(&pairs),
            vec![(1, 1), (2, 2), (4, 3), (5, 4)]
        );
        assert!(longest_increasing(&[]).is_empty());
    }
}
