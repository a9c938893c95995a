//! Jaeger's trace JSON: what the Jaeger UI's "Download JSON" and its query API (`GET
//! /api/traces/{id}`, `/api/traces?service=...`) give, `{"data": [trace, ...]}`, or one trace, or
//! a list of them. A trace is `{"traceID", "spans": [...], "processes": {id: {"serviceName",
//! "tags"}}}`; a span is `{"traceID", "spanID", "operationName", "references": [{"refType":
//! "CHILD_OF", "spanID"}], "startTime", "duration"` (both in microseconds), `"tags": [{"key",
//! "type", "value"}], "logs": [{"timestamp", "fields": [...]}], "processID"}`. OpenTelemetry
//! spans stored in Jaeger keep their attributes as tags, their status as `otel.status_code` /
//! `otel.status_description` (or `error: true`), their kind as `span.kind` and their events as
//! logs (`event` names them). One run per trace id; each span is read by the shared span reader.
//! Pure; never panics.

use super::built::Build;
use super::chat::text_at as text;
use super::spans::{self, Event, Resources, Span, StatusCode};
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat};
use crate::analysis::document::Document;
use serde_json::{Map, Value};

/// The Jaeger importer.
pub struct Jaeger;

impl Importer for Jaeger {
    fn format(&self) -> SourceFormat {
        SourceFormat::Jaeger
    }

    fn looks_for(&self) -> &'static str {
        "Jaeger traces: {\"data\": [{\"traceID\", \"spans\": [{\"spanID\", \"operationName\", \"tags\"}]}]}, one trace, or a list of them"
    }

    fn sniff(&self, doc: &Document) -> bool {
        traces_of(doc)
            .first()
            .and_then(|t| t.get("spans"))
            .and_then(Value::as_array)
            .and_then(|s| s.first())
            .is_some_and(is_span)
    }

    fn count(&self, doc: &Document) -> usize {
        let mut seen = std::collections::HashSet::new();
        for (trace, span) in raw_spans(doc) {
            seen.insert(trace_id(trace, span));
        }
        seen.len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        import_into(&doc, index, Build::Json)
    }
}

/// A Jaeger span: a `spanID` and an `operationName`, both strings.
fn is_span(v: &Value) -> bool {
    v.get("spanID").is_some_and(Value::is_string)
        && v.get("operationName").is_some_and(Value::is_string)
}

/// A Jaeger trace: `spans`, a list.
fn is_trace(v: &Value) -> bool {
    v.get("spans").is_some_and(Value::is_array)
}

/// The trace objects of the document: `{"data": [...]}`, one trace, or a list of traces.
fn traces_of(doc: &Document) -> Vec<&Value> {
    let mut out = Vec::new();
    for v in doc.values() {
        match v {
            Value::Object(o) => match o.get("data") {
                Some(Value::Array(list)) => out.extend(list.iter().filter(|t| is_trace(t))),
                _ if is_trace(v) => out.push(v),
                _ => {}
            },
            Value::Array(list) => out.extend(list.iter().filter(|t| is_trace(t))),
            _ => {}
        }
    }
    out
}

/// Every span of the document with the trace it came in, in file order.
fn raw_spans(doc: &Document) -> Vec<(&Value, &Value)> {
    let mut out = Vec::new();
    for t in traces_of(doc) {
        if let Some(Value::Array(list)) = t.get("spans") {
            out.extend(list.iter().filter(|s| is_span(s)).map(|s| (t, s)));
        }
    }
    out
}

/// A span's trace id: its own `traceID`, else its trace's ("" when neither has one).
fn trace_id<'a>(trace: &'a Value, span: &'a Value) -> &'a str {
    text(span, "traceID")
        .or_else(|| text(trace, "traceID"))
        .unwrap_or_default()
}

/// A list of `{"key", "type", "value"}` tags as attributes (the last of two equal keys wins).
fn tags(v: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for t in v.and_then(Value::as_array).into_iter().flatten() {
        if let (Some(k), Some(value)) = (text(t, "key"), t.get("value")) {
            out.insert(k.to_owned(), value.clone());
        }
    }
    out
}

/// Microseconds since the Unix epoch as nanoseconds.
fn micros(v: Option<&Value>) -> Option<u64> {
    v?.as_u64()?.checked_mul(1_000)
}

/// The span it is a child of: the first `CHILD_OF` reference, else the first of any kind
/// (`FOLLOWS_FROM`).
fn parent(span: &Value) -> Option<String> {
    let refs = span.get("references").and_then(Value::as_array)?;
    let child_of = refs
        .iter()
        .find(|r| r.get("refType").and_then(Value::as_str) == Some("CHILD_OF"));
    child_of
        .or_else(|| refs.first())
        .and_then(|r| text(r, "spanID"))
        .map(str::to_owned)
}

/// Decodes one span of `trace`. The tags Jaeger writes for OpenTelemetry's own fields become the
/// span's status and kind, and are not kept as attributes; the process's service name and tags
/// are its resource.
fn decode(trace: &Value, v: &Value, resources: &mut Resources) -> Span {
    let mut attrs = spans::flatten(tags(v.get("tags")));
    let code = attrs.remove("otel.status_code");
    let description = attrs.remove("otel.status_description");
    let error_tag = attrs.remove("error");
    let kind = attrs.remove("span.kind");
    let status = match code.as_ref().map(StatusCode::parse) {
        Some(StatusCode::Unset) | None
            if error_tag.as_ref().and_then(Value::as_bool) == Some(true) =>
        {
            StatusCode::Error
        }
        Some(c) => c,
        None => StatusCode::Unset,
    };
    let events = v
        .get("logs")
        .and_then(Value::as_array)
        .map(|logs| {
            logs.iter()
                .map(|log| {
                    let mut fields = tags(log.get("fields"));
                    let name = match fields.remove("event") {
                        Some(Value::String(s)) => s,
                        _ => String::new(),
                    };
                    Event {
                        name,
                        attrs: fields,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let process =
        text(v, "processID").and_then(|p| trace.get("processes").and_then(|ps| ps.get(p)));
    let mut resource = tags(process.and_then(|p| p.get("tags")));
    if let Some(service) = process.and_then(|p| text(p, "serviceName")) {
        resource.insert("service.name".to_owned(), Value::String(service.to_owned()));
    }
    let start_ns = micros(v.get("startTime"));
    Span {
        trace_id: trace_id(trace, v).to_owned(),
        span_id: text(v, "spanID").unwrap_or_default().to_owned(),
        parent_id: parent(v),
        name: text(v, "operationName").unwrap_or_default().to_owned(),
        kind: kind.as_ref().and_then(super::otlp::span_kind),
        start_ns,
        end_ns: start_ns.and_then(|s| s.checked_add(micros(v.get("duration"))?)),
        attrs,
        events,
        status,
        status_message: description
            .as_ref()
            .and_then(Value::as_str)
            .and_then(chat::non_empty),
        resource: resources.intern(resource),
        ..Span::default()
    }
}

/// The runs of the document (only the `index` one when given), one per trace id.
pub(crate) fn import_into(
    doc: &Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let mut resources = Resources::default();
    let groups = spans::by_trace(raw_spans(doc).into_iter().map(|(trace, raw)| {
        let span = decode(trace, raw, &mut resources);
        (span.trace_id.clone(), span)
    }));
    if groups.is_empty() {
        return Err(ImportError(
            "no spans found; Jaeger lists them under data, then each trace's spans, each with a \"spanID\" and an \"operationName\"".to_owned(),
        ));
    }
    let picked = super::pick(groups, index, "trace(s)")?;
    Ok(spans::otel_runs(picked, &resources, build))
}

#[cfg(test)]
mod tests;
