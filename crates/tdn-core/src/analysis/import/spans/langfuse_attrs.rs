//! Langfuse's own OpenTelemetry attributes, as its v3 SDKs write them on every span they export:
//! `langfuse.observation.type` (`generation`, `tool`, `agent`, `chain`, `retriever`, `span`,
//! `event`, ...), `langfuse.observation.input` / `.output` (JSON text), `langfuse.observation.model.name`,
//! and on the root `langfuse.trace.input` / `.output`. Pure; reads attributes only.

use super::Span;
use super::step::{Class, Parts, class};
use crate::analysis::import::chat;
use serde_json::{Map, Value};

/// The class `langfuse.observation.type` states (in any case), when it states one.
pub fn classify(a: &Map<String, Value>) -> Option<Class> {
    let t = a.get("langfuse.observation.type").and_then(Value::as_str)?;
    observation_class(&t.to_ascii_uppercase())
}

/// The class a Langfuse observation type states, written as its API writes it (`GENERATION`,
/// `TOOL`, ...); `None` for `SPAN`, `EVENT` and types this version does not know, which say
/// nothing (the attributes decide). Shared with the importer of Langfuse's own export.
pub fn observation_class(t: &str) -> Option<Class> {
    let (kind, wrapper) = match t {
        "GENERATION" => ("llm", false),
        "TOOL" => ("tool", false),
        "RETRIEVER" => ("retrieval", false),
        "AGENT" => ("agent", true),
        "CHAIN" => ("event", true),
        "EMBEDDING" | "EVALUATOR" | "GUARDRAIL" => ("event", false),
        _ => return None,
    };
    Some(class(kind, wrapper))
}

/// What the Langfuse attributes of a span say.
pub fn extract(span: &Span, kind: &str) -> Parts {
    let a = &span.attrs;
    if !a
        .keys()
        .any(|k| k.starts_with("langfuse.observation.") || k.starts_with("langfuse.trace."))
    {
        return Parts::default();
    }
    let json_attr = |k: &str| a.get(k).cloned().map(chat::json_or_string);
    let mut p = Parts {
        consumed: vec![
            "langfuse.observation.input",
            "langfuse.observation.output",
            "langfuse.trace.input",
            "langfuse.trace.output",
        ],
        ..Parts::default()
    };
    p.input = json_attr("langfuse.observation.input").or_else(|| json_attr("langfuse.trace.input"));
    p.output = json_attr("langfuse.observation.output")
        .or_else(|| json_attr("langfuse.trace.output"))
        .map(|o| {
            if kind == "llm" {
                chat::output_from_messages(&o).unwrap_or(o)
            } else {
                o
            }
        });
    if kind == "tool"
        && let Some(name) = chat::non_empty(&span.name)
    {
        let arguments = a
            .get("langfuse.observation.input")
            .cloned()
            .map(chat::call_arguments);
        p.tool = Some(chat::tool_call(name, arguments, None));
        p.tool_named_by_span = true;
    }
    p.model = a
        .get("langfuse.observation.model.name")
        .and_then(Value::as_str)
        .and_then(chat::non_empty);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_langfuse_sdk_s_attributes_give_kind_input_and_output() {
        let s = Span {
            name: "lookup".into(),
            attrs: match json!({
                "langfuse.observation.type": "tool",
                "langfuse.observation.input": "{\"id\": 7}",
                "langfuse.observation.output": "\"found\"",
            }) {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            ..Span::default()
        };
        assert_eq!(classify(&s.attrs).map(|c| c.kind), Some("tool"));
        let p = extract(&s, "tool");
        assert_eq!(
            p.tool,
            Some(json!({"name": "lookup", "arguments": {"id": 7}}))
        );
        assert_eq!(p.output, Some(json!("found")));
    }
}
