//! Repeated failure (docs/how-it-decides.md, "Detect"): in a failed run, a decision made right
//! after a failure of the same agent (it had the error in front of it) whose own action failed
//! again the same way (the two errors open alike): it did not act on what the failure said. A failure is a failed tool call (decided by
//! the model step that issued it) or a step of the agent loop that failed on its own (decided by
//! the latest decision inside it, such as code that would not parse or run). The first failure is
//! left to the other rules (the walk back, `execution_error`); this rule names the retry that
//! ignored it, and records in `upstream` the decision behind the first failure of the same kind
//! by the same agent (where the repeats began), which the ranking lists right after a repeat that
//! leads it. Linear in the run, but for comparing each failure with the first of each kind seen
//! so far (at most [`MAX_KINDS`] kinds). No I/O.

use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, decides};
use crate::analysis::model::StepKind;
use crate::analysis::params::REPEATED_FAILURE;
use hashbrown::{HashMap, HashSet};

/// A decision after a failure whose own action failed again.
pub struct RepeatedFailure;

/// How many words of an error's opening say what kind of failure it is.
const SIGNATURE_WORDS: usize = 12;
/// How many of those words two errors must share to be the same failure.
const SIGNATURE_MIN_SHARED: usize = 3;

/// At most this many distinct kinds of failure are remembered per run for finding where a kind
/// began (a run with more compares new failures with the first ones only).
const MAX_KINDS: usize = 64;

/// Each failure of the run as (failed step, the decision behind it), in step order.
fn failures(f: &Facts<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, s) in f.run.steps.iter().enumerate() {
        if !s.failed() {
            continue;
        }
        let author = if s.is_container() {
            f.decision_inside(i)
        } else if s.kind == StepKind::Tool {
            f.caller(i)
        } else {
            None
        };
        if let Some(a) = author {
            out.push((i, a));
        }
    }
    out
}

/// The words of an error's opening (its first [`SIGNATURE_WORDS`] runs of letters, lower case):
/// the kind of failure, without the numbers and names that change between tries.
fn signature(error: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in error
        .split(|c: char| !c.is_alphabetic() && c != '_')
        .filter(|w| w.chars().count() >= 2)
        .take(SIGNATURE_WORDS)
    {
        let w = w.to_lowercase();
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// True when two errors open alike: at least [`SIGNATURE_MIN_SHARED`] words, and half the words
/// of the shorter opening, are shared (the same exception, the same complaint; a shared prefix
/// such as "exit code" alone is not enough).
fn same_failure(a: &str, b: &str) -> bool {
    same_signature(&signature(a), &signature(b))
}

/// [`same_failure`] on two openings already read.
fn same_signature(x: &[String], y: &[String]) -> bool {
    let shorter = x.len().min(y.len());
    let shared = x.iter().filter(|w| y.contains(w)).count();
    shared >= SIGNATURE_MIN_SHARED && 2 * shared >= shorter
}

impl Detector for RepeatedFailure {
    fn id(&self) -> DetectorId {
        DetectorId::RepeatedFailure
    }

    fn doc(&self) -> &'static str {
        "In a failed run, a decision made right after a failure of its agent whose own action failed again."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let fails = failures(f);
        if fails.len() < 2 {
            return Vec::new();
        }
        // The first failure each decision is behind.
        let mut by_author: HashMap<usize, usize> = HashMap::new();
        for &(i, a) in &fails {
            by_author.entry(a).or_insert(i);
        }
        // next[i]: the first decision after position i.
        let mut next: Vec<Option<usize>> = vec![None; run.steps.len()];
        let mut upcoming = None;
        for (i, s) in run.steps.iter().enumerate().rev() {
            if let Some(slot) = next.get_mut(i) {
                *slot = upcoming;
            }
            if decides(s) {
                upcoming = Some(i);
            }
        }
        let agent = |k: usize| run.steps.get(k).and_then(|s| s.agent.as_deref());
        let err = |k: usize| {
            run.steps
                .get(k)
                .and_then(|s| s.error.as_deref())
                .unwrap_or("")
        };
        // The decision behind the first failure of each kind, per agent, in step order (each
        // error's opening read once).
        let mut kinds: Vec<(Vec<String>, usize)> = Vec::new();
        let mut began: HashMap<usize, usize> = HashMap::new();
        for &(i, a) in &fails {
            let sig = signature(err(i));
            let first = kinds
                .iter()
                .find(|(k, b)| agent(*b) == agent(a) && same_signature(k, &sig))
                .map(|&(_, b)| b);
            match first {
                Some(b) => {
                    began.insert(a, b);
                }
                None if kinds.len() < MAX_KINDS => kinds.push((sig, a)),
                None => {}
            }
        }
        let mut out = Vec::new();
        let mut flagged: HashSet<usize> = HashSet::new();
        for &(i, a) in &fails {
            let Some(m) = next.get(i.max(a)).copied().flatten() else {
                continue;
            };
            let Some(&again) = by_author.get(&m) else {
                continue;
            };
            if m == a
                || agent(m) != agent(a)
                || flagged.contains(&m)
                || !same_failure(err(i), err(again))
            {
                continue;
            }
            flagged.insert(m);
            let mut finding = Finding::new(
                m,
                Category::RepeatedFailure,
                DetectorId::RepeatedFailure,
                REPEATED_FAILURE,
                Nature::Suspect,
                "it acted again right after a failure, and failed again".to_owned(),
            )
            .because(format!(
                "it came right after the failure at {} (decided at {}): {}",
                step(run, i),
                step(run, a),
                quote(err(i))
            ))
            .because(format!(
                "what it decided failed again, at {}: {}",
                step(run, again),
                quote(err(again))
            ));
            if let Some(&b) = began.get(&m).filter(|&&b| b < m) {
                finding.upstream.push(b);
                finding = finding.because(format!(
                    "the first failure of this kind was decided at {}",
                    step(run, b)
                ));
            }
            out.push(finding);
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
    fn the_retry_that_fails_again_is_flagged_not_the_one_that_recovers() {
        let run = RunBuilder::failed()
            .llm("m0", "call page_down")
            .tool_err(
                "t1",
                "page_down",
                json!({"": ""}),
                "unexpected keyword argument ''",
            )
            .llm("m2", "call page_down again")
            .tool_err(
                "t3",
                "page_down",
                json!({"": {}}),
                "unexpected keyword argument ''",
            )
            .llm("m4", "call page_down without arguments")
            .tool_ok("t5", "page_down", json!({}), "page 2")
            .llm("m6", "search")
            .tool_err("t7", "web_search", json!({"q": "x"}), "no results")
            .llm("m8", "answer")
            .build();
        let found = facts_for(&run, |f| RepeatedFailure.detect(f));
        // m2 read the failure of t1 and failed again at t3; m4 recovered; m8 made no call.
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [2]);
        assert!(found[0].evidence[1].contains("step 't3' (position 4)"));
    }

    #[test]
    fn a_repeat_records_the_decision_behind_the_first_failure_of_its_kind() {
        let err = "TypeError: forward() got an unexpected keyword argument ''";
        let run = RunBuilder::failed()
            .llm("m0", "call page_down")
            .tool_err("t1", "page_down", json!({"": ""}), err)
            .llm("m2", "a new plan: scroll on")
            .llm("m3", "call page_down")
            .tool_err("t4", "page_down", json!({"": ""}), err)
            .llm("m5", "call page_down again")
            .tool_err("t6", "page_down", json!({"": {}}), err)
            .build();
        let found = facts_for(&run, |f| RepeatedFailure.detect(f));
        // m3 came after a new plan, not right after the failure; m5 repeated t4's failure, and
        // that kind of failure began with m0's call.
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [5]);
        assert_eq!(found[0].upstream, vec![0]);
        assert!(
            found[0]
                .evidence
                .iter()
                .any(|e| e.contains("first failure of this kind was decided at step 'm0'"))
        );
        // A repeat of a failure that began with the decision right before it names no earlier
        // one.
        let short = RunBuilder::failed()
            .llm("m0", "call page_down")
            .tool_err("t1", "page_down", json!({"": ""}), err)
            .llm("m2", "call page_down again")
            .tool_err("t3", "page_down", json!({"": {}}), err)
            .build();
        let found = facts_for(&short, |f| RepeatedFailure.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].upstream, vec![0]);
    }

    #[test]
    fn a_different_failure_after_a_fix_is_progress_not_a_repeat() {
        let run = RunBuilder::failed()
            .llm("m0", "code")
            .tool_err(
                "t1",
                "python",
                json!({"code": "x"}),
                "IndentationError: unexpected indent",
            )
            .llm("m2", "fixed the indent")
            .tool_err("t3", "python", json!({"code": "y"}), "KeyError: 'Platform'")
            .build();
        assert!(facts_for(&run, |f| RepeatedFailure.detect(f)).is_empty());
        assert!(!same_failure(
            "exit code 1: KeyError: 'transcript'",
            "exit code 127: ffmpeg: not found"
        ));
        assert!(same_failure(
            "TypeError: PageDownTool.forward() got an unexpected keyword argument ''",
            "TypeError: PageDownTool.forward() got an unexpected keyword argument 'arguments'"
        ));
    }

    #[test]
    fn another_agents_step_or_a_run_that_succeeded_is_not_a_retry() {
        let build = |ok: bool| {
            let b = if ok {
                RunBuilder::succeeded()
            } else {
                RunBuilder::failed()
            };
            b.llm("m0", "x")
                .with(|s| s.agent = Some("a".into()))
                .tool_err("t1", "f", json!({}), "boom")
                .llm("m2", "y")
                .with(|s| s.agent = Some("b".into()))
                .tool_err("t3", "f", json!({}), "boom")
                .build()
        };
        assert!(facts_for(&build(false), |f| RepeatedFailure.detect(f)).is_empty());
        assert!(facts_for(&build(true), |f| RepeatedFailure.detect(f)).is_empty());
    }
}
