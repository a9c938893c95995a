//! Spans written as one JSON object each, with a `context` holding the ids: what Phoenix's client
//! and REST API return (`name`, `context.trace_id` / `span_id`, `parent_id`, `span_kind`,
//! `start_time`, `end_time`, `status_code`, `status_message`, `attributes`, `events`) and what the
//! OpenTelemetry SDK's console exporter prints (`span.to_json()`: the same ids, `kind`, `status:
//! {status_code, description}`, `resource: {attributes}`). Shared by the `phoenix` and
//! `otel_console` importers.
//!
//! The spans may come as an array, an object of arrays (Phoenix fixtures keyed by name), `{"data":
//! [...]}` (Phoenix's REST API), `{"traces": [{"trace_id", "spans": [...]}]}` (spans regrouped by
//! trace), or one object per span, several in a row. Pure; never panics.

use super::built::Build;
use super::spans::{self, Event, Resources, Span, StatusCode};
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat};
use crate::analysis::document::Document;
use serde_json::{Map, Value};

/// An importer of this family (`phoenix`, `otel_console`): they read the same spans and differ
/// only in how they are told apart, Phoenix's spans carrying `span_kind` and the console
/// exporter's not.
pub struct SpanJson {
    /// The format it reads.
    pub format: SourceFormat,
    /// Whether its spans carry `span_kind`.
    pub span_kind: bool,
    /// What it looks for, for the error that names every format.
    pub looks_for: &'static str,
}

impl Importer for SpanJson {
    fn format(&self) -> SourceFormat {
        self.format
    }

    fn looks_for(&self) -> &'static str {
        self.looks_for
    }

    fn sniff(&self, doc: &Document) -> bool {
        first_span(doc).is_some_and(|s| s.get("span_kind").is_some() == self.span_kind)
    }

    fn count(&self, doc: &Document) -> usize {
        count(doc)
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        import_into(&doc, index, Build::Json)
    }
}

/// True for one span of this family: a `context` object with a `span_id`, and a `name`.
pub fn is_span(v: &Value) -> bool {
    v.get("context")
        .and_then(|c| c.get("span_id"))
        .is_some_and(|s| s.is_string())
        && v.get("name").is_some_and(Value::is_string)
}

/// Every span-like value of the document, in file order.
pub fn raw_spans(doc: &Document) -> Vec<&Value> {
    let mut out = Vec::new();
    for v in doc.values() {
        collect(v, &mut out);
    }
    out
}

fn collect<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Array(items) => out.extend(items.iter().filter(|s| is_span(s))),
        Value::Object(_) if is_span(v) => out.push(v),
        Value::Object(o) => {
            if let Some(Value::Array(traces)) = o.get("traces") {
                for t in traces {
                    if let Some(Value::Array(s)) = t.get("spans") {
                        out.extend(s.iter().filter(|s| is_span(s)));
                    }
                }
            } else if let Some(Value::Array(data)) = o.get("data") {
                out.extend(data.iter().filter(|s| is_span(s)));
            } else {
                // An object of lists of spans (named sets of traces).
                for list in o.values() {
                    if let Value::Array(items) = list {
                        out.extend(items.iter().filter(|s| is_span(s)));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The first span of the document, for sniffing.
pub fn first_span(doc: &Document) -> Option<&Value> {
    for v in doc.values() {
        let mut found = Vec::new();
        collect(v, &mut found);
        if let Some(first) = found.first() {
            return Some(first);
        }
    }
    None
}

/// An id as written, without the `0x` the Python SDK puts before hex ids.
fn id(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    (!s.is_empty()).then(|| s.to_owned())
}

/// An instant: ISO 8601 text, or a number of Unix nanoseconds (seconds when it is small enough
/// to be seconds, as `time.time()` writes them).
fn instant(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::String(s) => spans::time::iso_ns(s),
        Value::Number(n) => match n.as_u64() {
            Some(ns) if ns > 100_000_000_000_000_000 => Some(ns),
            _ => n
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f < 1.0e10)
                .map(|secs| (secs * 1.0e9) as u64),
        },
        _ => None,
    }
}

/// Decodes one span. The Phoenix `span_kind` becomes `openinference.span.kind` when the
/// attributes do not carry it; nested attribute objects are flattened to dotted keys.
pub fn decode(v: &Value, resources: &mut Resources) -> Span {
    let ctx = v.get("context");
    let mut attrs = match v.get("attributes") {
        Some(Value::Object(m)) => spans::flatten(m.clone()),
        _ => Map::new(),
    };
    if let Some(kind) = v.get("span_kind").and_then(Value::as_str)
        && !attrs.contains_key("openinference.span.kind")
    {
        attrs.insert(
            "openinference.span.kind".to_owned(),
            Value::String(kind.to_owned()),
        );
    }
    let status = v.get("status");
    let status_code = v
        .get("status_code")
        .or_else(|| status.and_then(|s| s.get("status_code")))
        .map(StatusCode::parse)
        .unwrap_or_default();
    let status_message = v
        .get("status_message")
        .or_else(|| status.and_then(|s| s.get("description")))
        .and_then(Value::as_str)
        .and_then(chat::non_empty);
    let events = v
        .get("events")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|e| Event {
                    name: e
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    attrs: match e.get("attributes") {
                        Some(Value::Object(m)) => m.clone(),
                        _ => Map::new(),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    let resource = match v.get("resource").and_then(|r| r.get("attributes")) {
        Some(Value::Object(m)) => resources.intern(m.clone()),
        _ => resources.intern(Map::new()),
    };
    Span {
        trace_id: id(ctx.and_then(|c| c.get("trace_id"))).unwrap_or_default(),
        span_id: id(ctx.and_then(|c| c.get("span_id"))).unwrap_or_default(),
        parent_id: id(v.get("parent_id")),
        name: v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        kind: v.get("kind").and_then(super::otlp::span_kind),
        start_ns: instant(v.get("start_time")),
        end_ns: instant(v.get("end_time")),
        attrs,
        events,
        status: status_code,
        status_message,
        resource,
        ..Span::default()
    }
}

/// Decoded spans grouped by trace id, traces in order of first appearance.
pub fn traces(doc: &Document) -> (Vec<(String, Vec<Span>)>, Resources) {
    let mut resources = Resources::default();
    let groups = spans::by_trace(raw_spans(doc).into_iter().map(|raw| {
        let span = decode(raw, &mut resources);
        (span.trace_id.clone(), span)
    }));
    (groups, resources)
}

/// How many traces the document holds.
pub fn count(doc: &Document) -> usize {
    let mut seen = std::collections::HashSet::new();
    for raw in raw_spans(doc) {
        seen.insert(id(raw.get("context").and_then(|c| c.get("trace_id"))).unwrap_or_default());
    }
    seen.len()
}

/// The runs of the document (only the `index` one when given). Both formats write OpenTelemetry
/// ids, so ids that are not are warned about.
pub(crate) fn import_into(
    doc: &Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let (groups, resources) = traces(doc);
    if groups.is_empty() {
        return Err(ImportError(
            "no spans found; each span needs a \"name\" and a \"context\" with a string \"span_id\""
                .to_owned(),
        ));
    }
    let picked = super::pick(groups, index, "trace(s)")?;
    Ok(spans::otel_runs(picked, &resources, build))
}
