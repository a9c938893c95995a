//! OpenTelemetry GenAI semantic conventions: `gen_ai.input.messages` / `gen_ai.output.messages`
//! (JSON with `parts`), `gen_ai.system_instructions`, `gen_ai.tool.*`, `gen_ai.usage.*`,
//! `gen_ai.agent.name`, `gen_ai.tool.definitions`; the older indexed form
//! (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.request.functions.N.*`, as OpenLLMetry
//! writes it) and its `gen_ai.content.prompt` / `gen_ai.content.completion` events; and
//! OpenLLMetry's `traceloop.entity.input` / `output`.
//!
//! Pure; reads attributes only.

use super::Span;
use super::attrs::unflatten;
use super::step::Parts;
use crate::analysis::import::chat;
use serde_json::{Value, json};

/// What the GenAI attributes of a span say.
pub fn extract(span: &Span, kind: &str) -> Parts {
    let a = &span.attrs;
    let json_attr = |k: &str| a.get(k).cloned().map(chat::json_or_string);
    let event_attr = |event: &str, key: &str| {
        span.events
            .iter()
            .find(|e| e.name == event)
            .and_then(|e| e.attrs.get(key))
            .cloned()
            .map(chat::json_or_string)
    };
    let mut p = Parts {
        consumed: vec![
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.system_instructions",
            "gen_ai.prompt.",
            "gen_ai.completion.",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.tool.definitions",
            "llm.request.functions.",
            "traceloop.entity.input",
            "traceloop.entity.output",
        ],
        ..Parts::default()
    };

    p.input = match json_attr("gen_ai.input.messages") {
        Some(Value::Array(mut msgs)) => {
            if let Some(si) = json_attr("gen_ai.system_instructions") {
                msgs.insert(0, json!({"role": "system", "parts": si}));
            }
            Some(Value::Array(msgs))
        }
        Some(other) => Some(other),
        None => unflatten(a, "gen_ai.prompt")
            .or_else(|| event_attr("gen_ai.content.prompt", "gen_ai.prompt")),
    };

    let output = json_attr("gen_ai.output.messages")
        .or_else(|| unflatten(a, "gen_ai.completion"))
        .or_else(|| event_attr("gen_ai.content.completion", "gen_ai.completion"));
    p.output = output.and_then(|o| chat::output_from_messages(&o).or(Some(o)));

    if kind == "tool"
        && let Some(name) = a
            .get("gen_ai.tool.name")
            .and_then(Value::as_str)
            .and_then(chat::non_empty)
    {
        p.tool = Some(chat::tool_call(
            name,
            json_attr("gen_ai.tool.call.arguments"),
            a.get("gen_ai.tool.call.id")
                .and_then(Value::as_str)
                .map(str::to_owned),
        ));
        if p.output.is_none() {
            p.output = json_attr("gen_ai.tool.call.result");
        }
    }

    p.input_tokens = ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"]
        .iter()
        .find_map(|k| a.get(*k).and_then(chat::count));
    p.output_tokens = [
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
    ]
    .iter()
    .find_map(|k| a.get(*k).and_then(chat::count));
    // Not in the conventions yet; OpenLIT and LiteLLM write it.
    p.cost_usd = a.get("gen_ai.usage.cost").and_then(chat::cost);

    let definitions = match json_attr("gen_ai.tool.definitions") {
        Some(Value::Array(list)) => list,
        _ => match unflatten(a, "llm.request.functions") {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        },
    };
    p.tools = definitions
        .iter()
        .filter_map(chat::tool_definition)
        .collect();

    p.agent = a
        .get("gen_ai.agent.name")
        .and_then(Value::as_str)
        .and_then(chat::non_empty);
    p.model = ["gen_ai.request.model", "gen_ai.response.model"]
        .iter()
        .find_map(|k| a.get(*k).and_then(Value::as_str).and_then(chat::non_empty));

    traceloop_entity(span, kind, &mut p);
    p
}

/// OpenLLMetry's decorators (`@workflow`, `@task`, `@agent`, `@tool`) name a span
/// `<entity>.<kind>`, keep the entity's name in `traceloop.entity.name`, and record the call as
/// `json.dumps({"args": [...], "kwargs": {...}})` and the result as `json.dumps(result)`: both are
/// decoded when they hold a string, an array or an object (a number stays the text it was). A `@tool` span gives a call
/// to the entity's name with the keyword arguments (all the arguments when there are positional
/// ones); an `@agent` span names the agent.
fn traceloop_entity(span: &Span, kind: &str, p: &mut Parts) {
    let a = &span.attrs;
    let decoded = |k: &str| {
        a.get(k).cloned().map(|v| match &v {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(d @ (Value::String(_) | Value::Array(_) | Value::Object(_))) => d,
                _ => v,
            },
            _ => v,
        })
    };
    let input = decoded("traceloop.entity.input");
    if p.output.is_none() {
        // A whole chat completion (`{"choices": [...]}`) reads as the message it carries.
        p.output = decoded("traceloop.entity.output").map(|o| {
            if o.get("choices").is_some() {
                chat::output_from_messages(&o).unwrap_or(o)
            } else {
                o
            }
        });
    }
    let entity_kind = a.get("traceloop.span.kind").and_then(Value::as_str);
    let entity_name = a
        .get("traceloop.entity.name")
        .and_then(Value::as_str)
        .and_then(chat::non_empty);
    if kind == "tool"
        && p.tool.is_none()
        && entity_kind == Some("tool")
        && let Some(name) = entity_name.clone()
    {
        let arguments = input.as_ref().map(|args| {
            let positional = args
                .get("args")
                .and_then(Value::as_array)
                .is_some_and(|l| !l.is_empty());
            match args.get("kwargs") {
                Some(kw @ Value::Object(_)) if !positional => kw.clone(),
                _ => args.clone(),
            }
        });
        p.tool = Some(chat::tool_call(name, arguments, None));
    }
    if p.agent.is_none() && entity_kind == Some("agent") {
        p.agent = entity_name;
    }
    if p.input.is_none() {
        p.input = input;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn span(attrs: Value) -> Span {
        Span {
            name: String::new(),
            attrs: match attrs {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            ..Span::default()
        }
    }

    #[test]
    fn current_conventions_give_messages_calls_and_usage() {
        let s = span(json!({
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m-1",
            "gen_ai.system_instructions": "[{\"type\":\"text\",\"content\":\"be brief\"}]",
            "gen_ai.input.messages": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"weather?\"}]}]",
            "gen_ai.output.messages": "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}],\"finish_reason\":\"tool_call\"}]",
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": "3",
        }));
        let p = extract(&s, "llm");
        let input = p.input.unwrap_or_default();
        assert_eq!(input[0]["role"], "system");
        assert_eq!(input[1]["parts"][0]["content"], "weather?");
        assert_eq!(
            p.output,
            Some(
                json!({"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]})
            )
        );
        assert_eq!((p.input_tokens, p.output_tokens), (Some(12), Some(3)));
        assert_eq!(p.model.as_deref(), Some("m-1"));
    }

    #[test]
    fn indexed_prompt_and_completion_are_read() {
        let s = span(json!({
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "hi",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "hello",
            "gen_ai.usage.prompt_tokens": 5,
        }));
        let p = extract(&s, "llm");
        assert_eq!(p.input, Some(json!([{"role": "user", "content": "hi"}])));
        assert_eq!(p.output, Some(json!("hello")));
        assert_eq!(p.input_tokens, Some(5));
    }

    #[test]
    fn a_tool_span_gives_name_arguments_and_result() {
        let s = span(json!({
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": "{\"city\":\"Paris\"}",
            "gen_ai.tool.call.result": "18C",
        }));
        let p = extract(&s, "tool");
        assert_eq!(
            p.tool,
            Some(json!({"name": "get_weather", "arguments": {"city": "Paris"}, "call_id": "c1"}))
        );
        assert_eq!(p.output, Some(json!("18C")));
        assert_eq!(extract(&s, "event").tool, None);
    }

    #[test]
    fn an_openllmetry_tool_span_gives_the_entity_name_and_its_keyword_arguments() {
        let s = span(json!({
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "get_weather",
            "traceloop.entity.input": "{\"args\": [], \"kwargs\": {\"city\": \"Paris\"}}",
            "traceloop.entity.output": "\"18C\"",
        }));
        let p = extract(&s, "tool");
        assert_eq!(
            p.tool,
            Some(json!({"name": "get_weather", "arguments": {"city": "Paris"}}))
        );
        assert_eq!(p.output, Some(json!("18C")));
        let positional = span(json!({
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "add",
            "traceloop.entity.input": "{\"args\": [1, 2], \"kwargs\": {}}",
        }));
        assert_eq!(
            extract(&positional, "tool").tool,
            Some(json!({"name": "add", "arguments": {"args": [1, 2], "kwargs": {}}}))
        );
        let completion = span(json!({
            "traceloop.span.kind": "task",
            "traceloop.entity.output": "{\"id\": \"c\", \"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": \"Paris.\"}}]}",
        }));
        assert_eq!(extract(&completion, "event").output, Some(json!("Paris.")));
        let agent = span(json!({
            "traceloop.span.kind": "agent",
            "traceloop.entity.name": "planner",
            "traceloop.entity.output": "42",
        }));
        let p = extract(&agent, "agent");
        assert_eq!(p.agent.as_deref(), Some("planner"));
        assert_eq!(p.output, Some(json!("42")));
    }
}
