//! The OTLP JSON wire format, decoded into the shared [`Span`]s: `resourceSpans` (or `batches`, or
//! snake_case names) → `scopeSpans` (or `instrumentationLibrarySpans`) → `spans`; attribute values
//! as `AnyValue` objects; ids in hex (base64 accepted); 64-bit integers and times as strings or
//! numbers; span kind and status code as integers or enum names.
//!
//! Decoding never fails: a field of the wrong type is treated as absent.

use crate::analysis::import::spans::{Event, Span, StatusCode};
use base64::Engine as _;
use serde_json::{Map, Value};

/// Every span of a document with its resources' attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// Spans in file order.
    pub spans: Vec<Span>,
    /// Each resource's attributes, in file order.
    pub resources: Vec<Map<String, Value>>,
    /// How many of the values read were not export requests of traces (a collector file exporter
    /// shared with a logs or metrics pipeline writes `resourceLogs` / `resourceMetrics` lines too).
    pub not_traces: usize,
}

/// The value of the first of `keys` present in an object.
pub fn get<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k))
}

fn array<'a>(v: &'a Value, keys: &[&str]) -> &'a [Value] {
    get(v, keys)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The resource-spans lists of one export request.
pub fn resource_spans(request: &Value) -> &[Value] {
    array(request, &["resourceSpans", "resource_spans", "batches"])
}

/// The scope-spans lists of one resource-spans entry.
pub fn scope_spans(rs: &Value) -> &[Value] {
    array(
        rs,
        &[
            "scopeSpans",
            "scope_spans",
            "instrumentationLibrarySpans",
            "instrumentation_library_spans",
        ],
    )
}

/// The raw spans of one scope-spans entry.
pub fn raw_spans(ss: &Value) -> &[Value] {
    array(ss, &["spans"])
}

/// True when the value is an export request (an object with a resource-spans list).
pub fn is_request(v: &Value) -> bool {
    get(v, &["resourceSpans", "resource_spans", "batches"]).is_some_and(Value::is_array)
}

/// The spans of one resource-spans entry, with the resource's attributes: what the streaming
/// reader (`stream.rs`) and [`decode`] both make of an entry, whichever way they walked to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceSpans {
    /// The resource's attributes, decoded.
    pub attrs: Map<String, Value>,
    /// Its spans in file order, their `resource` not yet set.
    pub spans: Vec<Span>,
}

impl Decoded {
    /// Adds one resource-spans entry: a resource of its own (even when it has no attributes or
    /// no spans, as every entry is one), its spans pointing at it.
    pub fn push(&mut self, rs: ResourceSpans) {
        let resource = self.resources.len();
        self.resources.push(rs.attrs);
        self.spans.extend(rs.spans.into_iter().map(|mut s| {
            s.resource = resource;
            s
        }));
    }
}

/// Decodes the spans of several export requests, in order, taking each value apart (the parsed
/// file is not held beside the spans it became).
pub fn decode(requests: Vec<Value>) -> Decoded {
    let mut out = Decoded::default();
    for request in requests {
        if !is_request(&request) {
            out.not_traces += 1;
            continue;
        }
        let Value::Object(mut request) = request else {
            continue;
        };
        for rs in take_array(
            &mut request,
            &["resourceSpans", "resource_spans", "batches"],
        ) {
            out.push(resource_spans_of(rs));
        }
    }
    out
}

/// One resource-spans entry (a value that is not an object is a resource with no spans).
fn resource_spans_of(rs: Value) -> ResourceSpans {
    let Value::Object(mut rs) = rs else {
        return ResourceSpans::default();
    };
    let attrs = rs
        .remove("resource")
        .map(resource_attributes)
        .unwrap_or_default();
    let mut spans = Vec::new();
    for ss in take_array(&mut rs, &SCOPE_SPANS) {
        let Value::Object(mut ss) = ss else { continue };
        spans.extend(
            take_array(&mut ss, &["spans"])
                .into_iter()
                .filter_map(span_of),
        );
    }
    ResourceSpans { attrs, spans }
}

/// The names a resource-spans entry gives its scope-spans list, the first present one read.
pub const SCOPE_SPANS: [&str; 4] = [
    "scopeSpans",
    "scope_spans",
    "instrumentationLibrarySpans",
    "instrumentation_library_spans",
];

/// A resource's attributes (`{attributes: [...]}`).
pub fn resource_attributes(resource: Value) -> Map<String, Value> {
    match resource {
        Value::Object(mut r) => attributes(take_array(&mut r, &["attributes"])),
        _ => Map::new(),
    }
}

/// The value of the first of `keys` present, taken out.
fn take(o: &mut Map<String, Value>, keys: &[&str]) -> Option<Value> {
    let key = keys.iter().find(|k| o.contains_key(**k))?;
    o.remove(*key)
}

/// The array under the first of `keys` present, taken out (empty when it is not an array).
fn take_array(o: &mut Map<String, Value>, keys: &[&str]) -> Vec<Value> {
    match take(o, keys) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

fn take_string(o: &mut Map<String, Value>, key: &str) -> String {
    match o.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A span of a `spans` list: `None` for an item that is not an object.
pub fn span_of(s: Value) -> Option<Span> {
    let Value::Object(mut s) = s else {
        return None;
    };
    let status = s.remove("status");
    Some(Span {
        trace_id: take(&mut s, &["traceId", "trace_id"])
            .as_ref()
            .and_then(id)
            .unwrap_or_default(),
        span_id: take(&mut s, &["spanId", "span_id"])
            .as_ref()
            .and_then(id)
            .unwrap_or_default(),
        parent_id: take(&mut s, &["parentSpanId", "parent_span_id"])
            .as_ref()
            .and_then(id),
        name: take_string(&mut s, "name"),
        kind: s.get("kind").and_then(span_kind),
        start_ns: take(&mut s, &["startTimeUnixNano", "start_time_unix_nano"])
            .as_ref()
            .and_then(nanos),
        end_ns: take(&mut s, &["endTimeUnixNano", "end_time_unix_nano"])
            .as_ref()
            .and_then(nanos),
        attrs: attributes(take_array(&mut s, &["attributes"])),
        events: take_array(&mut s, &["events"])
            .into_iter()
            .map(|e| match e {
                Value::Object(mut e) => Event {
                    name: take_string(&mut e, "name"),
                    attrs: attributes(take_array(&mut e, &["attributes"])),
                },
                _ => Event::default(),
            })
            .collect(),
        status: status
            .as_ref()
            .and_then(|st| st.get("code"))
            .map(StatusCode::parse)
            .unwrap_or_default(),
        status_message: status
            .as_ref()
            .and_then(|st| st.get("message"))
            .and_then(Value::as_str)
            .and_then(super::super::chat::non_empty),
        ..Span::default()
    })
}

/// `[{key, value: AnyValue}]` → a map of decoded values.
pub fn attributes(list: Vec<Value>) -> Map<String, Value> {
    let mut m = Map::new();
    for kv in list {
        let Value::Object(mut kv) = kv else { continue };
        if let Some(Value::String(k)) = kv.remove("key") {
            let v = kv.remove("value").map(any_value).unwrap_or(Value::Null);
            m.insert(k, v);
        }
    }
    m
}

/// An OTLP `AnyValue` as plain JSON. A value that is not an `AnyValue` object is kept as it is.
pub fn any_value(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return v;
    };
    let mut pick = |a: &str, b: &str| o.remove(a).or_else(|| o.remove(b));
    if let Some(s) = pick("stringValue", "string_value") {
        return s;
    }
    if let Some(b) = pick("boolValue", "bool_value") {
        return b;
    }
    if let Some(i) = pick("intValue", "int_value") {
        return match i {
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(s),
            },
            other => other,
        };
    }
    if let Some(d) = pick("doubleValue", "double_value") {
        return match d {
            Value::String(s) => match s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => Value::String(s),
            },
            other => other,
        };
    }
    if let Some(a) = pick("arrayValue", "array_value") {
        let values = match a {
            Value::Object(mut a) => take_array(&mut a, &["values"]),
            _ => Vec::new(),
        };
        return Value::Array(values.into_iter().map(any_value).collect());
    }
    if let Some(kv) = pick("kvlistValue", "kvlist_value") {
        let values = match kv {
            Value::Object(mut kv) => take_array(&mut kv, &["values"]),
            _ => Vec::new(),
        };
        return Value::Object(attributes(values));
    }
    if let Some(b) = pick("bytesValue", "bytes_value") {
        return b;
    }
    Value::Null
}

/// A span or trace id as lowercase hex: hex is kept, base64 (the protobuf JSON mapping) is
/// decoded; anything else is kept as written. `None` for empty or all-zero ids.
pub fn id(v: &Value) -> Option<String> {
    let s = v.as_str()?.trim();
    if s.is_empty() {
        return None;
    }
    let hex = if s.len() % 2 == 0 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        s.to_ascii_lowercase()
    } else if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s)
        && matches!(bytes.len(), 8 | 16)
    {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    } else {
        s.to_owned()
    };
    (!hex.bytes().all(|b| b == b'0')).then_some(hex)
}

/// Unix nanoseconds from a number or a string holding one.
pub fn nanos(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A span kind as an integer (`1` to `5`) or a name ending in one (`SPAN_KIND_CLIENT`,
/// `SpanKind.INTERNAL`, `Internal`).
pub fn span_kind(v: &Value) -> Option<&'static str> {
    const NAMES: [&str; 5] = ["internal", "server", "client", "producer", "consumer"];
    match v {
        Value::Number(n) => {
            let i = usize::try_from(n.as_u64()?).ok()?;
            NAMES.get(i.checked_sub(1)?).copied()
        }
        Value::String(s) => {
            let lower = s.to_ascii_lowercase();
            NAMES.into_iter().find(|k| lower.ends_with(k))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_values_decode_to_plain_json() {
        assert_eq!(any_value(json!({"stringValue": "x"})), json!("x"));
        assert_eq!(
            any_value(json!({"intValue": "9007199254740993"})),
            json!(9007199254740993_i64)
        );
        assert_eq!(any_value(json!({"intValue": 12})), json!(12));
        assert_eq!(any_value(json!({"doubleValue": "0.5"})), json!(0.5));
        assert_eq!(any_value(json!({"bool_value": true})), json!(true));
        assert_eq!(
            any_value(json!({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}})),
            json!(["a", 1])
        );
        assert_eq!(
            any_value(
                json!({"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": false}}]}})
            ),
            json!({"k": false})
        );
        assert_eq!(any_value(json!({})), Value::Null);
    }

    #[test]
    fn ids_are_hex_whether_written_in_hex_or_base64() {
        assert_eq!(
            id(&json!("5B8EFFF798038103D269B633813FC60C")).as_deref(),
            Some("5b8efff798038103d269b633813fc60c")
        );
        // base64 of the 8 bytes 01 02 03 04 05 06 07 08
        assert_eq!(
            id(&json!("AQIDBAUGBwg=")).as_deref(),
            Some("0102030405060708")
        );
        assert_eq!(id(&json!("")), None);
        assert_eq!(id(&json!("0000000000000000")), None);
        assert_eq!(id(&json!(5)), None);
    }

    #[test]
    fn enums_and_times_read_as_integers_or_names() {
        assert_eq!(span_kind(&json!(3)), Some("client"));
        assert_eq!(span_kind(&json!("SPAN_KIND_INTERNAL")), Some("internal"));
        assert_eq!(span_kind(&json!(0)), None);
        assert_eq!(StatusCode::parse(&json!(2)), StatusCode::Error);
        assert_eq!(StatusCode::parse(&json!("STATUS_CODE_OK")), StatusCode::Ok);
        assert_eq!(
            nanos(&json!("1700000000000000000")),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(nanos(&json!(-1)), None);
    }
}
