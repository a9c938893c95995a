//! What one step did, read once per step: its parts in canonical form ([`Parts`]) and the keys
//! the alignment matches on ([`Profile`]). Ids, parents, timestamps, token counts, attributes and
//! the context's unit ids take no part: they differ between any two recordings.

use super::normalize::{canon, facts, hash_value, normalize_text};
use crate::analysis::model::{Run, Step, StepKind};
use serde_json::Value;
use std::hash::{DefaultHasher, Hash, Hasher};

/// What a step is for the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Holds other steps (`container: true`, or some step names it as parent): never where two
    /// runs part.
    Container,
    /// Acts on the world or reads it: a tool call, a retrieval, a memory read or write, a
    /// decision, a model step that asks for tools, a step that failed.
    Action,
    /// Says something: a user, model, agent, system or event message.
    Message,
}

/// The keys one step is aligned by, from loose to strict. Each includes the one before it.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The kind as recorded and whether it is a container: what two steps must share to be
    /// paired at all.
    pub kind: u64,
    /// And the agent, the name, the tool called (or the tools a model step asks for).
    pub coarse: u64,
    /// And the gist: the arguments of the calls, the facts a message names, the query.
    pub medium: u64,
    /// And everything compared: results, texts, errors, documents, memory, decision.
    pub fine: u64,
    /// Container, action or message.
    pub role: Role,
    /// A message from the user.
    pub user: bool,
    /// The tools this step calls (its own tool, or those a model step asks for), in order.
    pub calls: Vec<String>,
}

/// One tool call a step makes: the tool's name and its arguments in canonical form.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool.
    pub name: String,
    /// Its arguments ([`canon`]).
    pub arguments: Value,
}

/// A retrieved document as compared: its id (or source), and its text normalised.
#[derive(Clone, Debug, PartialEq)]
pub struct DocPart {
    /// The document's id, else its source, else `None`.
    pub label: Option<String>,
    /// Its text ([`normalize_text`]).
    pub text: String,
}

/// A step's parts in the form two recordings share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parts {
    /// What the step said, when its output is text ([`normalize_text`]).
    pub text: Option<String>,
    /// The text is written by a model or a person (compared by its facts, not its words).
    pub spoken: bool,
    /// The calls it makes.
    pub calls: Vec<Call>,
    /// Its output when that is not text (a tool's result, structured output), canonical.
    pub output: Option<Value>,
    /// Its input, canonical, for steps whose input is their own (a query, a command); a model
    /// step's input is the conversation so far and is left out.
    pub input: Option<Value>,
    /// Its error, normalised.
    pub error: Option<String>,
    /// The documents it retrieved.
    pub documents: Option<Vec<DocPart>>,
    /// The memory key and value.
    pub memory: Option<(String, Value)>,
    /// The option a decision chose.
    pub decision: Option<String>,
}

/// True for the kinds whose text is written by a model or a person.
fn spoken_kind(kind: StepKind) -> bool {
    matches!(
        kind,
        StepKind::Llm | StepKind::Agent | StepKind::Decision | StepKind::User
    )
}

/// Reads a step's parts.
pub fn parts(step: &Step) -> Parts {
    let mut p = Parts {
        spoken: spoken_kind(step.kind),
        ..Parts::default()
    };
    if let Some(t) = &step.tool {
        p.calls.push(Call {
            name: normalize_text(&t.name),
            arguments: canon(&t.arguments.to_value()),
        });
    }
    if let Some(out) = &step.output {
        let v = out.to_value();
        match v {
            Value::String(s) if step.kind != StepKind::Tool => p.text = Some(normalize_text(&s)),
            Value::Object(ref m) if step.kind != StepKind::Tool && asks_for_tools(m) => {
                if let Some(Value::String(s)) = m.get("content") {
                    let t = normalize_text(s);
                    if !t.is_empty() {
                        p.text = Some(t);
                    }
                }
                if let Some(Value::Array(list)) = m.get("tool_calls") {
                    p.calls.extend(list.iter().filter_map(call_of));
                }
            }
            Value::Null => {}
            other => p.output = Some(canon(&other)),
        }
    }
    let own_input = !matches!(
        step.kind,
        StepKind::Llm | StepKind::Agent | StepKind::Decision | StepKind::User | StepKind::System
    ) && step.tool.is_none();
    if own_input && let Some(i) = &step.input {
        p.input = Some(canon(&i.to_value()));
    }
    p.error = step.error.as_deref().map(normalize_text);
    p.documents = step.documents.as_ref().map(|docs| {
        docs.iter()
            .map(|d| DocPart {
                label: d.id.clone().or_else(|| d.source.clone()),
                text: normalize_text(&d.text),
            })
            .collect()
    });
    p.memory = step
        .memory
        .as_ref()
        .map(|m| (m.key.clone(), canon(&m.value.to_value())));
    p.decision = step.decision.as_ref().map(|d| d.chosen.clone());
    p
}

/// An output shaped as a model's message that asks for tools: `{content?, tool_calls: [...]}`.
fn asks_for_tools(m: &serde_json::Map<String, Value>) -> bool {
    m.get("tool_calls").is_some_and(Value::is_array)
        && m.keys()
            .all(|k| matches!(k.as_str(), "content" | "tool_calls" | "role"))
}

/// One entry of `tool_calls`: `{name, arguments}` or `{function: {name, arguments}}`; the
/// provider's call id is left out.
fn call_of(v: &Value) -> Option<Call> {
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = f.get("name")?.as_str()?;
    Some(Call {
        name: normalize_text(name),
        arguments: canon(f.get("arguments").unwrap_or(&Value::Null)),
    })
}

/// Which steps hold others: flagged as containers, or named as some step's parent.
pub fn holders(run: &Run) -> Vec<bool> {
    let mut out: Vec<bool> = run.steps.iter().map(|s| s.is_container()).collect();
    for s in &run.steps {
        if let Some(i) = s.parent.as_ref().and_then(|p| run.step_index(p.as_str()))
            && let Some(slot) = out.get_mut(i)
        {
            *slot = true;
        }
    }
    out
}

/// The profile of a step (`holds`: it holds other steps).
pub fn profile(step: &Step, holds: bool) -> Profile {
    let p = parts(step);
    let role = if holds {
        Role::Container
    } else if matches!(
        step.kind,
        StepKind::Tool
            | StepKind::Retrieval
            | StepKind::MemoryRead
            | StepKind::MemoryWrite
            | StepKind::Decision
    ) || !p.calls.is_empty()
        || p.documents.is_some()
        || p.memory.is_some()
        || p.decision.is_some()
        || p.error.is_some()
    {
        Role::Action
    } else {
        Role::Message
    };
    let mut h = DefaultHasher::new();
    step.kind_label().hash(&mut h);
    (role == Role::Container).hash(&mut h);
    let kind = h.finish();
    step.agent.as_deref().map(normalize_text).hash(&mut h);
    step.name.as_deref().map(normalize_text).hash(&mut h);
    for c in &p.calls {
        c.name.hash(&mut h);
    }
    let coarse = h.finish();
    if role == Role::Container {
        // A container is its children: two of the same kind and name are the same here.
        return Profile {
            kind,
            coarse,
            medium: coarse,
            fine: coarse,
            role,
            user: false,
            calls: Vec::new(),
        };
    }
    for c in &p.calls {
        hash_value(&c.arguments, &mut h);
    }
    if let Some(t) = &p.text {
        if p.spoken {
            facts(t).hash(&mut h);
        } else {
            t.hash(&mut h);
        }
    }
    if let Some(i) = &p.input {
        hash_value(i, &mut h);
    }
    p.memory.as_ref().map(|m| &m.0).hash(&mut h);
    p.decision.hash(&mut h);
    p.documents
        .as_ref()
        .map(|d| d.iter().map(|x| &x.label).collect::<Vec<_>>())
        .hash(&mut h);
    let medium = h.finish();
    p.text.hash(&mut h);
    if let Some(o) = &p.output {
        hash_value(o, &mut h);
    }
    p.error.hash(&mut h);
    p.documents
        .as_ref()
        .map(|d| d.iter().map(|x| &x.text).collect::<Vec<_>>())
        .hash(&mut h);
    if let Some((_, v)) = &p.memory {
        hash_value(v, &mut h);
    }
    let fine = h.finish();
    Profile {
        kind,
        coarse,
        medium,
        fine,
        role,
        user: step.kind == StepKind::User,
        calls: p.calls.into_iter().map(|c| c.name).collect(),
    }
}

/// The profiles of every step of a run (on the thread pool for a long run).
pub fn profiles(run: &Run) -> Vec<Profile> {
    use rayon::prelude::*;
    let holds = holders(run);
    if run.steps.len() >= 1024 {
        run.steps
            .par_iter()
            .zip(holds.par_iter())
            .map(|(s, &h)| profile(s, h))
            .collect()
    } else {
        run.steps
            .iter()
            .zip(&holds)
            .map(|(s, &h)| profile(s, h))
            .collect()
    }
}
