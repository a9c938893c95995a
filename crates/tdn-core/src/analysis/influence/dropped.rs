//! Dropped context (influence.md §6): the units that were available but never reached the model.
//! Pure set arithmetic in linear time, no embedder. A dropped unit is a candidate, never a cause:
//! only putting it back and re-running can show that it mattered.

use crate::analysis::count::group;
use hashbrown::HashSet;

/// The diff of available and sent unit ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedDiff {
    /// Positions in `available` of the dropped units, in available order, one per id (the first
    /// occurrence of the id).
    pub dropped: Vec<usize>,
    /// Distinct available ids.
    pub available_count: usize,
    /// Distinct sent ids, including ids that were never available.
    pub sent_count: usize,
    /// `!dropped.is_empty()`.
    pub any_dropped: bool,
    /// A sentence for people; says a dropped unit is only a candidate.
    pub reason: String,
}

/// Available minus sent, by id (see [`DroppedDiff`]).
pub fn find_dropped_context<'a>(
    available: impl IntoIterator<Item = &'a str>,
    sent: impl IntoIterator<Item = &'a str>,
) -> DroppedDiff {
    let sent: HashSet<&str> = sent.into_iter().collect();
    let mut seen = HashSet::new();
    let mut dropped = Vec::new();
    for (i, id) in available.into_iter().enumerate() {
        if seen.insert(id) && !sent.contains(id) {
            dropped.push(i);
        }
    }
    let reason = dropped_reason(dropped.len(), seen.len());
    DroppedDiff {
        any_dropped: !dropped.is_empty(),
        dropped,
        available_count: seen.len(),
        sent_count: sent.len(),
        reason,
    }
}

/// Lists of at most this many ids are diffed by scanning them (a step sends a handful).
const SCANNED: usize = 16;

/// The diff of [`find_dropped_context`] without its sentence, for many small lists in a row (one
/// per step: issue 11, 16,000 steps at 100,000): its sets are kept from one diff to the next,
/// and short lists are scanned instead.
#[derive(Default)]
pub(super) struct StepDiffs<'a> {
    sent: HashSet<&'a str>,
    seen: HashSet<&'a str>,
    distinct_sent: Vec<&'a str>,
    distinct_seen: Vec<&'a str>,
}

impl<'a> StepDiffs<'a> {
    /// The positions in `available` of the dropped ids, the distinct available and the
    /// distinct sent ids: [`DroppedDiff`]'s `dropped`, `available_count` and `sent_count`.
    pub(super) fn diff(
        &mut self,
        available: &[&'a str],
        sent: &[&'a str],
    ) -> (Vec<usize>, usize, usize) {
        let mut dropped = Vec::new();
        if available.len() <= SCANNED && sent.len() <= SCANNED {
            let (ds, da) = (&mut self.distinct_sent, &mut self.distinct_seen);
            ds.clear();
            da.clear();
            let has = |list: &[&str], id: &str| list.iter().any(|&x| same_id(x, id));
            for &id in sent {
                if !has(ds, id) {
                    ds.push(id);
                }
            }
            for (i, &id) in available.iter().enumerate() {
                if !has(da, id) {
                    da.push(id);
                    if !has(ds, id) {
                        dropped.push(i);
                    }
                }
            }
            return (dropped, da.len(), ds.len());
        }
        self.sent.clear();
        self.seen.clear();
        self.sent.extend(sent.iter().copied());
        for (i, &id) in available.iter().enumerate() {
            if self.seen.insert(id) && !self.sent.contains(id) {
                dropped.push(i);
            }
        }
        (dropped, self.seen.len(), self.sent.len())
    }
}

/// `a == b`, comparing the lengths and the last bytes first: ids of one run mostly differ in
/// their last characters, so most unequal pairs are told apart without comparing all bytes.
fn same_id(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// The reason sentence for `dropped` of `available` distinct units.
pub fn dropped_reason(dropped: usize, available: usize) -> String {
    if dropped == 0 {
        return "All available context units reached the model; nothing was dropped.".to_owned();
    }
    let units = if available == 1 { "unit" } else { "units" };
    format!(
        "{} of {} available context {units} never reached the model. Each is only \
         a candidate (most dropped context was rightly dropped); restoring it and re-running is \
         what would prove it mattered.",
        group(dropped),
        group(available)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_occurrence_of_a_repeated_available_id_is_the_one_reported() {
        let d = find_dropped_context(["a", "b", "a", "c"], ["c", "z"]);
        assert_eq!(d.dropped, vec![0, 1]);
        assert_eq!((d.available_count, d.sent_count), (3, 2));
        assert!(d.reason.contains("2 of 3"));
    }

    proptest::proptest! {
        /// Short lists (scanned) and long ones (hashed), one after the other with the same
        /// kept sets, diff as [`find_dropped_context`] does.
        #[test]
        fn step_diffs_are_those_of_the_plain_diff(
            lists in proptest::collection::vec(
                (
                    proptest::collection::vec(0u8..24, 0..40),
                    proptest::collection::vec(0u8..24, 0..40),
                ),
                1..8,
            )
        ) {
            let names: Vec<String> = (0..24).map(|k| format!("u{k}")).collect();
            let mut diffs = StepDiffs::default();
            for (available, sent) in &lists {
                let available: Vec<&str> = available.iter().map(|&k| names[k as usize].as_str()).collect();
                let sent: Vec<&str> = sent.iter().map(|&k| names[k as usize].as_str()).collect();
                let want = find_dropped_context(available.iter().copied(), sent.iter().copied());
                let got = diffs.diff(&available, &sent);
                proptest::prop_assert_eq!(got, (want.dropped, want.available_count, want.sent_count));
            }
        }
    }

    #[test]
    fn same_id_is_equality() {
        let ids = ["", "u1", "u2", "u12", "v12", "u12 ", "\u{e9}", "\u{e8}"];
        for a in ids {
            for b in ids {
                assert_eq!(same_id(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn large_counts_in_the_reason_are_grouped_by_thousands() {
        let r = dropped_reason(2, 16_494);
        assert!(r.starts_with("2 of 16,494 available"), "{r}");
    }
}
