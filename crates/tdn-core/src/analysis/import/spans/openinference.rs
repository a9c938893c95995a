//! OpenInference attributes (Arize Phoenix and its instrumentations): `input.value`,
//! `output.value`, `llm.input_messages.N.message.*`, `llm.output_messages.N.message.*`,
//! `llm.token_count.*`, `llm.model_name`, `llm.tools.N.tool.json_schema`, `tool.name`,
//! `tool_call.*`, `retrieval.documents.N.document.*`, `reranker.output_documents.N.document.*`,
//! `agent.name`.
//!
//! Pure; reads attributes only.

use super::Span;
use super::attrs::unflatten;
use super::step::Parts;
use crate::analysis::import::chat;
use serde_json::{Map, Value};

/// What the OpenInference attributes of a span say.
pub fn extract(span: &Span, kind: &str) -> Parts {
    let a = &span.attrs;
    const PREFIXES: [&str; 9] = [
        "openinference.",
        "input.",
        "output.",
        "llm.",
        "tool.",
        "tool_call.",
        "retrieval.",
        "reranker.",
        "agent.",
    ];
    if !a.keys().any(|k| PREFIXES.iter().any(|p| k.starts_with(p))) {
        return Parts::default();
    }
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
            "tool.parameters",
        ],
        ..Parts::default()
    };

    let input_messages = unflatten(a, "llm.input_messages")
        .map(inner_messages)
        .map(chat::flatten_parts);
    p.input = input_messages.or_else(|| json_attr("input.value"));

    let output_messages = unflatten(a, "llm.output_messages")
        .map(inner_messages)
        .map(chat::flatten_parts);
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
        let named = text("tool.name").or_else(|| text("tool_call.function.name"));
        p.tool_named_by_span = named.is_none();
        let name = named.or_else(|| chat::non_empty(&span.name));
        if let Some(name) = name {
            let parameters = a.get("tool.parameters").cloned().map(chat::json_or_string);
            let arguments = a
                .get("tool_call.function.arguments")
                .or_else(|| a.get("input.value"))
                .cloned()
                .map(chat::call_arguments)
                .map(|args| python_call(args, parameters.as_ref()));
            let call_id = text("tool_call.id").or_else(|| text("tool.id"));
            p.tool = Some(chat::tool_call(name, arguments, call_id));
            p.tools = tool_definition(a, parameters).into_iter().collect();
        }
    }

    if kind == "retrieval" {
        p.documents = documents(a, "retrieval.documents")
            .or_else(|| documents(a, "reranker.output_documents"));
    }

    p.input_tokens = a.get("llm.token_count.prompt").and_then(chat::count);
    p.output_tokens = a.get("llm.token_count.completion").and_then(chat::count);
    // The recorded cost: the total, else its prompt and completion parts added.
    let cost = |k: &str| a.get(k).and_then(chat::cost);
    p.cost_usd = cost("llm.cost.total").or_else(|| {
        match (cost("llm.cost.prompt"), cost("llm.cost.completion")) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0.0) + o.unwrap_or(0.0)),
        }
    });
    p.model = text("llm.model_name");
    if let Some(Value::Array(tools)) = unflatten(a, "llm.tools")
        && kind != "tool"
    {
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

/// The arguments of a call recorded the way Python instrumentation records a function call,
/// `{"args": [...], "kwargs": {...}}` (smolagents adds `sanitize_inputs_outputs`): the keyword
/// arguments, with the positional ones named after the tool's parameters in order (`{"answer":
/// ...}` for smolagents' `final_answer("...")`). Positional arguments that cannot be named keep
/// the whole record. Any other arguments as they are.
pub fn python_call(args: Value, parameters: Option<&Value>) -> Value {
    let Value::Object(o) = &args else { return args };
    let only_call_keys = o
        .keys()
        .all(|k| matches!(k.as_str(), "args" | "kwargs" | "sanitize_inputs_outputs"));
    let (Some(Value::Array(positional)), true) = (o.get("args"), only_call_keys) else {
        return args;
    };
    let mut named = match o.get("kwargs") {
        Some(Value::Object(kw)) => kw.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => return args,
    };
    if positional.is_empty() {
        return Value::Object(named);
    }
    let names: Vec<&String> = match parameters {
        Some(Value::Object(p)) => match p.get("properties") {
            Some(Value::Object(props)) => props.keys().collect(),
            _ => p.keys().collect(),
        },
        _ => Vec::new(),
    };
    if names.len() < positional.len() {
        return args;
    }
    for (name, v) in names.into_iter().zip(positional) {
        named.insert(name.clone(), v.clone());
    }
    Value::Object(named)
}

/// A tool span's own definition: `tool.name`, `tool.description` and `tool.parameters` (a JSON
/// Schema, or a map of parameters as smolagents writes it, which becomes the schema's
/// `properties`).
fn tool_definition(a: &Map<String, Value>, parameters: Option<Value>) -> Option<Value> {
    let name = a
        .get("tool.name")
        .and_then(Value::as_str)
        .and_then(chat::non_empty)?;
    let mut def = Map::new();
    def.insert("name".to_owned(), Value::String(name));
    if let Some(d) = a.get("tool.description").and_then(Value::as_str) {
        def.insert("description".to_owned(), Value::String(d.to_owned()));
    }
    // Some instrumentations write the call's values there instead; only schemas are kept.
    if let Some(Value::Object(p)) = parameters {
        let schema = if p.contains_key("type") || p.contains_key("properties") {
            Some(Value::Object(p))
        } else if !p.is_empty() && p.values().all(Value::is_object) {
            Some(serde_json::json!({"type": "object", "properties": p}))
        } else {
            None
        };
        if let Some(schema) = schema {
            def.insert("parameters".to_owned(), schema);
        }
    }
    Some(Value::Object(def))
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
    use super::*;
    use serde_json::json;

    fn span(name: &str, attrs: Value) -> Span {
        Span {
            name: name.into(),
            attrs: match attrs {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            ..Span::default()
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
    fn the_recorded_cost_is_the_total_else_its_parts() {
        let total = span(
            "ChatCompletion",
            json!({"openinference.span.kind": "LLM", "llm.cost.total": 0.0045,
                   "llm.cost.prompt": 1.0}),
        );
        assert_eq!(extract(&total, "llm").cost_usd, Some(0.0045));
        let parts = span(
            "ChatCompletion",
            json!({"openinference.span.kind": "LLM", "llm.cost.prompt": "0.003",
                   "llm.cost.completion": 0.0015}),
        );
        let added = extract(&parts, "llm").cost_usd.unwrap_or(f64::NAN);
        assert!((added - 0.0045).abs() < 1e-12, "{added}");
        let none = span("ChatCompletion", json!({"openinference.span.kind": "LLM"}));
        assert_eq!(extract(&none, "llm").cost_usd, None);
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
