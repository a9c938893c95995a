//! The top level of a run: status, task, answers, tools, context units and steps.

use super::ids::{StepId, UnitId};
use super::message::UnitAt;
use super::step::Step;
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::hash::BuildHasher;

/// How the run ended (`status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// It finished with a wrong outcome.
    Failed,
    /// It finished with the right outcome.
    Succeeded,
    /// It crashed.
    Error,
    /// It stopped while waiting, e.g. for the user.
    Unfinished,
}

impl RunStatus {
    /// The spec's name for this status.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Failed => "failed",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Error => "error",
            RunStatus::Unfinished => "unfinished",
        }
    }

    /// Parses one of the four spec names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "failed" => RunStatus::Failed,
            "succeeded" => RunStatus::Succeeded,
            "error" => RunStatus::Error,
            "unfinished" => RunStatus::Unfinished,
            _ => return None,
        })
    }
}

/// Where a run's `status` came from (`status_from`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusFrom {
    /// The recording states it (a recorder's `status`, a trace's error status, success flag,
    /// score or reward).
    #[default]
    Recorded,
    /// Nothing recorded whether the outcome was right: the run is taken as failed so that it can
    /// be diagnosed.
    Assumed,
    /// The user stated it (`--outcome`, or the screen's key).
    Given,
    /// The final answer equals the reference answer.
    Reference,
}

impl StatusFrom {
    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFrom::Recorded => "recorded",
            StatusFrom::Assumed => "assumed",
            StatusFrom::Given => "given",
            StatusFrom::Reference => "reference",
        }
    }

    /// Parses a spec name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            StatusFrom::Recorded,
            StatusFrom::Assumed,
            StatusFrom::Given,
            StatusFrom::Reference,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
    }

    /// True for the default, which is not written.
    pub fn is_recorded(&self) -> bool {
        *self == StatusFrom::Recorded
    }
}

/// Default model facts (`model`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its context window in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

/// The step budget (`limits`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// The most steps the agent was allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u64>,
}

/// A tool offered to the model (`tools[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// What it does, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// The call changes the world (a refund, a booking, a write).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mutates: bool,
}

/// A piece of context with a stable id (`context_units[]`): what experiments remove or put back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextUnit {
    /// Unique in the run (the first of a duplicate wins).
    pub id: UnitId,
    /// `instruction`, `memory`, `document`, `tool_result`, `message`, `injection`, `example`,
    /// `tool`, or a recorder's own kind.
    pub kind: String,
    /// The unit's text.
    pub text: String,
    /// Its size in tokens, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The step that produced it, when it names an existing step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<StepId>,
    /// Every place its text sits in a recorded call's `messages`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<UnitAt>,
    /// Fields this project does not know, kept and shown.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One recorded run. Built by the loader (never deserialized directly, so every run has passed
/// validation); steps are in execution order and `steps[i].index == i`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Always [`super::RUN_FORMAT`] once loaded.
    pub format: String,
    /// The run's id.
    pub id: String,
    /// A label for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How it ended.
    pub status: RunStatus,
    /// Where `status` came from.
    #[serde(skip_serializing_if = "StatusFrom::is_recorded")]
    pub status_from: StatusFrom,
    /// What `status` was read from, in words, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_why: Option<String>,
    /// The run-level error, when status is `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the user asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// What the agent finally said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// A known-good answer; turns on contrastive scoring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// What the whole run cost in US dollars, as the recorder states it (a finite number >= 0),
    /// when it does; the steps' own costs are in their `usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Default model facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelInfo>,
    /// The step budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Tools offered to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// Every piece of context with a stable id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_units: Vec<ContextUnit>,
    /// The steps, in execution order.
    pub steps: Vec<Step>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub attributes: Map<String, Value>,
    /// Top-level fields this project does not know, kept and shown.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    #[serde(skip)]
    step_index: IdIndex,
    #[serde(skip)]
    unit_index: IdIndex,
    #[serde(skip)]
    tool_index: HashMap<String, usize>,
    /// How many tools `tool_index` was built from.
    #[serde(skip)]
    tools_indexed: usize,
}

impl Run {
    /// A run with no steps; set the fields, push steps, then call [`Run::reindex`].
    pub fn new(id: impl Into<String>, status: RunStatus) -> Self {
        Run {
            format: super::RUN_FORMAT.to_owned(),
            id: id.into(),
            title: None,
            status,
            status_from: StatusFrom::Recorded,
            status_why: None,
            error: None,
            task: None,
            final_answer: None,
            reference_answer: None,
            cost_usd: None,
            model: None,
            limits: None,
            tools: Vec::new(),
            context_units: Vec::new(),
            steps: Vec::new(),
            attributes: Map::new(),
            extra: Map::new(),
            step_index: IdIndex::default(),
            unit_index: IdIndex::default(),
            tool_index: HashMap::new(),
            tools_indexed: 0,
        }
    }

    /// Rebuilds the id and tool-name look-ups and sets each step's `index` to its position. Call
    /// after changing `steps`, `context_units` or `tools`. The first of two equal ids (or tool
    /// names) wins the look-up.
    pub fn reindex(&mut self) {
        for (i, step) in self.steps.iter_mut().enumerate() {
            step.index = i;
        }
        self.step_index.build(&self.steps, step_id);
        self.unit_index.build(&self.context_units, unit_id);
        self.tool_index.clear();
        for (i, tool) in self.tools.iter().enumerate() {
            self.tool_index.entry(tool.name.clone()).or_insert(i);
        }
        self.tools_indexed = self.tools.len();
    }

    /// The position of the step with this id.
    pub fn step_index(&self, id: &str) -> Option<usize> {
        self.step_index.find(&self.steps, step_id, id)
    }

    /// The step with this id.
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.step_index(id).and_then(|i| self.steps.get(i))
    }

    /// The position of the context unit with this id.
    pub fn unit_index(&self, id: &str) -> Option<usize> {
        self.unit_index.find(&self.context_units, unit_id, id)
    }

    /// The context unit with this id.
    pub fn unit(&self, id: &str) -> Option<&ContextUnit> {
        self.unit_index(id).and_then(|i| self.context_units.get(i))
    }

    /// The offered tool with this name (the first of two with one name). A look-up in the
    /// index [`Run::reindex`] builds; a run whose `tools` changed since is searched in order.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        if self.tools_indexed == self.tools.len() {
            self.tool_index
                .get(name)
                .and_then(|&i| self.tools.get(i))
                .filter(|t| t.name == name)
        } else {
            self.tools.iter().find(|t| t.name == name)
        }
    }

    /// The context window in force at a step: the step's own, else the model's.
    pub fn context_window_at(&self, step: &Step) -> Option<u64> {
        step.context_window()
            .or_else(|| self.model.as_ref().and_then(|m| m.context_window))
    }

    /// True when the run did not end well: `failed` or `error`.
    pub fn went_wrong(&self) -> bool {
        matches!(self.status, RunStatus::Failed | RunStatus::Error)
    }

    /// The outcome as the user states it (`--outcome`, the screen's key): it replaces what the
    /// recording says. `how` says where the user said it, for `status_why`.
    pub fn give_outcome(&mut self, status: RunStatus, how: &str) {
        self.status = status;
        self.status_from = StatusFrom::Given;
        self.status_why = Some(format!("{how} {}", status.as_str()));
        if status != RunStatus::Error {
            self.error = None;
        }
    }

    /// When nothing recorded the outcome (`status_from: assumed`) and the final answer equals
    /// `reference` ([`same_answer`]), the run succeeded. True when that changed the status.
    pub fn settle_by_reference(&mut self, reference: Option<&str>) -> bool {
        let same = match (self.final_answer.as_deref(), reference) {
            (Some(a), Some(r)) => same_answer(a, r),
            _ => false,
        };
        if self.status_from != StatusFrom::Assumed || !same {
            return false;
        }
        self.status = RunStatus::Succeeded;
        self.status_from = StatusFrom::Reference;
        self.status_why = Some(SAME_ANSWER.to_owned());
        true
    }
}

/// What [`same_answer`] compares, in words.
pub const SAME_ANSWER: &str = "the final answer equals the reference answer (compared ignoring case, runs of spaces and line breaks, quotes around it and a full stop at its end)";

/// True when two answers say the same: equal once each is lower-cased, its runs of whitespace
/// made one space, and the quotes around it and the full stop, exclamation mark or whitespace at
/// its ends taken off. Numbers are compared as written (`2` is not `2.0`). Empty answers are
/// never the same.
pub fn same_answer(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> String {
        let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut t = one.as_str();
        loop {
            let before = t;
            t = t.trim_end_matches(['.', '!']).trim();
            for (open, close) in [('"', '"'), ('\'', '\''), ('`', '`'), ('“', '”')] {
                if t.len() >= 2 && t.starts_with(open) && t.ends_with(close) {
                    t = t[open.len_utf8()..t.len() - close.len_utf8()].trim();
                }
            }
            if t == before {
                break;
            }
        }
        t.to_lowercase()
    }
    let (x, y) = (norm(a), norm(b));
    !x.is_empty() && x == y
}

fn step_id(s: &Step) -> &str {
    s.id.as_str()
}

fn unit_id(u: &ContextUnit) -> &str {
    u.id.as_str()
}

/// Items from which an index hashes the ids on the thread pool.
const HASH_APART_FROM: usize = 4096;

/// Positions of items (steps, context units) by id: a table of positions, hashed by the item's
/// id and compared against it, so the index holds no copy of the ids (issue 11: 100,000 ids,
/// 8 MB). Built by [`Run::reindex`]; equal runs have equal items, so it takes no part in `==`.
#[derive(Clone, Debug, Default)]
struct IdIndex {
    table: HashTable<usize>,
    hasher: DefaultHashBuilder,
}

impl PartialEq for IdIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl IdIndex {
    /// Indexes `items` by `id`; the first of two equal ids wins. A long list's ids are hashed
    /// on the thread pool first (issue 11: the index is made on one core while the other
    /// waits, at the end of the load).
    fn build<T: Sync>(&mut self, items: &[T], id: impl Fn(&T) -> &str + Sync) {
        let hasher = &self.hasher;
        let hashes: Vec<u64> = if items.len() >= HASH_APART_FROM {
            use rayon::prelude::*;
            items.par_iter().map(|t| hasher.hash_one(id(t))).collect()
        } else {
            items.iter().map(|t| hasher.hash_one(id(t))).collect()
        };
        let hash_of = |j: &usize| hashes.get(*j).copied().unwrap_or(0);
        self.table.clear();
        self.table.reserve(items.len(), hash_of);
        for (i, (item, &hash)) in items.iter().zip(&hashes).enumerate() {
            let key = id(item);
            let seen = self
                .table
                .find(hash, |&j| items.get(j).is_some_and(|x| id(x) == key));
            if seen.is_none() {
                self.table.insert_unique(hash, i, hash_of);
            }
        }
    }

    /// The position in `items` (the items it was built from) of the one with id `key`.
    fn find<T>(&self, items: &[T], id: impl Fn(&T) -> &str, key: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.table
            .find(hash, |&j| items.get(j).is_some_and(|x| id(x) == key))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_the_same_ignoring_case_spacing_quotes_and_a_final_stop() {
        assert!(same_answer("2", " 2 "));
        assert!(same_answer("Paris.", "paris"));
        assert!(same_answer("\"The  Eiffel\nTower\"", "the eiffel tower!"));
        assert!(!same_answer("2", "2.0"));
        assert!(!same_answer("", ""));
        assert!(!same_answer("Paris", "Paris, France"));
    }

    #[test]
    fn a_reference_settles_only_an_assumed_outcome_and_the_user_s_word_wins() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.final_answer = Some("2".to_owned());
        assert!(
            !run.settle_by_reference(Some("2")),
            "a recorded failure stands"
        );
        run.status_from = StatusFrom::Assumed;
        assert!(!run.settle_by_reference(Some("3")));
        assert!(!run.settle_by_reference(None));
        assert!(run.settle_by_reference(Some("2.")));
        assert_eq!(
            (run.status, run.status_from),
            (RunStatus::Succeeded, StatusFrom::Reference)
        );
        run.give_outcome(RunStatus::Failed, "--outcome");
        assert_eq!(
            (run.status, run.status_from),
            (RunStatus::Failed, StatusFrom::Given)
        );
        assert_eq!(run.status_why.as_deref(), Some("--outcome failed"));
    }

    fn tool(name: &str, mutates: bool) -> Tool {
        Tool {
            name: name.to_owned(),
            mutates,
            ..Tool::default()
        }
    }

    #[test]
    fn tool_look_up_finds_the_first_of_a_name_before_and_after_reindex() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.tools = (0..5_000).map(|i| tool(&format!("t{i}"), false)).collect();
        run.tools.push(tool("t7", true));
        // not yet indexed: searched in order
        assert!(run.tool("t7").is_some_and(|t| !t.mutates));
        run.reindex();
        assert!(run.tool("t7").is_some_and(|t| !t.mutates), "the first wins");
        assert_eq!(run.tool("t4999").map(|t| t.name.as_str()), Some("t4999"));
        assert!(run.tool("t5000").is_none());
        // changed after the index was built: still right
        run.tools.push(tool("late", true));
        assert!(run.tool("late").is_some_and(|t| t.mutates));
    }

    #[test]
    fn steps_are_found_by_id_the_first_of_a_repeated_id_winning() {
        use crate::analysis::model::StepKind;
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps = (0..5_000)
            .map(|i| Step::new(format!("s{i}"), StepKind::Llm))
            .collect();
        run.steps.push(Step::new("s7", StepKind::Tool));
        run.reindex();
        assert_eq!(run.step_index("s7"), Some(7), "the first wins");
        assert_eq!(run.step_index("s4999"), Some(4999));
        assert_eq!(run.step("s0").map(|s| s.index), Some(0));
        assert_eq!(run.step_index("s5000"), None);
        assert_eq!(run.step_index(""), None);
        // steps replaced, then re-indexed: the old ids are gone
        run.steps = vec![
            Step::new("x", StepKind::User),
            Step::new("s7", StepKind::User),
        ];
        run.reindex();
        assert_eq!(run.step_index("s7"), Some(1));
        assert_eq!(run.step_index("s4999"), None);
        assert_eq!(run.step("x").map(|s| s.kind), Some(StepKind::User));
    }

    #[test]
    fn units_are_found_by_id_the_first_of_a_repeated_id_winning() {
        let unit = |id: &str, text: &str| ContextUnit {
            id: UnitId(id.to_owned()),
            kind: "document".to_owned(),
            text: text.to_owned(),
            tokens: None,
            produced_by: None,
            at: Vec::new(),
            extra: Map::new(),
        };
        for n in [3, 5_000] {
            let mut run = Run::new("r", RunStatus::Failed);
            run.context_units = (0..n).map(|i| unit(&format!("u{i}"), "first")).collect();
            run.context_units.push(unit("u1", "again"));
            run.reindex();
            assert_eq!(run.unit("u1").map(|u| u.text.as_str()), Some("first"));
            let last = format!("u{}", n - 1);
            assert_eq!(run.unit(&last).map(|u| u.id.as_str()), Some(last.as_str()));
            assert!(run.unit(&format!("u{n}")).is_none());
            assert!(run.unit("").is_none());
        }
    }
}
