//! Spans to a run, for every importer whose format is a tree of spans: OTLP, span rows (the
//! collector's ClickHouse exporter, Patronus's TRAIL export), Phoenix span JSON, the OpenTelemetry
//! SDK's console exporter, Langfuse observations and the OpenAI Agents SDK export each decode
//! their wire format into [`Span`]s and call [`build_run`], so a span is read the same way
//! whatever carried it. One step per span, a parent before its children and siblings by start
//! time (`tree`); the step id is the span id.
//!
//! `step` turns one span into a step with the help of the attribute conventions (`genai`,
//! `openinference`, `vercel`, `langfuse_attrs`), `attrs` rebuilds indexed attribute keys, `container` marks the
//! steps that wrap others, `outcome` picks the run's task, answer and status. Pure: no I/O, no
//! panic on any input.

mod attrs;
mod container;
mod genai;
mod langfuse_attrs;
mod openinference;
pub(crate) mod outcome;
pub(crate) mod step;
pub mod time;
mod vercel;

use super::built::{Build, Built, JsonSteps, ModelSteps, StepStore};
use super::outcome::Said;
use super::units::{ReadCalls, messages_of};
use super::{ImportedRun, tree};
use crate::analysis::model::{ContextUnit, RUN_FORMAT};
use crate::analysis::warning::Warning;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

pub use attrs::flatten;
pub use langfuse_attrs::observation_class;
pub use outcome::status_guess;
pub use step::Parts;

/// How a span ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusCode {
    /// Not set.
    #[default]
    Unset,
    /// Explicitly OK.
    Ok,
    /// Failed.
    Error,
}

impl StatusCode {
    /// Reads `OK`, `Ok`, `STATUS_CODE_ERROR`, `StatusCode.ERROR`, `1`, `2` and the like.
    pub fn parse(v: &Value) -> StatusCode {
        match v {
            Value::Number(n) => match n.as_u64() {
                Some(1) => StatusCode::Ok,
                Some(2) => StatusCode::Error,
                _ => StatusCode::Unset,
            },
            Value::String(s) => {
                let u = s.to_ascii_uppercase();
                if u.ends_with("ERROR") {
                    StatusCode::Error
                } else if u.ends_with("OK") {
                    StatusCode::Ok
                } else {
                    StatusCode::Unset
                }
            }
            _ => StatusCode::Unset,
        }
    }
}

/// A span event (exceptions are events named `exception`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event {
    /// The event's name.
    pub name: String,
    /// Its attributes, decoded.
    pub attrs: Map<String, Value>,
}

/// One span with every value decoded, whatever format carried it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    /// The trace id as written (hex for OpenTelemetry formats; "" when absent).
    pub trace_id: String,
    /// The span id as written ("" when absent).
    pub span_id: String,
    /// The parent span id.
    pub parent_id: Option<String>,
    /// The span's name.
    pub name: String,
    /// `internal`, `server`, `client`, `producer`, `consumer`.
    pub kind: Option<&'static str>,
    /// Start in Unix nanoseconds.
    pub start_ns: Option<u64>,
    /// End in Unix nanoseconds.
    pub end_ns: Option<u64>,
    /// Attributes, decoded, by key (the last of two equal keys wins).
    pub attrs: Map<String, Value>,
    /// Events in file order.
    pub events: Vec<Event>,
    /// Status code.
    pub status: StatusCode,
    /// Status message.
    pub status_message: Option<String>,
    /// The position of the resource this span came from (into [`Source::resources`]).
    pub resource: usize,
    /// What the format states outside the attributes (Langfuse's `input` and `output`, the
    /// OpenAI Agents SDK's `span_data`); attribute conventions come first, these fill the rest.
    pub given: Parts,
    /// The step kind the format states (a Langfuse observation's type), used when no attribute
    /// convention names one.
    pub kind_hint: Option<&'static str>,
    /// The format says the span wraps others (a Langfuse `AGENT` or `CHAIN`).
    pub wrapper_hint: bool,
}

/// What [`build_run`] needs to know about the format.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// What the format calls a span, for warnings ("span", "observation").
    pub noun: &'static str,
    /// Each resource's attributes (spans name theirs by position).
    pub resources: &'a [Map<String, Value>],
    /// Ids are OpenTelemetry's: 32 hex digits for a trace, 16 for a span; others are warned.
    pub hex_ids: bool,
}

impl<'a> Source<'a> {
    /// An OpenTelemetry format's spans (OTLP, span rows, Phoenix, the console exporter): ids are
    /// OpenTelemetry's, so others are warned.
    pub fn otel(resources: &'a [Map<String, Value>]) -> Source<'a> {
        Source {
            noun: "span",
            resources,
            hex_ids: true,
        }
    }
}

/// Items grouped by their trace id: the traces in order of first appearance, each trace's items
/// in the order given. Every format here may hold several traces in one file.
pub fn by_trace<K: Eq + Hash + Clone, T>(
    items: impl IntoIterator<Item = (K, T)>,
) -> Vec<(K, Vec<T>)> {
    let mut at: HashMap<K, usize> = HashMap::new();
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for (trace, item) in items {
        match at.get(&trace) {
            Some(&g) => {
                if let Some((_, members)) = out.get_mut(g) {
                    members.push(item);
                }
            }
            None => {
                at.insert(trace.clone(), out.len());
                out.push((trace, vec![item]));
            }
        }
    }
    out
}

/// Resource attribute sets, each kept once, for formats that repeat a span's resource on every
/// span (spans name theirs by position in `list`).
#[derive(Default)]
pub struct Resources {
    /// The sets, in order of first use.
    pub list: Vec<Map<String, Value>>,
    at: HashMap<String, usize>,
}

impl Resources {
    /// The position of this set, added when it is new.
    pub fn intern(&mut self, m: Map<String, Value>) -> usize {
        let key = serde_json::to_string(&m).unwrap_or_default();
        if let Some(&i) = self.at.get(&key) {
            return i;
        }
        self.list.push(m);
        self.at.insert(key, self.list.len() - 1);
        self.list.len() - 1
    }
}

/// The steps being built: run JSON, or the run model (see [`Build`]).
enum Steps {
    Json(Vec<Map<String, Value>>),
    Model(Box<dyn ModelSteps>),
}

impl Steps {
    fn new(build: Build, n: usize) -> Steps {
        match build {
            Build::Json => Steps::Json(Vec::with_capacity(n)),
            Build::Model(new) => Steps::Model(new(n)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Steps::Json(v) => v.len(),
            Steps::Model(m) => m.steps().len(),
        }
    }

    fn push(&mut self, step: Map<String, Value>) {
        match self {
            Steps::Json(v) => v.push(step),
            Steps::Model(m) => m.push(step),
        }
    }

    fn id(&self, i: usize) -> Option<&str> {
        match self {
            Steps::Json(v) => v.get(i)?.get("id")?.as_str(),
            Steps::Model(m) => m.id(i),
        }
    }

    fn attribute(&self, i: usize, key: &str) -> Option<&Value> {
        match self {
            Steps::Json(v) => v.get(i)?.get("attributes")?.get(key),
            Steps::Model(m) => m.attribute(i, key),
        }
    }
}

/// The model calls whose input was read as messages where their steps were built: the messages
/// and what the outcome reads of those inputs.
#[derive(Default)]
struct Calls {
    read: ReadCalls,
    early: outcome::EarlyReads,
}

impl Calls {
    /// Reads the input of a model step about to be handed over (at `position`, a root when
    /// `root`) as messages, and takes it out when it reads as such, as the units would (a model
    /// step is never a container, so they would read it): the input is parsed once, and each
    /// history message a call sends again is held once from the start.
    fn read(&mut self, position: usize, step: &mut Map<String, Value>, root: bool) {
        let Some(input) = step.get("input") else {
            return;
        };
        let Some(messages) = messages_of(input) else {
            return;
        };
        self.early.read(position, input, root);
        step.remove("input");
        self.read.push(position, messages);
    }
}

/// What the outcome and the units read of the steps built, and the units made.
struct Read {
    stated: Option<String>,
    guessed: Option<String>,
    said: Option<Said>,
    answer: Option<String>,
    units: Vec<ContextUnit>,
    asked: Option<String>,
}

/// Marks the containers, reads the outcome (once the task and answer are read from the inputs
/// as recorded, or from what was read early of those taken out), then makes the model calls'
/// messages and the context units.
fn finish_steps<S: StepStore + ?Sized>(
    steps: &mut S,
    facts: &[container::Facts],
    calls: Calls,
) -> Read {
    for (pos, is) in container::mark(facts).into_iter().enumerate() {
        if is {
            steps.set_container(pos);
        }
    }
    let view = outcome::View {
        steps: &*steps,
        facts,
        early: &calls.early,
    };
    let said = view.root_flag();
    let stated = view.stated_task();
    let guessed = if stated.is_none() {
        view.model_task()
    } else {
        None
    };
    let answer = view.final_answer();
    let made = super::units::attach_to(steps, calls.read);
    Read {
        stated,
        guessed,
        said,
        answer,
        units: made.units,
        asked: made.asked,
    }
}

/// The run of one trace's spans, its steps and context units built where `build` says: with
/// [`Build::Model`], each step is read into the run model as soon as it is made, so the run is
/// never held as JSON (issue 28). Each span's attributes, events and stated parts are freed once
/// its step is built, so the spans and the steps they became are not both held whole.
pub(crate) fn build_run(
    trace_id: &str,
    mut spans: Vec<Span>,
    src: Source<'_>,
    build: Build,
) -> ImportedRun {
    let mut warnings = Vec::new();
    let nodes: Vec<tree::Node<'_>> = spans
        .iter()
        .map(|s| tree::Node {
            id: &s.span_id,
            parent: s.parent_id.as_deref(),
            start: s.start_ns.map(i128::from),
        })
        .collect();
    let ordered = tree::order(&nodes);
    drop(nodes);
    let noun = src.noun;
    if ordered.missing_parents > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} {noun}(s) name a parent {noun} that is not in the file; they are shown at the top level",
                ordered.missing_parents
            ),
        ));
    }
    if ordered.cycles > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} {noun}(s) form a cycle of parent ids; the cycle was broken at its earliest {noun}",
                ordered.cycles
            ),
        ));
    }
    if src.hex_ids {
        warnings.extend(id_warnings(trace_id, &spans));
    }

    // Each input span's position in the run, to map parents.
    let mut position: Vec<Option<usize>> = vec![None; spans.len()];
    let mut agents: Vec<Option<String>> = Vec::with_capacity(spans.len());
    let mut used = tree::UniqueIds::with_capacity(spans.len());
    let mut steps = Steps::new(build, spans.len());
    // The error of the first root step that failed.
    let mut root_error: Option<String> = None;
    let mut facts: Vec<container::Facts> = Vec::with_capacity(spans.len());
    let mut tools: Vec<Value> = Vec::new();
    let mut tool_names: HashSet<String> = HashSet::new();
    let mut model: Option<String> = None;
    let mut calls = Calls::default();
    for (pos, &i) in ordered.order.iter().enumerate() {
        let Some(span) = spans.get_mut(i) else {
            continue;
        };
        let built = step::build(span);
        span.attrs = Map::new();
        span.events = Vec::new();
        span.given = Parts::default();
        let base = if span.span_id.is_empty() {
            format!("{noun}-{}", pos + 1)
        } else {
            span.span_id.clone()
        };
        let (id, _) = used.claim(&base);
        let parent = ordered
            .parent
            .get(i)
            .copied()
            .flatten()
            .and_then(|p| position.get(p).copied().flatten());
        let mut obj = Map::new();
        obj.insert("id".to_owned(), Value::String(id));
        if let Some(p) = parent.and_then(|p| steps.id(p)) {
            obj.insert("parent".to_owned(), Value::String(p.to_owned()));
        }
        obj.extend(built.step);
        let own_agent = obj.get("agent").and_then(Value::as_str).map(str::to_owned);
        let agent = own_agent
            .clone()
            .or_else(|| parent.and_then(|p| agents.get(p).cloned().flatten()));
        if own_agent.is_none()
            && let Some(a) = &agent
        {
            obj.insert("agent".to_owned(), Value::String(a.clone()));
        }
        agents.push(agent);
        if let Some(slot) = position.get_mut(i) {
            *slot = Some(steps.len());
        }
        for t in built.tools {
            if let Some(name) = t.get("name").and_then(Value::as_str)
                && tool_names.insert(name.to_owned())
            {
                tools.push(t);
            }
        }
        if model.is_none() {
            model = built.model;
        }
        if built.tool_named_by_span
            && let Some(name) = ancestor_tool_name(&steps, &facts, parent)
            && let Some(Value::Object(tool)) = obj.get_mut("tool")
        {
            tool.insert("name".to_owned(), Value::String(name));
        }
        facts.push(container::Facts {
            kind: built.class.kind,
            stated: built.class.stated,
            wrapper: built.class.wrapper,
            parent,
        });
        if parent.is_none() && root_error.is_none() {
            root_error = obj.get("error").and_then(Value::as_str).map(str::to_owned);
        }
        if built.class.kind == "llm" {
            calls.read(pos, &mut obj, parent.is_none());
        }
        steps.push(obj);
    }
    for m in used.repeat_messages(&format!("{noun} id")) {
        warnings.push(Warning::run(Some("steps"), m));
    }

    let mut run = Map::new();
    run.insert("format".to_owned(), Value::String(RUN_FORMAT.to_owned()));
    let run_id = if trace_id.is_empty() {
        "trace".to_owned()
    } else {
        trace_id.to_owned()
    };
    run.insert("id".to_owned(), Value::String(run_id));
    let root = ordered.order.first().and_then(|&i| spans.get(i));
    if let Some(r) = root.filter(|r| !r.name.is_empty()) {
        run.insert("title".to_owned(), Value::String(r.name.clone()));
    }
    let root_resource = root.map(|r| r.resource);
    // The spans (ids, names, what was left of them) are let go before the model calls' messages
    // and units are made, the most the import holds at once.
    drop(spans);
    let mut messages = Vec::new();
    let read = match &mut steps {
        Steps::Json(list) => {
            let mut store = JsonSteps::new(list);
            let read = finish_steps(&mut store, &facts, calls);
            messages = store.messages;
            read
        }
        Steps::Model(m) => finish_steps(&mut **m, &facts, calls),
    };
    match (root_error, read.said) {
        (Some(e), _) => {
            Said::new("error", format!("a root {noun} failed")).write(&mut run);
            run.insert("error".to_owned(), Value::String(e));
        }
        (None, Some(said)) => said.write(&mut run),
        (None, None) => {
            super::outcome::assume_failed(&mut run);
            warnings.push(outcome::status_guess());
        }
    }
    if let Some(a) = read.answer {
        run.insert("final_answer".to_owned(), Value::String(a));
    }
    let asked = read.asked.as_deref().and_then(super::run_text::prose);
    if let Some(t) = read.stated.or(asked).or(read.guessed) {
        run.insert("task".to_owned(), Value::String(t));
    }
    let mut units = read.units;
    if matches!(steps, Steps::Json(_)) && !units.is_empty() {
        let list = units.iter().map(super::units::unit_json).collect();
        run.insert("context_units".to_owned(), Value::Array(list));
        units = Vec::new();
    }
    if let Some(m) = model {
        let mut mo = Map::new();
        mo.insert("name".to_owned(), Value::String(m));
        run.insert("model".to_owned(), Value::Object(mo));
    }
    if !tools.is_empty() {
        run.insert("tools".to_owned(), Value::Array(tools));
    }
    let mut attributes = Map::new();
    if let Some(res) = root_resource.and_then(|r| src.resources.get(r))
        && !res.is_empty()
    {
        attributes.insert("otel.resource".to_owned(), Value::Object(res.clone()));
    }
    if !attributes.is_empty() {
        run.insert("attributes".to_owned(), Value::Object(attributes));
    }
    let (list, built) = match steps {
        Steps::Json(list) => (list.into_iter().map(Value::Object).collect(), None),
        Steps::Model(steps) => (Vec::new(), Some(Built { steps, units })),
    };
    run.insert("steps".to_owned(), Value::Array(list));
    ImportedRun {
        value: Value::Object(run),
        warnings,
        messages,
        built,
    }
}

/// The runs of OpenTelemetry spans grouped by trace, each built by [`build_run`], their
/// resources numbered in `resources`.
pub(crate) fn otel_runs(
    traces: Vec<(String, Vec<Span>)>,
    resources: &Resources,
    build: Build,
) -> Vec<ImportedRun> {
    traces
        .into_iter()
        .map(|(trace_id, members)| {
            build_run(&trace_id, members, Source::otel(&resources.list), build)
        })
        .collect()
}

/// At most this many ancestors are searched for the name of a tool span that has none.
const MAX_NAME_SEARCH: usize = 16;

/// The `tool.name` attribute of the nearest of a few ancestors that carries one: some frameworks
/// (BeeAI) name the tool on the agent step and record the call's start, finish and result as
/// tool spans named after the event (`tool.search.wikipedia.start-12`).
fn ancestor_tool_name(
    steps: &Steps,
    facts: &[container::Facts],
    mut at: Option<usize>,
) -> Option<String> {
    for _ in 0..MAX_NAME_SEARCH {
        let i = at?;
        let name = steps
            .attribute(i, "tool.name")
            .and_then(Value::as_str)
            .and_then(super::chat::non_empty);
        if name.is_some() {
            return name;
        }
        at = facts.get(i).and_then(|f| f.parent);
    }
    None
}

/// At most this many malformed span ids are quoted in the warning.
const MAX_IDS_QUOTED: usize = 3;

fn hex_id(id: &str, digits: usize) -> bool {
    id.len() == digits
        && id.bytes().all(|b| b.is_ascii_hexdigit())
        && !id.bytes().all(|b| b == b'0')
}

/// Warnings for ids that are not OpenTelemetry's: a trace id other than 32 hex digits (not all
/// zero), span ids other than 16. One warning for the trace and one for all its spans.
fn id_warnings(trace_id: &str, spans: &[Span]) -> Vec<Warning> {
    let mut out = Vec::new();
    if !trace_id.is_empty() && !hex_id(trace_id, 32) {
        out.push(Warning::run(
            Some("id"),
            format!(
                "the trace id '{}' is not 32 hex digits, as OpenTelemetry writes them; it was kept as written, so links to other tools may not find it",
                crate::analysis::model::inert_line(trace_id)
            ),
        ));
    }
    let bad: Vec<&str> = spans
        .iter()
        .map(|s| s.span_id.as_str())
        .filter(|id| !id.is_empty() && !hex_id(id, 16))
        .collect();
    if !bad.is_empty() {
        let quoted: Vec<String> = bad
            .iter()
            .take(MAX_IDS_QUOTED)
            .map(|id| format!("'{}'", crate::analysis::model::inert_line(id)))
            .collect();
        let more = if bad.len() > MAX_IDS_QUOTED {
            ", ..."
        } else {
            ""
        };
        out.push(Warning::run(
            Some("steps"),
            format!(
                "{} span id(s) are not 16 hex digits ({}{more}); they were kept as written as step ids",
                bad.len(),
                quoted.join(", ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests;
