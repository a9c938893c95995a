//! What several detectors and the ranking need to know about a run, computed once: the step
//! texts, the links, the checked claims, which model step issued each tool call, the latest user
//! message before each step, whether the run changed anything, and (on first use) where the final
//! answer came from. Linear in the run.

use super::answer::{self, AnswerTrace};
use super::phrases::PhraseSet;
use super::vocab::INFRASTRUCTURE;
use crate::analysis::claims::CheckedClaim;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::{Run, Step, StepKind};
use crate::analysis::report::SupportLabel;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use hashbrown::HashMap;
use serde_json::Value;
use std::cell::OnceCell;

/// At most this many distinct tool names are looked for in model outputs.
const MAX_TOOL_NAMES: usize = 1_000;
/// A tool name longer than this is not looked for in model outputs (no real tool is named so).
const MAX_TOOL_NAME_BYTES: usize = 256;

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
    callers: Vec<Option<usize>>,
    last_user: Vec<Option<usize>>,
    changed: bool,
    used: Vec<bool>,
    inside: Vec<Option<usize>>,
    state_from: Vec<Option<(usize, String)>>,
    /// The final answer's origin, found once for the detectors that read it.
    answer: OnceCell<Option<AnswerTrace>>,
}

impl<'a> Facts<'a> {
    /// Computes the facts.
    pub fn new(
        run: &'a Run,
        texts: &'a StepTexts<'a>,
        links: &'a LinkGraph<'a>,
        claims: &'a [CheckedClaim],
    ) -> Facts<'a> {
        let mut last_user = Vec::with_capacity(run.steps.len());
        let mut last = None;
        for (i, s) in run.steps.iter().enumerate() {
            last_user.push(last);
            if s.kind == StepKind::User {
                last = Some(i);
            }
        }
        let changed = run
            .steps
            .iter()
            .enumerate()
            .any(|(i, s)| !s.failed() && is_mutating(run, i));
        Facts {
            run,
            texts,
            links,
            claims,
            reference: run.reference_answer.as_deref(),
            callers: callers(run, texts),
            last_user,
            changed,
            used: used_later(run, links, claims),
            inside: last_decision_inside(run),
            state_from: state_sources(run),
            answer: OnceCell::new(),
        }
    }

    /// The same facts with another reference answer in force (`None` for `--no-reference`).
    pub fn with_reference(mut self, reference: Option<&'a str>) -> Facts<'a> {
        self.reference = reference;
        self.answer = OnceCell::new();
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

    /// The model step that issued the tool call at `i`: the latest earlier model step whose
    /// output names the tool, else the latest earlier model step.
    pub fn caller(&self, i: usize) -> Option<usize> {
        self.callers.get(i).copied().flatten()
    }

    /// The latest user message before step `i`.
    pub fn last_user_before(&self, i: usize) -> Option<usize> {
        self.last_user.get(i).copied().flatten()
    }

    /// True when a state-changing call succeeded (a refund, a booking): the run changed
    /// something.
    pub fn changed_something(&self) -> bool {
        self.changed
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
        self.inside.get(i).copied().flatten()
    }

    /// For a failed call (not failed by its service): the latest earlier successful
    /// state-changing call that named one of the same ids in its arguments, and that id. The
    /// later call worked on something the earlier one had changed.
    pub fn state_source(&self, i: usize) -> Option<(usize, &str)> {
        self.state_from
            .get(i)
            .and_then(Option::as_ref)
            .map(|(w, v)| (*w, v.as_str()))
    }

    /// True when step `i` is a call to a tool the run marks as state-changing.
    pub fn mutating(&self, i: usize) -> bool {
        is_mutating(self.run, i)
    }
}

/// How many parents are followed up from a step when looking for the containers around it.
const MAX_NESTING: usize = 64;

fn last_decision_inside(run: &Run) -> Vec<Option<usize>> {
    if !run.steps.iter().any(Step::is_container) {
        return Vec::new();
    }
    let mut out = vec![None; run.steps.len()];
    for (i, s) in run.steps.iter().enumerate() {
        if !decides(s) {
            continue;
        }
        let parent_of = |st: &Step| st.parent.as_ref().and_then(|p| run.step_index(p.as_str()));
        let mut p = parent_of(s);
        for _ in 0..MAX_NESTING {
            let Some(k) = p.filter(|&k| k < i) else { break };
            let Some(ps) = run.steps.get(k) else { break };
            if ps.is_container()
                && let Some(slot) = out.get_mut(k)
            {
                *slot = Some(i);
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
fn id_values(args: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![args];
    let mut visited = 0usize;
    while let Some(v) = stack.pop() {
        visited += 1;
        if visited > MAX_ARG_NODES || out.len() >= MAX_ID_VALUES {
            break;
        }
        match v {
            Value::String(s) => {
                let t = s.trim();
                if t.chars().count() >= 4
                    && t.chars().any(|c| c.is_ascii_digit())
                    && !t.contains(char::is_whitespace)
                {
                    out.push(t);
                }
            }
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    out
}

fn state_sources(run: &Run) -> Vec<Option<(usize, String)>> {
    let mut out = vec![None; run.steps.len()];
    let mut changed: HashMap<&str, usize> = HashMap::new();
    for (x, s) in run.steps.iter().enumerate() {
        let Some(call) = s.tool.as_ref().filter(|_| s.kind == StepKind::Tool) else {
            continue;
        };
        let values = id_values(&call.arguments);
        match s.error.as_deref() {
            None if is_mutating(run, x) => {
                for v in values {
                    changed.insert(v, x);
                }
            }
            None => {}
            Some(err) => {
                if INFRA.find_any_case(err).is_some() {
                    continue;
                }
                let found = values
                    .iter()
                    .filter_map(|v| changed.get(v).map(|&w| (w, *v)))
                    .max_by_key(|&(w, _)| w);
                if let (Some((w, v)), Some(slot)) = (found, out.get_mut(x)) {
                    *slot = Some((w, v.to_owned()));
                }
            }
        }
    }
    out
}

fn used_later(run: &Run, links: &LinkGraph, claims: &[CheckedClaim]) -> Vec<bool> {
    let n = run.steps.len();
    let mut used: Vec<bool> = (0..n).map(|i| links.is_used(i)).collect();
    for c in claims {
        if !matches!(c.label, SupportLabel::NoClaim | SupportLabel::Unsupported)
            && let Some(slot) = c.evidence_step.and_then(|e| used.get_mut(e))
        {
            *slot = true;
        }
    }
    for (k, s) in run.steps.iter().enumerate() {
        for id in s.context.iter().flat_map(|c| c.sent.iter()) {
            let producer = run
                .unit(id.as_str())
                .and_then(|u| u.produced_by.as_ref())
                .and_then(|p| run.step_index(p.as_str()));
            if let Some(p) = producer.filter(|&p| p < k)
                && let Some(slot) = used.get_mut(p)
            {
                *slot = true;
            }
        }
        for o in s.decision.iter().flat_map(|d| d.options.iter()) {
            for r in o.requires.iter().filter_map(|r| run.step_index(r.as_str())) {
                if r < k
                    && let Some(slot) = used.get_mut(r)
                {
                    *slot = true;
                }
            }
        }
    }
    used
}

/// True when the step is a decision of an agent: a model step (`llm`, `agent`, `decision`)
/// that is not a container wrapping other steps (an agent run's span holds its children's work,
/// not a choice of its own).
pub fn decides(s: &Step) -> bool {
    s.kind.is_model() && !s.is_container()
}

fn is_mutating(run: &Run, i: usize) -> bool {
    run.steps
        .get(i)
        .and_then(|s| s.tool.as_ref())
        .and_then(|c| run.tool(&c.name))
        .is_some_and(|t| t.mutates)
}

fn callers(run: &Run, texts: &StepTexts) -> Vec<Option<usize>> {
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
    let mut out = Vec::with_capacity(run.steps.len());
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
                let text = texts.produced(i);
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
