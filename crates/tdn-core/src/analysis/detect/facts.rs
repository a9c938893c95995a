//! What several detectors and the ranking need to know about a run, computed once: the step
//! texts, the links, the checked claims, which model step issued each tool call, the latest user
//! message before each step, which tool each step called, whether the run changed anything, and
//! (on first use) where the final answer came from and which word lists may occur in what each
//! step returned ([`Marks`]). Linear in the run.

use super::answer::{self, AnswerTrace};
use super::prescan::Marks;
use super::state_change::{name_says_action, tool_changes_state};
use crate::analysis::claims::CheckedClaim;
use crate::analysis::claims::SupportLabel;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::Json;
use crate::analysis::model::{Run, Step, StepKind, Tool, decides};
use crate::analysis::whole_words::PhraseSet;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use hashbrown::HashMap;
use std::sync::OnceLock;

/// At most this many distinct tool names are looked for in model outputs.
const MAX_TOOL_NAMES: usize = 1_000;
/// A tool name longer than this is not looked for in model outputs (no real tool is named so).
const MAX_TOOL_NAME_BYTES: usize = 256;

/// Phrases of an error about the infrastructure rather than the request: a server error, a
/// time-out, an outage, a rate limit, credentials. The walk back keeps such a failure on the
/// tool or its service, even when the error also names the request. Bare status codes are not
/// listed: "amount exceeds 500" is about the request.
pub const INFRASTRUCTURE: &[&str] = &[
    "internal server error",
    "internal error",
    "server error",
    "bad gateway",
    "gateway timeout",
    "service unavailable",
    "temporarily unavailable",
    "server unavailable",
    "service down",
    "is down",
    "outage",
    "timed out",
    "timeout",
    "time-out",
    "time out",
    "connection refused",
    "connection reset",
    "connection error",
    "connection closed",
    "could not connect",
    "couldn't connect",
    "unable to connect",
    "network error",
    "network unreachable",
    "host unreachable",
    "dns",
    "rate limit",
    "rate-limit",
    "rate limited",
    "too many requests",
    "quota exceeded",
    "unauthorized",
    "unauthorised",
    "forbidden",
    "authentication",
    "not authenticated",
    "credentials",
    "api key",
    "access token",
    "token expired",
    "expired token",
    "permission denied",
];

static INFRA: PhraseSet = PhraseSet::new(INFRASTRUCTURE);

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
    /// [`MAX_NESTING`] levels up from each decision): where what the container reports was
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

/// One optional position per step (a step, a tool), four bytes each instead of the sixteen of an
/// `Option<usize>`: the facts hold several such tables for every step of a big run (issue 11).
/// A position that does not fit in 32 bits is kept as none; no run that fits in memory has
/// that many steps or tools.
#[derive(Default)]
struct Slots(Vec<u32>);

impl Slots {
    const NONE: u32 = u32::MAX;

    fn with_capacity(n: usize) -> Slots {
        Slots(Vec::with_capacity(n))
    }

    fn nones(n: usize) -> Slots {
        Slots(vec![Slots::NONE; n])
    }

    fn packed(p: Option<usize>) -> u32 {
        p.and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p != Slots::NONE)
            .unwrap_or(Slots::NONE)
    }

    fn push(&mut self, p: Option<usize>) {
        self.0.push(Slots::packed(p));
    }

    /// Sets slot `i` (when it exists) to `p`.
    fn set(&mut self, i: usize, p: usize) {
        if let Some(slot) = self.0.get_mut(i) {
            *slot = Slots::packed(Some(p));
        }
    }

    fn get(&self, i: usize) -> Option<usize> {
        self.0
            .get(i)
            .filter(|&&p| p != Slots::NONE)
            .and_then(|&p| usize::try_from(p).ok())
    }
}

/// How many parents are followed up from a step when looking for the containers around it.
const MAX_NESTING: usize = 64;

fn last_decision_inside(run: &Run) -> Slots {
    if !run.steps.iter().any(Step::is_container) {
        return Slots::default();
    }
    let mut out = Slots::nones(run.steps.len());
    for (i, s) in run.steps.iter().enumerate() {
        if !decides(s) {
            continue;
        }
        let parent_of = |st: &Step| st.parent.as_ref().and_then(|p| run.step_index(p.as_str()));
        let mut p = parent_of(s);
        for _ in 0..MAX_NESTING {
            let Some(k) = p.filter(|&k| k < i) else { break };
            let Some(ps) = run.steps.get(k) else { break };
            if ps.is_container() {
                out.set(k, i);
            }
            p = parent_of(ps);
        }
    }
    out
}

/// At most this many id values are read from one call's arguments.
const MAX_ID_VALUES: usize = 64;
/// At most this many nodes of one call's arguments are visited.
const MAX_ARG_NODES: usize = 2_000;

/// The id-like string values of a call's arguments: at least 4 characters, holding a digit, no
/// white space.
fn id_values(args: &Json) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![args];
    let mut visited = 0usize;
    while let Some(v) = stack.pop() {
        visited += 1;
        if visited > MAX_ARG_NODES || out.len() >= MAX_ID_VALUES {
            break;
        }
        match v {
            Json::String(s) => {
                let t = s.trim();
                if t.chars().count() >= 4
                    && t.chars().any(|c| c.is_ascii_digit())
                    && !t.contains(char::is_whitespace)
                {
                    out.push(t);
                }
            }
            Json::Array(a) => stack.extend(a.iter()),
            Json::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    out
}

fn state_sources(
    run: &Run,
    is_mutating: impl Fn(usize) -> bool,
) -> HashMap<usize, (usize, String)> {
    let mut out = HashMap::new();
    let mut changed: HashMap<&str, usize> = HashMap::new();
    for (x, s) in run.steps.iter().enumerate() {
        let Some(call) = s.tool.as_ref().filter(|_| s.kind == StepKind::Tool) else {
            continue;
        };
        // The ids are read only where they count: a successful read-only call's are not.
        match s.error.as_deref() {
            None if is_mutating(x) => {
                for v in id_values(&call.arguments) {
                    changed.insert(v, x);
                }
            }
            None => {}
            Some(err) => {
                if changed.is_empty() || INFRA.find_any_case(err).is_some() {
                    continue;
                }
                let found = id_values(&call.arguments)
                    .iter()
                    .filter_map(|v| changed.get(v).map(|&w| (w, *v)))
                    .max_by_key(|&(w, _)| w);
                if let Some((w, v)) = found {
                    out.insert(x, (w, v.to_owned()));
                }
            }
        }
    }
    out
}

fn used_later(run: &Run, links: &LinkGraph, claims: &[CheckedClaim]) -> Vec<bool> {
    use rayon::prelude::*;
    let n = run.steps.len();
    let mut used: Vec<bool> = (0..n).map(|i| links.is_used(i)).collect();
    for c in claims {
        if !matches!(c.label, SupportLabel::NoClaim | SupportLabel::Unsupported)
            && let Some(slot) = c.evidence_step.and_then(|e| used.get_mut(e))
        {
            *slot = true;
        }
    }
    // Each unit's producer, found once rather than once per step that was sent the unit.
    let producer: Vec<Option<usize>> = run
        .context_units
        .iter()
        .map(|u| {
            u.produced_by
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
        })
        .collect();
    // The earlier steps each step names (a unit it was sent, a step its decision requires),
    // found a run of steps per task on the pool (issue 11: 130,000 look-ups at 100,000 steps,
    // on one core while the other waited).
    let named: Vec<Vec<usize>> = run
        .steps
        .par_chunks(STEPS_PER_TASK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut out = Vec::new();
            for (j, s) in chunk.iter().enumerate() {
                let k = c * STEPS_PER_TASK + j;
                let sent = s.context.iter().flat_map(|c| c.sent.iter());
                let producers = sent.filter_map(|id| {
                    run.unit_index(id.as_str())
                        .and_then(|u| producer.get(u).copied().flatten())
                });
                let required = s
                    .decision
                    .iter()
                    .flat_map(|d| d.options.iter())
                    .flat_map(|o| o.requires.iter())
                    .filter_map(|r| run.step_index(r.as_str()));
                out.extend(producers.chain(required).filter(|&p| p < k));
            }
            out
        })
        .collect();
    for p in named.into_iter().flatten() {
        if let Some(slot) = used.get_mut(p) {
            *slot = true;
        }
    }
    used
}

/// Steps whose names [`used_later`] looks up in one task.
const STEPS_PER_TASK: usize = 2048;

/// For each step, the position in `run.tools` of the tool its call names: the first tool of that
/// name, the one `run.tool` finds.
fn tools_called(run: &Run) -> Slots {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(run.tools.len());
    for (at, t) in run.tools.iter().enumerate() {
        first.entry(t.name.as_str()).or_insert(at);
    }
    let mut out = Slots::with_capacity(run.steps.len());
    for s in &run.steps {
        out.push(
            s.tool
                .as_ref()
                .and_then(|c| first.get(c.name.as_str()).copied()),
        );
    }
    out
}

/// True when step `i` calls a tool that changes things: a listed tool by `changes` (its entry in
/// [`RunFacts::changes`]), any other by its name.
fn step_changes_state(run: &Run, tool_at: &Slots, changes: &[bool], i: usize) -> bool {
    let Some(call) = run.steps.get(i).and_then(|s| s.tool.as_ref()) else {
        return false;
    };
    match tool_at.get(i) {
        Some(at) => changes.get(at).copied().unwrap_or(false),
        None => name_says_action(&call.name),
    }
}

/// The tool step `i` called, read from [`tools_called`]'s table.
fn tool_of_step<'a>(run: &'a Run, tool_at: &Slots, i: usize) -> Option<&'a Tool> {
    run.tools.get(tool_at.get(i)?)
}

fn callers(run: &Run, texts: &StepTexts) -> Slots {
    let mut names: Vec<&str> = Vec::new();
    // name -> its place in `names`: one lookup per call, however many names
    let mut index: HashMap<&str, usize> = HashMap::new();
    for s in &run.steps {
        if let Some(c) = &s.tool
            && !c.name.is_empty()
            && c.name.len() <= MAX_TOOL_NAME_BYTES
            && names.len() < MAX_TOOL_NAMES
            && !index.contains_key(c.name.as_str())
        {
            index.insert(&c.name, names.len());
            names.push(&c.name);
        }
    }
    // A contiguous NFA builds in time linear in the names; the automatic choice may build a DFA,
    // whose construction is quadratic in a long name of one repeated letter.
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(&names)
        .ok();
    let mut last_mention: Vec<Option<usize>> = vec![None; names.len()];
    let mut last_model: Option<usize> = None;
    let mut out = Slots::with_capacity(run.steps.len());
    // A text of several leaves is joined here, into one buffer for all steps.
    let mut joined = String::new();
    for (i, s) in run.steps.iter().enumerate() {
        let mut caller = None;
        if let Some(c) = &s.tool {
            let mention = index
                .get(c.name.as_str())
                .and_then(|&k| last_mention.get(k).copied().flatten());
            caller = mention.or(last_model);
        }
        out.push(caller);
        if decides(s) {
            last_model = Some(i);
            if let Some(ac) = &ac {
                let text = texts.produced_text(i).joined_in(&mut joined);
                for m in ac.find_iter(text) {
                    let glued =
                        |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    let before = text.get(..m.start()).and_then(|s| s.chars().next_back());
                    let after = text.get(m.end()..).and_then(|s| s.chars().next());
                    if glued(before) || glued(after) {
                        continue;
                    }
                    if let Some(slot) = last_mention.get_mut(m.pattern().as_usize()) {
                        *slot = Some(i);
                    }
                }
            }
        }
    }
    out
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
