//! A model turn read out of whatever shape the trace recorded it in, for the timeline's rows and
//! the detail's conversation: its text, the calls it made with their arguments, and its reasoning.
//! Reads OpenAI messages (`content`, plural `tool_calls` with `function: {name, arguments}`, the
//! older `function_call`), the importers' `{content, tool_calls: [{name, arguments}]}`, content
//! parts (`{type: "text", text}`, `output_text`), Anthropic blocks (`text`, `tool_use`,
//! `thinking`, `redacted_thinking`), Responses API items (`function_call`, `reasoning`),
//! `choices[].message` and lists of any of these. Presentation only; bounded work on hostile
//! input (a depth limit and a cap on the calls and text kept).

use crate::analysis::model::Json;

/// Nesting read at most.
const MAX_DEPTH: usize = 6;
/// Calls kept at most.
const MAX_CALLS: usize = 64;
/// Bytes of text (and of reasoning) kept at most.
const MAX_TEXT: usize = 256 * 1024;

/// A call a model turn made.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnCall<'a> {
    /// The provider's call id, when recorded.
    pub id: Option<&'a str>,
    /// The tool called.
    pub name: &'a str,
    /// Its arguments: an object, or JSON text the model wrote (parsed when it is JSON).
    pub arguments: Json,
}

/// What a model turn holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn<'a> {
    /// Its text, parts joined by line breaks.
    pub text: String,
    /// The calls it made, in order.
    pub calls: Vec<TurnCall<'a>>,
    /// Its reasoning (thinking blocks, `reasoning_content`), when recorded.
    pub reasoning: String,
    /// Tool results it carries (Anthropic `tool_result` blocks): `(call id, text)`.
    pub results: Vec<(Option<&'a str>, String)>,
}

impl Turn<'_> {
    /// True when nothing was read.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.calls.is_empty()
            && self.reasoning.is_empty()
            && self.results.is_empty()
    }
}

/// The turn in `v`: a string is its text; a structured value is read as above.
pub fn read_turn(v: &Json) -> Turn<'_> {
    let mut t = Turn::default();
    push(v, &mut t, 0);
    t
}

/// True when `v` is shaped like a model turn (a message, a part, a call, a list of them), not
/// like arbitrary data that happens to hold a `text` key.
pub fn looks_like_turn(v: &Json) -> bool {
    match v {
        Json::String(_) => true,
        Json::Array(a) => a.first().is_some_and(looks_like_turn),
        Json::Object(o) => {
            [
                "tool_calls",
                "tool_call",
                "function_call",
                "role",
                "choices",
            ]
            .iter()
            .any(|k| o.contains_key(k))
                || o.get("type").and_then(Json::as_str).is_some_and(is_block)
                || is_langchain_message(o)
                || (o.len() <= 3 && o.contains_key("content"))
        }
        _ => false,
    }
}

/// A LangChain message: `{type: "human" | "ai" | "tool" | "system", content, ...}`.
fn is_langchain_message(o: &crate::analysis::model::JsonMap) -> bool {
    o.contains_key("content")
        && o.get("type")
            .and_then(Json::as_str)
            .is_some_and(|t| matches!(t, "human" | "ai" | "tool" | "system" | "AIMessageChunk"))
}

/// The message a list of messages ends with, for a one-line view of a conversation: its last
/// item when every item is a message (`role`, or a LangChain `type`); `None` otherwise.
pub fn last_message(items: &[Json]) -> Option<&Json> {
    let is_message = |x: &Json| {
        x.as_object()
            .is_some_and(|o| o.contains_key("role") || is_langchain_message(o))
    };
    (items.len() > 1 && items.iter().all(is_message))
        .then(|| items.last())
        .flatten()
}

fn is_block(t: &str) -> bool {
    matches!(
        t,
        "text"
            | "output_text"
            | "input_text"
            | "tool_use"
            | "tool_result"
            | "thinking"
            | "redacted_thinking"
            | "reasoning"
            | "function_call"
            | "message"
            | "tool-call"
    )
}

fn add_text(out: &mut String, s: &str) {
    if s.trim().is_empty() || out.len() >= MAX_TEXT {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let room = MAX_TEXT - out.len();
    let mut end = s.len().min(room);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(s.get(..end).unwrap_or_default());
}

/// A call from `{name, arguments | input | args}` or `{function: {name, arguments}}`.
fn call_of(v: &Json) -> Option<TurnCall<'_>> {
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = f
        .get("name")
        .or_else(|| f.get("toolName"))
        .and_then(Json::as_str)?;
    let args = f
        .get("arguments")
        .or_else(|| f.get("input"))
        .or_else(|| f.get("args"))
        .cloned()
        .unwrap_or(Json::Null);
    let arguments = match &args {
        Json::String(s) if s.len() <= MAX_TEXT => serde_json::from_str::<serde_json::Value>(s)
            .map(Json::from)
            .unwrap_or(args),
        _ => args,
    };
    let id = ["id", "call_id", "toolCallId"]
        .iter()
        .find_map(|k| v.get(k).and_then(Json::as_str));
    Some(TurnCall {
        id,
        name,
        arguments,
    })
}

fn push_call<'a>(v: &'a Json, t: &mut Turn<'a>) {
    if t.calls.len() < MAX_CALLS
        && let Some(c) = call_of(v)
    {
        t.calls.push(c);
    }
}

fn push<'a>(v: &'a Json, t: &mut Turn<'a>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Json::String(s) => add_text(&mut t.text, s),
        Json::Array(items) => {
            for item in items.iter() {
                push(item, t, depth + 1);
            }
        }
        Json::Object(o) => {
            if let Some(kind) = o.get("type").and_then(Json::as_str) {
                match kind {
                    "text" | "output_text" | "input_text" => {
                        if let Some(s) = o.get("text").and_then(Json::as_str) {
                            add_text(&mut t.text, s);
                        }
                        return;
                    }
                    "tool_use" | "function_call" | "tool-call" | "tool_call" => {
                        push_call(v, t);
                        return;
                    }
                    "thinking" => {
                        if let Some(s) = o.get("thinking").and_then(Json::as_str) {
                            add_text(&mut t.reasoning, s);
                        }
                        return;
                    }
                    "redacted_thinking" => {
                        add_text(&mut t.reasoning, "(redacted by the provider)");
                        return;
                    }
                    "reasoning" => {
                        // Responses API: `summary: [{type: "summary_text", text}]`.
                        let mut r = Turn::default();
                        if let Some(s) = o.get("summary") {
                            push(s, &mut r, depth + 1);
                        }
                        if let Some(s) = o.get("text").and_then(Json::as_str) {
                            add_text(&mut r.text, s);
                        }
                        add_text(&mut t.reasoning, &r.text);
                        return;
                    }
                    "tool_result" => {
                        let mut r = Turn::default();
                        if let Some(c) = o.get("content") {
                            push(c, &mut r, depth + 1);
                        }
                        let id = o.get("tool_use_id").and_then(Json::as_str);
                        t.results.push((id, r.text));
                        return;
                    }
                    "summary_text" => {
                        if let Some(s) = o.get("text").and_then(Json::as_str) {
                            add_text(&mut t.text, s);
                        }
                        return;
                    }
                    _ => {}
                }
            }
            for key in ["reasoning_content", "reasoning", "thinking"] {
                if let Some(s) = o.get(key).and_then(Json::as_str) {
                    add_text(&mut t.reasoning, s);
                }
            }
            if let Some(m) = o.get("message").filter(|m| m.is_object()) {
                push(m, t, depth + 1);
            }
            if let Some(c) = o.get("choices").or_else(|| o.get("candidates")) {
                push(c, t, depth + 1);
            }
            for key in ["content", "parts", "text", "output"] {
                if let Some(c) = o.get(key) {
                    push(c, t, depth + 1);
                    break;
                }
            }
            let calls = o
                .get("tool_calls")
                .or_else(|| o.get("additional_kwargs").and_then(|k| k.get("tool_calls")));
            match calls {
                Some(Json::Array(calls)) => {
                    for c in calls.iter() {
                        push_call(c, t);
                    }
                }
                Some(c @ Json::Object(_)) => push_call(c, t),
                _ => {}
            }
            for key in ["tool_call", "function_call"] {
                if let Some(c) = o.get(key).filter(|c| c.is_object()) {
                    push_call(c, t);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(v: serde_json::Value) -> (String, Vec<(String, serde_json::Value)>, String) {
        let j = Json::from(v);
        let t = read_turn(&j);
        let calls = t
            .calls
            .iter()
            .map(|c| (c.name.to_owned(), c.arguments.to_value()))
            .collect();
        (t.text, calls, t.reasoning)
    }

    #[test]
    fn plural_calls_parts_and_anthropic_blocks_are_read() {
        // The importers' shape, two calls.
        let (text, calls, _) = turn(json!({"tool_calls": [
            {"id": "c1", "name": "HelloTool", "arguments": {"name": "Bob"}},
            {"id": "c2", "name": "ByeTool", "arguments": "{\"name\": \"Bob\"}"}]}));
        assert_eq!(text, "");
        assert_eq!(
            calls,
            [
                ("HelloTool".to_owned(), json!({"name": "Bob"})),
                ("ByeTool".to_owned(), json!({"name": "Bob"}))
            ]
        );
        // An OpenAI message with content parts and a function call.
        let (text, calls, _) = turn(json!({"role": "assistant",
            "content": [{"type": "text", "text": "Checking."}],
            "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Tokyo\"}"}}]}));
        assert_eq!(text, "Checking.");
        assert_eq!(
            calls,
            [("get_weather".to_owned(), json!({"city": "Tokyo"}))]
        );
        // Anthropic blocks: thinking, text, tool_use.
        let (text, calls, reasoning) = turn(json!([
            {"type": "thinking", "thinking": "The user wants Berlin."},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__weather__get_weather",
             "input": {"city": "Berlin"}}]));
        assert_eq!(text, "Let me look.");
        assert_eq!(reasoning, "The user wants Berlin.");
        assert_eq!(
            calls,
            [(
                "mcp__weather__get_weather".to_owned(),
                json!({"city": "Berlin"})
            )]
        );
        // A provider response: choices[].message, reasoning_content.
        let (text, _, reasoning) = turn(json!({"choices": [{"message": {"role": "assistant",
            "content": "Sunny.", "reasoning_content": "Look it up first."}}]}));
        assert_eq!(
            (text.as_str(), reasoning.as_str()),
            ("Sunny.", "Look it up first.")
        );
    }

    #[test]
    fn data_with_a_text_key_is_not_a_turn_and_deep_values_stop() {
        assert!(!looks_like_turn(&Json::from(
            json!({"datasets": [1, 2], "text": "x", "a": 1, "b": 2})
        )));
        assert!(looks_like_turn(&Json::from(json!({"tool_calls": []}))));
        let mut deep = json!("bottom");
        for _ in 0..100 {
            deep = json!({ "content": deep });
        }
        assert_eq!(read_turn(&Json::from(deep)).text, "");
    }
}
