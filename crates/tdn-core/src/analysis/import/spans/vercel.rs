//! Vercel AI SDK telemetry (`ai.*` attributes, also what Langfuse stores for it): the call spans
//! `ai.generateText` / `ai.streamText` / `ai.generateObject` / `ai.streamObject` wrap the model
//! calls (`*.doGenerate`, `*.doStream`) and the tool calls (`ai.toolCall`) of their loop.
//!
//! Read: `ai.prompt` (`{system?, prompt?, messages?}`), `ai.prompt.messages`, `ai.response.text`,
//! `ai.response.toolCalls`, `ai.response.object`, `ai.toolCall.name` / `.id` / `.args` (or
//! `.input`) / `.result` (or `.output`), `ai.prompt.tools`, `ai.usage.*Tokens`, `ai.model.id`.
//! Pure; reads attributes only.

use super::Span;
use super::step::{Class, Parts, class};
use crate::analysis::import::chat;
use serde_json::{Map, Value, json};

fn operation(a: &Map<String, Value>) -> Option<&str> {
    a.get("ai.operationId")
        .or_else(|| a.get("operation.name"))
        .and_then(Value::as_str)
        .filter(|op| op.starts_with("ai."))
}

/// The class of a Vercel AI SDK span, when it is one.
pub fn classify(a: &Map<String, Value>) -> Option<Class> {
    let op = operation(a)?;
    let (kind, wrapper) = if op == "ai.toolCall" {
        ("tool", false)
    } else if op.ends_with(".doGenerate") || op.ends_with(".doStream") {
        ("llm", false)
    } else if matches!(
        op,
        "ai.generateText" | "ai.streamText" | "ai.generateObject" | "ai.streamObject"
    ) {
        ("event", true)
    } else if op.starts_with("ai.embed") {
        ("event", false)
    } else {
        return None;
    };
    Some(class(kind, wrapper))
}

/// What the Vercel AI SDK attributes of a span say.
pub fn extract(span: &Span, kind: &str) -> Parts {
    let a = &span.attrs;
    if operation(a).is_none() && !a.keys().any(|k| k.starts_with("ai.")) {
        return Parts::default();
    }
    let json_attr = |k: &str| a.get(k).cloned().map(chat::json_or_string);
    let text = |k: &str| a.get(k).and_then(Value::as_str).and_then(chat::non_empty);
    let mut p = Parts {
        consumed: vec![
            "ai.prompt",
            "ai.prompt.messages",
            "ai.prompt.tools",
            "ai.response.text",
            "ai.response.toolCalls",
            "ai.response.object",
            "ai.toolCall.args",
            "ai.toolCall.input",
            "ai.toolCall.result",
            "ai.toolCall.output",
        ],
        ..Parts::default()
    };
    p.input = json_attr("ai.prompt.messages").or_else(|| {
        json_attr("ai.prompt").map(|prompt| match &prompt {
            // `{system?, messages}` or `{system?, prompt}`: the system text, then the messages
            // or the prompt as a user message.
            Value::Object(o)
                if o.get("messages").is_some_and(Value::is_array)
                    || o.get("prompt").is_some_and(Value::is_string) =>
            {
                let mut msgs = Vec::new();
                if let Some(sys) = o.get("system").and_then(Value::as_str) {
                    msgs.push(json!({"role": "system", "content": sys}));
                }
                match o.get("messages") {
                    Some(Value::Array(m)) => msgs.extend(m.iter().cloned()),
                    _ => msgs.push(json!({"role": "user", "content": o.get("prompt")})),
                }
                Value::Array(msgs)
            }
            _ => prompt,
        })
    });
    let calls: Vec<chat::CallPart> = match json_attr("ai.response.toolCalls") {
        Some(Value::Array(list)) => list.iter().filter_map(chat::call_from).collect(),
        _ => Vec::new(),
    };
    p.output = chat::assistant_output(text("ai.response.text"), &calls)
        .or_else(|| json_attr("ai.response.object"));
    if kind == "tool"
        && let Some(name) = text("ai.toolCall.name")
    {
        let arguments = a
            .get("ai.toolCall.args")
            .or_else(|| a.get("ai.toolCall.input"))
            .cloned()
            .map(chat::call_arguments);
        p.tool = Some(chat::tool_call(name, arguments, text("ai.toolCall.id")));
        if p.output.is_none() {
            p.output = json_attr("ai.toolCall.result").or_else(|| json_attr("ai.toolCall.output"));
        }
    }
    if let Some(Value::Array(tools)) = json_attr("ai.prompt.tools") {
        p.tools = tools.iter().filter_map(vercel_tool).collect();
    }
    let count = |keys: &[&str]| keys.iter().find_map(|k| a.get(*k).and_then(chat::count));
    p.input_tokens = count(&["ai.usage.inputTokens", "ai.usage.promptTokens"]);
    p.output_tokens = count(&["ai.usage.outputTokens", "ai.usage.completionTokens"]);
    p.model = text("ai.response.model").or_else(|| text("ai.model.id"));
    p
}

/// A tool offered in `ai.prompt.tools`: `{type: "function", name, description, inputSchema |
/// parameters}`, often as a string holding that JSON.
fn vercel_tool(v: &Value) -> Option<Value> {
    let v = chat::json_in(v);
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .and_then(chat::non_empty)?;
    let mut def = Map::new();
    def.insert("name".to_owned(), Value::String(name));
    if let Some(d) = v.get("description").and_then(Value::as_str) {
        def.insert("description".to_owned(), Value::String(d.to_owned()));
    }
    if let Some(schema @ Value::Object(_)) = v.get("inputSchema").or_else(|| v.get("parameters")) {
        def.insert("parameters".to_owned(), schema.clone());
    }
    Some(Value::Object(def))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(attrs: Value) -> Span {
        Span {
            attrs: match attrs {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            ..Span::default()
        }
    }

    #[test]
    fn a_model_call_gives_messages_text_calls_tools_and_usage() {
        let s = span(json!({
            "ai.operationId": "ai.streamText.doStream",
            "ai.prompt.messages": "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"weather?\"}]}]",
            "ai.response.text": "Let me check.",
            "ai.response.toolCalls": "[{\"type\":\"tool-call\",\"toolCallId\":\"c1\",\"toolName\":\"getWeather\",\"input\":{\"city\":\"SF\"}}]",
            "ai.prompt.tools": ["{\"type\":\"function\",\"name\":\"getWeather\",\"inputSchema\":{\"type\":\"object\"}}"],
            "ai.usage.inputTokens": "12",
            "ai.usage.outputTokens": "3",
        }));
        assert_eq!(classify(&s.attrs).map(|c| c.kind), Some("llm"));
        let p = extract(&s, "llm");
        assert_eq!(p.input.unwrap_or_default()[0]["role"], "user");
        assert_eq!(
            p.output,
            Some(json!({"content": "Let me check.", "tool_calls": [
                {"id": "c1", "name": "getWeather", "arguments": {"city": "SF"}}]}))
        );
        assert_eq!(
            p.tools,
            vec![json!({"name": "getWeather", "parameters": {"type": "object"}})]
        );
        assert_eq!((p.input_tokens, p.output_tokens), (Some(12), Some(3)));
    }

    #[test]
    fn a_tool_call_span_names_the_real_tool_and_the_outer_call_wraps() {
        let s = span(json!({
            "ai.operationId": "ai.toolCall",
            "ai.toolCall.name": "searchDocs",
            "ai.toolCall.id": "c1",
            "ai.toolCall.args": "{\"query\":\"n+1\"}",
            "ai.toolCall.result": "{\"hits\": 2}",
        }));
        let p = extract(&s, "tool");
        assert_eq!(
            p.tool,
            Some(json!({"name": "searchDocs", "arguments": {"query": "n+1"}, "call_id": "c1"}))
        );
        assert_eq!(p.output, Some(json!({"hits": 2})));
        let outer = span(json!({"ai.operationId": "ai.generateText",
            "ai.prompt": "{\"prompt\":\"What is the weather?\"}"}));
        assert_eq!(
            classify(&outer.attrs),
            Some(Class {
                kind: "event",
                stated: true,
                wrapper: true
            })
        );
        assert_eq!(
            extract(&outer, "event").input,
            Some(json!([{"role": "user", "content": "What is the weather?"}]))
        );
    }
}
