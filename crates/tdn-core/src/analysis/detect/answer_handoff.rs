//! Answer hand-offs (docs/how-it-decides.md, "Detect"): in a failed multi-agent run, a wrong
//! value passes between agents. Around the step that first put a value of the final answer into
//! the run (its origin, found as `answer_origin` finds it), two more steps are suspects:
//!
//! - the hand-off in: the latest step of another agent before the origin that says something
//!   (an instruction that asked for the wrong thing, or the report the origin misread);
//! - the hand-off out: the first later step of another agent that repeats the value (it took the
//!   value up without checking it).
//!
//! The origin itself is `answer_origin`'s finding; this detector adds only its neighbours, scored
//! below it. Linear: one multi-pattern search over the steps before the origin is known, one over
//! the steps after it. No I/O.

use super::answer::{Item, norm_words};
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::{Run, Step, StepKind};
use crate::analysis::params::{HANDOFF_IN, HANDOFF_MIN_WORDS, HANDOFF_OUT};
use aho_corasick::AhoCorasick;

/// The steps that handed the final answer's value in to its origin and out of it.
pub struct AnswerHandoff;

impl Detector for AnswerHandoff {
    fn id(&self) -> DetectorId {
        DetectorId::AnswerHandoff
    }

    fn doc(&self) -> &'static str {
        "In a failed multi-agent run, the step of another agent just before the answer's origin, and the first step of another agent that repeated its value."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let Some(t) = f.answer_trace() else {
            return Vec::new();
        };
        let (origin, holder) = (t.origin, t.holder);
        let Some(&mine) = t.introduced.first() else {
            return Vec::new();
        };
        let items = &t.items;
        let ac = &t.matcher;
        let who = agent_of(run.steps.get(origin));
        let shown = items
            .get(mine)
            .map_or_else(String::new, |i: &Item| quote(&i.shown));
        let mut out = Vec::new();
        if let Some(i) = handoff_in(run, origin, who) {
            out.push(
                Finding::new(
                    i,
                    Category::AnswerHandoff,
                    DetectorId::AnswerHandoff,
                    HANDOFF_IN,
                    Nature::Suspect,
                    "it handed over the work in which the final answer's value first appeared"
                        .to_owned(),
                )
                .because(format!(
                    "{} is the last step of another agent before {}, which first stated the final answer's {shown}",
                    step(run, i),
                    step(run, origin)
                )),
            );
        }
        if let Some(o) = handoff_out(f, holder, who, ac, mine) {
            out.push(
                Finding::new(
                    o,
                    Category::AnswerHandoff,
                    DetectorId::AnswerHandoff,
                    HANDOFF_OUT,
                    Nature::Suspect,
                    "it took up the final answer's value from another agent".to_owned(),
                )
                .because(format!(
                    "{} repeats {shown}, which {} first stated, and is the first step of another agent to do so",
                    step(run, o),
                    step(run, origin)
                )),
            );
        }
        out
    }
}

fn agent_of(s: Option<&Step>) -> Option<&str> {
    s.and_then(|s| s.agent.as_deref())
        .map(str::trim)
        .filter(|a| !a.is_empty())
}

/// A model or tool step of an agent other than `who`.
fn other_agent(s: &Step, who: Option<&str>) -> bool {
    let a = agent_of(Some(s));
    (super::decides(s) || s.kind == StepKind::Tool) && a.is_some() && a != who
}

/// The latest step of another agent before `origin` that says something: at least
/// [`HANDOFF_MIN_WORDS`] words ("Next speaker WebSurfer" is a routing note, not a hand-off).
fn handoff_in(run: &Run, origin: usize, who: Option<&str>) -> Option<usize> {
    (0..origin).rev().find(|&k| {
        run.steps.get(k).is_some_and(|s| {
            other_agent(s, who)
                && s.output
                    .as_ref()
                    .and_then(crate::analysis::model::Json::as_str)
                    .is_some_and(|t| t.split_whitespace().nth(HANDOFF_MIN_WORDS - 1).is_some())
        })
    })
}

/// The first step after `holder` of an agent other than `who` whose output holds item `mine`.
fn handoff_out(
    f: &Facts<'_>,
    holder: usize,
    who: Option<&str>,
    ac: &AhoCorasick,
    mine: usize,
) -> Option<usize> {
    let run = f.run;
    ((holder + 1)..run.steps.len()).find(|&k| {
        run.steps.get(k).is_some_and(|s| {
            other_agent(s, who)
                && ac
                    .find_overlapping_iter(&norm_words(&f.texts.produced(k)))
                    .any(|m| m.pattern().as_usize() == mine)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;

    fn as_agent(name: &str) -> impl FnOnce(&mut Step) {
        let name = name.to_owned();
        move |s: &mut Step| s.agent = Some(name)
    }

    fn relayed() -> Run {
        RunBuilder::failed()
            .task("What was the highest price a flat sold for in the district in 2021?")
            .llm(
                "o1",
                "Please search for the highest sale price in the district in 2021.",
            )
            .with(as_agent("Orchestrator"))
            .llm("o2", "Next speaker WebSurfer")
            .with(as_agent("Orchestrator"))
            .llm("w1", "Results: a tower sold for $1.08 billion in 2021.")
            .with(as_agent("WebSurfer"))
            .llm("w2", "The tower deal was $1.08 billion.")
            .with(as_agent("WebSurfer"))
            .llm(
                "o3",
                "The highest price is $1.08 billion; request satisfied.",
            )
            .with(as_agent("Orchestrator"))
            .answer("1080000000")
            .build()
    }

    #[test]
    fn the_instruction_before_the_origin_and_the_step_that_took_the_value_up_are_flagged() {
        let found = facts_for(&relayed(), |f| AnswerHandoff.detect(f));
        let got: Vec<(usize, f64)> = found.iter().map(|x| (x.step, x.confidence)).collect();
        assert_eq!(got, vec![(0, HANDOFF_IN), (4, HANDOFF_OUT)]);
    }

    #[test]
    fn a_right_answer_a_single_agent_or_a_successful_run_gives_nothing() {
        let mut right = relayed();
        right.reference_answer = Some("1080000000".to_owned());
        assert!(facts_for(&right, |f| AnswerHandoff.detect(f)).is_empty());
        let mut alone = relayed();
        for s in &mut alone.steps {
            s.agent = Some("Solver".to_owned());
        }
        assert!(facts_for(&alone, |f| AnswerHandoff.detect(f)).is_empty());
        let mut ok = relayed();
        ok.status = crate::analysis::model::RunStatus::Succeeded;
        assert!(facts_for(&ok, |f| AnswerHandoff.detect(f)).is_empty());
    }
}
