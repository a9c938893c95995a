//! What several detectors and the ranking need to know about a run, computed once: the step
//! texts, the links, the checked claims, which model step issued each tool call, the latest user
//! message before each step, which tool each step called, whether the run changed anything, and
//! (on first use) where the final answer came from and which word lists may occur in what each
//! step returned ([`Marks`]). Linear in the run. Each fact that takes work is made in its own
//! file under `facts/`.

mod callers;
mod containers;
mod slots;
mod state_sources;
mod tools;
mod used_later;

pub use state_sources::INFRASTRUCTURE;

use super::answer::{self, AnswerTrace};
use super::prescan::Marks;
use crate::analysis::claims::CheckedClaim;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::{Run, StepKind, Tool};
use crate::analysis::state_change::tool_changes_state;
use callers::callers;
use containers::last_decision_inside;
use hashbrown::HashMap;
use slots::Slots;
use state_sources::state_sources;
use std::sync::OnceLock;
use tools::{step_changes_state, tool_of_step, tools_called};
use used_later::used_later;

/// Derived facts about one run.
pub struct Facts<'a> {
    /// The run.
    pub run: &'a Run,
    /// What each step produced and consumed.
    pub texts: &'a StepTexts<'a>,
    /// Which step used which earlier step's output.
    pub links: &'a LinkGraph<'a>,
    /// The checked claims of the final answer.
    pub claims: &'a [CheckedClaim],
    /// The reference answer in force (the run's own unless the caller chose otherwise).
    reference: Option<&'a str>,
    /// What is known from the run and its texts alone.
    base: RunFacts,
    used: Vec<bool>,
    /// The final answer's origin, found once for the detectors that read it.
    answer: OnceLock<Option<AnswerTrace>>,
    /// Which word lists may occur in what each step returned, scanned once on first use.
    marks: OnceLock<Marks>,
}

/// The facts that need neither the links nor the claims: made while the links are found
/// (issue 11: they were on the rules' path after it).
pub struct RunFacts {
    callers: Slots,
    /// For each step, the position in `run.tools` of the tool it called (`run.tool` of its
    /// call's name), looked up once: several detectors and the walk back ask it of every step,
    /// and each lookup hashes the name (issue 11).
    tool_at: Slots,
    /// Per tool of `run.tools`: calling it changes things ([`tool_changes_state`]).
    changes: Vec<bool>,
    last_user: Slots,
    changed: bool,
    inside: Slots,
    /// Only the failed calls that have a source (few in any run), by position.
    state_from: HashMap<usize, (usize, String)>,
}

impl RunFacts {
    /// Computes the facts of `run` that its texts alone give.
    pub fn new(run: &Run, texts: &StepTexts<'_>) -> RunFacts {
        let mut last_user = Slots::with_capacity(run.steps.len());
        let mut last = None;
        for (i, s) in run.steps.iter().enumerate() {
            last_user.push(last);
            if s.kind == StepKind::User {
                last = Some(i);
            }
        }
        let tool_at = tools_called(run);
        let changes: Vec<bool> = run.tools.iter().map(tool_changes_state).collect();
        let mutates = |i: usize| step_changes_state(run, &tool_at, &changes, i);
        let changed = run
            .steps
            .iter()
            .enumerate()
            .any(|(i, s)| !s.failed() && mutates(i));
        let state_from = state_sources(run, mutates);
        RunFacts {
            callers: callers(run, texts),
            tool_at,
            changes,
            last_user,
            changed,
            inside: last_decision_inside(run),
            state_from,
        }
    }
}

impl<'a> Facts<'a> {
    /// Computes the facts.
    pub fn new(
        run: &'a Run,
        texts: &'a StepTexts<'a>,
        links: &'a LinkGraph<'a>,
        claims: &'a [CheckedClaim],
    ) -> Facts<'a> {
        Facts::with_base(RunFacts::new(run, texts), run, texts, links, claims)
    }

    /// The facts, from those `base` already holds ([`RunFacts::new`] of the same run and texts).
    pub fn with_base(
        base: RunFacts,
        run: &'a Run,
        texts: &'a StepTexts<'a>,
        links: &'a LinkGraph<'a>,
        claims: &'a [CheckedClaim],
    ) -> Facts<'a> {
        Facts {
            run,
            texts,
            links,
            claims,
            reference: run.reference_answer.as_deref(),
            base,
            used: used_later(run, links, claims),
            answer: OnceLock::new(),
            marks: OnceLock::new(),
        }
    }

    /// The same facts with another reference answer in force (`None` for `--no-reference`).
    pub fn with_reference(mut self, reference: Option<&'a str>) -> Facts<'a> {
        self.reference = reference;
        self.answer = OnceLock::new();
        self
    }

    /// The known-good answer in force, if any: detectors compare the final answer with it.
    pub fn reference(&self) -> Option<&'a str> {
        self.reference
    }

    /// Where the final answer of a failed multi-agent run came from ([`answer::trace`]), found on
    /// first use.
    pub fn answer_trace(&self) -> Option<&AnswerTrace> {
        self.answer.get_or_init(|| answer::trace(self)).as_ref()
    }

    /// Which word lists may occur in what each step returned ([`Marks`]), scanned on first use.
    pub fn marks(&self) -> &Marks {
        self.marks.get_or_init(|| Marks::scan(self.run, self.texts))
    }

    /// The model step that issued the tool call at `i`: the latest earlier model step whose
    /// output names the tool, else the latest earlier model step.
    pub fn caller(&self, i: usize) -> Option<usize> {
        self.base.callers.get(i)
    }

    /// The latest user message before step `i`.
    pub fn last_user_before(&self, i: usize) -> Option<usize> {
        self.base.last_user.get(i)
    }

    /// True when a state-changing call succeeded (a refund, a booking): the run changed
    /// something.
    pub fn changed_something(&self) -> bool {
        self.base.changed
    }

    /// True when a later step used what step `i` produced: a value link out of it, a unit it
    /// produced sent to a later model step, a claim of the answer resting on it (supported,
    /// partial, stale or contradicted), or a decision requiring it.
    pub fn used_later(&self, i: usize) -> bool {
        self.used.get(i).copied().unwrap_or(false)
    }

    /// For a container step, the latest decision inside it (following parents at most
    /// [`MAX_NESTING`](containers::MAX_NESTING) levels up from each decision): where what the container reports was
    /// decided.
    pub fn decision_inside(&self, i: usize) -> Option<usize> {
        self.base.inside.get(i)
    }

    /// For a failed call (not failed by its service): the latest earlier successful
    /// state-changing call that named one of the same ids in its arguments, and that id. The
    /// later call worked on something the earlier one had changed.
    pub fn state_source(&self, i: usize) -> Option<(usize, &str)> {
        self.base.state_from.get(&i).map(|(w, v)| (*w, v.as_str()))
    }

    /// True when step `i` is a call to a tool that changes things: marked `mutates`, or named
    /// or described with an action verb (docs/how-it-decides.md, "What changes state").
    pub fn mutating(&self, i: usize) -> bool {
        step_changes_state(self.run, &self.base.tool_at, &self.base.changes, i)
    }

    /// The tool step `i` called, as `run.tool` finds it by its call's name.
    pub fn tool(&self, i: usize) -> Option<&'a Tool> {
        tool_of_step(self.run, &self.base.tool_at, i)
    }

    /// The position in `run.tools` of [`tool`](Self::tool)`(i)`.
    pub fn tool_position(&self, i: usize) -> Option<usize> {
        self.base.tool_at.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::check_claims;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn the_tool_of_each_step_is_the_one_run_tool_finds() {
        // Two tools named "refund": the first (state-changing) one is the one called.
        let run = RunBuilder::failed()
            .tool_def("lookup", "", json!(null), false)
            .tool_def("refund", "first", json!(null), true)
            .tool_def("refund", "second", json!(null), false)
            .user("u0", "Refund order 1234")
            .llm("m1", json!({"tool_calls": [{"name": "refund"}]}))
            .tool_ok("t2", "refund", json!({"id": "1234"}), "done")
            .tool_ok("t3", "lookup", json!({"id": "1234"}), "refunded")
            .tool_err("t4", "unknown_tool", json!({}), "no such tool")
            .build();
        let texts = StepTexts::build(&run);
        let links = LinkGraph::build(&run, &texts);
        let claims = check_claims(&run, &texts);
        let facts = Facts::new(&run, &texts, &links, &claims);
        for (i, s) in run.steps.iter().enumerate() {
            let expected = s.tool.as_ref().and_then(|c| run.tool(&c.name));
            assert!(
                std::ptr::eq(
                    facts.tool(i).map_or(std::ptr::null(), |t| t),
                    expected.map_or(std::ptr::null(), |t| t)
                ),
                "step {i}"
            );
        }
        assert_eq!(
            facts.tool(2).and_then(|t| t.description.as_deref()),
            Some("first")
        );
        let mutating: Vec<bool> = (0..run.steps.len()).map(|i| facts.mutating(i)).collect();
        assert_eq!(mutating, [false, false, true, false, false]);
        assert!(facts.tool(4).is_none() && facts.tool(99).is_none());
        assert!(facts.changed_something());
    }

    #[test]
    fn slots_give_back_what_was_put_and_none_where_nothing_was() {
        let mut s = Slots::with_capacity(4);
        for p in [Some(0), None, Some(7), Some(usize::MAX)] {
            s.push(p);
        }
        assert_eq!(
            (0..5).map(|i| s.get(i)).collect::<Vec<_>>(),
            [Some(0), None, Some(7), None, None]
        );
        let mut n = Slots::nones(3);
        n.set(1, 42);
        n.set(9, 1);
        assert_eq!(
            (0..4).map(|i| n.get(i)).collect::<Vec<_>>(),
            [None, Some(42), None, None]
        );
    }

    /// A step counts as used later when a later step was sent a unit it produced, or names it
    /// as a requirement of a decision; an earlier or its own step naming it does not count.
    #[test]
    fn steps_named_by_later_units_and_decisions_are_used_later() {
        use crate::analysis::model::{
            ContextUnit, Decision, DecisionOption, RunStatus, Step, StepContext, StepId, StepKind,
            UnitId,
        };
        let n = 5_000;
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps = (0..n)
            .map(|i| Step::new(format!("s{i}"), StepKind::Event))
            .collect();
        let unit = |id: &str, by: usize| ContextUnit {
            id: UnitId(id.to_owned()),
            kind: "document".to_owned(),
            text: String::new(),
            tokens: None,
            produced_by: Some(StepId(format!("s{by}"))),
            at: Vec::new(),
            extra: serde_json::Map::new(),
        };
        // u1 made by step 10, sent at 4,000 (later: used); u2 made by 4,500, sent at 4,100
        // (earlier: not used); u3 made by 3,000 and sent by itself (not used).
        run.context_units = vec![unit("u1", 10), unit("u2", 4_500), unit("u3", 3_000)];
        let sent = |ids: &[&str]| {
            Some(Box::new(StepContext {
                available: None,
                sent: ids.iter().map(|u| UnitId((*u).to_owned())).collect(),
            }))
        };
        run.steps[4_000].context = sent(&["u1", "ghost"]);
        run.steps[4_100].context = sent(&["u2"]);
        run.steps[3_000].context = sent(&["u3"]);
        // A decision at 2,500 requires steps 20 and 2,600 (later: not used).
        run.steps[2_500].decision = Some(Box::new(Decision {
            chosen: "a".to_owned(),
            options: vec![DecisionOption {
                id: "a".to_owned(),
                requires: vec![StepId("s20".to_owned()), StepId("s2600".to_owned())],
            }],
        }));
        run.reindex();
        let used: Vec<usize> = crate::analysis::detect::tests_support::facts_for(&run, |f| {
            (0..n).filter(|&i| f.used_later(i)).collect()
        });
        assert_eq!(used, vec![10, 20]);
    }
}
