//! Final answer (docs/how-it-decides.md, "Detect"): in a failed run, the decision that committed
//! the final answer is the step that sealed the failure, whatever set it up earlier. Found as the
//! model step that called a final-answer tool (`final_answer`, `final_result`, `finish`; the last
//! such call whose arguments hold the run's answer, else the last). A run with no such call
//! (a conversation, a group chat) is left to the rules that trace the answer's words.
//! It is the second reading of a failure beside the earliest decisive error the other rules look
//! for, so it scores below direct evidence; like a claim of the answer it is wording, ranked below
//! the calls in a run that changed something. Linear in the run. No I/O.

use super::answer::norm_words;
use super::say::{quote, step, tool_of};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::links::tokens::clip;
use crate::analysis::model::FINAL_ANSWER_TOOLS;
use crate::analysis::model::StepKind;
use crate::analysis::params::{FINAL_ANSWER, LINK_SCAN_BYTES, UNSOURCED_ANSWER};

/// At most this many containers around the answering step are followed up.
const MAX_PARENTS: usize = 64;

/// At most this many bytes of the answer are looked for in a step's text.
const ANSWER_PROBE_BYTES: usize = 400;

/// The decision that committed the final answer of a failed run.
pub struct FinalAnswer;

impl Detector for FinalAnswer {
    fn id(&self) -> DetectorId {
        DetectorId::FinalAnswer
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the decision that committed the final answer (the step that sealed the failure)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let Some((m, c)) = commit(f) else {
            return Vec::new();
        };
        let answer = run.final_answer.as_deref().unwrap_or_default();
        let how = format!(
            "{} gave the final answer through the call to {} at {}: {}",
            step(run, m),
            tool_of(run, c),
            step(run, c),
            quote(answer)
        );
        let mut fi = Finding::new(
            m,
            Category::FinalAnswer,
            DetectorId::FinalAnswer,
            FINAL_ANSWER,
            Nature::Suspect,
            "it committed the final answer of a run that failed".to_owned(),
        )
        .because(how)
        .because(
            "the step that sealed the failure; an earlier decision may have set it up, so check the suspects ranked beside it"
                .to_owned(),
        );
        // In a run that changed something, the change sealed it, not the words that reported it.
        fi.wording = true;
        let mut out = vec![fi];
        if let Some(first) = unsourced(f, m) {
            out.push(
                Finding::new(
                    m,
                    Category::UnsourcedAnswer,
                    DetectorId::FinalAnswer,
                    UNSOURCED_ANSWER,
                    Nature::Suspect,
                    "it gave the final answer before anything was looked up, run or asked"
                        .to_owned(),
                )
                .because(format!(
                    "{} gave the final answer as the agent's first action: no tool result, search, memory read, code output or other agent's report comes before it{}",
                    step(run, m),
                    first.map_or_else(String::new, |p| format!(
                        " (before it the agent only wrote, at {})",
                        step(run, p)
                    ))
                ))
                .because(format!("the answer it gave: {}", quote(answer))),
            );
        }
        out
    }
}

/// When decision `m`, which gave the final answer, had nothing from outside the model before it
/// (no successful call other than a final-answer call, no search or memory read, no step of a
/// loop that reported back, no message of another agent or of the user after the task): the
/// latest earlier model step of its own (a plan, notes), or `None` inside when there is none.
/// `None` outside when something came in before it.
fn unsourced(f: &Facts<'_>, m: usize) -> Option<Option<usize>> {
    let run = f.run;
    let me = run.steps.get(m)?;
    // The containers around `m` (its loop step, its agent's run) report what happened inside
    // them, `m` included: they are no source of its.
    let mut around: Vec<&str> = Vec::new();
    let mut up = me.parent.as_ref();
    while let Some(p) = up
        && around.len() < MAX_PARENTS
    {
        around.push(p.0.as_str());
        up = run.step(p.0.as_str()).and_then(|s| s.parent.as_ref());
    }
    let mut users = 0;
    let mut own = None;
    for (k, s) in run.steps.iter().enumerate().take(m) {
        if s.is_container() {
            let reported = s.failed() || !s.output_text().trim().is_empty();
            if reported && !around.contains(&s.id.0.as_str()) {
                return None;
            }
            continue;
        }
        match s.kind {
            StepKind::User => {
                users += 1;
                if users > 1 {
                    return None;
                }
            }
            StepKind::Tool => {
                let final_call = s
                    .tool
                    .as_ref()
                    .is_some_and(|t| FINAL_ANSWER_TOOLS.contains(&t.name.as_str()));
                if !s.failed() && !final_call {
                    return None;
                }
            }
            StepKind::Retrieval | StepKind::MemoryRead if !s.failed() => return None,
            _ if s.kind.is_model() => {
                if s.agent != me.agent {
                    return None;
                }
                own = Some(k);
            }
            _ => {}
        }
    }
    Some(own)
}

/// In a failed run with a final answer, the decision that committed it and the final-answer call
/// it made: (model step, call). The last call to a final-answer tool whose arguments hold the
/// answer, else the last such call; its decision is the model step that issued it.
pub fn commit(f: &Facts<'_>) -> Option<(usize, usize)> {
    let run = f.run;
    if !run.went_wrong() {
        return None;
    }
    let answer = run
        .final_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())?;
    let probe = norm_words(clip(answer.trim(), ANSWER_PROBE_BYTES));
    let holds = |text: &str| {
        !probe.trim().is_empty() && norm_words(clip(text, LINK_SCAN_BYTES)).contains(&probe)
    };
    let calls: Vec<usize> = run
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.kind == StepKind::Tool
                && !s.failed()
                && s.tool
                    .as_ref()
                    .is_some_and(|t| FINAL_ANSWER_TOOLS.contains(&t.name.as_str()))
        })
        .map(|(i, _)| i)
        .collect();
    let call = calls
        .iter()
        .rev()
        .copied()
        .find(|&i| holds(&f.texts.consumed(i)))
        .or_else(|| calls.last().copied());
    call.and_then(|c| f.caller(c).map(|m| (m, c)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn the_turn_that_called_the_final_answer_tool_sealed_it() {
        let run = RunBuilder::failed()
            .task("How many studio albums did she release?")
            .llm("m0", "Thought: search first.")
            .tool_ok(
                "t1",
                "web_search",
                json!({"query": "albums"}),
                "She released 3.",
            )
            .llm("m2", "Code: final_answer(\"4\")")
            .tool_ok("t3", "final_answer", json!({"answer": "4"}), json!(null))
            .llm("m4", "FINAL ANSWER: 4")
            .answer("4")
            .build();
        let found = facts_for(&run, |f| FinalAnswer.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (2, Category::FinalAnswer)
        );
        assert!(
            found[0].evidence[0].contains("'final_answer' at step 't3'"),
            "{:?}",
            found[0].evidence
        );
    }

    #[test]
    fn without_a_final_answer_call_or_in_a_run_that_succeeded_nothing_is_sealed() {
        let task = RunBuilder::failed()
            .user("u0", "Name the river.")
            .llm("m1", "The answer is the Danube.")
            .answer("the Danube")
            .build();
        assert!(facts_for(&task, |f| FinalAnswer.detect(f)).is_empty());
        let ok = RunBuilder::succeeded()
            .llm("m1", "Code: final_answer(\"the Danube\")")
            .tool_ok(
                "t2",
                "final_answer",
                json!({"answer": "the Danube"}),
                json!(null),
            )
            .answer("the Danube")
            .build();
        assert!(facts_for(&ok, |f| FinalAnswer.detect(f)).is_empty());
    }

    /// A plan, then the answer committed with nothing looked up; with `looked`, a search result
    /// comes between them.
    fn answered(looked: bool) -> crate::analysis::model::Run {
        let b = RunBuilder::failed()
            .task("Which monarchies in Asia have access to the sea?")
            .llm(
                "m0",
                "1. Search for the list of monarchies.\n2. Check each coast.",
            );
        let b = if looked {
            b.tool_ok(
                "t1",
                "web_search",
                json!({"query": "Asian monarchies"}),
                "Bahrain, Brunei, Cambodia, Japan, Jordan, Kuwait, Malaysia, Oman, Qatar.",
            )
        } else {
            b
        };
        b.llm("m2", "Code: final_answer(\"12\")")
            .tool_ok("t3", "final_answer", json!({"answer": "12"}), json!(null))
            .answer("12")
            .build()
    }

    #[test]
    fn an_answer_given_before_anything_was_looked_up_is_a_suspect() {
        let run = answered(false);
        let found = facts_for(&run, |f| FinalAnswer.detect(f));
        let unsourced: Vec<_> = found
            .iter()
            .filter(|x| x.category == Category::UnsourcedAnswer)
            .collect();
        assert_eq!(unsourced.len(), 1, "{found:?}");
        assert_eq!(unsourced[0].step, 1);
        assert!(!unsourced[0].category.is_lead());
        assert!(
            unsourced[0].evidence[0].contains("before it the agent only wrote, at step 'm0'"),
            "{:?}",
            unsourced[0].evidence
        );
        // A search result before the answer is a source: the commit is only a lead then.
        let run = answered(true);
        let found = facts_for(&run, |f| FinalAnswer.detect(f));
        assert!(
            found.iter().all(|x| x.category == Category::FinalAnswer),
            "{found:?}"
        );
    }
}
