//! Grouping repeated findings (issue 11): when [`GROUP_MIN_SIMILAR`] or more ranked suspects are
//! the same finding on different steps (same detector, category, role and cause, and the same
//! title but for its numbers: "the tool 'get_order' was called 3 times" and "... 4 times"), the
//! report lists the best-ranked of them once, with the others as its `similar` steps, so a run
//! of 100,000 steps does not list 1,000 copies of one finding.
//!
//! A pass after the ranking, which it leaves as it is: every suspect keeps its rank (the ranks
//! of a group's other steps are in `similar`), so the full order can be read back, and the
//! verdict and ranking confidence are taken before grouping. Linear in the suspects. No I/O.

use crate::analysis::rank::SuspectEntry;
use std::collections::HashMap;

/// Suspects alike in this number or more are grouped; fewer stay apart.
pub const GROUP_MIN_SIMILAR: usize = 3;

/// One entry of the grouped list: a suspect (its position in the ranking) and the positions of
/// the suspects grouped under it, best first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The suspect listed.
    pub lead: usize,
    /// The suspects like it, listed under it.
    pub similar: Vec<usize>,
}

/// What makes two suspects alike: detector, category, role, cause, and the title with every run
/// of digits written as `#`.
fn key(s: &SuspectEntry) -> (&'static str, &'static str, u8, Option<usize>, String) {
    let mut title = String::with_capacity(s.title.len());
    let mut in_digits = false;
    for c in s.title.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                title.push('#');
            }
            in_digits = true;
        } else {
            title.push(c);
            in_digits = false;
        }
    }
    let role = match s.role {
        crate::analysis::report::Role::RootCause => 0,
        crate::analysis::report::Role::Symptom => 1,
        crate::analysis::report::Role::Suspect => 2,
    };
    (
        s.detector.as_str(),
        s.category.as_str(),
        role,
        s.cause,
        title,
    )
}

/// The ranked suspects grouped, in rank order of each group's best suspect.
pub fn group_similar(ranked: &[SuspectEntry]) -> Vec<Group> {
    let keys: Vec<_> = ranked.iter().map(key).collect();
    let mut count: HashMap<&_, usize> = HashMap::new();
    for k in &keys {
        *count.entry(k).or_default() += 1;
    }
    let mut out: Vec<Group> = Vec::new();
    let mut lead_of: HashMap<&_, usize> = HashMap::new();
    for (pos, k) in keys.iter().enumerate() {
        if count.get(k).copied().unwrap_or(0) < GROUP_MIN_SIMILAR {
            out.push(Group {
                lead: pos,
                similar: Vec::new(),
            });
            continue;
        }
        match lead_of.get(k) {
            Some(&g) => {
                if let Some(group) = out.get_mut(g) {
                    group.similar.push(pos);
                }
            }
            None => {
                lead_of.insert(k, out.len());
                out.push(Group {
                    lead: pos,
                    similar: Vec::new(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::{Category, DetectorId};
    use crate::analysis::report::Role;

    fn entry(step: usize, detector: DetectorId, title: &str, cause: Option<usize>) -> SuspectEntry {
        SuspectEntry {
            step,
            category: Category::RepeatedCall,
            detector,
            title: title.to_owned(),
            score: 0.5,
            confidence: 0.5,
            role: Role::Suspect,
            cause,
            evidence: Vec::new(),
        }
    }

    #[test]
    fn three_alike_become_one_and_two_stay_apart() {
        let l = DetectorId::Loops;
        let ranked = vec![
            entry(10, l, "the tool 'get_order' was called 3 times", None),
            entry(11, l, "the tool 'refund' was called 3 times", None),
            entry(12, l, "the tool 'get_order' was called 4 times", None),
            entry(13, l, "the tool 'refund' was called 3 times", None),
            entry(14, l, "the tool 'get_order' was called 12 times", None),
            entry(
                15,
                DetectorId::Planning,
                "the tool 'get_order' was called 3 times",
                None,
            ),
        ];
        let g = group_similar(&ranked);
        assert_eq!(
            g,
            vec![
                Group {
                    lead: 0,
                    similar: vec![2, 4]
                },
                Group {
                    lead: 1,
                    similar: vec![]
                },
                Group {
                    lead: 3,
                    similar: vec![]
                },
                Group {
                    lead: 5,
                    similar: vec![]
                },
            ]
        );
    }

    #[test]
    fn a_different_cause_keeps_symptoms_apart_and_a_thousand_alike_are_one() {
        let l = DetectorId::Loops;
        let apart: Vec<_> = (0..4)
            .map(|i| entry(i, l, "the tool 'x' failed", Some(100 + i)))
            .collect();
        assert_eq!(group_similar(&apart).len(), 4);
        let many: Vec<_> = (0..1_000)
            .map(|i| {
                entry(
                    i,
                    l,
                    &format!("the search for 'ORD-{i}' was repeated"),
                    None,
                )
            })
            .collect();
        let g = group_similar(&many);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].lead, 0);
        assert_eq!(g[0].similar.len(), 999);
        assert_eq!(g[0].similar.last(), Some(&999));
    }
}
