//! The steps an importer of spans builds, held either as run JSON (what `import` writes) or
//! straight in the run model, each step read by the loader as soon as it is made (issue 28: the
//! steps and context units of a 100,000-span import held as `serde_json` maps were most of the
//! import's peak). [`StepStore`] is what the outcome and the context units read and change of
//! the steps, the same way in both; the loader gives the run model's side ([`ModelSteps`]), so
//! this module does not depend on it.

use crate::analysis::model::{ContextUnit, Message, Step};
use serde_json::{Map, Value};
use std::any::Any;
use std::borrow::Cow;

/// Steps read into the run model one at a time, by the loader's own reading of a step (given
/// by the loader, see [`Build::Model`]).
pub(crate) trait ModelSteps: Send + Sync {
    /// Reads the next step from its run JSON, as a native file's step is read; a step the
    /// loader refuses is remembered and stops the load.
    fn push(&mut self, step: Map<String, Value>);
    /// The steps read so far.
    fn steps(&self) -> &[Step];
    /// The step at position `i`, to change.
    fn step_mut(&mut self, i: usize) -> Option<&mut Step>;
    /// Gives the step at `i` its `context` (run JSON, its references checked with the others').
    fn set_context(&mut self, i: usize, context: Value);
    /// The loader's own value, to take back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// Makes an empty [`ModelSteps`] with room for this many steps.
pub(crate) type NewSteps = fn(usize) -> Box<dyn ModelSteps>;

/// Where an importer of spans puts the steps it builds.
#[derive(Clone, Copy, Default)]
pub(crate) enum Build {
    /// Into the run JSON (`import`, the importers' public entries).
    #[default]
    Json,
    /// Into the run model, each step as it is made (loading).
    Model(NewSteps),
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Build::Json => "Json",
            Build::Model(_) => "Model",
        })
    }
}

/// A run's steps and context units built straight into the run model: the run JSON's `steps`
/// is empty and it has no `context_units` meanwhile.
pub(crate) struct Built {
    /// The steps, with their messages and context.
    pub steps: Box<dyn ModelSteps>,
    /// The context units, `produced_by` naming a step of `steps`.
    pub units: Vec<ContextUnit>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built")
            .field("steps", &self.steps.steps().len())
            .field("units", &self.units.len())
            .finish()
    }
}

/// A payload of a step, as run JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// `input`.
    Input,
    /// `output`.
    Output,
    /// `tool.arguments`.
    Arguments,
}

/// What the outcome and the context units read and change of an import's steps, by position.
/// A payload that is `null` reads as absent (the loader drops it).
pub(crate) trait StepStore {
    /// How many steps.
    fn len(&self) -> usize;
    /// The step's id.
    fn id(&self, i: usize) -> Option<&str>;
    /// The step's kind as written.
    fn kind(&self, i: usize) -> Option<&str>;
    /// The step is marked `container`.
    fn is_container(&self, i: usize) -> bool;
    /// Marks it `container`.
    fn set_container(&mut self, i: usize);
    /// The name of its tool, and the call id.
    fn tool(&self, i: usize) -> Option<(&str, Option<&str>)>;
    /// One of its attributes.
    fn attribute(&self, i: usize, key: &str) -> Option<&Value>;
    /// One of its payloads, as run JSON (`None` for `null`).
    fn payload(&self, i: usize, which: Payload) -> Option<Cow<'_, Value>>;
    /// Its documents that have a text: the text and the document's own id.
    fn documents(&self, i: usize) -> Vec<(&str, Option<String>)>;
    /// What `read` makes of its `input`, which is taken out when `read` makes something.
    fn take_input_if<R>(&mut self, i: usize, read: impl FnOnce(&Value) -> Option<R>) -> Option<R>;
    /// Gives a model call its messages, in place of its input, and its `context`.
    fn set_call(&mut self, i: usize, messages: Vec<Message>, context: Value);
}

/// Steps as run JSON, the model calls' messages kept apart (see `ImportedRun::messages`).
pub(crate) struct JsonSteps<'a> {
    /// The steps.
    pub steps: &'a mut [Map<String, Value>],
    /// Each model call's messages, by the step's position.
    pub messages: Vec<(usize, Vec<Message>)>,
}

impl<'a> JsonSteps<'a> {
    /// The steps, no messages kept apart yet.
    pub fn new(steps: &'a mut [Map<String, Value>]) -> JsonSteps<'a> {
        JsonSteps {
            steps,
            messages: Vec::new(),
        }
    }
}

impl StepStore for JsonSteps<'_> {
    fn len(&self) -> usize {
        self.steps.len()
    }

    fn id(&self, i: usize) -> Option<&str> {
        self.steps.get(i)?.get("id")?.as_str()
    }

    fn kind(&self, i: usize) -> Option<&str> {
        self.steps.get(i)?.get("kind")?.as_str()
    }

    fn is_container(&self, i: usize) -> bool {
        self.steps
            .get(i)
            .and_then(|s| s.get("container"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    fn set_container(&mut self, i: usize) {
        if let Some(s) = self.steps.get_mut(i) {
            s.insert("container".to_owned(), Value::Bool(true));
        }
    }

    fn tool(&self, i: usize) -> Option<(&str, Option<&str>)> {
        let t = self.steps.get(i)?.get("tool")?;
        let name = t.get("name")?.as_str()?;
        Some((name, t.get("call_id").and_then(Value::as_str)))
    }

    fn attribute(&self, i: usize, key: &str) -> Option<&Value> {
        self.steps.get(i)?.get("attributes")?.get(key)
    }

    fn payload(&self, i: usize, which: Payload) -> Option<Cow<'_, Value>> {
        let s = self.steps.get(i)?;
        let v = match which {
            Payload::Input => s.get("input"),
            Payload::Output => s.get("output"),
            Payload::Arguments => s.get("tool").and_then(|t| t.get("arguments")),
        };
        v.filter(|v| !v.is_null()).map(Cow::Borrowed)
    }

    fn documents(&self, i: usize) -> Vec<(&str, Option<String>)> {
        let Some(list) = self
            .steps
            .get(i)
            .and_then(|s| s.get("documents"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        list.iter()
            .filter_map(|d| {
                let text = d.get("text")?.as_str()?;
                let own_id = d.get("id").and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                });
                Some((text, own_id))
            })
            .collect()
    }

    fn take_input_if<R>(&mut self, i: usize, read: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        let s = self.steps.get_mut(i)?;
        let made = read(s.get("input")?)?;
        s.remove("input");
        Some(made)
    }

    fn set_call(&mut self, i: usize, messages: Vec<Message>, context: Value) {
        if let Some(s) = self.steps.get_mut(i) {
            // In its place among the step's fields, filled by `attach` or by the loader.
            s.insert("messages".to_owned(), Value::Null);
            s.insert("context".to_owned(), context);
            self.messages.push((i, messages));
        }
    }
}

impl StepStore for dyn ModelSteps {
    fn len(&self) -> usize {
        self.steps().len()
    }

    fn id(&self, i: usize) -> Option<&str> {
        Some(self.steps().get(i)?.id.as_str())
    }

    fn kind(&self, i: usize) -> Option<&str> {
        let s = self.steps().get(i)?;
        Some(s.kind_name().unwrap_or(s.kind.as_str()))
    }

    fn is_container(&self, i: usize) -> bool {
        self.steps().get(i).is_some_and(|s| s.container)
    }

    fn set_container(&mut self, i: usize) {
        if let Some(s) = self.step_mut(i) {
            s.container = true;
        }
    }

    fn tool(&self, i: usize) -> Option<(&str, Option<&str>)> {
        let t = self.steps().get(i)?.tool.as_deref()?;
        Some((t.name.as_str(), t.call_id.as_deref()))
    }

    fn attribute(&self, i: usize, key: &str) -> Option<&Value> {
        self.steps().get(i)?.attributes().get(key)
    }

    fn payload(&self, i: usize, which: Payload) -> Option<Cow<'_, Value>> {
        let s = self.steps().get(i)?;
        let v = match which {
            Payload::Input => s.input.as_ref(),
            Payload::Output => s.output.as_ref(),
            Payload::Arguments => s.tool.as_ref().map(|t| &t.arguments),
        };
        v.filter(|v| !v.is_null()).map(|v| Cow::Owned(v.to_value()))
    }

    fn documents(&self, i: usize) -> Vec<(&str, Option<String>)> {
        self.steps()
            .get(i)
            .and_then(|s| s.documents.as_deref())
            .into_iter()
            .flatten()
            .map(|d| (d.text.as_str(), d.id.clone()))
            .collect()
    }

    fn take_input_if<R>(&mut self, i: usize, read: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        let s = self.step_mut(i)?;
        let made = read(&s.input.as_ref()?.to_value())?;
        s.input = None;
        Some(made)
    }

    fn set_call(&mut self, i: usize, messages: Vec<Message>, context: Value) {
        if let Some(s) = self.step_mut(i)
            && !messages.is_empty()
        {
            s.call_mut().messages = messages;
        }
        self.set_context(i, context);
    }
}
