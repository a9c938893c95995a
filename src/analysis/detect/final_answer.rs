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
use crate::analysis::model::StepKind;
use crate::analysis::rank::params::{FINAL_ANSWER, LINK_SCAN_BYTES};

/// Tools whose call hands the agent's final answer back.
pub const FINAL_ANSWER_TOOLS: &[&str] = &["final_answer", "final_result", "finish"];

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
        vec![fi]
    }
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
}
