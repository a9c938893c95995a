//! One step: its own fields, validated; references to other steps and units are kept raw in
//! [`Refs`] until every step is known.

use super::count;
use super::payload::{Fields, Payloads, RawStep, payload};
use crate::analysis::load::error::{RunError, json_type, quoted};
use crate::analysis::load::timestamp;
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{
    Document, Json, MemoryOp, Step, StepKind, ToolCall, Usage, describe_step,
};
use serde_json::Value;

pub(super) const STEP_FIELDS: &[&str] = &[
    "id",
    "kind",
    "agent",
    "name",
    "parent",
    "container",
    "input",
    "output",
    "error",
    "tool",
    "documents",
    "memory",
    "decision",
    "context",
    "model",
    "messages",
    "usage",
    "context_window",
    "started_at",
    "ended_at",
    "attributes",
];

/// How a warning names the step, written only when a warning is.
pub(super) struct Describe<'a>(pub(super) &'a str, pub(super) usize);

impl std::fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe_step(self.0, self.1))
    }
}

/// References a step makes, resolved once every step and unit is known. They are held as
/// [`Json`], not as the `Value`s read, until then (issue 11: a step's `context` object read as a
/// `Value` is five blocks and about 600 bytes; held for every step until the whole run is read,
/// then freed, they left tens of megabytes of holes in the allocator's pools).
#[derive(Default)]
pub(super) struct Refs {
    pub(super) parent: Option<Json>,
    pub(super) decision: Option<Json>,
    pub(super) context: Option<Json>,
}

impl Refs {
    /// True when the step names nothing to resolve.
    pub(super) fn is_empty(&self) -> bool {
        self.parent.is_none() && self.decision.is_none() && self.context.is_none()
    }
}

/// Builds the step at `index` from its `raw` value (none of its payloads read apart).
pub(super) fn step_from_value(
    raw: Value,
    index: usize,
    w: &mut Vec<Warning>,
) -> Result<(Step, Refs), RunError> {
    match raw {
        Value::Object(o) => step_from_fields(o, Payloads::default(), index, w),
        other => Err(not_object(index, &other)),
    }
}

/// Builds the step at `index` from what `payload.rs` read of it.
pub(super) fn step_from_raw(
    raw: RawStep,
    index: usize,
    w: &mut Vec<Warning>,
) -> Result<(Step, Refs), RunError> {
    match raw {
        RawStep::Fields(o, payloads) => step_from_fields(o, payloads, index, w),
        RawStep::NotObject(other) => Err(not_object(index, &other)),
    }
}

fn not_object(index: usize, found: &Value) -> RunError {
    RunError::StepNotObject {
        index,
        found: json_type(found),
    }
}

/// Builds the step at `index` from its fields `o` and the `payloads` read apart from them (see
/// `payload.rs`). `o` is the step's object as serde_json reads it, or [`StepFields`], which
/// holds the same fields and gives them back the same way.
fn step_from_fields<F: Fields>(
    mut o: F,
    mut payloads: Payloads,
    index: usize,
    w: &mut Vec<Warning>,
) -> Result<(Step, Refs), RunError> {
    let id = match o.remove("id") {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(RunError::Step {
                step_id: None,
                index,
                field: "id",
                problem: format!("is {}; give the step a string id", json_type(&other)),
            });
        }
        None => {
            return Err(RunError::Step {
                step_id: None,
                index,
                field: "id",
                problem: "is missing; give the step a string id".to_owned(),
            });
        }
    };
    let kind_raw = match o.remove("kind") {
        Some(Value::String(s)) => s,
        other => {
            return Err(RunError::Step {
                step_id: Some(id),
                index,
                field: "kind",
                problem: match other {
                    Some(v) => format!(
                        "is {}; give one of user, llm, tool, retrieval, memory_read, memory_write, decision, agent, system, event",
                        json_type(&v)
                    ),
                    None => "is missing; give one of user, llm, tool, retrieval, memory_read, memory_write, decision, agent, system, event".to_owned(),
                },
            });
        }
    };
    let mut step = Step::new(id.clone(), StepKind::Event);
    step.index = index;
    let here = |field: &str, msg: String| Warning::step(&id, index, field, msg);
    match StepKind::parse(&kind_raw) {
        Some(k) => step.kind = k,
        None => {
            w.push(here(
                "kind",
                format!(
                    "{}: unknown kind '{}'; it is analysed as an event",
                    describe_step(&id, index),
                    quoted(&kind_raw)
                ),
            ));
            step.extras_mut().kind_name = Some(kind_raw.into_boxed_str());
        }
    }
    let mut refs = Refs::default();
    let describe = Describe(&id, index);
    let wrong = |field: &str, v: &Value, want: &str| {
        Warning::step(
            &id,
            index,
            field,
            format!(
                "{describe}: \"{field}\" is {}, not {want}; it was ignored",
                json_type(v)
            ),
        )
    };

    for key in ["agent", "name"] {
        match o.remove(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                if key == "agent" {
                    step.agent = Some(s);
                } else {
                    step.name = Some(s);
                }
            }
            Some(other) => w.push(wrong(key, &other, "a string")),
        }
    }
    refs.parent = o.remove("parent").filter(|v| !v.is_null()).map(Json::from);
    match o.remove("container") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => step.container = b,
        Some(other) => w.push(wrong("container", &other, "true or false")),
    }
    step.input = payload(o.remove("input"), payloads.input.take()).filter(|v| !v.is_null());
    step.output = payload(o.remove("output"), payloads.output.take()).filter(|v| !v.is_null());
    match o.remove("error") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if !s.trim().is_empty() {
                step.error = Some(s);
            }
        }
        Some(other) => w.push(wrong("error", &other, "a string")),
    }
    match o.remove("tool") {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut t)) => match t.remove("name") {
            Some(Value::String(name)) => {
                let call_id = match t.remove("call_id") {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                };
                step.tool = Some(Box::new(ToolCall {
                    name,
                    arguments: payload(t.remove("arguments"), payloads.arguments.take())
                        .unwrap_or_default(),
                    call_id,
                }));
            }
            _ => w.push(here(
                "tool",
                format!("{describe}: \"tool\" has no string \"name\"; it was ignored"),
            )),
        },
        Some(other) => w.push(wrong("tool", &other, "an object")),
    }
    match o.remove("documents") {
        None | Some(Value::Null) => {}
        Some(Value::Array(docs)) => {
            let mut out = Vec::with_capacity(docs.len());
            for (n, d) in docs.into_iter().enumerate() {
                match d {
                    Value::Object(mut d) => {
                        let text = match d.remove("text") {
                            Some(Value::String(s)) => s,
                            _ => {
                                w.push(here(
                                    "documents",
                                    format!("{describe}: documents[{n}] has no string \"text\"; it was ignored"),
                                ));
                                continue;
                            }
                        };
                        let id = match d.remove("id") {
                            Some(Value::String(s)) => Some(s),
                            Some(Value::Number(x)) => Some(x.to_string()),
                            _ => None,
                        };
                        let source = match d.remove("source") {
                            Some(Value::String(s)) => Some(s),
                            _ => None,
                        };
                        let outdated = matches!(d.remove("outdated"), Some(Value::Bool(true)));
                        out.push(Document {
                            id,
                            text,
                            source,
                            outdated,
                        });
                    }
                    other => w.push(here(
                        "documents",
                        format!(
                            "{describe}: documents[{n}] is {}, not an object; it was ignored",
                            json_type(&other)
                        ),
                    )),
                }
            }
            step.documents = Some(out);
        }
        Some(other) => w.push(wrong("documents", &other, "an array")),
    }
    match o.remove("memory") {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut m)) => match m.remove("key") {
            Some(Value::String(key)) => {
                step.memory = Some(Box::new(MemoryOp {
                    key,
                    value: payload(m.remove("value"), payloads.memory_value.take())
                        .unwrap_or_default(),
                }));
            }
            _ => w.push(here(
                "memory",
                format!("{describe}: \"memory\" has no string \"key\"; it was ignored"),
            )),
        },
        Some(other) => w.push(wrong("memory", &other, "an object")),
    }
    refs.decision = o
        .remove("decision")
        .filter(|v| !v.is_null())
        .map(Json::from);
    refs.context = o.remove("context").filter(|v| !v.is_null()).map(Json::from);
    match o.remove("model") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => step.call_mut().model = Some(s),
        Some(other) => w.push(wrong("model", &other, "a string")),
    }
    match o.remove("messages") {
        None | Some(Value::Null) => {}
        Some(v) => {
            let warn = |msg: String| here("messages", msg);
            if let Some(list) = super::messages::read_messages(v, &describe, &warn, w)
                && !list.is_empty()
            {
                step.call_mut().messages = list;
            }
        }
    }
    match o.remove("usage") {
        None | Some(Value::Null) => {}
        Some(Value::Object(u)) => {
            let mut usage = Usage::default();
            for (key, slot) in [
                ("input_tokens", &mut usage.input_tokens),
                ("output_tokens", &mut usage.output_tokens),
            ] {
                match u.get(key) {
                    None | Some(Value::Null) => {}
                    Some(v) => match count(v) {
                        Some(n) => *slot = Some(n),
                        None => w.push(here(
                            "usage",
                            format!("{describe}: \"usage.{key}\" is not a non-negative integer; it was ignored"),
                        )),
                    },
                }
            }
            match u.get("cost_usd") {
                None | Some(Value::Null) => {}
                Some(v) => match v.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
                    Some(x) => usage.cost_usd = Some(Box::new(x)),
                    None => w.push(here(
                        "usage",
                        format!(
                            "{describe}: \"usage.cost_usd\" is not a number >= 0; it was ignored"
                        ),
                    )),
                },
            }
            step.extras_mut().usage = Some(usage);
        }
        Some(other) => w.push(wrong("usage", &other, "an object")),
    }
    match o.remove("context_window") {
        None | Some(Value::Null) => {}
        Some(v) => match count(&v) {
            Some(n) if n > 0 => step.extras_mut().context_window = Some(n),
            _ => w.push(wrong("context_window", &v, "a positive integer")),
        },
    }
    for key in ["started_at", "ended_at"] {
        match o.remove(key) {
            None | Some(Value::Null) => {}
            Some(v) => match timestamp::parse(&v) {
                Some(t) => {
                    if key == "started_at" {
                        step.extras_mut().started_at = Some(t);
                    } else {
                        step.extras_mut().ended_at = Some(t);
                    }
                }
                None => w.push(wrong(key, &v, "an RFC 3339 time or Unix milliseconds")),
            },
        }
    }
    match o.remove("attributes") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => step.extras_mut().attributes = m.into(),
        Some(other) => w.push(wrong("attributes", &other, "an object")),
    }
    for key in STEP_FIELDS {
        o.remove(key);
    }
    if !o.is_empty() {
        step.extras_mut().extra = o.into_map().into();
    }
    Ok((step, refs))
}
