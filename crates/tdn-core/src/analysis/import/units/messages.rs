//! A model call's recorded input, in whatever shape the trace holds it, as chat messages in the
//! OpenAI shape (`messages`, docs/run-format.md): OpenAI messages with content parts and
//! `tool_calls`, the Responses API's input items, OpenTelemetry GenAI `parts`, OpenInference
//! messages, Anthropic `tool_use` / `tool_result` blocks, Gemini `contents` with
//! `function_call` / `function_response` parts, Vercel AI SDK `tool-call` / `tool-result` parts,
//! LangChain messages and their `lc` constructors, smolagents' `tool-call` / `tool-response`
//! roles, requests (`{"messages"}`, `{"contents", "system_instruction"}`, `{"input",
//! "instructions"}`, `{"system", "prompt"}`), a `role: text` transcript and a bare prompt.
//!
//! Content parts are joined as text (images and other media are left out); an assistant turn's
//! calls go in `tool_calls` with their arguments as JSON text; a tool result fed back is a `tool`
//! message with its `tool_call_id` (a message holding several results is one message per
//! result). Each message also says which kind of context unit its text is. Pure; bounded in
//! depth; never panics.

use super::super::chat::{self, message_role, str_at};
use super::super::decode;
use crate::analysis::model::{Message, MessageCall, TextTable};
use serde_json::{Map, Value};

/// One message of a call's input, normalised.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Msg {
    /// `system`, `user`, `assistant`, `tool`, or another role as written.
    pub role: String,
    /// The kind of context unit its text is: `instruction`, `user`, `message` or `tool_result`.
    pub kind: &'static str,
    /// Its text.
    pub content: String,
    /// The speaker's or tool's name.
    pub name: Option<String>,
    /// An assistant turn's calls: (id, name, arguments as JSON text).
    pub calls: Vec<(Option<String>, String, String)>,
    /// For a tool result: the call it answers.
    pub call_id: Option<String>,
}

impl Msg {
    fn new(role: &str, content: String) -> Msg {
        let (role, kind) = role_and_kind(role);
        Msg {
            role,
            kind,
            content,
            ..Msg::default()
        }
    }

    /// The message as the run model holds it, its content shared through `table` (the same
    /// text in many calls held once), with the kind of unit its text is.
    pub fn into_message(self, table: &mut TextTable) -> (Message, &'static str) {
        let message = Message {
            role: self.role,
            content: table.text(self.content),
            name: self.name,
            tool_calls: self
                .calls
                .into_iter()
                .map(|(id, name, arguments)| MessageCall {
                    id,
                    name,
                    arguments,
                })
                .collect(),
            tool_call_id: self.call_id,
            extra: Default::default(),
        };
        (message, self.kind)
    }

    /// The message as run JSON (`{role, content, name?, tool_calls?, tool_call_id?}`).
    #[cfg(test)]
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".to_owned(), Value::String(self.role.clone()));
        m.insert("content".to_owned(), Value::String(self.content.clone()));
        if let Some(n) = &self.name {
            m.insert("name".to_owned(), Value::String(n.clone()));
        }
        if !self.calls.is_empty() {
            let calls = self
                .calls
                .iter()
                .map(|(id, name, args)| {
                    let mut c = Map::new();
                    if let Some(id) = id {
                        c.insert("id".to_owned(), Value::String(id.clone()));
                    }
                    c.insert("name".to_owned(), Value::String(name.clone()));
                    c.insert("arguments".to_owned(), Value::String(args.clone()));
                    Value::Object(c)
                })
                .collect();
            m.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        if let Some(id) = &self.call_id {
            m.insert("tool_call_id".to_owned(), Value::String(id.clone()));
        }
        Value::Object(m)
    }
}

/// The chat role a recorded role is sent as, and the kind of unit its text is. smolagents'
/// `tool-call` turns are the assistant's, its `tool-response` turns are sent as the user's and
/// hold a tool's result; a role of an agent's own name is a message of that agent.
fn role_and_kind(role: &str) -> (String, &'static str) {
    match role {
        "system" | "developer" => ("system".to_owned(), "instruction"),
        "user" | "human" => ("user".to_owned(), "user"),
        "assistant" | "ai" | "model" | "tool-call" => ("assistant".to_owned(), "message"),
        "tool" | "function" | "ipython" => ("tool".to_owned(), "tool_result"),
        "tool-response" => ("user".to_owned(), "tool_result"),
        other => (other.to_owned(), "message"),
    }
}

const MAX_DEPTH: usize = 8;

/// The messages a recorded input holds; `None` when it is no chat input (an empty list, a value
/// of no known shape).
pub fn messages_of(input: &Value) -> Option<Vec<Msg>> {
    let input = chat::json_in(input);
    let input = input.as_ref();
    let mut out = Vec::new();
    match input {
        Value::String(s) => {
            if s.trim().is_empty() {
                return None;
            }
            match transcript(s) {
                Some(list) => out = list,
                None => out.push(Msg::new("user", s.clone())),
            }
        }
        Value::Array(items) => list(items, &mut out)?,
        Value::Object(o) => request(input, o, &mut out)?,
        _ => return None,
    }
    merge_call_turns(&mut out);
    (!out.is_empty()).then_some(out)
}

/// A list of messages (or of prompts).
fn list(items: &[Value], out: &mut Vec<Msg>) -> Option<()> {
    if items.is_empty() {
        return None;
    }
    if items.iter().all(Value::is_string) {
        for s in items.iter().filter_map(Value::as_str) {
            out.push(Msg::new("user", s.to_owned()));
        }
        return Some(());
    }
    if !items.iter().any(is_message) {
        return None;
    }
    for item in items {
        item_messages(item, out, 0);
    }
    Some(())
}

/// True for a value that is one message or one Responses API input item.
fn is_message(v: &Value) -> bool {
    message_role(v).is_some()
        || matches!(
            str_at(v, "type"),
            Some("message" | "function_call" | "function_call_output")
        )
}

/// A request object: `{"messages"}` (OpenAI, LangGraph state), `{"contents"}` (Gemini),
/// `{"input", "instructions"}` (Responses API), `{"prompt", "system"}` (Vercel AI SDK), `{"args":
/// [prompt]}` (a completion called with the prompt), or one message.
fn request(v: &Value, o: &Map<String, Value>, out: &mut Vec<Msg>) -> Option<()> {
    if is_message(v) || decode::unwrap_lc(v).is_some() {
        item_messages(v, out, 0);
        return (!out.is_empty()).then_some(());
    }
    let system = [
        "system",
        "instructions",
        "system_instruction",
        "systemInstruction",
    ]
    .iter()
    .find_map(|k| o.get(*k))
    .or_else(|| o.get("config").and_then(|c| c.get("system_instruction")))
    .and_then(|s| parts_text(s, 0))
    .filter(|s| !s.trim().is_empty());
    let body = ["messages", "contents", "input", "prompt", "args"]
        .iter()
        .find_map(|k| o.get(*k))?;
    if let Some(s) = system {
        out.push(Msg::new("system", s));
    }
    let body = chat::json_in(body);
    match body.as_ref() {
        Value::String(s) if !s.trim().is_empty() => out.push(Msg::new("user", s.clone())),
        Value::Array(items) => list(items, out)?,
        other @ Value::Object(_) if is_message(other) => item_messages(other, out, 0),
        _ => return None,
    }
    Some(())
}

/// The messages one recorded item gives (usually one; a message holding tool results gives one
/// per result, then its text).
fn item_messages(item: &Value, out: &mut Vec<Msg>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(kwargs) = decode::unwrap_lc(item) {
        let mut inner = Value::Object(kwargs);
        // The class names the role when the kwargs do not.
        if message_role(&inner).is_none()
            && let (Some(role), Value::Object(m)) = (message_role(item), &mut inner)
        {
            m.insert("role".to_owned(), Value::String(role.to_owned()));
        }
        item_messages(&inner, out, depth + 1);
        return;
    }
    if let Some(inner) = item.get("message").filter(|m| m.is_object())
        && message_role(item).is_some()
        && item.get("content").is_none()
    {
        item_messages(inner, out, depth + 1);
        return;
    }
    match str_at(item, "type") {
        Some("function_call") => {
            let mut m = Msg::new("assistant", String::new());
            m.calls = calls(item);
            out.push(m);
            return;
        }
        Some("function_call_output") => {
            let mut m = Msg::new("tool", item.get("output").map(text_of).unwrap_or_default());
            m.call_id = call_id(item);
            out.push(m);
            return;
        }
        Some("reasoning") => return,
        _ => {}
    }
    let mut role = message_role(item).unwrap_or("user");
    // Langfuse lists the tools offered among the messages, as `tool` messages holding a
    // definition: a tool offered, not a message sent.
    if role == "tool"
        && let Some(c) = item.get("content").filter(|c| c.is_object())
        && c.get("function").is_some_and(|f| f.get("name").is_some())
    {
        return;
    }
    // Koog writes an assistant's calls as a tool message whose text is the JSON list of calls.
    let call_list = item
        .get("content")
        .and_then(Value::as_str)
        .is_some_and(|c| c.trim_start().starts_with("[{"))
        && !chat::message_calls(item).is_empty();
    if call_list && role == "tool" {
        role = "assistant";
    }
    let mut msg = Msg::new(role, String::new());
    msg.name = str_at(item, "name").and_then(chat::non_empty);
    let mut results: Vec<Msg> = Vec::new();
    let body = item
        .get("content")
        .or_else(|| item.get("parts"))
        .or_else(|| item.get("contents"))
        .or_else(|| item.get("text"));
    msg.content = match body {
        Some(Value::String(_)) if call_list => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts_of(parts, &mut results, depth),
        Some(Value::Null) | None => String::new(),
        Some(other) => text_of(other),
    };
    if msg.role == "assistant" {
        msg.calls = calls(item);
    }
    if msg.kind == "tool_result" && msg.role == "tool" {
        msg.call_id = call_id(item);
        if msg.content.is_empty()
            && let Some(only) = results.pop()
        {
            // A tool message whose one part is its result.
            msg.content = only.content;
            msg.call_id = msg.call_id.or(only.call_id);
        }
        if msg.name.is_none() {
            msg.name = results.first().and_then(|r| r.name.clone());
        }
        out.append(&mut results);
        out.push(msg);
        return;
    }
    out.append(&mut results);
    let keep = !msg.content.is_empty() || !msg.calls.is_empty() || out.is_empty();
    if keep {
        out.push(msg);
    }
}

/// The text of content parts (joined by newlines); the tool results among them are pushed onto
/// `results` as tool messages.
fn parts_of(parts: &[Value], results: &mut Vec<Msg>, depth: usize) -> String {
    let mut texts: Vec<String> = Vec::new();
    for part in parts {
        if let Some(t) = part.as_str() {
            texts.push(t.to_owned());
            continue;
        }
        let part = part.get("message_content").unwrap_or(part);
        let kind = str_at(part, "type").unwrap_or("");
        if matches!(
            kind,
            "tool_result" | "tool-result" | "tool_call_response" | "function_call_output"
        ) || part.get("function_response").is_some()
            || part.get("functionResponse").is_some()
        {
            let inner = part
                .get("function_response")
                .or_else(|| part.get("functionResponse"))
                .unwrap_or(part);
            let content = ["content", "output", "result", "response"]
                .iter()
                .find_map(|k| inner.get(*k))
                .map(|v| result_text(v, depth))
                .unwrap_or_default();
            let mut m = Msg::new("tool", content);
            m.call_id = call_id(part).or_else(|| call_id(inner));
            m.name = str_at(inner, "name")
                .or_else(|| str_at(part, "toolName"))
                .and_then(chat::non_empty);
            results.push(m);
            continue;
        }
        if matches!(
            kind,
            "tool_call" | "tool_use" | "tool-call" | "function_call"
        ) || part.get("function_call").is_some()
            || part.get("functionCall").is_some()
        {
            continue;
        }
        if let Some(t) = ["text", "content"]
            .iter()
            .find_map(|k| part.get(*k))
            .and_then(Value::as_str)
        {
            texts.push(t.to_owned());
        }
    }
    texts.join("\n")
}

/// A tool result's text: text as it is, a Vercel AI SDK `{type: "text", value}` or a list of
/// text parts as their text, anything else as compact JSON.
fn result_text(v: &Value, depth: usize) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("text").is_some_and(Value::is_string)) =>
        {
            let mut ignored = Vec::new();
            parts_of(items, &mut ignored, depth + 1)
        }
        Value::Object(o) if o.len() == 2 && o.contains_key("type") && o.contains_key("value") => {
            o.get("value").map(text_of).unwrap_or_default()
        }
        other => text_of(other),
    }
}

/// A value as text: a string itself, anything else compact JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The text a system instruction holds (a string, Gemini `{parts: [{text}]}`, a list of parts).
fn parts_text(v: &Value, depth: usize) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let mut ignored = Vec::new();
            Some(parts_of(parts, &mut ignored, depth))
        }
        Value::Object(o) => o
            .get("parts")
            .or_else(|| o.get("content"))
            .and_then(|p| parts_text(p, depth + 1)),
        _ => None,
    }
}

/// The calls a message makes, arguments as JSON text (text as written, other values compact).
fn calls(item: &Value) -> Vec<(Option<String>, String, String)> {
    chat::message_calls(item)
        .into_iter()
        .map(|c| {
            let args = match (c.written, c.arguments) {
                (Some(w), _) => w,
                (None, Value::String(s)) => s,
                (None, other) => other.to_string(),
            };
            (c.id, c.name, args)
        })
        .collect()
}

/// The call a tool result answers.
fn call_id(v: &Value) -> Option<String> {
    ["tool_call_id", "toolCallId", "call_id", "tool_use_id", "id"]
        .iter()
        .find_map(|k| str_at(v, k))
        .and_then(chat::non_empty)
}

/// Consecutive assistant turns that only call tools (Responses API items, one per call) are one
/// turn with all the calls, as a chat endpoint expects them.
fn merge_call_turns(out: &mut Vec<Msg>) {
    let mut merged: Vec<Msg> = Vec::with_capacity(out.len());
    for m in out.drain(..) {
        if let Some(last) = merged.last_mut()
            && m.role == "assistant"
            && last.role == "assistant"
            && m.content.is_empty()
            && !m.calls.is_empty()
            && !last.calls.is_empty()
        {
            last.calls.extend(m.calls);
            continue;
        }
        merged.push(m);
    }
    *out = merged;
}

/// Roles a `role: text` transcript names at the start of a line.
const TRANSCRIPT_ROLES: [&str; 8] = [
    "system",
    "developer",
    "user",
    "human",
    "assistant",
    "ai",
    "tool",
    "function",
];

/// The role a transcript line opens with, and the rest of the line.
fn role_at(line: &str) -> Option<(&'static str, &str)> {
    TRANSCRIPT_ROLES.iter().find_map(|r| {
        line.strip_prefix(r)
            .and_then(|rest| rest.strip_prefix(": "))
            .map(|rest| (*r, rest))
    })
}

/// A prompt written as a transcript (`system: ...\nuser: ...`, as some exporters render a chat):
/// its messages, when it opens with a role and names at least two turns. Python's `None` as a
/// turn's whole text is an assistant turn that only called tools: empty.
fn transcript(s: &str) -> Option<Vec<Msg>> {
    role_at(s)?;
    let mut out: Vec<(&str, String)> = Vec::new();
    for line in s.split('\n') {
        match role_at(line) {
            Some((role, rest)) => out.push((role, rest.to_owned())),
            None => {
                if let Some((_, text)) = out.last_mut() {
                    text.push('\n');
                    text.push_str(line);
                }
            }
        }
    }
    if out.len() < 2 {
        return None;
    }
    Some(
        out.into_iter()
            .map(|(role, text)| {
                let text = if text == "None" { String::new() } else { text };
                Msg::new(role, text)
            })
            .collect(),
    )
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
