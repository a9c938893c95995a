//! Span rows: spans as the OpenTelemetry collector's ClickHouse exporter stores them (one row per
//! span: `TraceId`, `SpanId`, `ParentSpanId`, `SpanName`, `SpanKind`, `SpanAttributes`,
//! `ResourceAttributes`, `Timestamp`, `Duration` in nanoseconds, `StatusCode`, `StatusMessage`,
//! `Events`), and as Patronus exports a trace (TRAIL): `{"trace_id", "spans": [...]}` with the
//! same fields in snake_case, every attribute value a string, `duration` an ISO 8601 duration
//! (`PT1M48S`), and children nested in `child_spans`.
//!
//! Accepted documents: one trace object, an array of them, `{"data": [rows]}` (ClickHouse's JSON
//! output), an array of rows or JSON lines of rows. One run per trace id, in order of first
//! appearance. Each row becomes a [`Span`] read by the shared span reader, so step ids are the
//! span ids. Nested children are walked without recursion. Pure; never panics.

use super::built::Build;
use super::spans::{self, Event, Span, StatusCode};
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat};
use crate::analysis::document::Document;
use serde_json::{Map, Value};

mod stream;

pub(super) use stream::{Streamed, decode_text};

/// The span-row importer.
pub struct SpanRows;

fn get<'a>(v: &'a Value, snake: &str, camel: &str) -> Option<&'a Value> {
    v.get(snake).or_else(|| v.get(camel))
}

fn text<'a>(v: &'a Value, snake: &str, camel: &str) -> Option<&'a str> {
    get(v, snake, camel).and_then(Value::as_str)
}

/// True for one span row: a span id and a span name, in either spelling.
fn is_row(v: &Value) -> bool {
    get(v, "span_id", "SpanId").is_some_and(Value::is_string)
        && get(v, "span_name", "SpanName").is_some()
}

/// True for one exported trace: `spans` holding rows.
fn is_trace(v: &Value) -> bool {
    v.get("spans")
        .and_then(Value::as_array)
        .is_some_and(|s| s.first().is_some_and(is_row))
}

/// The top-level values that hold rows or traces.
fn items(doc: &Document) -> &[Value] {
    match doc {
        Document::One(Value::Array(items)) => items,
        Document::One(v @ Value::Object(o)) => match o.get("data").and_then(Value::as_array) {
            Some(rows) if !is_trace(v) => rows,
            _ => std::slice::from_ref(v),
        },
        Document::One(other) => std::slice::from_ref(other),
        Document::Lines(vs) => vs,
    }
}

/// Every row of the document (nested children included), each with the trace id of the
/// export it came in when the row has none, in file order (a parent before its children).
fn rows(doc: &Document) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for item in items(doc) {
        rows_of(item, &mut out);
    }
    out
}

/// The rows of one top-level item (see [`rows`]).
fn rows_of<'a>(item: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    let (trace, top): (String, &[Value]) = if is_trace(item) || item.get("spans").is_some() {
        let id = text(item, "trace_id", "TraceId")
            .unwrap_or_default()
            .to_owned();
        let spans = item
            .get("spans")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        (id, spans)
    } else {
        (String::new(), std::slice::from_ref(item))
    };
    let mut stack: Vec<&Value> = top.iter().rev().collect();
    while let Some(row) = stack.pop() {
        if !is_row(row) {
            continue;
        }
        let id = text(row, "trace_id", "TraceId")
            .map(str::to_owned)
            .unwrap_or_else(|| trace.clone());
        out.push((id, row));
        if let Some(children) = row.get("child_spans").and_then(Value::as_array) {
            stack.extend(children.iter().rev());
        }
    }
}

impl Importer for SpanRows {
    fn format(&self) -> SourceFormat {
        SourceFormat::SpanRows
    }

    fn looks_for(&self) -> &'static str {
        "{\"trace_id\", \"spans\": [{\"span_id\", \"span_name\", \"span_attributes\", \"child_spans\", ...}]} (Patronus, TRAIL), or rows with SpanId, SpanName, SpanAttributes (ClickHouse exporter)"
    }

    fn sniff(&self, doc: &Document) -> bool {
        items(doc)
            .first()
            .is_some_and(|v| is_trace(v) || (is_row(v) && get(v, "trace_id", "TraceId").is_some()))
    }

    fn count(&self, doc: &Document) -> usize {
        spans::by_trace(rows(doc)).len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        import_into(doc, index, Build::Json)
    }
}

/// [`SpanRows`]'s import, the steps built where `build` says.
pub(super) fn import_into(
    doc: Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let groups = spans::by_trace(rows(&doc));
    if groups.is_empty() {
        return Err(no_rows());
    }
    let mut resources = spans::Resources::default();
    let decoded: Vec<(String, Vec<Span>)> = super::pick(groups, index, "trace(s)")?
        .into_iter()
        .map(|(trace_id, members)| {
            let decoded = members
                .iter()
                .map(|row| decode_row(row, &trace_id, resources.intern(resource_of(row))))
                .collect();
            (trace_id, decoded)
        })
        .collect();
    // Every row is decoded into owned values: the parsed file is freed before the runs are
    // built, so it and the runs are never in memory together.
    drop(doc);
    Ok(spans::otel_runs(decoded, &resources, build))
}

/// The runs of span rows decoded while the text was parsed (see [`stream`]).
pub(super) fn import_streamed(
    streamed: Streamed,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let (groups, all) = streamed.into_groups();
    if groups.is_empty() {
        return Err(no_rows());
    }
    // Each resource numbered in order of first use by the runs built, as the parsed file's are.
    let mut resources = spans::Resources::default();
    let mut at = std::collections::HashMap::new();
    let decoded: Vec<(String, Vec<Span>)> = super::pick(groups, index, "trace(s)")?
        .into_iter()
        .map(|(trace_id, mut members)| {
            for span in &mut members {
                let first = *at.entry(span.resource).or_insert_with(|| {
                    resources.intern(all.get(span.resource).cloned().unwrap_or_default())
                });
                span.resource = first;
            }
            (trace_id, members)
        })
        .collect();
    Ok(spans::otel_runs(decoded, &resources, build))
}

/// The error of a file that holds no span row.
fn no_rows() -> ImportError {
    ImportError(
        "no span rows found; each needs a string \"span_id\" (or SpanId) and a \"span_name\" (or SpanName)".to_owned(),
    )
}

/// String attribute values that hold numbers or booleans stay strings: the conventions read both.
fn attributes(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => spans::flatten(m.clone()),
        // A map exported as a list of [key, value] pairs.
        Some(Value::Array(pairs)) => pairs
            .iter()
            .filter_map(|p| {
                let k = p.get(0)?.as_str()?;
                Some((k.to_owned(), p.get(1).cloned().unwrap_or(Value::Null)))
            })
            .collect(),
        _ => Map::new(),
    }
}

fn resource_of(row: &Value) -> Map<String, Value> {
    attributes(get(row, "resource_attributes", "ResourceAttributes"))
}

fn instant(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::String(s) => spans::time::iso_ns(s).or_else(|| s.trim().parse().ok()),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn duration(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::String(s) => spans::time::iso_duration_ns(s).or_else(|| s.trim().parse().ok()),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn events(row: &Value) -> Vec<Event> {
    if let Some(Value::Array(list)) = get(row, "events", "Events") {
        return list
            .iter()
            .map(|e| Event {
                name: ["Name", "name"]
                    .iter()
                    .find_map(|k| e.get(*k).and_then(Value::as_str))
                    .unwrap_or_default()
                    .to_owned(),
                attrs: attributes(e.get("Attributes").or_else(|| e.get("attributes"))),
            })
            .collect();
    }
    // ClickHouse's nested columns: parallel arrays `Events.Name` and `Events.Attributes`.
    let names = row.get("Events.Name").and_then(Value::as_array);
    let attrs = row.get("Events.Attributes").and_then(Value::as_array);
    names
        .map(|names| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| Event {
                    name: n.as_str().unwrap_or_default().to_owned(),
                    attrs: attributes(attrs.and_then(|a| a.get(i))),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn decode_row(row: &Value, trace_id: &str, resource: usize) -> Span {
    let start = instant(get(row, "timestamp", "Timestamp"));
    let end = start.and_then(|s| s.checked_add(duration(get(row, "duration", "Duration"))?));
    Span {
        trace_id: trace_id.to_owned(),
        span_id: text(row, "span_id", "SpanId")
            .unwrap_or_default()
            .to_owned(),
        parent_id: text(row, "parent_span_id", "ParentSpanId")
            .filter(|p| !p.is_empty())
            .map(str::to_owned),
        name: text(row, "span_name", "SpanName")
            .unwrap_or_default()
            .to_owned(),
        kind: get(row, "span_kind", "SpanKind").and_then(super::otlp::span_kind),
        start_ns: start,
        end_ns: end,
        attrs: attributes(get(row, "span_attributes", "SpanAttributes")),
        events: events(row),
        status: get(row, "status_code", "StatusCode")
            .map(StatusCode::parse)
            .unwrap_or_default(),
        status_message: text(row, "status_message", "StatusMessage").and_then(chat::non_empty),
        resource,
        ..Span::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trail() -> Value {
        let tool = json!({
            "span_id": "fd871324491694f9", "parent_span_id": "7f47c0907a322703",
            "span_name": "PageDownTool", "span_kind": "Internal",
            "span_attributes": {"openinference.span.kind": "TOOL", "tool.name": "page_down",
                "input.value": "{\"args\": [], \"sanitize_inputs_outputs\": true, \"kwargs\": {\"\": \"\"}}"},
            "timestamp": "2025-03-19T16:50:39.565546Z", "duration": "PT0.000052S",
            "status_code": "Error", "status_message": "TypeError: unexpected keyword ''",
            "events": [{"Timestamp": "2025-03-19T16:50:39.565600Z", "Name": "exception",
                "Attributes": {"exception.type": "TypeError", "exception.message": "unexpected keyword ''"}}],
            "child_spans": []});
        let agent = json!({
            "span_id": "7f47c0907a322703", "parent_span_id": "17315dcfc7b1a479",
            "span_name": "CodeAgent.run", "span_kind": "Internal",
            "span_attributes": {"openinference.span.kind": "AGENT",
                "input.value": "{\"task\": \"Name the actor.\"}", "output.value": "Marek"},
            "timestamp": "2025-03-19T16:49:39.732775Z", "duration": "PT59.8S",
            "status_code": "Error", "status_message": "AgentError: step failed",
            "events": [], "child_spans": [tool]});
        let root = json!({
            "span_id": "17315dcfc7b1a479", "parent_span_id": null, "span_name": "main",
            "span_kind": "Internal", "span_attributes": {}, "resource_attributes": {"service.name": "x"},
            "timestamp": "2025-03-19T16:49:39.285437Z", "duration": "PT1M3.851932S",
            "status_code": "Unset", "status_message": "", "events": [],
            "child_spans": [agent]});
        json!({"trace_id": "f39aec9b8a61fd2aaed5849cc00bc165", "spans": [root]})
    }

    #[test]
    fn a_patronus_export_is_sniffed_and_its_nested_spans_become_steps_by_span_id() {
        let doc = Document::One(trail());
        assert!(SpanRows.sniff(&doc));
        assert_eq!(SpanRows.count(&doc), 1);
        let runs = SpanRows.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(run["id"], "f39aec9b8a61fd2aaed5849cc00bc165");
        let steps = run["steps"].as_array().cloned().unwrap_or_default();
        let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
        assert_eq!(
            ids,
            ["17315dcfc7b1a479", "7f47c0907a322703", "fd871324491694f9"]
        );
        assert_eq!(steps[1]["parent"], "17315dcfc7b1a479");
        assert_eq!(steps[1]["container"], true);
        assert_eq!(steps[1]["kind"], "agent");
        assert_eq!(steps[2]["tool"]["name"], "page_down");
        assert_eq!(steps[2]["tool"]["arguments"], json!({"": ""}));
        assert_eq!(steps[2]["error"], "TypeError: unexpected keyword ''");
        // 2025-03-19T16:50:39.565546Z plus 52 microseconds, in milliseconds.
        assert_eq!(steps[2]["started_at"], 1_742_403_039_565_i64);
        assert_eq!(steps[0]["ended_at"], 1_742_403_043_137_i64);
        assert_eq!(run["task"], "Name the actor.");
        assert_eq!(run["final_answer"], "Marek");
    }

    #[test]
    fn clickhouse_rows_group_by_trace_and_read_nanosecond_durations() {
        let row = |trace: &str, id: &str, parent: &str| {
            json!({"Timestamp": "2024-05-01 10:00:00.000000000", "TraceId": trace, "SpanId": id,
                "ParentSpanId": parent, "SpanName": "chat", "SpanKind": "SPAN_KIND_CLIENT",
                "SpanAttributes": {"gen_ai.operation.name": "chat"}, "Duration": 1500000,
                "StatusCode": "STATUS_CODE_ERROR", "StatusMessage": "rate limited",
                "Events.Name": ["exception"], "Events.Attributes": [{"exception.type": "RateLimit"}]})
        };
        let doc = Document::Lines(vec![
            row("t2", "a", ""),
            row("t1", "b", ""),
            row("t2", "c", "a"),
        ]);
        assert!(SpanRows.sniff(&doc));
        assert_eq!(SpanRows.count(&doc), 2);
        let runs = SpanRows.import(doc, Some(0)).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(run["id"], "t2");
        assert_eq!(run["steps"][1]["parent"], "a");
        assert_eq!(run["steps"][0]["kind"], "llm");
        assert_eq!(run["steps"][0]["error"], "rate limited");
        assert_eq!(
            run["steps"][0]["ended_at"]
                .as_i64()
                .zip(run["steps"][0]["started_at"].as_i64())
                .map(|(e, s)| e - s),
            Some(1)
        );
        assert_eq!(
            run["steps"][0]["attributes"]["otel.events"][0]["name"],
            "exception"
        );
    }

    #[test]
    fn other_shapes_are_not_span_rows() {
        assert!(!SpanRows.sniff(&Document::One(
            json!({"spans": [{"name": "x", "context": {}}]})
        )));
        assert!(!SpanRows.sniff(&Document::One(json!([{"role": "user", "content": "hi"}]))));
        assert!(!SpanRows.sniff(&Document::One(json!({"resourceSpans": []}))));
    }
}
