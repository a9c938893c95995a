//! Reading the recorded model calls of a `tdn.run/1` file, the one place the chat runner reads a
//! run: each `llm` step's `messages` (the call's input in the OpenAI chat shape) and `model`, and
//! each context unit's `at` (where its text sits in those messages), as docs/run-format.md
//! describes them. Imported traces reach the runner converted to this format (the spec's `run`),
//! so this reads native runs and imports alike.
//!
//! Tolerant of what it does not use (unknown fields, other step kinds); strict about what it
//! uses: a place that does not hold the unit's text is refused rather than cut blindly.

use super::ChatError;
use crate::analysis::model::inert_line;
use serde::Deserialize;
use serde_json::Value;

/// One message of a recorded call, as the contract writes it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Message {
    /// `system`, `user`, `assistant`, `tool` (or the recorder's own).
    pub role: String,
    /// The text (content parts joined).
    pub content: String,
    /// The speaker's name, when recorded.
    pub name: Option<String>,
    /// An assistant turn's tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the call it answers.
    pub tool_call_id: Option<String>,
}

/// One tool call an assistant turn made.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The call's id, when recorded.
    pub id: Option<String>,
    /// The tool.
    pub name: String,
    /// The arguments as the JSON text the model wrote.
    pub arguments: String,
}

/// A recorded model call: an `llm` step with its input.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The step's id.
    pub step: String,
    /// Its position among the run's steps.
    pub index: usize,
    /// Its input, in order.
    pub messages: Vec<Message>,
    /// The model it asked for (the step's, else the run's `model.name`).
    pub model: Option<String>,
    /// The temperature it was sampled at, when the trace records one.
    pub temperature: Option<f64>,
    /// Units it was sent (`context.sent`).
    pub sent: Vec<String>,
    /// Units it could have been sent (`context.available`).
    pub available: Vec<String>,
}

/// One place of a unit's text in a call's messages (`start`/`end` in `char`s, end exclusive;
/// neither: the whole message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The message's index.
    pub message: usize,
    /// The range, when the unit is part of the message.
    pub range: Option<(usize, usize)>,
}

/// A context unit with its places.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its text.
    pub text: String,
    /// The step that produced it.
    pub produced_by: Option<String>,
    /// (step id, place) for every recorded place.
    pub at: Vec<(String, Place)>,
}

impl Unit {
    /// Its places in the call of step `step`.
    pub fn places_in<'a>(&'a self, step: &'a str) -> impl Iterator<Item = Place> + 'a {
        self.at
            .iter()
            .filter(move |(s, _)| s == step)
            .map(|(_, p)| *p)
    }
}

/// What the chat runner needs of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// Every `llm` step that records its `messages`, in step order.
    pub calls: Vec<Call>,
    /// Every context unit.
    pub units: Vec<Unit>,
    /// How many `llm` steps there are, with messages or not.
    pub llm_steps: usize,
}

#[derive(Deserialize)]
struct FileRun {
    #[serde(default)]
    format: Option<Value>,
    #[serde(default)]
    model: Option<Value>,
    #[serde(default)]
    steps: Vec<Value>,
    #[serde(default)]
    context_units: Vec<Value>,
}

impl Recorded {
    /// Reads the run file at `path` (a `tdn.run/1` file: the spec's `run`).
    pub fn read(path: &std::path::Path) -> Result<Recorded, ChatError> {
        let text = std::fs::read(path).map_err(|e| {
            ChatError::Setup(format!(
                "cannot read the run '{}': {e}",
                inert_line(&path.display().to_string())
            ))
        })?;
        let run: FileRun = serde_json::from_slice(&text).map_err(|e| {
            ChatError::Setup(format!(
                "the run '{}' is not a tdn.run/1 JSON object: {e}",
                inert_line(&path.display().to_string())
            ))
        })?;
        if run.format.as_ref().and_then(Value::as_str) != Some("tdn.run/1") {
            return Err(ChatError::Setup(format!(
                "the run '{}' is not a tdn.run/1 file (tdn-tui gives runners imported traces converted to it; run this runner through tdn-tui)",
                inert_line(&path.display().to_string())
            )));
        }
        Ok(Recorded::from_parts(run))
    }

    /// Reads a run already parsed (tests).
    pub fn from_value(v: Value) -> Result<Recorded, ChatError> {
        let run: FileRun = serde_json::from_value(v)
            .map_err(|e| ChatError::Setup(format!("not a tdn.run/1 JSON object: {e}")))?;
        Ok(Recorded::from_parts(run))
    }

    fn from_parts(run: FileRun) -> Recorded {
        let run_model = run
            .model
            .as_ref()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut calls = Vec::new();
        let mut llm_steps = 0;
        for (index, s) in run.steps.iter().enumerate() {
            if s.get("kind").and_then(Value::as_str) != Some("llm") {
                continue;
            }
            llm_steps += 1;
            let Some(Value::Array(msgs)) = s.get("messages") else {
                continue;
            };
            let Some(step) = id_of(s.get("id")) else {
                continue;
            };
            let ids = |k: &str| -> Vec<String> {
                s.get("context")
                    .and_then(|c| c.get(k))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|v| id_of(Some(v))).collect())
                    .unwrap_or_default()
            };
            calls.push(Call {
                step,
                index,
                messages: msgs.iter().map(message).collect(),
                model: s
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| run_model.clone()),
                temperature: temperature(s),
                sent: ids("sent"),
                available: ids("available"),
            });
        }
        let units = run.context_units.iter().filter_map(unit).collect();
        Recorded {
            calls,
            units,
            llm_steps,
        }
    }

    /// The call a replay re-sends: the last model call that records its input. Its output is
    /// the one nearest the final answer (normally the final answer itself; the baseline checks
    /// that it reproduces it).
    pub fn answering_call(&self) -> Result<&Call, ChatError> {
        self.calls.last().ok_or_else(|| {
            ChatError::Setup(if self.llm_steps == 0 {
                "no recorded call to replay: the run has no model call (no step of kind 'llm')"
                    .to_owned()
            } else {
                format!(
                    "no recorded call to replay: none of the run's {} model call(s) records its input ('messages'); the chat runner needs the messages a call was sent",
                    self.llm_steps
                )
            })
        })
    }

    /// The unit `id`.
    pub fn unit(&self, id: &str) -> Result<&Unit, ChatError> {
        self.units.iter().find(|u| u.id == id).ok_or_else(|| {
            ChatError::Setup(format!("the run has no context unit '{}'", inert_line(id)))
        })
    }
}

/// A step or unit id: a string, or a number written as text.
fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Content as text: a string, or the text of content parts joined with newlines.
fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn message(v: &Value) -> Message {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let tool_calls = v
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    // The contract's shape, or OpenAI's `{id, function: {name, arguments}}`.
                    let f = c.get("function").unwrap_or(c);
                    let arguments = match f.get("arguments") {
                        Some(Value::String(a)) => a.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    ToolCall {
                        id: c.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: f
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        arguments,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Message {
        role: s("role").unwrap_or_else(|| "user".to_owned()),
        content: text_of(v.get("content")),
        name: s("name"),
        tool_calls,
        tool_call_id: s("tool_call_id"),
    }
}

fn temperature(step: &Value) -> Option<f64> {
    let attrs = step.get("attributes")?;
    [
        "gen_ai.request.temperature",
        "llm.temperature",
        "temperature",
    ]
    .iter()
    .find_map(|k| attrs.get(*k).and_then(Value::as_f64))
    .filter(|t| t.is_finite() && *t >= 0.0)
}

fn unit(v: &Value) -> Option<Unit> {
    let place = |p: &Value| -> Option<(String, Place)> {
        let step = id_of(p.get("step"))?;
        let message = usize::try_from(p.get("message")?.as_u64()?).ok()?;
        let n = |k: &str| {
            p.get(k)
                .and_then(Value::as_u64)
                .and_then(|x| usize::try_from(x).ok())
        };
        let range = match (n("start"), n("end")) {
            (None, None) => None,
            (start, end) => Some((start.unwrap_or(0), end.unwrap_or(usize::MAX))),
        };
        Some((step, Place { message, range }))
    };
    Some(Unit {
        id: id_of(v.get("id"))?,
        kind: v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        text: text_of(v.get("text")),
        produced_by: id_of(v.get("produced_by")),
        at: v
            .get("at")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(place).collect())
            .unwrap_or_default(),
    })
}
