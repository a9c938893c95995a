//! Answer path (docs/how-it-decides.md, "Detect"): in a failed run whose final answer was
//! committed by a decision (a call to a final-answer tool, as `final_answer` finds it), the two
//! decisions that answer rested on, as weak suspects for when stronger evidence is thin:
//!
//! - the agent's **action before the commit**: the latest earlier decision of the same agent
//!   (not a plan); the commit read what it did and went no further;
//! - the **plan it followed**: the latest earlier model step of the same agent that was asked
//!   for a plan (the end of its prompt names one) and wrote one (a list of two steps or more).
//!
//! Neither is evidence of a fault: each says why it is listed, and scores below every rule that
//! found one, so it only fills a short list of suspects. One backward pass from the commit:
//! linear in the run. No I/O.

use super::final_answer::commit;
use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, decides};
use crate::analysis::links::tokens::clip;
use crate::analysis::params::{ANSWER_BASIS, FOLLOWED_PLAN};

/// How much of the end of a prompt is read for a request for a plan.
const PROMPT_TAIL_BYTES: usize = 400;
/// How much of an output is read for the steps of a plan.
const PLAN_HEAD_BYTES: usize = 8 * 1024;

/// The decisions the final answer of a failed run rested on: the action before it, the plan.
pub struct AnswerPath;

impl Detector for AnswerPath {
    fn id(&self) -> DetectorId {
        DetectorId::AnswerPath
    }

    fn doc(&self) -> &'static str {
        "In a failed run whose final answer was committed by a call, the decision before the commit and the plan the agent followed (weak suspects, listed to fill a short list)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let Some((m, _)) = commit(f) else {
            return Vec::new();
        };
        let agent = run.steps.get(m).and_then(|s| s.agent.as_deref());
        let mut basis = None;
        let mut plan = None;
        for k in (0..m).rev() {
            let Some(s) = run.steps.get(k) else { break };
            if !decides(s) || s.agent.as_deref() != agent {
                continue;
            }
            if is_plan(f, k) {
                plan = Some(k);
                break;
            }
            if basis.is_none() {
                basis = Some(k);
            }
        }
        let mut out = Vec::new();
        if let Some(b) = basis {
            out.push(
                Finding::new(
                    b,
                    Category::AnswerBasis,
                    DetectorId::AnswerPath,
                    ANSWER_BASIS,
                    Nature::Suspect,
                    "the final answer rested on what this decision did".to_owned(),
                )
                .because(format!(
                    "it is the agent's last action before {} committed the final answer: {}",
                    step(run, m),
                    quote(&short(&f.texts.produced(b), 120))
                ))
                .because(
                    "listed as the decision the failed answer rested on; no rule found a fault in it"
                        .to_owned(),
                ),
            );
        }
        if let Some(p) = plan {
            out.push(
                Finding::new(
                    p,
                    Category::FollowedPlan,
                    DetectorId::AnswerPath,
                    FOLLOWED_PLAN,
                    Nature::Suspect,
                    "the agent followed this plan to the failed answer".to_owned(),
                )
                .because(format!(
                    "it is the plan in force when {} committed the final answer: {}",
                    step(run, m),
                    quote(&short(&f.texts.produced(p), 120))
                ))
                .because(
                    "listed as the plan the failed answer came from; no rule found a fault in it"
                        .to_owned(),
                ),
            );
        }
        out
    }
}

/// True when model step `k` was asked for a plan (the end of its prompt says "plan") and wrote
/// one (two lines or more that open a numbered or bulleted step).
fn is_plan(f: &Facts<'_>, k: usize) -> bool {
    let prompt = f.texts.consumed(k);
    let mut from = prompt.len().saturating_sub(PROMPT_TAIL_BYTES);
    while !prompt.is_char_boundary(from) {
        from += 1;
    }
    let asks = prompt.get(from..).is_some_and(|tail| {
        tail.split(|c: char| !c.is_alphanumeric())
            .any(|w| w.eq_ignore_ascii_case("plan"))
    });
    asks && clip(&f.texts.produced(k), PLAN_HEAD_BYTES)
        .lines()
        .filter(|l| opens_step(l))
        .nth(1)
        .is_some()
}

/// A line that opens a step of a list: `1.`, `2)`, `Step 3:`, `-`, `*`, `•`.
fn opens_step(line: &str) -> bool {
    let l = line.trim_start();
    let digits = l.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = l.get(digits..).unwrap_or_default();
        return rest.starts_with(". ") || rest.starts_with(") ");
    }
    if l.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("step ")) {
        let after = l.get(5..).unwrap_or_default();
        let n = after.chars().take_while(char::is_ascii_digit).count();
        return n > 0
            && after
                .get(n..)
                .is_some_and(|r| r.starts_with(':') || r.starts_with('.'));
    }
    ["- ", "* ", "• "].iter().any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::model::{Step, StepKind};
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn model(id: &str, prompt: &str, output: &str) -> Step {
        let mut s = Step::new(id, StepKind::Llm);
        s.agent = Some("coder".into());
        s.input = Some(json!([{"role": "user", "content": prompt}]).into());
        s.output = Some(json!(output).into());
        s
    }

    fn run_with(plan_prompt: &str, plan_output: &str, ok: bool) -> crate::analysis::model::Run {
        let b = if ok {
            RunBuilder::succeeded()
        } else {
            RunBuilder::failed()
        };
        b.task("How many albums did she release?")
            .step(model("p", plan_prompt, plan_output))
            .step(model("a1", "Go on.", "Code: search('albums')"))
            .tool_ok("t", "web_search", json!({"q": "albums"}), "She released 3.")
            .step(model(
                "a2",
                "Observation: She released 3.",
                "Code: final_answer(\"4\")",
            ))
            .tool_ok("f", "final_answer", json!({"answer": "4"}), json!(null))
            .answer("4")
            .build()
    }

    #[test]
    fn the_action_before_the_commit_and_the_plan_it_followed_are_weak_suspects() {
        let run = run_with(
            "Develop a step-by-step plan. Now write your plan below.",
            "1. Search for her discography.\n2. Count the studio albums.\n",
            false,
        );
        let found = facts_for(&run, |f| AnswerPath.detect(f));
        let got: Vec<_> = found.iter().map(|x| (x.step, x.category)).collect();
        assert_eq!(
            got,
            vec![(1, Category::AnswerBasis), (0, Category::FollowedPlan)]
        );
        assert!(found.iter().all(|x| x.confidence < 0.4));
        assert!(
            found[0].evidence[0].contains("step 'a2'"),
            "{:?}",
            found[0].evidence
        );
    }

    #[test]
    fn a_step_that_was_not_asked_for_a_plan_or_wrote_none_is_no_plan() {
        // Asked for facts, not a plan: a list is no plan.
        let run = run_with(
            "List the facts you know.",
            "1. She is a singer.\n2. She released albums.\n",
            false,
        );
        let found = facts_for(&run, |f| AnswerPath.detect(f));
        assert!(found.iter().all(|x| x.category != Category::FollowedPlan));
        // Asked for a plan, answered in one sentence: no plan either, so it is the action.
        let run = run_with("Write your plan below.", "I will just search.", false);
        let found = facts_for(&run, |f| AnswerPath.detect(f));
        assert!(found.iter().all(|x| x.category != Category::FollowedPlan));
        assert_eq!(found.first().map(|x| x.step), Some(1));
    }

    #[test]
    fn a_run_that_succeeded_or_never_committed_an_answer_gets_nothing() {
        let run = run_with("Write your plan below.", "1. a\n2. b\n", true);
        assert!(facts_for(&run, |f| AnswerPath.detect(f)).is_empty());
        let talk = RunBuilder::failed()
            .user("u", "Name the river.")
            .llm("m", "The Danube.")
            .answer("The Danube.")
            .build();
        assert!(facts_for(&talk, |f| AnswerPath.detect(f)).is_empty());
    }

    #[test]
    fn list_steps_are_read_by_their_opening() {
        assert!(opens_step("1. Search"));
        assert!(opens_step("  12) Count"));
        assert!(opens_step("Step 3: read"));
        assert!(opens_step("- item"));
        assert!(!opens_step("2024. A year"));
        assert!(!opens_step("Stepping out"));
        assert!(!opens_step("1.5 million"));
    }
}
