//! Chat messages in the shapes traces record them (OpenAI `content` and `tool_calls`,
//! OpenTelemetry GenAI `parts`, OpenInference `message.contents`, Anthropic `tool_use` blocks):
//! their text, their tool calls, and one output shape for a model step that called tools.
//!
//! Shared by the importers; pure functions over JSON values that never fail: what is not
//! recognised gives `None` or an empty list, never a panic.

use serde_json::{Map, Value, json};

/// One tool call requested by a model.
#[derive(Clone, Debug, PartialEq)]
pub struct CallPart {
    /// The provider's call id, when recorded.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, parsed when they were a string holding JSON.
    pub arguments: Value,
}

/// A string holding a JSON object or array, parsed; `None` for anything else.
pub fn parse_json_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// A value with strings that hold JSON objects or arrays parsed (one level); others unchanged.
pub fn json_or_string(v: Value) -> Value {
    match &v {
        Value::String(s) => parse_json_text(s).unwrap_or(v),
        _ => v,
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

/// The text of a message or of a list of messages in any of the recognised shapes; `None` when
/// there is none.
pub fn message_text(v: &Value) -> Option<String> {
    let mut out = String::new();
    push_text(v, &mut out, 0);
    non_empty(&out)
}

const MAX_TEXT_DEPTH: usize = 8;

fn push_text(v: &Value, out: &mut String, depth: usize) {
    if depth > MAX_TEXT_DEPTH {
        return;
    }
    let mut add = |s: &str| {
        if s.trim().is_empty() {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(s);
    };
    match v {
        Value::String(s) => add(s),
        Value::Array(items) => {
            for item in items {
                push_text(item, out, depth + 1);
            }
        }
        Value::Object(o) => {
            // A part that is a tool call or its result carries no prose.
            if let Some(t) = o.get("type").and_then(Value::as_str)
                && is_call_type(t)
            {
                return;
            }
            for key in ["message", "message_content"] {
                if let Some(inner) = o.get(key) {
                    push_text(inner, out, depth + 1);
                    return;
                }
            }
            for key in ["content", "parts", "contents", "text", "choices"] {
                if let Some(inner) = o.get(key) {
                    push_text(inner, out, depth + 1);
                    return;
                }
            }
        }
        _ => {}
    }
}

fn is_call_type(t: &str) -> bool {
    matches!(
        t,
        "tool_call" | "tool_use" | "function_call" | "tool_call_response" | "tool_result"
    )
}

/// The task a run's input states: the last user message of a list of messages (also under
/// `messages`, as LangGraph records its state), the `input`, `question` or `query` string of an
/// object (LangChain chains), else the input's text.
pub fn task_text(v: &Value) -> Option<String> {
    match v {
        Value::Array(msgs) => msgs
            .iter()
            .rev()
            .find(|m| message_role(m) == Some("user") || str_at(m, "type") == Some("human"))
            .and_then(message_text),
        Value::Object(o) => {
            if let Some(m @ Value::Array(_)) = o.get("messages") {
                return task_text(m);
            }
            ["input", "question", "query"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str).and_then(non_empty))
                .or_else(|| message_text(v))
        }
        other => message_text(other),
    }
}

/// The answer a run's output states: the `output`, `answer`, `final_answer` or `result` string of
/// an object (LangChain chains return `{"input", "output"}`), the last of its `messages`, else
/// the output's text.
pub fn answer_text(v: &Value) -> Option<String> {
    let Value::Object(o) = v else {
        return message_text(v);
    };
    if let Some(Value::Array(msgs)) = o.get("messages") {
        return msgs.last().and_then(message_text);
    }
    ["output", "answer", "final_answer", "result"]
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_str).and_then(non_empty))
        .or_else(|| message_text(v))
}

/// The role of a message (`role`, or `message.role`).
pub fn message_role(v: &Value) -> Option<&str> {
    str_at(v, "role").or_else(|| v.get("message").and_then(|m| str_at(m, "role")))
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
        Value::Array(items) => {
            for item in items {
                push_calls(item, out, depth + 1);
            }
        }
        Value::Object(o) => {
            if let Some(t) = o.get("type").and_then(Value::as_str)
                && matches!(t, "tool_call" | "tool_use" | "function_call")
            {
                out.extend(call_from(v));
                return;
            }
            if let Some(inner) = o.get("message") {
                push_calls(inner, out, depth + 1);
                return;
            }
            if let Some(Value::Array(calls)) = o.get("tool_calls") {
                out.extend(calls.iter().filter_map(call_from));
            }
            if let Some(call) = o.get("function_call").filter(|c| c.is_object()) {
                out.extend(call_from(call));
            }
            for key in ["parts", "content", "contents", "choices"] {
                if let Some(inner @ Value::Array(_)) = o.get(key) {
                    push_calls(inner, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// One call from any of: `{id, function: {name, arguments}}`, `{tool_call: {...}}`,
/// `{type: "tool_call", id, name, arguments}`, `{type: "tool_use", id, name, input}`.
pub fn call_from(v: &Value) -> Option<CallPart> {
    let e = v.get("tool_call").unwrap_or(v);
    let f = e.get("function").filter(|f| f.is_object()).unwrap_or(e);
    let name = non_empty(str_at(f, "name")?)?;
    let arguments = f
        .get("arguments")
        .or_else(|| f.get("input"))
        .or_else(|| f.get("args"))
        .cloned()
        .map(json_or_string)
        .unwrap_or(Value::Object(Map::new()));
    let id = str_at(e, "id")
        .or_else(|| str_at(v, "id"))
        .and_then(non_empty);
    Some(CallPart {
        id,
        name,
        arguments,
    })
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
    let v = json_or_string(v.clone());
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(&v);
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
                arguments: json!({"id": 7})
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
    fn task_and_answer_are_read_from_chain_and_graph_envelopes() {
        let chain_in = json!({"input": "How many refunds?", "chat_history": []});
        let chain_out = json!({"input": "How many refunds?", "output": "12 refunds."});
        assert_eq!(task_text(&chain_in).as_deref(), Some("How many refunds?"));
        assert_eq!(answer_text(&chain_out).as_deref(), Some("12 refunds."));
        let graph = json!({"messages": [
            {"type": "human", "content": "Refund order 7"},
            {"type": "ai", "content": "Checking."},
            {"type": "ai", "content": "Order 7 refunded."}]});
        assert_eq!(task_text(&graph).as_deref(), Some("Refund order 7"));
        assert_eq!(answer_text(&graph).as_deref(), Some("Order 7 refunded."));
        let msgs = json!([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]);
        assert_eq!(task_text(&msgs).as_deref(), Some("q"));
        assert_eq!(answer_text(&json!("plain")).as_deref(), Some("plain"));
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
