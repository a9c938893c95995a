//! OpenInference attributes (Arize Phoenix and its instrumentations): `input.value`,
//! `output.value`, `llm.input_messages.N.message.*`, `llm.output_messages.N.message.*`,
//! `llm.token_count.*`, `llm.model_name`, `llm.tools.N.tool.json_schema`, `tool.name`,
//! `tool_call.*`, `retrieval.documents.N.document.*`, `reranker.output_documents.N.document.*`,
//! `agent.name`.
//!
//! Pure; reads attributes only.

use super::attrs::unflatten;
use super::step::Parts;
use super::wire::Span;
use crate::analysis::import::chat;
use serde_json::{Map, Value};

/// What the OpenInference attributes of a span say.
pub fn extract(span: &Span, kind: &str) -> Parts {
    let a = &span.attrs;
    let json_attr = |k: &str| a.get(k).cloned().map(chat::json_or_string);
    let text = |k: &str| a.get(k).and_then(Value::as_str).and_then(chat::non_empty);
    let mut p = Parts {
        consumed: vec![
            "input.value",
            "output.value",
            "llm.input_messages.",
            "llm.output_messages.",
            "llm.tools.",
            "retrieval.documents.",
            "reranker.output_documents.",
            "tool_call.function.arguments",
        ],
        ..Parts::default()
    };

    let input_messages = unflatten(a, "llm.input_messages").map(inner_messages);
    p.input = input_messages.or_else(|| json_attr("input.value"));

    let output_messages = unflatten(a, "llm.output_messages").map(inner_messages);
    p.output = match output_messages {
        Some(m) => chat::output_from_messages(&m).or(Some(m)),
        None => json_attr("output.value").map(|o| {
            if kind == "llm" {
                chat::output_from_messages(&o).unwrap_or(o)
            } else {
                o
            }
        }),
    };

    if kind == "tool" {
        let name = text("tool.name")
            .or_else(|| text("tool_call.function.name"))
            .or_else(|| chat::non_empty(&span.name));
        if let Some(name) = name {
            let mut tool = Map::new();
            tool.insert("name".to_owned(), Value::String(name));
            if let Some(args) =
                json_attr("tool_call.function.arguments").or_else(|| json_attr("input.value"))
            {
                tool.insert("arguments".to_owned(), args);
            }
            if let Some(id) = text("tool_call.id") {
                tool.insert("call_id".to_owned(), Value::String(id));
            }
            p.tool = Some(Value::Object(tool));
        }
    }

    if kind == "retrieval" {
        p.documents = documents(a, "retrieval.documents")
            .or_else(|| documents(a, "reranker.output_documents"));
    }

    p.input_tokens = a.get("llm.token_count.prompt").and_then(chat::count);
    p.output_tokens = a.get("llm.token_count.completion").and_then(chat::count);
    p.model = text("llm.model_name");
    if let Some(Value::Array(tools)) = unflatten(a, "llm.tools") {
        p.tools = tools
            .iter()
            .filter_map(|t| t.get("tool").and_then(|t| t.get("json_schema")))
            .filter_map(chat::tool_definition)
            .collect();
    }
    p.agent = text("agent.name").or_else(|| {
        (kind == "agent" && a.contains_key("openinference.span.kind"))
            .then(|| chat::non_empty(&span.name))
            .flatten()
    });
    p
}

/// `[{message: {...}}]` → `[{...}]`.
fn inner_messages(v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|m| match m {
                    Value::Object(mut o) if o.len() == 1 && o.contains_key("message") => {
                        o.remove("message").unwrap_or(Value::Null)
                    }
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

fn documents(a: &Map<String, Value>, prefix: &str) -> Option<Vec<Value>> {
    let Value::Array(list) = unflatten(a, prefix)? else {
        return None;
    };
    Some(
        list.iter()
            .filter_map(|d| d.get("document"))
            .map(|d| {
                let mut doc = Map::new();
                if let Some(id) = d.get("id") {
                    let id = match id {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    doc.insert("id".to_owned(), Value::String(id));
                }
                let content = d.get("content").map(crate::analysis::model::value_text);
                doc.insert(
                    "text".to_owned(),
                    Value::String(content.unwrap_or_default()),
                );
                let source = d
                    .get("metadata")
                    .cloned()
                    .map(chat::json_or_string)
                    .and_then(|m| {
                        ["source", "url", "file_path"]
                            .iter()
                            .find_map(|k| m.get(*k).and_then(Value::as_str).map(str::to_owned))
                    });
                if let Some(s) = source {
                    doc.insert("source".to_owned(), Value::String(s));
                }
                Value::Object(doc)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::wire::StatusCode;
    use super::*;
    use serde_json::json;

    fn span(name: &str, attrs: Value) -> Span {
        Span {
            trace_id: String::new(),
            span_id: String::new(),
            parent_id: None,
            name: name.into(),
            kind: None,
            start_ns: None,
            end_ns: None,
            attrs: match attrs {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            events: Vec::new(),
            status: StatusCode::Unset,
            status_message: None,
            resource: 0,
        }
    }

    #[test]
    fn llm_messages_tokens_and_tools_are_read() {
        let s = span(
            "ChatCompletion",
            json!({
                "openinference.span.kind": "LLM",
                "llm.model_name": "m-2",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "refund order 7",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "refund",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{\"order\": 7}",
                "llm.token_count.prompt": 40,
                "llm.tools.0.tool.json_schema": "{\"type\":\"function\",\"function\":{\"name\":\"refund\"}}",
            }),
        );
        let p = extract(&s, "llm");
        assert_eq!(
            p.input,
            Some(json!([{"role": "user", "content": "refund order 7"}]))
        );
        assert_eq!(
            p.output,
            Some(json!({"tool_calls": [{"name": "refund", "arguments": {"order": 7}}]}))
        );
        assert_eq!(p.input_tokens, Some(40));
        assert_eq!(p.tools, vec![json!({"name": "refund"})]);
        assert_eq!(p.model.as_deref(), Some("m-2"));
    }

    #[test]
    fn tool_and_retriever_spans_give_calls_and_documents() {
        let t = span(
            "lookup",
            json!({"openinference.span.kind": "TOOL", "input.value": "{\"q\": 1}", "output.value": "ok"}),
        );
        let p = extract(&t, "tool");
        assert_eq!(
            p.tool,
            Some(json!({"name": "lookup", "arguments": {"q": 1}}))
        );
        assert_eq!(p.output, Some(json!("ok")));
        let r = span(
            "retrieve",
            json!({
                "openinference.span.kind": "RETRIEVER",
                "input.value": "policy",
                "retrieval.documents.0.document.id": 3,
                "retrieval.documents.0.document.content": "refunds within 30 days",
                "retrieval.documents.0.document.metadata": "{\"source\": \"policy.md\"}",
            }),
        );
        let p = extract(&r, "retrieval");
        assert_eq!(
            p.documents,
            Some(vec![
                json!({"id": "3", "text": "refunds within 30 days", "source": "policy.md"})
            ])
        );
        assert_eq!(p.input, Some(json!("policy")));
    }
}
