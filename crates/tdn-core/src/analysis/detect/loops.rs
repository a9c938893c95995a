//! Loops (docs/how-it-decides.md, "Detect"): the same tool (or search) called three or more
//! times with identical arguments, flagged at the call that made it a loop (the third); and a run
//! that used up or went past its step budget (`limits.max_steps`, counting every step). Linear:
//! calls are grouped by a hash of their canonical arguments. No I/O.

use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::Json;
use crate::analysis::model::{RunStatus, StepKind};
use crate::analysis::params::{LOOP_MIN_CALLS, REPEATED_CALL, STEP_BUDGET};
use hashbrown::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// At most this many positions are named in the evidence.
const NAMED_POSITIONS: usize = 5;

/// Identical repeated calls and the step budget.
pub struct Loops;

/// Hashes a JSON value with object keys in sorted order, so key order does not matter.
/// `scratch` holds a number's text while it is hashed.
fn hash_canonical(v: &Json, h: &mut DefaultHasher, depth: usize, scratch: &mut String) {
    if depth > 256 {
        return;
    }
    match v {
        Json::Object(o) => {
            6u8.hash(h);
            // Keys already in order (most objects) are hashed as they stand.
            if o.keys().is_sorted() {
                for (k, val) in o.iter() {
                    k.hash(h);
                    hash_canonical(val, h, depth + 1, scratch);
                }
            } else {
                let mut keys: Vec<_> = o.iter().collect();
                keys.sort_by(|a, b| a.0.cmp(b.0));
                for (k, val) in keys {
                    k.hash(h);
                    hash_canonical(val, h, depth + 1, scratch);
                }
            }
        }
        Json::Array(a) => {
            5u8.hash(h);
            a.len().hash(h);
            for x in a {
                hash_canonical(x, h, depth + 1, scratch);
            }
        }
        Json::String(s) => {
            4u8.hash(h);
            s.hash(h);
        }
        Json::Number(n) => {
            use std::fmt::Write as _;
            3u8.hash(h);
            scratch.clear();
            // Writing to a String cannot fail.
            let _ = write!(scratch, "{n}");
            scratch.as_str().hash(h);
        }
        Json::Bool(b) => b.hash(h),
        Json::Null => 0u8.hash(h),
    }
}

/// Positions kept per group of identical calls: those named, which include the one that made
/// it a loop.
const KEPT: usize = NAMED_POSITIONS;
const _: () = assert!(LOOP_MIN_CALLS >= 1 && LOOP_MIN_CALLS <= KEPT);

/// Identical calls: how many, and the first [`KEPT`] positions.
#[derive(Clone, Copy)]
struct Group {
    count: usize,
    first: [usize; KEPT],
}

impl Group {
    fn first(&self) -> &[usize] {
        self.first.get(..self.count.min(KEPT)).unwrap_or_default()
    }
}

impl Detector for Loops {
    fn id(&self) -> DetectorId {
        DetectorId::Loops
    }

    fn doc(&self) -> &'static str {
        "The same tool called three or more times with identical arguments, or the step budget used up."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut groups: HashMap<(StepKind, &str, u64), Group> = HashMap::new();
        let mut scratch = String::new();
        for (i, s) in run.steps.iter().enumerate() {
            let mut h = DefaultHasher::new();
            let key = match (s.kind, &s.tool) {
                (StepKind::Tool, Some(c)) => {
                    hash_canonical(&c.arguments, &mut h, 0, &mut scratch);
                    (StepKind::Tool, c.name.as_str())
                }
                (StepKind::Retrieval, _) => {
                    if let Some(v) = &s.input {
                        hash_canonical(v, &mut h, 0, &mut scratch);
                    }
                    (StepKind::Retrieval, s.name.as_deref().unwrap_or(""))
                }
                _ => continue,
            };
            let g = groups.entry((key.0, key.1, h.finish())).or_insert(Group {
                count: 0,
                first: [0; KEPT],
            });
            if let Some(slot) = g.first.get_mut(g.count) {
                *slot = i;
            }
            g.count += 1;
        }
        let mut out = Vec::new();
        let mut loops: Vec<_> = groups
            .into_iter()
            .filter(|(_, g)| g.count >= LOOP_MIN_CALLS)
            .collect();
        loops.sort_by_key(|(_, g)| g.first().first().copied());
        for ((kind, name, _), group) in loops {
            let calls = group.first();
            let count = group.count;
            let Some(&at) = calls.get(LOOP_MIN_CALLS - 1) else {
                continue;
            };
            let what = if kind == StepKind::Tool {
                format!("the tool {}", quote(name))
            } else {
                "the same search".to_owned()
            };
            let named: Vec<_> = calls
                .iter()
                .take(NAMED_POSITIONS)
                .map(|&c| step(run, c))
                .collect();
            let more = count.saturating_sub(NAMED_POSITIONS);
            let list = if more > 0 {
                format!("{} and {more} more", named.join(", "))
            } else {
                named.join(", ")
            };
            out.push(
                Finding::new(
                    at,
                    Category::RepeatedCall,
                    DetectorId::Loops,
                    REPEATED_CALL,
                    Nature::Suspect,
                    format!("{what} was called {count} times with identical arguments"),
                )
                .because(format!(
                    "{what} was called {count} times with identical arguments {}: {list}; the agent did not change course",
                    short(&f.texts.consumed(at), 80)
                )),
            );
        }
        if let Some(max) = run.limits.as_ref().and_then(|l| l.max_steps) {
            let n = run.steps.len();
            let max_us = usize::try_from(max).unwrap_or(usize::MAX);
            if n > max_us {
                out.push(
                    Finding::new(
                        max_us,
                        Category::StepBudget,
                        DetectorId::Loops,
                        STEP_BUDGET,
                        Nature::Suspect,
                        format!("the run went past its budget of {max} steps"),
                    )
                    .because(format!(
                        "the run took {n} steps, over its budget of {max}; {} is the first step past it",
                        step(run, max_us)
                    )),
                );
            } else if n == max_us && n > 0 && run.status != RunStatus::Succeeded {
                out.push(
                    Finding::new(
                        n - 1,
                        Category::StepBudget,
                        DetectorId::Loops,
                        STEP_BUDGET,
                        Nature::Suspect,
                        format!("the run used all {max} steps of its budget"),
                    )
                    .because(format!(
                        "the run used all {max} steps of its budget and did not succeed; {} is the last",
                        step(run, n - 1)
                    )),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn a_third_identical_call_is_a_loop_whatever_the_key_order() {
        let run = RunBuilder::failed()
            .tool_ok("s1", "search", json!({"q": "warranty", "n": 5}), json!([]))
            .tool_ok("s2", "search", json!({"n": 5, "q": "warranty"}), json!([]))
            .tool_ok("s3", "other", json!({"q": "warranty", "n": 5}), json!([]))
            .tool_ok("s4", "search", json!({"q": "warranty", "n": 5}), json!([]))
            .tool_ok("s5", "search", json!({"q": "warranty", "n": 5}), json!([]))
            .build();
        let found = facts_for(&run, |f| Loops.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (3, Category::RepeatedCall)
        );
        assert!(found[0].title.contains("4 times"));
    }

    #[test]
    fn two_identical_calls_or_varied_arguments_are_not_a_loop() {
        let run = RunBuilder::failed()
            .tool_ok("s1", "search", json!({"q": "a"}), json!([]))
            .tool_ok("s2", "search", json!({"q": "a"}), json!([]))
            .tool_ok("s3", "search", json!({"q": "b"}), json!([]))
            .build();
        assert!(facts_for(&run, |f| Loops.detect(f)).is_empty());
    }

    #[test]
    fn the_step_budget_is_flagged_when_passed_or_used_up_without_success() {
        let over = RunBuilder::failed()
            .max_steps(2)
            .user("s1", "a")
            .user("s2", "b")
            .user("s3", "c")
            .build();
        let found = facts_for(&over, |f| Loops.detect(f));
        assert_eq!(
            (found[0].step, found[0].category),
            (2, Category::StepBudget)
        );
        let within = RunBuilder::failed().max_steps(5).user("s1", "a").build();
        assert!(facts_for(&within, |f| Loops.detect(f)).is_empty());
        let done = RunBuilder::succeeded().max_steps(1).user("s1", "a").build();
        assert!(facts_for(&done, |f| Loops.detect(f)).is_empty());
    }
}
