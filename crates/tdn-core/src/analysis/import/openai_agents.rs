//! The OpenAI Agents SDK's trace export: `{"traces": [{"object": "trace", "id", "workflow_name",
//! "group_id", "metadata", "spans": [...]}]}`, or a bare list of such traces or of spans. A span is
//! `{"object": "trace.span", "id", "trace_id", "parent_id", "started_at", "ended_at",
//! "span_data": {"type", ...}, "error": {"message", "data"} | null}`. One run per trace.
//!
//! `span_data` by type:
//! - `agent` (`name`, `tools`, `handoffs`, `output_type`): an agent step wrapping its calls;
//! - `generation` (`input` and `output` messages, `model`, `usage`): a model call;
//! - `response` (`response_id`; `input` and the `response` object when the exporter keeps them,
//!   also as `span_data_input` / `response` beside `span_data`, the response possibly a Python
//!   repr): a model call through the Responses API;
//! - `function` (`name`, `input`, `output`): a tool call;
//! - `handoff` (`from_agent`, `to_agent`), `guardrail` (`name`, `triggered`), `custom` (`name`,
//!   `data`), `mcp_tools`, `transcription`, `speech`: events.
//!
//! Each span becomes a shared [`Span`] with what `span_data` states as its given parts, and the
//! shared span reader builds the run. Pure; never panics.

use super::built::Build;
use super::spans::{self, Parts, Span, StatusCode};
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat, decode, keep_fields};
use crate::analysis::document::Document;
use serde_json::{Map, Value};

/// The OpenAI Agents SDK importer.
pub struct OpenAiAgents;

fn is_span(v: &Value) -> bool {
    v.get("span_data").is_some_and(Value::is_object)
        || v.get("object").and_then(Value::as_str) == Some("trace.span")
}

fn is_trace(v: &Value) -> bool {
    v.get("object").and_then(Value::as_str) == Some("trace")
        || v.get("spans")
            .and_then(Value::as_array)
            .and_then(|s| s.first())
            .is_some_and(is_span)
}

/// The traces of the document: `(trace object or none, its spans)`.
fn traces(doc: &Document) -> Vec<(Option<&Value>, Vec<&Value>)> {
    let mut out: Vec<(Option<&Value>, Vec<&Value>)> = Vec::new();
    let mut loose: Vec<&Value> = Vec::new();
    for v in doc.values() {
        let items: &[Value] = match v {
            Value::Object(o) => match o.get("traces").and_then(Value::as_array) {
                Some(t) => t,
                None => std::slice::from_ref(v),
            },
            Value::Array(a) => a,
            _ => &[],
        };
        for item in items {
            if is_trace(item) {
                let spans = item
                    .get("spans")
                    .and_then(Value::as_array)
                    .map(|s| s.iter().filter(|x| is_span(x)).collect())
                    .unwrap_or_default();
                out.push((Some(item), spans));
            } else if is_span(item) {
                loose.push(item);
            }
        }
    }
    // Spans given without their trace, grouped by `trace_id`.
    let loose = loose.into_iter().map(|s| {
        let t = s
            .get("trace_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        (t, s)
    });
    out.extend(
        spans::by_trace(loose)
            .into_iter()
            .map(|(_, members)| (None, members)),
    );
    out
}

impl Importer for OpenAiAgents {
    fn format(&self) -> SourceFormat {
        SourceFormat::OpenAiAgents
    }

    fn looks_for(&self) -> &'static str {
        "{\"traces\": [{\"object\": \"trace\", \"spans\": [{\"span_data\": {...}}]}]}, or spans with \"span_data\""
    }

    fn sniff(&self, doc: &Document) -> bool {
        doc.values().first().is_some_and(|v| match v {
            Value::Object(o) => match o.get("traces").and_then(Value::as_array) {
                Some(t) => t.first().is_some_and(is_trace),
                None => is_trace(v) || is_span(v),
            },
            Value::Array(a) => a.first().is_some_and(|x| is_trace(x) || is_span(x)),
            _ => false,
        })
    }

    fn count(&self, doc: &Document) -> usize {
        traces(doc).len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        import_into(doc, index, Build::Json)
    }
}

/// [`OpenAiAgents`]'s import, the steps built where `build` says.
pub(super) fn import_into(
    doc: Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let all = traces(&doc);
    if all.is_empty() {
        return Err(ImportError(
            "no traces or spans found; an OpenAI Agents SDK export lists traces under \"traces\", each with its \"spans\"".to_owned(),
        ));
    }
    Ok(super::pick(all, index, "trace(s)")?
        .into_iter()
        .map(|(trace, members)| build_trace(trace, &members, build))
        .collect())
}

fn build_trace(trace: Option<&Value>, members: &[&Value], build: Build) -> ImportedRun {
    let decoded: Vec<Span> = members.iter().map(|s| span(s)).collect();
    let trace_id = trace
        .and_then(|t| t.get("id"))
        .or_else(|| members.first().and_then(|s| s.get("trace_id")))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut run = spans::build_run(
        trace_id,
        decoded,
        spans::Source {
            noun: "span",
            resources: &[],
            hex_ids: false,
        },
        build,
    );
    if let (Some(t), Some(o)) = (trace, run.value.as_object_mut()) {
        if let Some(name) = t.get("workflow_name").and_then(Value::as_str) {
            o.insert("title".to_owned(), Value::String(name.to_owned()));
        }
        let mut attributes = Map::new();
        keep_fields(
            t,
            &["group_id", "metadata"],
            "openai_agents",
            &mut attributes,
        );
        if !attributes.is_empty() {
            o.insert("attributes".to_owned(), Value::Object(attributes));
        }
    }
    run
}

/// A field of `span_data`, or the same field written beside it (`span_data_<field>`, or bare, as
/// some exporters flatten it).
fn field<'a>(s: &'a Value, data: &'a Value, key: &str) -> Option<&'a Value> {
    data.get(key)
        .or_else(|| s.get(format!("span_data_{key}").as_str()))
        .or_else(|| s.get(key))
        .filter(|v| !v.is_null())
}

fn span(s: &Value) -> Span {
    let empty = Value::Object(Map::new());
    let data = s.get("span_data").unwrap_or(&empty);
    let kind = data.get("type").and_then(Value::as_str).unwrap_or("custom");
    let text = |k: &str| {
        field(s, data, k)
            .and_then(Value::as_str)
            .and_then(chat::non_empty)
    };
    let mut given = Parts::default();
    let mut name = text("name").unwrap_or_else(|| kind.to_owned());
    let (kind_hint, wrapper) = match kind {
        "agent" => {
            given.agent = text("name");
            given.tools = match field(s, data, "tools").cloned().map(decode::decoded) {
                Some(Value::Array(list)) => list
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|n| serde_json::json!({ "name": n }))
                    .collect(),
                _ => Vec::new(),
            };
            ("agent", true)
        }
        "function" => {
            let arguments = field(s, data, "input").cloned().map(chat::call_arguments);
            given.tool = Some(chat::tool_call(name.clone(), arguments, None));
            given.output = field(s, data, "output").cloned().map(decode::decoded);
            ("tool", false)
        }
        "generation" | "response" => {
            given.input = field(s, data, "input").cloned().map(decode::decoded);
            let response = field(s, data, "response")
                .or_else(|| field(s, data, "output"))
                .cloned()
                .map(decode::decoded);
            given.output = response
                .as_ref()
                .and_then(chat::output_from_messages)
                .or(response.clone());
            let model =
                field(s, data, "model").or_else(|| response.as_ref().and_then(|r| r.get("model")));
            given.model = model.and_then(Value::as_str).and_then(chat::non_empty);
            let usage =
                field(s, data, "usage").or_else(|| response.as_ref().and_then(|r| r.get("usage")));
            let tokens = |keys: [&str; 2]| {
                usage.and_then(|u| keys.iter().find_map(|k| u.get(*k).and_then(chat::count)))
            };
            given.input_tokens = tokens(["input_tokens", "prompt_tokens"]);
            given.output_tokens = tokens(["output_tokens", "completion_tokens"]);
            name = given.model.clone().unwrap_or(name);
            ("llm", false)
        }
        "handoff" => {
            let from = text("from_agent").unwrap_or_default();
            let to = text("to_agent").unwrap_or_default();
            name = format!("handoff {from} -> {to}");
            ("event", false)
        }
        _ => {
            given.output = field(s, data, "data").cloned();
            ("event", false)
        }
    };
    let mut attrs = Map::new();
    for (k, v) in data.as_object().into_iter().flatten() {
        if !matches!(k.as_str(), "input" | "output" | "response" | "type") {
            attrs.insert(format!("openai_agents.{k}"), v.clone());
        }
    }
    attrs.insert(
        "openai_agents.type".to_owned(),
        Value::String(kind.to_owned()),
    );
    let error = s.get("error").filter(|e| !e.is_null());
    let message = error.and_then(|e| {
        let m = e.get("message").and_then(Value::as_str).unwrap_or_default();
        let d = e
            .get("data")
            .filter(|d| !d.is_null())
            .map(crate::analysis::model::value_text);
        match d {
            Some(d) => chat::non_empty(&format!("{m}: {d}")),
            None => chat::non_empty(m).or_else(|| Some("the span recorded an error".to_owned())),
        }
    });
    Span {
        trace_id: s
            .get("trace_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        span_id: s
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        parent_id: s
            .get("parent_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        name,
        start_ns: s
            .get("started_at")
            .and_then(Value::as_str)
            .and_then(spans::time::iso_ns),
        end_ns: s
            .get("ended_at")
            .and_then(Value::as_str)
            .and_then(spans::time::iso_ns),
        attrs,
        status: if message.is_some() {
            StatusCode::Error
        } else {
            StatusCode::Unset
        },
        status_message: message,
        given,
        kind_hint: Some(kind_hint),
        wrapper_hint: wrapper,
        ..Span::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_export_gives_agents_model_calls_and_function_calls() {
        let doc = Document::One(json!({"traces": [{"object": "trace", "id": "trace_1",
            "workflow_name": "Weather", "spans": [
            {"object": "trace.span", "id": "span_a", "trace_id": "trace_1", "parent_id": null,
             "started_at": "2025-01-01T00:00:00+00:00", "ended_at": "2025-01-01T00:00:05+00:00",
             "span_data": {"type": "agent", "name": "Assistant", "tools": ["get_weather"]}, "error": null},
            {"object": "trace.span", "id": "span_g", "trace_id": "trace_1", "parent_id": "span_a",
             "started_at": "2025-01-01T00:00:01+00:00",
             "span_data": {"type": "generation", "model": "gpt-4o",
               "input": [{"role": "user", "content": "Weather in Oslo?"}],
               "output": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                  "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}],
               "usage": {"input_tokens": 20, "output_tokens": 5}}, "error": null},
            {"object": "trace.span", "id": "span_f", "trace_id": "trace_1", "parent_id": "span_a",
             "started_at": "2025-01-01T00:00:02+00:00",
             "span_data": {"type": "function", "name": "get_weather", "input": "{\"city\": \"Oslo\"}",
               "output": "4C"}, "error": {"message": "Error running tool", "data": {"error": "timeout"}}},
            {"object": "trace.span", "id": "span_r", "trace_id": "trace_1", "parent_id": "span_a",
             "started_at": "2025-01-01T00:00:03+00:00",
             "span_data": {"type": "response", "response_id": "resp_1"},
             "response": "Response(id='resp_1', model='gpt-4o', object='response', output=[ResponseOutputMessage(id='m', content=[ResponseOutputText(annotations=[], text='It is 4C in Oslo.', type='output_text')], role='assistant', type='message')])"}
        ]}]}));
        assert!(OpenAiAgents.sniff(&doc));
        let runs = OpenAiAgents.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(run["title"], "Weather");
        let kinds: Vec<&str> = run["steps"]
            .as_array()
            .map(|s| s.iter().filter_map(|x| x["kind"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(kinds, ["agent", "llm", "tool", "llm"]);
        assert_eq!(run["steps"][0]["container"], true);
        assert_eq!(
            run["steps"][2]["tool"]["arguments"],
            json!({"city": "Oslo"})
        );
        assert_eq!(
            run["steps"][2]["error"],
            "Error running tool: {\"error\":\"timeout\"}"
        );
        assert_eq!(run["steps"][1]["usage"]["input_tokens"], 20);
        assert_eq!(run["task"], "Weather in Oslo?");
        assert_eq!(run["final_answer"], "It is 4C in Oslo.");
        assert_eq!(run["tools"], json!([{"name": "get_weather"}]));
    }
}
