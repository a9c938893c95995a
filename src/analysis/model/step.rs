//! One step of a run and its kind-specific parts (tool call, documents, memory, decision, context).

use super::ids::{StepId, UnitId};
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

/// A tool call (`tool`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The called tool.
    pub name: String,
    /// Its arguments (any JSON; usually an object).
    #[serde(default)]
    pub arguments: Value,
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
    pub value: Value,
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

/// Token counts (`usage`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Completion tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
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
    /// The kind as recorded, when it was not one of the spec's (the step is analysed as `event`).
    #[serde(skip)]
    pub kind_name: Option<String>,
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
    pub input: Option<Value>,
    /// What came out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
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
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub attributes: Map<String, Value>,
    /// Fields this project does not know, kept and shown.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Step {
    /// A bare step of this kind; fill the other fields as needed.
    pub fn new(id: impl Into<String>, kind: StepKind) -> Self {
        Step {
            id: StepId(id.into()),
            index: 0,
            kind,
            kind_name: None,
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
            usage: None,
            context_window: None,
            started_at: None,
            ended_at: None,
            attributes: Map::new(),
            extra: Map::new(),
        }
    }

    /// The step's kind as recorded (the unknown name, else the spec name).
    pub fn kind_label(&self) -> &str {
        self.kind_name.as_deref().unwrap_or(self.kind.as_str())
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
        match (self.started_at, self.ended_at) {
            (Some(a), Some(b)) if b.0 >= a.0 => Some(b.0 - a.0),
            _ => None,
        }
    }

    /// How a person names this step: `step 's4' (position 4)`; the id is made inert.
    pub fn describe(&self) -> String {
        describe_step(self.id.as_str(), self.index)
    }
}

/// How a person names a step by id and 0-based index: `step 's4' (position 4)`.
pub fn describe_step(id: &str, index: usize) -> String {
    format!("step '{}' (position {})", inert_line(id), index + 1)
}
