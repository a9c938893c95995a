//! Chat messages in the shapes traces record them (OpenAI `content` parts and `tool_calls`, the
//! Responses API's `output` items, OpenTelemetry GenAI `parts`, OpenInference `message.contents`,
//! Anthropic `tool_use` blocks, Gemini `parts` with `function_call`, Vercel AI SDK `tool-call`
//! parts, LangChain messages and their `lc` constructors): their text, their tool calls, and one
//! output shape for a model step that called tools.
//!
//! Shared by the importers; pure functions over JSON values that never fail: what is not
//! recognised gives `None` or an empty list, never a panic. Task and answer text is chosen in
//! `run_text`.

use super::decode;
pub use super::roles::message_role;
use serde_json::{Map, Value, json};

/// One tool call requested by a model.
#[derive(Clone, Debug, PartialEq)]
pub struct CallPart {
    /// The provider's call id, when recorded.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, parsed when they were a string holding JSON or a Python literal.
    pub arguments: Value,
    /// The arguments as the model wrote them, when they were recorded as text.
    pub written: Option<String>,
}

/// A string holding a JSON object or array, parsed; `None` for anything else.
pub fn parse_json_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// A string holding a JSON object or array parsed, and a JSON string holding one (JSON encoded
/// twice) too; other values unchanged. Python literals are left as text here (see
/// [`decode::decoded`] for arguments and answers).
pub fn json_or_string(v: Value) -> Value {
    let Value::String(s) = &v else { return v };
    if let Some(parsed) = parse_json_text(s) {
        return parsed;
    }
    let t = s.trim();
    if t.starts_with('"')
        && let Ok(Value::String(inner)) = serde_json::from_str::<Value>(t)
    {
        return match parse_json_text(&inner) {
            Some(parsed) => parsed,
            None => Value::String(inner),
        };
    }
    v
}

/// [`json_or_string`] without a copy of a value that is no text: a list or an object is given
/// back as it is, a text is read.
pub fn json_in(v: &Value) -> std::borrow::Cow<'_, Value> {
    match v {
        Value::String(_) => std::borrow::Cow::Owned(json_or_string(v.clone())),
        _ => std::borrow::Cow::Borrowed(v),
    }
}

/// A non-empty, trimmed string.
pub fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// The string at `key` of an object value.
pub fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// [`str_at`], when the string is not empty.
pub fn text_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    str_at(v, key).filter(|s| !s.is_empty())
}

/// The text of a message or of a list of messages in any of the recognised shapes; `None` when
/// there is none. Tool calls and their results carry no text.
pub fn message_text(v: &Value) -> Option<String> {
    let mut out = String::new();
    push_text(v, &mut out, 0);
    non_empty(&out)
}

const MAX_TEXT_DEPTH: usize = 8;

/// Keys whose value holds the text of a message or part, in the order they are tried.
const TEXT_KEYS: [&str; 7] = [
    "content",
    "parts",
    "contents",
    "text",
    "choices",
    "candidates",
    "kwargs",
];

fn push_text(v: &Value, out: &mut String, depth: usize) {
    if depth > MAX_TEXT_DEPTH {
        return;
    }
    match v {
        Value::String(s) => {
            if s.trim().is_empty() || !call_list_text(s).is_empty() {
                return;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        Value::Array(items) => {
            for item in items {
                push_text(item, out, depth + 1);
            }
        }
        Value::Object(o) => {
            if let Some(kwargs) = decode::unwrap_lc(v) {
                push_text(&Value::Object(kwargs), out, depth + 1);
                return;
            }
            // A part that is a tool call or its result carries no prose.
            if let Some(t) = o.get("type").and_then(Value::as_str)
                && is_call_type(t)
            {
                return;
            }
            for key in ["message", "message_content"] {
                if let Some(inner) = o.get(key).filter(|m| m.is_object()) {
                    push_text(inner, out, depth + 1);
                    return;
                }
            }
            if let Some(items) = response_output(o) {
                for item in items {
                    push_text(item, out, depth + 1);
                }
                return;
            }
            for key in TEXT_KEYS {
                if let Some(inner) = o.get(key) {
                    push_text(inner, out, depth + 1);
                    return;
                }
            }
        }
        _ => {}
    }
}

/// The `output` items of an OpenAI Responses API object (`{"object": "response", "output":
/// [...]}`), or of a bare list of its items.
fn response_output(o: &Map<String, Value>) -> Option<&Vec<Value>> {
    let items = o.get("output")?.as_array()?;
    let typed = o.get("object").and_then(Value::as_str) == Some("response")
        || items
            .first()
            .is_some_and(|i| i.get("type").and_then(Value::as_str).is_some());
    typed.then_some(items)
}

fn is_call_type(t: &str) -> bool {
    matches!(
        t,
        "tool_call"
            | "tool_use"
            | "function_call"
            | "tool-call"
            | "tool_call_response"
            | "tool_result"
            | "tool-result"
            | "function_call_output"
            | "web_search_call"
    )
}

/// The calls a string holds when it is a JSON list of tool calls (Koog writes an assistant's
/// calls into `content` that way); empty for any other text.
fn call_list_text(s: &str) -> Vec<CallPart> {
    let t = s.trim_start();
    if !t.starts_with("[{") {
        return Vec::new();
    }
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Array(items)) => {
            let calls: Vec<CallPart> = items.iter().filter_map(call_item).collect();
            if calls.len() == items.len() {
                calls
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// The tool calls a message (or list of messages) requests, in order.
pub fn message_calls(v: &Value) -> Vec<CallPart> {
    let mut out = Vec::new();
    push_calls(v, &mut out, 0);
    out
}

fn push_calls(v: &Value, out: &mut Vec<CallPart>, depth: usize) {
    if depth > MAX_TEXT_DEPTH {
        return;
    }
    match v {
        Value::String(s) => out.extend(call_list_text(s)),
        Value::Array(items) => {
            for item in items {
                push_calls(item, out, depth + 1);
            }
        }
        Value::Object(o) => {
            if let Some(kwargs) = decode::unwrap_lc(v) {
                push_calls(&Value::Object(kwargs), out, depth + 1);
                return;
            }
            if let Some(t) = o.get("type").and_then(Value::as_str)
                && matches!(t, "tool_call" | "tool_use" | "function_call" | "tool-call")
            {
                out.extend(call_from(v));
                return;
            }
            for key in ["function_call", "functionCall"] {
                if let Some(call) = o.get(key).filter(|c| c.is_object()) {
                    out.extend(call_from(call));
                    return;
                }
            }
            if let Some(inner) = o.get("message").filter(|m| m.is_object()) {
                push_calls(inner, out, depth + 1);
                return;
            }
            if let Some(items) = response_output(o) {
                for item in items {
                    push_calls(item, out, depth + 1);
                }
                return;
            }
            if let Some(Value::Array(calls)) = o.get("tool_calls") {
                out.extend(calls.iter().filter_map(call_from));
            } else if let Some(extra) = o.get("additional_kwargs") {
                // LangChain keeps the provider's calls there when `tool_calls` is absent.
                push_calls(extra, out, depth + 1);
            }
            for key in [
                "parts",
                "content",
                "contents",
                "choices",
                "candidates",
                "kwargs",
            ] {
                match o.get(key) {
                    Some(inner @ (Value::Array(_) | Value::Object(_))) => {
                        push_calls(inner, out, depth + 1);
                    }
                    Some(Value::String(s)) if key == "content" => out.extend(call_list_text(s)),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// An item of a list that holds calls only: `{function: {name, ...}}` or a call of any shape
/// [`call_from`] reads.
fn call_item(v: &Value) -> Option<CallPart> {
    let o = v.as_object()?;
    let looks = o.get("function").is_some_and(Value::is_object)
        || o.contains_key("toolName")
        || o.contains_key("tool_call")
        || o.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| matches!(t, "tool_call" | "tool_use" | "function_call" | "tool-call"));
    if looks { call_from(v) } else { None }
}

/// One call from any of: `{id, function: {name, arguments}}`, `{tool_call: {...}}`,
/// `{type: "tool_call", id, name, arguments}`, `{type: "tool_use", id, name, input}`,
/// `{type: "function_call", call_id, name, arguments}` (Responses API), `{name, args}` (Gemini's
/// `function_call`, LangChain's `tool_calls`), `{toolCallId, toolName, input | args}` (Vercel AI
/// SDK), `{tool_call_id, function_name, arguments}` (ATIF). Arguments written as JSON text or as
/// a Python literal are parsed.
pub fn call_from(v: &Value) -> Option<CallPart> {
    let e = v.get("tool_call").filter(|t| t.is_object()).unwrap_or(v);
    let f = e.get("function").filter(|f| f.is_object()).unwrap_or(e);
    let name = ["name", "toolName", "function_name"]
        .iter()
        .find_map(|k| str_at(f, k).or_else(|| str_at(e, k)))
        .and_then(non_empty)?;
    let raw = ["arguments", "input", "args", "parameters"]
        .iter()
        .find_map(|k| f.get(*k));
    let written = raw.and_then(Value::as_str).map(str::to_owned);
    let arguments = raw
        .cloned()
        .map(call_arguments)
        .unwrap_or(Value::Object(Map::new()));
    let id = ["id", "call_id", "toolCallId", "tool_call_id"]
        .iter()
        .find_map(|k| str_at(e, k).or_else(|| str_at(v, k)))
        .and_then(non_empty);
    Some(CallPart {
        id,
        name,
        arguments,
        written,
    })
}

/// A call's arguments as recorded: text holding JSON (once or twice) or a Python literal is
/// parsed; empty text is no arguments (`{}`); anything else is kept as it is.
pub fn call_arguments(v: Value) -> Value {
    match &v {
        Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
        Value::String(_) => decode::decoded(v),
        _ => v,
    }
}

/// A message list with OpenInference `contents` and OpenAI content-part arrays that hold only
/// text flattened into one `content` string per message, so the text reads as text. Messages
/// with images or other parts keep their parts. Any other value as it is.
pub fn flatten_parts(v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(flatten_message).collect()),
        other => flatten_message(other),
    }
}

fn flatten_message(m: Value) -> Value {
    let Value::Object(mut o) = m else { return m };
    for key in ["contents", "content"] {
        let Some(Value::Array(parts)) = o.get(key) else {
            continue;
        };
        let mut texts = Vec::with_capacity(parts.len());
        for part in parts {
            let part = part.get("message_content").unwrap_or(part);
            let is_text = part
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| matches!(t, "text" | "input_text" | "output_text"));
            match part.get("text").and_then(Value::as_str) {
                Some(t) if is_text => texts.push(t),
                _ => {
                    texts.clear();
                    break;
                }
            }
        }
        if !texts.is_empty() && texts.len() == parts.len() {
            let text = texts.join("\n");
            o.remove(key);
            o.insert("content".to_owned(), Value::String(text));
        }
    }
    Value::Object(o)
}

/// A tool step's `tool`: `{name, arguments?, call_id?}`.
pub fn tool_call(name: String, arguments: Option<Value>, call_id: Option<String>) -> Value {
    let mut tool = Map::new();
    tool.insert("name".to_owned(), Value::String(name));
    if let Some(args) = arguments {
        tool.insert("arguments".to_owned(), args);
    }
    if let Some(id) = call_id {
        tool.insert("call_id".to_owned(), Value::String(id));
    }
    Value::Object(tool)
}

/// The output of a model step: its text alone, or, when it called tools,
/// `{"content"?: text, "tool_calls": [{"id"?, "name", "arguments"}]}`. `None` when both are empty.
pub fn assistant_output(text: Option<String>, calls: &[CallPart]) -> Option<Value> {
    if calls.is_empty() {
        return text.map(Value::String);
    }
    let list: Vec<Value> = calls
        .iter()
        .map(|c| {
            let mut m = Map::new();
            if let Some(id) = &c.id {
                m.insert("id".to_owned(), Value::String(id.clone()));
            }
            m.insert("name".to_owned(), Value::String(c.name.clone()));
            m.insert("arguments".to_owned(), c.arguments.clone());
            Value::Object(m)
        })
        .collect();
    let mut out = Map::new();
    if let Some(t) = text {
        out.insert("content".to_owned(), Value::String(t));
    }
    out.insert("tool_calls".to_owned(), Value::Array(list));
    Some(Value::Object(out))
}

/// The output of a model step read from a recorded message (or list of messages): its text and
/// calls in the shape of [`assistant_output`]; `None` when it holds neither.
pub fn output_from_messages(v: &Value) -> Option<Value> {
    assistant_output(message_text(v), &message_calls(v))
}

/// A tool offered to a model, as `{name, description?, parameters?}`, from any of
/// `{type: "function", function: {name, description, parameters}}`, `{name, description,
/// parameters}` or `{name, input_schema}`; strings holding JSON are parsed first.
pub fn tool_definition(v: &Value) -> Option<Value> {
    let v = json_in(v);
    let v = v.as_ref();
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = non_empty(str_at(f, "name")?)?;
    let mut m = Map::new();
    m.insert("name".to_owned(), Value::String(name));
    if let Some(d) = str_at(f, "description") {
        m.insert("description".to_owned(), Value::String(d.to_owned()));
    }
    let params = f
        .get("parameters")
        .or_else(|| f.get("input_schema"))
        .cloned()
        .map(json_or_string);
    if let Some(p @ Value::Object(_)) = params {
        m.insert("parameters".to_owned(), p);
    }
    Some(Value::Object(m))
}

/// A `{input_tokens?, output_tokens?}` object, or `None` when neither is known.
pub fn usage(input: Option<u64>, output: Option<u64>) -> Option<Value> {
    if input.is_none() && output.is_none() {
        return None;
    }
    let mut m = Map::new();
    if let Some(i) = input {
        m.insert("input_tokens".to_owned(), json!(i));
    }
    if let Some(o) = output {
        m.insert("output_tokens".to_owned(), json!(o));
    }
    Some(Value::Object(m))
}

/// A recorded cost in dollars from a number or a string holding one: finite and >= 0, else `None`.
pub fn cost(v: &Value) -> Option<f64> {
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }?;
    (x.is_finite() && x >= 0.0).then_some(x)
}

/// A step's `usage` with `cost_usd` added when a cost is recorded (made when only the cost is).
pub fn with_cost(usage: Option<Value>, cost: Option<f64>) -> Option<Value> {
    let Some(c) = cost else {
        return usage;
    };
    let mut m = match usage {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    m.insert("cost_usd".to_owned(), json!(c));
    Some(Value::Object(m))
}

/// A token count from a number or a string holding one; negative or fractional counts are `None`.
pub fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_read_from_every_message_shape() {
        assert_eq!(message_text(&json!("hi")).as_deref(), Some("hi"));
        assert_eq!(
            message_text(&json!({"role": "user", "content": "hi"})).as_deref(),
            Some("hi")
        );
        let genai = json!([{"role": "assistant", "parts": [
            {"type": "text", "content": "a"},
            {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}},
            {"type": "text", "content": "b"}]}]);
        assert_eq!(message_text(&genai).as_deref(), Some("a\nb"));
        let oi = json!({"message": {"role": "user", "contents": [
            {"message_content": {"type": "text", "text": "q"}}]}});
        assert_eq!(message_text(&oi).as_deref(), Some("q"));
        assert_eq!(message_text(&json!({"content": null})), None);
    }

    #[test]
    fn calls_are_read_from_openai_genai_openinference_and_anthropic_shapes() {
        let openai = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get", "arguments": "{\"id\": 7}"}}]});
        assert_eq!(
            message_calls(&openai),
            vec![CallPart {
                id: Some("c1".into()),
                name: "get".into(),
                arguments: json!({"id": 7}),
                written: Some("{\"id\": 7}".into()),
            }]
        );
        let genai = json!({"parts": [{"type": "tool_call", "name": "f", "arguments": {"a": 1}}]});
        assert_eq!(message_calls(&genai)[0].arguments, json!({"a": 1}));
        let oi = json!({"message": {"tool_calls": [
            {"tool_call": {"id": "t9", "function": {"name": "g", "arguments": "[1]"}}}]}});
        let c = &message_calls(&oi)[0];
        assert_eq!((c.name.as_str(), c.id.as_deref()), ("g", Some("t9")));
        assert_eq!(c.arguments, json!([1]));
        let anthropic =
            json!({"content": [{"type": "tool_use", "id": "u", "name": "h", "input": {"k": "v"}}]});
        assert_eq!(message_calls(&anthropic)[0].arguments, json!({"k": "v"}));
        assert!(message_calls(&json!({"tool_calls": [{"function": {}}]})).is_empty());
    }

    #[test]
    fn output_is_text_alone_or_text_with_calls() {
        assert_eq!(assistant_output(Some("x".into()), &[]), Some(json!("x")));
        assert_eq!(assistant_output(None, &[]), None);
        let call = CallPart {
            id: None,
            name: "f".into(),
            arguments: json!({}),
            written: None,
        };
        assert_eq!(
            assistant_output(None, &[call]),
            Some(json!({"tool_calls": [{"name": "f", "arguments": {}}]}))
        );
    }

    #[test]
    fn tool_definitions_are_read_from_openai_and_flat_shapes() {
        let openai = json!({"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object"}}});
        assert_eq!(
            tool_definition(&openai),
            Some(json!({"name": "f", "description": "d", "parameters": {"type": "object"}}))
        );
        let text = json!("{\"name\": \"g\", \"input_schema\": {\"type\": \"object\"}}");
        assert_eq!(
            tool_definition(&text),
            Some(json!({"name": "g", "parameters": {"type": "object"}}))
        );
        assert_eq!(tool_definition(&json!({"description": "no name"})), None);
    }

    #[test]
    fn a_provider_response_with_choices_gives_its_message() {
        let resp = json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant",
            "content": "done", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}}]});
        assert_eq!(
            output_from_messages(&resp),
            Some(
                json!({"content": "done", "tool_calls": [{"id": "c", "name": "f", "arguments": {}}]})
            )
        );
    }

    #[test]
    fn only_strings_holding_objects_or_arrays_are_parsed() {
        assert_eq!(json_or_string(json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(json_or_string(json!("42")), json!("42"));
        assert_eq!(json_or_string(json!("{broken")), json!("{broken"));
        assert_eq!(count(&json!("12")), Some(12));
        assert_eq!(count(&json!(-1)), None);
    }
}
