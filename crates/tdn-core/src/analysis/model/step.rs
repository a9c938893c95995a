//! One step of a run and its kind-specific parts (tool call, documents, memory, decision, context).

use super::ids::{StepId, UnitId};
use super::json::Json;
use super::message::{Message, ModelCall};
use super::names::{is_opaque_id, step_name};
use super::text::{inert_line, value_text};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a step is (`kind`). An unknown kind is analysed as [`StepKind::Event`] and the
/// original name is kept in [`Step::kind_name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A message from the user.
    User,
    /// A model call.
    Llm,
    /// A tool call.
    Tool,
    /// A search or retrieval.
    Retrieval,
    /// A memory read.
    MemoryRead,
    /// A memory write.
    MemoryWrite,
    /// A choice between options.
    Decision,
    /// A message of one agent in a multi-agent conversation.
    Agent,
    /// A system message or plumbing.
    System,
    /// Anything else.
    Event,
}

impl StepKind {
    /// Every kind, in spec order.
    pub const ALL: [StepKind; 10] = [
        StepKind::User,
        StepKind::Llm,
        StepKind::Tool,
        StepKind::Retrieval,
        StepKind::MemoryRead,
        StepKind::MemoryWrite,
        StepKind::Decision,
        StepKind::Agent,
        StepKind::System,
        StepKind::Event,
    ];

    /// The spec's name for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::User => "user",
            StepKind::Llm => "llm",
            StepKind::Tool => "tool",
            StepKind::Retrieval => "retrieval",
            StepKind::MemoryRead => "memory_read",
            StepKind::MemoryWrite => "memory_write",
            StepKind::Decision => "decision",
            StepKind::Agent => "agent",
            StepKind::System => "system",
            StepKind::Event => "event",
        }
    }

    /// Parses a spec name.
    pub fn parse(s: &str) -> Option<Self> {
        StepKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Steps whose output is written by a model: `llm`, `agent` and `decision`.
    pub fn is_model(self) -> bool {
        matches!(self, StepKind::Llm | StepKind::Agent | StepKind::Decision)
    }
}

/// A point in time: RFC 3339 text or Unix milliseconds in the file, milliseconds here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// Tools through which agent frameworks hand over their final answer: smolagents'
/// `final_answer`, Pydantic AI's `final_result`, OpenHands' `finish`. Importers read the answer
/// from their arguments; the detectors know the call that made it.
pub const FINAL_ANSWER_TOOLS: [&str; 3] = ["final_answer", "final_result", "finish"];

/// A tool call (`tool`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The called tool.
    pub name: String,
    /// Its arguments (any JSON; usually an object).
    #[serde(default)]
    pub arguments: Json,
    /// The provider's call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// A retrieved document (`documents[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its text.
    pub text: String,
    /// Where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Marked outdated by the recorder.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outdated: bool,
}

/// A memory read or write (`memory`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryOp {
    /// The key.
    pub key: String,
    /// The value read or written.
    #[serde(default)]
    pub value: Json,
}

/// One option of a decision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionOption {
    /// The option's id.
    pub id: String,
    /// Steps whose success this option depends on (existing, earlier steps only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<StepId>,
}

/// A decision (`decision`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The chosen option's id.
    pub chosen: String,
    /// The options on offer.
    #[serde(default)]
    pub options: Vec<DecisionOption>,
}

/// Which context units an `llm` step could have had, and which it was sent (`context`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepContext {
    /// Units that could have gone in (absent = not recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Vec<UnitId>>,
    /// Units that did go in.
    #[serde(default)]
    pub sent: Vec<UnitId>,
}

/// What a step spent (`usage`): token counts and, when the trace records it, the cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Completion tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the step cost in US dollars, as the trace records it (a finite number >= 0); read it
    /// with [`Usage::cost`]. An estimate from tokens is never written here: the report makes it
    /// (`cost`). Boxed: most steps record none, and a step's rare parts stay at 128 bytes
    /// (issue 11).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Box<f64>>,
}

impl Usage {
    /// The recorded cost in US dollars, when there is one.
    pub fn cost(&self) -> Option<f64> {
        self.cost_usd.as_deref().copied()
    }
}

/// One step of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Unique in the run.
    pub id: StepId,
    /// 0-based position in `steps` (not written to files; set by `Run::reindex`).
    #[serde(skip)]
    pub index: usize,
    /// The kind used by the analysis.
    pub kind: StepKind,
    /// Which agent acted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// A label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The enclosing step (always an earlier one once loaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<StepId>,
    /// The step wraps other steps that carry the work (an agent run, a chain, a loop iteration):
    /// its own input and output summarise its children's. See [`Step::is_container`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub container: bool,
    /// What went in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Json>,
    /// What came out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Json>,
    /// The failure message; `Some` only when non-empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For `tool` steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<Box<ToolCall>>,
    /// For `retrieval` steps (`Some(vec![])` = nothing found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documents: Option<Vec<Document>>,
    /// For `memory_read` / `memory_write`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Box<MemoryOp>>,
    /// For `decision` steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Box<Decision>>,
    /// For `llm` steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Box<StepContext>>,
    /// Token counts, the model's window, times, attributes, the unknown kind's name and fields:
    /// parts most steps leave out, behind one pointer ([`StepExtras`]; read them through
    /// [`Step::usage`], [`Step::attributes`] and the like, set them through [`Step::extras_mut`]).
    #[serde(flatten)]
    extras: Extras,
}

/// The parts of a step most steps leave out. A run of 100,000 steps holds 100,000 [`Step`]s side
/// by side, so these sit behind one pointer, allocated only for a step that has one of them
/// (issue 11).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StepExtras {
    /// The kind as recorded, when it was not one of the spec's (the step is analysed as `event`).
    #[serde(skip)]
    pub kind_name: Option<Box<str>>,
    /// For a model call: the model it asked for and its input messages (`model`, `messages`),
    /// when recorded.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub call: Option<Box<ModelCall>>,
    /// Token counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The model's window here, when it differs from the run's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// When it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// Anything else (OpenTelemetry-style keys welcome).
    #[serde(skip_serializing_if = "LazyMap::is_empty")]
    pub attributes: LazyMap,
    /// Fields this project does not know, kept and shown.
    #[serde(flatten)]
    pub extra: LazyMap,
}

/// A serde_json map that costs one pointer while it is empty (a `Map` is 72 bytes, and most
/// steps that have [`StepExtras`] have usage only: issue 11). Read it as a `Map`; writing through
/// it (`insert`, `extend`, `*m = ...`) makes the map on first use. Written as the map is.
#[derive(Clone, Debug, Default)]
pub struct LazyMap(Option<Box<Map<String, Value>>>);

impl LazyMap {
    /// True when it has no entries (made or not).
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }
}

impl std::ops::Deref for LazyMap {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or(no_fields())
    }
}

impl std::ops::DerefMut for LazyMap {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Map<String, Value>> for LazyMap {
    /// Held only when it has entries.
    fn from(m: Map<String, Value>) -> LazyMap {
        LazyMap((!m.is_empty()).then(|| Box::new(m)))
    }
}

impl PartialEq for LazyMap {
    /// Equal as maps (absent and empty are the same).
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Serialize for LazyMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// A step's [`StepExtras`], when it has any. Absent and all-empty are the same step.
#[derive(Clone, Debug, Default)]
struct Extras(Option<Box<StepExtras>>);

impl PartialEq for Extras {
    fn eq(&self, other: &Self) -> bool {
        if self.0.is_none() && other.0.is_none() {
            return true;
        }
        let empty = StepExtras::default();
        self.0.as_deref().unwrap_or(&empty) == other.0.as_deref().unwrap_or(&empty)
    }
}

impl Serialize for Extras {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(x) => x.serialize(s),
            None => s.serialize_none(),
        }
    }
}

/// The attributes and unknown fields of a step that has none.
fn no_fields() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl Step {
    /// A bare step of this kind; fill the other fields as needed.
    pub fn new(id: impl Into<String>, kind: StepKind) -> Self {
        Step {
            id: StepId(id.into()),
            index: 0,
            kind,
            agent: None,
            name: None,
            parent: None,
            container: false,
            input: None,
            output: None,
            error: None,
            tool: None,
            documents: None,
            memory: None,
            decision: None,
            context: None,
            extras: Extras(None),
        }
    }

    /// The kind as recorded, when it was not one of the spec's (the step is analysed as `event`).
    pub fn kind_name(&self) -> Option<&str> {
        self.extras.0.as_ref()?.kind_name.as_deref()
    }

    /// For a model call: the model it asked for and its input messages, when recorded.
    pub fn call(&self) -> Option<&ModelCall> {
        self.extras.0.as_ref()?.call.as_deref()
    }

    /// The model call's input messages as recorded (`messages`); empty when not recorded.
    pub fn messages(&self) -> &[Message] {
        self.call().map_or(&[], |c| c.messages.as_slice())
    }

    /// The model the call asked for (`model`), when recorded.
    pub fn request_model(&self) -> Option<&str> {
        self.call()?.model.as_deref()
    }

    /// The model call's recorded parts, to change them (made, empty, on first use).
    pub fn call_mut(&mut self) -> &mut ModelCall {
        self.extras_mut().call.get_or_insert_with(Box::default)
    }

    /// Token counts.
    pub fn usage(&self) -> Option<&Usage> {
        self.extras.0.as_ref()?.usage.as_ref()
    }

    /// The model's window here, when it differs from the run's model.
    pub fn context_window(&self) -> Option<u64> {
        self.extras.0.as_ref()?.context_window
    }

    /// When it started.
    pub fn started_at(&self) -> Option<Timestamp> {
        self.extras.0.as_ref()?.started_at
    }

    /// When it ended.
    pub fn ended_at(&self) -> Option<Timestamp> {
        self.extras.0.as_ref()?.ended_at
    }

    /// Anything else (OpenTelemetry-style keys welcome); empty when none.
    pub fn attributes(&self) -> &Map<String, Value> {
        self.extras
            .0
            .as_ref()
            .map_or(no_fields(), |x| &*x.attributes)
    }

    /// Fields this project does not know, kept and shown; empty when none.
    pub fn extra(&self) -> &Map<String, Value> {
        self.extras.0.as_ref().map_or(no_fields(), |x| &*x.extra)
    }

    /// The step's rarely set parts, to change them (made, empty, on first use).
    pub fn extras_mut(&mut self) -> &mut StepExtras {
        self.extras.0.get_or_insert_with(Box::default)
    }

    /// The step's kind as recorded (the unknown name, else the spec name).
    pub fn kind_label(&self) -> &str {
        self.kind_name().unwrap_or(self.kind.as_str())
    }

    /// The input as text ("" when absent).
    pub fn input_text(&self) -> String {
        self.input.as_ref().map(value_text).unwrap_or_default()
    }

    /// The output as text ("" when absent).
    pub fn output_text(&self) -> String {
        self.output.as_ref().map(value_text).unwrap_or_default()
    }

    /// True when the step wraps other steps (an agent run, a chain, a loop iteration) rather than
    /// doing work of its own; analysis that blames one step can pass over it to its children.
    pub fn is_container(&self) -> bool {
        self.container
    }

    /// True when the step failed (a non-empty `error`).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Milliseconds from start to end, when both are recorded and in order.
    pub fn duration_ms(&self) -> Option<i64> {
        match (self.started_at(), self.ended_at()) {
            (Some(a), Some(b)) if b.0 >= a.0 => Some(b.0 - a.0),
            _ => None,
        }
    }

    /// How a person names this step: `step 's4' (position 4)`; a step whose id nobody chose to
    /// read (a span id, a UUID: [`is_opaque_id`]) by its name instead when it has one,
    /// `step 'ChatCompletion' (position 3)`. Made inert.
    pub fn describe(&self) -> String {
        match self.readable_name() {
            Some(name) => describe_step(&name, self.index),
            None => describe_step(self.id.as_str(), self.index),
        }
    }

    /// The name a person knows this step by when its id is opaque (a span id, a UUID:
    /// [`is_opaque_id`]) and its name is not, cut to [`NAME_CHARS`] characters; `None` when its
    /// id is the better name. Not made inert.
    pub fn readable_name(&self) -> Option<String> {
        match step_name(self) {
            Some(name) if is_opaque_id(self.id.as_str()) && !is_opaque_id(name) => {
                Some(name.chars().take(NAME_CHARS).collect())
            }
            _ => None,
        }
    }
}

/// Characters of a step's name kept when evidence names it.
const NAME_CHARS: usize = 60;

/// How a person names a step by id and 0-based index: `step 's4' (position 4)`.
pub fn describe_step(id: &str, index: usize) -> String {
    format!("step '{}' (position {})", inert_line(id), index + 1)
}

/// True when the step is a decision of an agent: a model step (`llm`, `agent`, `decision`)
/// that is not a container wrapping other steps (an agent run's span holds its children's work,
/// not a choice of its own).
pub fn decides(s: &Step) -> bool {
    s.kind.is_model() && !s.is_container()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_writes_its_rare_parts_after_the_others_in_spec_order() {
        let mut s = Step::new("s1", StepKind::Llm);
        s.output = Some(Json::from("ok"));
        let x = s.extras_mut();
        x.kind_name = Some("not written".into());
        x.extra.insert("zz_custom".to_owned(), json!(1));
        x.attributes.insert("a".to_owned(), json!("b"));
        x.ended_at = Some(Timestamp(20));
        x.started_at = Some(Timestamp(10));
        x.context_window = Some(8000);
        x.usage = Some(Usage {
            input_tokens: Some(5),
            ..Usage::default()
        });
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"id":"s1","kind":"llm","output":"ok","usage":{"input_tokens":5},"context_window":8000,"started_at":10,"ended_at":20,"attributes":{"a":"b"},"zz_custom":1}"#
        );
        assert_eq!(
            serde_json::to_string(&Step::new("s2", StepKind::Tool)).unwrap(),
            r#"{"id":"s2","kind":"tool"}"#
        );
    }

    #[test]
    fn rare_parts_are_read_back_and_empty_ones_change_nothing() {
        let plain = Step::new("s1", StepKind::Event);
        let mut touched = plain.clone();
        touched.extras_mut();
        assert_eq!(plain, touched);
        assert!(touched.attributes().is_empty() && plain.extra().is_empty());
        touched.extras_mut().kind_name = Some("odd".into());
        touched.extras_mut().started_at = Some(Timestamp(3));
        touched.extras_mut().ended_at = Some(Timestamp(10));
        assert_ne!(plain, touched);
        assert_eq!(touched.kind_label(), "odd");
        assert_eq!(plain.kind_label(), "event");
        assert_eq!(touched.duration_ms(), Some(7));
        assert_eq!(plain.duration_ms(), None);
    }

    #[test]
    fn a_step_is_small() {
        // 100,000 of these sit side by side in a big run (issue 11); the rare parts are boxed,
        // and the input and output are 24-byte `Json`s (a `serde_json::Value` is 72 bytes).
        assert!(
            std::mem::size_of::<Step>() <= 248,
            "{}",
            std::mem::size_of::<Step>()
        );
    }

    #[test]
    fn an_empty_lazy_map_is_written_and_compared_as_none() {
        let mut usage_only = Step::new("s1", StepKind::Llm);
        usage_only.extras_mut().usage = Some(Usage {
            input_tokens: Some(5),
            ..Usage::default()
        });
        let mut made_empty = usage_only.clone();
        let x = made_empty.extras_mut();
        x.attributes.clear();
        x.extra.insert("gone".to_owned(), json!(1));
        x.extra.remove("gone");
        x.attributes = Map::new().into();
        assert_eq!(usage_only, made_empty);
        let text = r#"{"id":"s1","kind":"llm","usage":{"input_tokens":5}}"#;
        assert_eq!(serde_json::to_string(&usage_only).unwrap(), text);
        assert_eq!(serde_json::to_string(&made_empty).unwrap(), text);
        // A step with usage only holds no map: its extras stay small.
        // (two `Map`s made it 248 bytes.)
        let size = std::mem::size_of::<StepExtras>();
        assert!(size <= 128, "{size}");
        let mut m = Map::new();
        m.insert("k".to_owned(), json!([1]));
        let held = LazyMap::from(m.clone());
        assert!(!held.is_empty() && LazyMap::default().is_empty());
        assert_eq!(*held, m);
        assert_ne!(held, LazyMap::default());
    }
}
