//! Context units of an imported run, found by content in what its model calls were sent
//! (docs/importers.md, "Context units, task and outcome").
//!
//! Each model call's recorded input becomes `messages` (`messages.rs`), and the text of each
//! message becomes units: the system prompt (`instruction`), user turns (`user`), earlier
//! assistant turns (`message`), tool results fed back (`tool_result`). A retrieved document (or a
//! tool's result) found verbatim inside a message's text (`find.rs`) is one unit wherever it
//! sits, the retriever's (or tool's) output included, with its place given by `start` / `end`;
//! the text around it is a unit of the message's own kind. A text that comes again (the same
//! system prompt in every call, the history a conversation sends again) is one unit with one `at`
//! entry per place. Ids are content-based (`<kind>-<12 hex digits of SHA-256 of kind and text>`,
//! or a document's own id when the trace gives one), so the same trace imported twice gives the
//! same ids.
//!
//! What a retriever or a tool returned that no later model call was sent is dropped context: a
//! unit with no `at` entry, listed in `context.available` of the first model call after it. A
//! tool result is only called dropped when every later call's tool results are accounted for (a
//! call that fed back a tool result nobody can trace to its tool may have been sent it in another
//! form).
//!
//! Works on the steps an importer built, as run JSON or in the run model (`super::built`), so
//! every importer of model calls shares it. Linear in the run: each distinct message text is
//! searched once, the unit text is held once.

mod find;
mod messages;
mod pieces;
mod tool_text;
mod window;

pub use messages::messages_of;

use super::built::{JsonSteps, Payload, StepStore};
use super::chat;
use crate::analysis::model::{ContextUnit, Message, StepId, TextTable, UnitAt, UnitId};
use find::{Finder, Prober};
use hashbrown::{HashMap, HashSet};
use messages::Msg;
use pieces::{Piece, Split, pieces_of};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
#[cfg(test)]
use tool_text::python_json;
use tool_text::tool_texts;

/// What [`attach`] made besides the changes to the steps.
#[derive(Debug, Default)]
pub struct Attached {
    /// The run's `context_units`.
    pub units: Vec<Value>,
    /// The messages of each model call, by the step's position, as the run model holds them
    /// (equal texts shared); [`attach_apart`] leaves them here, [`attach`] writes them into the
    /// steps.
    pub messages: Vec<(usize, Vec<Message>)>,
}

/// A retrieved document or a tool's result: text a model may have been sent.
struct Source {
    kind: &'static str,
    text: String,
    /// The document's own id, when the trace gives one.
    own_id: Option<String>,
    /// The step that produced it.
    producer: usize,
}

/// A unit being made.
struct Unit {
    id: String,
    kind: &'static str,
    text: String,
    produced_by: Option<usize>,
    at: Vec<UnitAt>,
}

/// Units by content: each (kind, text) once.
#[derive(Default)]
struct Units {
    list: Vec<Unit>,
    by_key: HashMap<String, usize>,
    ids: HashSet<String>,
}

impl Units {
    /// The unit of `kind` with `text`, made when new (with `own_id` as its id when that is free).
    fn get(&mut self, kind: &'static str, text: &str, own_id: Option<&str>) -> usize {
        let key = hashed_id(kind, text);
        if let Some(&u) = self.by_key.get(&key) {
            return u;
        }
        let id = match own_id.map(str::trim).filter(|s| !s.is_empty()) {
            Some(own) if !self.ids.contains(own) => own.to_owned(),
            _ => key.clone(),
        };
        self.ids.insert(id.clone());
        self.list.push(Unit {
            id,
            kind,
            text: text.to_owned(),
            produced_by: None,
            at: Vec::new(),
        });
        self.by_key.insert(key, self.list.len() - 1);
        self.list.len() - 1
    }
}

/// The content-based id of a unit: its kind, then 12 hex digits of the SHA-256 of kind and text.
pub fn hashed_id(kind: &str, text: &str) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update([0u8]);
    h.update(text.as_bytes());
    let digest = h.finalize();
    let mut out = String::with_capacity(kind.len() + 13);
    out.push_str(kind);
    out.push('-');
    for b in digest.iter().take(6) {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Makes `messages`, `context` and the units for the model steps of `steps` (the run JSON an
/// importer built, containers marked), in place: a model step whose recorded input reads as chat
/// messages gets `messages` instead of `input`. Steps of a container are left as they are (their
/// input summarises their children's).
pub fn attach(steps: &mut [Map<String, Value>]) -> Attached {
    let mut attached = attach_apart(steps);
    for (step, msgs) in std::mem::take(&mut attached.messages) {
        if let Some(s) = steps.get_mut(step) {
            let list = msgs
                .iter()
                .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
                .collect();
            s.insert("messages".to_owned(), Value::Array(list));
        }
    }
    attached
}

/// [`attach`], with each call's messages left in [`Attached::messages`] as the run model holds
/// them, not written into the steps as JSON: the step's `messages` is `null` in their place
/// (issue 28: the messages as JSON maps, beside their own copy, were a fifth of an import's
/// peak).
pub fn attach_apart(steps: &mut [Map<String, Value>]) -> Attached {
    let mut store = JsonSteps {
        steps,
        messages: Vec::new(),
    };
    let made = attach_to(&mut store, ReadCalls::default());
    Attached {
        units: made.units.iter().map(unit_json).collect(),
        messages: store.messages,
    }
}

/// A context unit as the run JSON writes it.
pub fn unit_json(unit: &ContextUnit) -> Value {
    serde_json::to_value(unit).unwrap_or(Value::Null)
}

/// Model calls whose recorded input was already read as messages where their steps were built
/// (the span importers: `spans::build_run`), their inputs taken out, and the table their texts
/// are shared in: [`attach_to`] takes these as they are and reads the other calls' inputs.
#[derive(Default)]
pub(crate) struct ReadCalls {
    /// Equal texts, held once.
    table: TextTable,
    /// Each call's messages, by the step's position, in run order.
    calls: Vec<(usize, Vec<(Message, &'static str)>)>,
}

impl ReadCalls {
    /// The call at position `position` (after any already given) reads as `messages`.
    pub fn push(&mut self, position: usize, messages: Vec<Msg>) {
        let table = &mut self.table;
        let msgs = messages.into_iter().map(|m| m.into_message(table));
        self.calls.push((position, msgs.collect()));
    }
}

/// What [`attach_to`] made besides the changes to the steps.
#[derive(Debug, Default)]
pub(crate) struct Made {
    /// The run's context units.
    pub units: Vec<ContextUnit>,
    /// The question the first model call's user turn asks, when retrieved documents were pasted
    /// into it: the text of its last user message with the documents cut out (the text after the
    /// last document, else before the first). `None` otherwise.
    pub asked: Option<String>,
}

/// [`attach`] on the steps of `steps`, as run JSON or in the run model (see
/// [`super::built`]): each model call gets its messages and its `context` from the store, or
/// from `read` for the calls whose messages were read where their steps were built.
pub(crate) fn attach_to<S: StepStore + ?Sized>(steps: &mut S, read: ReadCalls) -> Made {
    let n = steps.len();
    let is_llm = |s: &S, i: usize| s.kind(i) == Some("llm") && !s.is_container(i);
    // Each call's messages, in run order. A call's recorded input is let go as soon as its
    // messages are read (they replace it below), so the inputs and the messages are not both held;
    // each text is shared with the equal ones read before it as it is read.
    let ReadCalls {
        mut table,
        calls: given,
    } = read;
    let mut given = given.into_iter().peekable();
    let mut calls: Vec<(usize, Vec<(Message, &'static str)>)> = Vec::with_capacity(given.len());
    for i in 0..n {
        if !is_llm(steps, i) {
            continue;
        }
        // A call read already has no input left (a model step is never a container).
        if let Some(call) = given.next_if(|(at, _)| *at == i) {
            calls.push(call);
        } else if let Some(msgs) = steps.take_input_if(i, messages_of) {
            let msgs = msgs.into_iter().map(|m| m.into_message(&mut table));
            calls.push((i, msgs.collect()));
        }
    }
    drop(table);
    if calls.is_empty() {
        return Made::default();
    }

    // What retrievers and tools returned, each text of a kind once (the first producer's).
    let mut sources: Vec<Source> = Vec::new();
    let mut tool_by_call: HashMap<String, usize> = HashMap::new();
    for i in 0..n {
        for (text, own_id) in steps.documents(i) {
            sources.push(Source {
                kind: "document",
                text: text.trim().to_owned(),
                own_id,
                producer: i,
            });
        }
        if steps.kind(i) == Some("tool") {
            if let Some((_, Some(id))) = steps.tool(i) {
                tool_by_call.entry(id.to_owned()).or_insert(i);
            }
            if let Some(out) = steps.payload(i, Payload::Output) {
                for text in tool_texts(&out) {
                    sources.push(Source {
                        kind: "tool_result",
                        text,
                        own_id: None,
                        producer: i,
                    });
                }
            }
        }
    }
    let keep: Vec<bool> = {
        let mut seen: HashSet<(&str, &str)> = HashSet::with_capacity(sources.len());
        sources
            .iter()
            .map(|s| !s.text.is_empty() && seen.insert((s.kind, s.text.as_str())))
            .collect()
    };
    let mut keep = keep.into_iter();
    sources.retain(|_| keep.next().unwrap_or(false));
    let finder = Finder::new(sources.iter().map(|s| s.text.as_str()).collect());

    // The text each assistant turn was written as, to name the step that wrote it.
    let mut written_by: HashMap<String, usize> = HashMap::new();
    for i in 0..n {
        if steps.kind(i) == Some("llm")
            && let Some(t) = steps
                .payload(i, Payload::Output)
                .and_then(|o| chat::message_text(&o))
        {
            written_by.entry(t.trim().to_owned()).or_insert(i);
        }
    }

    let mut units = Units::default();
    let mut source_sent = vec![false; sources.len()];
    let mut tool_sent: HashSet<usize> = HashSet::new();
    // Each distinct (text, kind) split once.
    let mut split: HashMap<(&str, &'static str), Split> = HashMap::new();
    let mut sent: Vec<Vec<usize>> = Vec::with_capacity(calls.len());
    // Per call: it fed back tool results, and one of them is traced to no tool.
    let mut fed_back = vec![false; calls.len()];
    let mut unattributed = vec![false; calls.len()];
    let mut asked: Option<String> = None;
    for (ci, (step, msgs)) in calls.iter().enumerate() {
        let step_id = steps.id(*step).unwrap_or_default().to_owned();
        let mut here: Vec<usize> = Vec::new();
        let mut here_set: HashSet<usize> = HashSet::new();
        for (mi, (m, kind)) in msgs.iter().enumerate() {
            let kind = *kind;
            let cut = split.entry((m.content.as_str(), kind)).or_insert_with(|| {
                pieces_of(&m.content, kind, &finder, &sources, &mut units, &written_by)
            });
            let pieces = &cut.pieces;
            let mut traced = false;
            for p in pieces {
                if let Some(s) = p.source {
                    if let Some(slot) = source_sent.get_mut(s) {
                        *slot = true;
                    }
                    if let Some(src) = sources.get(s)
                        && src.kind == "tool_result"
                    {
                        tool_sent.insert(src.producer);
                        traced = true;
                    }
                }
                let at = UnitAt {
                    step: StepId(step_id.clone()),
                    message: mi,
                    start: p.chars.map(|(a, _)| a),
                    end: p.chars.map(|(_, b)| b),
                };
                if let Some(u) = units.list.get_mut(p.unit) {
                    u.at.push(at);
                }
                if here_set.insert(p.unit) {
                    here.push(p.unit);
                }
            }
            if kind == "tool_result" {
                if let Some(flag) = fed_back.get_mut(ci) {
                    *flag = true;
                }
                let by_call = m
                    .tool_call_id
                    .as_ref()
                    .and_then(|c| tool_by_call.get(c))
                    .copied();
                if let Some(t) = by_call.or(cut.tool) {
                    tool_sent.insert(t);
                    traced = true;
                    for p in pieces.iter().filter(|p| p.source.is_none()) {
                        if let Some(u) = units.list.get_mut(p.unit) {
                            u.produced_by.get_or_insert(t);
                        }
                    }
                }
                if !traced
                    && !pieces.is_empty()
                    && let Some(flag) = unattributed.get_mut(ci)
                {
                    *flag = true;
                }
            }
        }
        if ci == 0 {
            asked = asked_in(msgs, &split, &units);
        }
        sent.push(here);
    }

    // Dropped: returned, never sent nor seen in another form, with a later call that could
    // have been sent it. A tool's result only when the later calls fed back tool results and
    // every one of them is traced to its tool: a framework that writes tool results into its
    // prompt text (ReAct), or one whose results cannot be traced, may have sent it reworded.
    let later = |flags: &[bool]| {
        let mut out = flags.to_vec();
        for i in (0..out.len().saturating_sub(1)).rev() {
            let next = out.get(i + 1).copied().unwrap_or(false);
            if let Some(slot) = out.get_mut(i) {
                *slot |= next;
            }
        }
        out
    };
    let (later_fed_back, later_unattributed) = (later(&fed_back), later(&unattributed));
    // Sources not sent verbatim may have been sent in another form: each distinct text is
    // searched once more, for a window of the plain text of those only.
    let unsent: Vec<usize> = (0..sources.len())
        .filter(|&s| !source_sent.get(s).copied().unwrap_or(true))
        .collect();
    let mut source_seen = vec![false; sources.len()];
    if !unsent.is_empty() {
        let texts: Vec<&str> = sources.iter().map(|s| s.text.as_str()).collect();
        let prober = Prober::new(&texts, &unsent);
        for (content, _) in split.keys() {
            for x in prober.seen(content) {
                if let Some(slot) = source_seen.get_mut(x) {
                    *slot = true;
                }
            }
        }
    }
    let mut available: Vec<Vec<usize>> = vec![Vec::new(); calls.len()];
    for (s, src) in sources.iter().enumerate() {
        if source_sent.get(s).copied().unwrap_or(true)
            || source_seen.get(s).copied().unwrap_or(true)
        {
            continue;
        }
        let ci = calls.partition_point(|(step, _)| *step <= src.producer);
        if ci >= calls.len() {
            continue;
        }
        if src.kind == "tool_result"
            && (tool_sent.contains(&src.producer)
                || !later_fed_back.get(ci).copied().unwrap_or(false)
                || later_unattributed.get(ci).copied().unwrap_or(true))
        {
            continue;
        }
        let u = units.get(src.kind, &src.text, src.own_id.as_deref());
        if let Some(unit) = units.list.get_mut(u) {
            unit.produced_by.get_or_insert(src.producer);
        }
        if let Some(list) = available.get_mut(ci)
            && !list.contains(&u)
        {
            list.push(u);
        }
    }

    // The split texts borrow the calls' messages, which are written into the steps next.
    drop(split);
    // Write it all into the steps.
    let ids: Vec<Value> = units
        .list
        .iter()
        .map(|u| Value::String(u.id.clone()))
        .collect();
    let id_of = |u: usize| ids.get(u).cloned().unwrap_or(Value::Null);
    for (((step, msgs), here), dropped) in calls.into_iter().zip(sent).zip(available) {
        let mut ctx = Map::new();
        if !dropped.is_empty() {
            let all = here.iter().chain(&dropped).map(|&u| id_of(u)).collect();
            ctx.insert("available".to_owned(), Value::Array(all));
        }
        ctx.insert(
            "sent".to_owned(),
            Value::Array(here.iter().map(|&u| id_of(u)).collect()),
        );
        let msgs = msgs.into_iter().map(|(m, _)| m).collect();
        steps.set_call(step, msgs, Value::Object(ctx));
    }
    let units = units
        .list
        .into_iter()
        .map(|u| ContextUnit {
            id: UnitId(u.id),
            kind: u.kind.to_owned(),
            text: u.text,
            tokens: None,
            produced_by: u
                .produced_by
                .and_then(|p| steps.id(p))
                .map(|p| StepId(p.to_owned())),
            at: {
                let mut at = u.at;
                at.shrink_to_fit();
                at
            },
            extra: Map::new(),
        })
        .collect();
    Made { units, asked }
}

/// What the first call's last user turn asks (see [`Made::asked`]).
fn asked_in(
    msgs: &[(Message, &'static str)],
    split: &HashMap<(&str, &'static str), Split>,
    units: &Units,
) -> Option<String> {
    let (m, kind) = msgs.iter().rev().find(|(_, kind)| *kind == "user")?;
    let pieces = &split.get(&(m.content.as_str(), *kind))?.pieces;
    let has_document = pieces
        .iter()
        .any(|p| units.list.get(p.unit).is_some_and(|u| u.kind == "document"));
    if !has_document {
        return None;
    }
    let own = |p: &&Piece| p.source.is_none();
    let last_doc = pieces.iter().rposition(|p| p.source.is_some())?;
    let after = pieces.get(last_doc + 1..).into_iter().flatten().find(own);
    let pick = after.or_else(|| pieces.iter().find(own))?;
    m.content
        .get(pick.start..pick.end)
        .and_then(chat::non_empty)
}

#[cfg(test)]
mod tests;
