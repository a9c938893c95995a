//! What the dropped pane shows, built once per report (see `Document`): its rows, the counts its
//! title and first line say, where each dropped unit's entry is, and for each step that left
//! something out its available units against the sent ones, in order. Frames only look these up.
//!
//! The comparison is linear: a unit's sign comes from membership (sent or not), and its place
//! from the available list, with each unit sent without being listed available placed after the
//! last unit both lists share before it. Nothing here is quadratic, whatever the run holds.

use crate::analysis::model::Run;
use crate::analysis::report::{DroppedSection, Report};
use std::collections::{HashMap, HashSet};

/// One row of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DroppedRow {
    /// A model step (position in `report.dropped.steps`).
    Step(usize),
    /// A unit dropped at that step (step position, position in its `dropped`).
    Unit(usize, usize),
}

impl DroppedRow {
    /// The step's position in `report.dropped.steps`.
    pub fn step_pos(self) -> usize {
        match self {
            DroppedRow::Step(s) | DroppedRow::Unit(s, _) => s,
        }
    }
}

/// One line of a step's available-against-sent comparison; the number is a position in the
/// step's own lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextLine {
    /// `context.available[i]`, also sent.
    Sent(usize),
    /// `context.available[i]`, not sent.
    Dropped(usize),
    /// `context.sent[i]`, sent without being listed available.
    Added(usize),
    /// The step records no context: the report's `dropped[i]` for that step.
    Listed(usize),
}

/// The dropped pane's look-ups for one report.
#[derive(Debug, Default)]
pub struct DroppedIndex {
    /// The rows, in order: each step that left out something it had available, then the units
    /// it left out (steps that left out nothing are only counted).
    pub rows: Vec<DroppedRow>,
    /// Units left out, summed over the steps (one unit left out at two steps counts twice).
    pub drops: usize,
    /// Steps that left out at least one unit.
    pub steps_with: usize,
    /// Per unit id: its position in `report.dropped.dropped` (never sent at any step).
    pub entry_of: HashMap<String, usize>,
    /// Per position in `report.dropped.steps`: the comparison, empty for a step that left out
    /// nothing (no row selects it).
    pub lines: Vec<Vec<ContextLine>>,
}

impl DroppedIndex {
    /// The look-ups for a report of `run`.
    pub fn build(run: &Run, report: &Report) -> DroppedIndex {
        let Some(d) = &report.dropped else {
            return DroppedIndex::default();
        };
        let mut out = DroppedIndex {
            entry_of: entries(d),
            lines: Vec::with_capacity(d.steps.len()),
            ..DroppedIndex::default()
        };
        for (si, s) in d.steps.iter().enumerate() {
            if s.dropped.is_empty() {
                out.lines.push(Vec::new());
                continue;
            }
            out.drops += s.dropped.len();
            out.steps_with += 1;
            out.rows.push(DroppedRow::Step(si));
            out.rows
                .extend((0..s.dropped.len()).map(|ui| DroppedRow::Unit(si, ui)));
            let ctx = run
                .step_index(&s.step)
                .and_then(|i| run.steps.get(i))
                .and_then(|st| st.context.as_ref());
            out.lines
                .push(match ctx.and_then(|c| Some((c.available.as_deref()?, c))) {
                    Some((available, c)) => compare(
                        &available.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
                        &c.sent.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
                    ),
                    None => (0..s.dropped.len()).map(ContextLine::Listed).collect(),
                });
        }
        out
    }
}

fn entries(d: &DroppedSection) -> HashMap<String, usize> {
    let mut m = HashMap::with_capacity(d.dropped.len());
    for (i, e) in d.dropped.iter().enumerate() {
        m.entry(e.id.clone()).or_insert(i);
    }
    m
}

/// The available units in order, each marked sent or dropped, with the units sent without being
/// listed available placed after the last unit both lists share before them (before everything
/// when none does).
pub fn compare(available: &[&str], sent: &[&str]) -> Vec<ContextLine> {
    let sent_set: HashSet<&str> = sent.iter().copied().collect();
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(available.len());
    for (i, id) in available.iter().enumerate() {
        position.entry(id).or_insert(i);
    }
    // Per available position (shifted by one; 0 is "before everything"): the added units after it.
    let mut after: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut last_shared = 0;
    for (j, id) in sent.iter().enumerate() {
        match position.get(id) {
            Some(&i) => last_shared = i + 1,
            None => after.entry(last_shared).or_default().push(j),
        }
    }
    let mut out = Vec::with_capacity(available.len() + sent.len());
    let mut added = |out: &mut Vec<ContextLine>, at: usize| {
        if let Some(js) = after.remove(&at) {
            out.extend(js.into_iter().map(ContextLine::Added));
        }
    };
    added(&mut out, 0);
    for (i, id) in available.iter().enumerate() {
        out.push(if sent_set.contains(id) {
            ContextLine::Sent(i)
        } else {
            ContextLine::Dropped(i)
        });
        added(&mut out, i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ContextLine::{Added, Dropped, Sent};
    use super::*;

    #[test]
    fn units_keep_the_available_order_and_added_ones_follow_the_last_shared_unit() {
        assert_eq!(
            compare(&["a", "b", "c", "d"], &["x", "b", "y", "d", "z"]),
            [
                Added(0),
                Dropped(0),
                Sent(1),
                Added(2),
                Dropped(2),
                Sent(3),
                Added(4)
            ]
        );
        assert_eq!(
            compare(&["a", "b"], &["b", "a"]),
            [Sent(0), Sent(1)],
            "a unit sent in another order is not dropped"
        );
        assert_eq!(compare(&["a"], &[]), [Dropped(0)]);
        assert_eq!(compare(&[], &["q"]), [Added(0)]);
    }
}
