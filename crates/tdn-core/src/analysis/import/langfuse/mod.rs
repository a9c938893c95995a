//! Langfuse traces: a trace with its `observations` (what `GET /api/public/traces/{id}` returns),
//! `{"trace": {...}, "observations": [...]}`, or a bare list of observations (an array, or
//! `{"data": [...]}` as `GET /api/public/observations` returns; one run per `traceId`, in order of
//! first appearance), or `{"traces": [...], "observations": [...]}` (the traces and their
//! observations side by side, one run per `traceId`, each with the trace of that id). One step per
//! observation, a parent (`parentObservationId`) before its children, siblings by `startTime`.
//!
//! Pure: no I/O, no panic on any input. Inputs and outputs that are strings holding JSON are
//! parsed.

use super::built::Build;
use super::chat::text_at;
use super::spans::{self, Parts, Span, StatusCode};
use super::{
    ImportError, ImportedRun, Importer, SourceFormat, chat, decode, keep_fields, outcome, run_text,
};
use crate::analysis::document::Document;
use serde_json::{Map, Value};
use std::collections::HashMap;

mod stream;

pub(super) use stream::{Streamed, decode_text};

/// The Langfuse importer.
pub struct Langfuse;

const TYPES: &[&str] = &[
    "GENERATION",
    "SPAN",
    "EVENT",
    "TOOL",
    "RETRIEVER",
    "AGENT",
    "CHAIN",
    "EMBEDDING",
    "EVALUATOR",
    "GUARDRAIL",
];

fn is_observation(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TYPES.contains(&t))
        && (v.get("traceId").is_some() || v.get("startTime").is_some())
}

type RunParts<'a> = (Option<&'a Value>, Vec<&'a Value>);

/// Observations grouped by `traceId`, in order of first appearance.
fn bare(list: &[Value]) -> Vec<RunParts<'_>> {
    let observations = list.iter().filter(|o| looks_like_observation(o)).map(|o| {
        let t = o.get("traceId").and_then(Value::as_str).unwrap_or_default();
        (t, o)
    });
    spans::by_trace(observations)
        .into_iter()
        .map(|(_, members)| (None, members))
        .collect()
}

/// Lenient for types this version does not know: a string `type` and a `traceId` or `startTime`.
fn looks_like_observation(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string)
        && (v.get("traceId").is_some() || v.get("startTime").is_some())
}

/// The list of trace objects of a `{"traces": [...], "observations": [...]}` file: an object with
/// no trace of its own (no `trace` object, no `id`).
fn listed_traces(o: &Map<String, Value>) -> Option<&[Value]> {
    if o.get("trace").is_some_and(Value::is_object) || o.contains_key("id") {
        return None;
    }
    o.get("traces").and_then(Value::as_array).map(Vec::as_slice)
}

/// The trace objects of `traces` by their `id` (the first of an id).
fn traces_by_id(traces: &[Value]) -> HashMap<&str, &Value> {
    let mut by_id = HashMap::new();
    for t in traces {
        if let Some(id) = text_at(t, "id") {
            by_id.entry(id).or_insert(t);
        }
    }
    by_id
}

/// The runs of a document: `(trace, observations)`, the trace absent for bare observation lists.
fn runs(doc: &Document) -> Vec<RunParts<'_>> {
    let Document::One(v) = doc else {
        return Vec::new();
    };
    match v {
        Value::Array(list) => bare(list),
        Value::Object(o) => {
            let observations = o.get("observations").and_then(Value::as_array);
            if let (Some(list), Some(traces)) = (observations, listed_traces(o)) {
                let by_id = traces_by_id(traces);
                let trace_of = |members: &[&Value]| {
                    let id = members.first().and_then(|m| text_at(m, "traceId"))?;
                    by_id.get(id).copied()
                };
                bare(list)
                    .into_iter()
                    .map(|(_, members)| (trace_of(&members), members))
                    .collect()
            } else if let Some(list) = observations {
                let trace = o.get("trace").filter(|t| t.is_object()).unwrap_or(v);
                vec![(Some(trace), list.iter().filter(|x| x.is_object()).collect())]
            } else if let Some(list) = o.get("data").and_then(Value::as_array) {
                bare(list)
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

impl Importer for Langfuse {
    fn format(&self) -> SourceFormat {
        SourceFormat::Langfuse
    }

    fn looks_for(&self) -> &'static str {
        "{\"trace\", \"observations\": [...]}, {\"traces\": [...], \"observations\": [...]} or a list of observations (type GENERATION, SPAN, ... with traceId or startTime), also under \"data\""
    }

    fn sniff(&self, doc: &Document) -> bool {
        let Document::One(v) = doc else { return false };
        match v {
            Value::Array(list) => list.first().is_some_and(is_observation),
            Value::Object(o) => match o.get("observations").and_then(Value::as_array) {
                Some(list) => {
                    list.first().is_none_or(is_observation)
                        && (o.contains_key("trace")
                            || o.contains_key("id")
                            || o.get("traces").is_some_and(Value::is_array))
                }
                None => o
                    .get("data")
                    .and_then(Value::as_array)
                    .and_then(|l| l.first())
                    .is_some_and(is_observation),
            },
            _ => false,
        }
    }

    fn count(&self, doc: &Document) -> usize {
        runs(doc).len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        import_into(doc, index, Build::Json)
    }
}

/// [`Langfuse`]'s import, the steps built where `build` says.
pub(super) fn import_into(
    doc: Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let all = runs(&doc);
    let n = all.len();
    if n == 0 {
        return Err(ImportError(
            "no Langfuse trace or observations found".to_owned(),
        ));
    }
    let decoded: Vec<Decoded> = super::pick(all, index, "trace(s)")?
        .into_iter()
        .map(|(trace, obs)| decode(trace, &obs))
        .collect();
    // Every observation is decoded into owned values: the parsed file is freed before the
    // runs are built, so it and the runs are never in memory together.
    drop(doc);
    Ok(decoded.into_iter().map(|d| build_run(d, build)).collect())
}

/// The runs of a Langfuse file decoded while its text was parsed (see [`stream`]).
pub(super) fn import_streamed(
    streamed: Streamed,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let decoded = super::pick(streamed.into_decoded()?, index, "trace(s)")?;
    Ok(decoded.into_iter().map(|d| build_run(d, build)).collect())
}

fn nanos(v: &Value, key: &str) -> Option<u64> {
    text_at(v, key).and_then(spans::time::iso_ns)
}

/// An observation's metadata as an object (Langfuse stores it as an object or as a string
/// holding one).
fn metadata(o: &Value) -> Map<String, Value> {
    match o.get("metadata").cloned().map(chat::json_or_string) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A LangChain tool result (`{"type": "tool", "name", "tool_call_id", ...}`, or its serialised
/// `ToolMessage`): the output of a tool run recorded by Langfuse's LangChain callback as a plain
/// `SPAN`.
fn tool_message_name(output: &Value) -> Option<String> {
    let unwrapped = decode::unwrap_lc(output).map(Value::Object);
    let message = unwrapped.as_ref().unwrap_or(output);
    let o = message.as_object()?;
    (chat::message_role(message) == Some("tool") && o.contains_key("tool_call_id"))
        .then(|| {
            o.get("name")
                .and_then(Value::as_str)
                .and_then(chat::non_empty)
        })
        .flatten()
}

/// What an observation cost in dollars as Langfuse records it: `costDetails.total`, else
/// `calculatedTotalCost` (the API), `totalCost` (UI exports), else `inputCost` + `outputCost`.
/// Langfuse writes a total of 0 when it knows no price for the model: a zero total is a cost
/// only when `costDetails` holds the parts it was added up from.
fn recorded_cost(o: &Value) -> Option<f64> {
    let details = o.get("costDetails");
    let priced = details
        .and_then(Value::as_object)
        .is_some_and(|d| !d.is_empty());
    let at = |k: &str| {
        o.get(k)
            .and_then(chat::cost)
            .filter(|&c| c != 0.0 || priced)
    };
    details
        .and_then(|d| d.get("total"))
        .and_then(chat::cost)
        .or_else(|| at("calculatedTotalCost"))
        .or_else(|| at("totalCost"))
        .or_else(|| match (at("inputCost"), at("outputCost")) {
            (None, None) => None,
            (i, out) => Some(i.unwrap_or(0.0) + out.unwrap_or(0.0)),
        })
}

/// One observation as a shared span. The OpenTelemetry attributes Langfuse keeps in
/// `metadata.attributes` are read by the conventions; the observation's own `input`, `output`,
/// `usage` and `model` fill what they leave.
fn span(o: &Value, resources: &mut Vec<Map<String, Value>>) -> Span {
    let t = text_at(o, "type").unwrap_or("EVENT");
    // The kind the type states and whether it wraps others (see `spans::observation_class`).
    let stated = spans::observation_class(t);
    let mut hint = stated.map(|c| c.kind);
    let wrapper = stated.is_some_and(|c| c.wrapper);
    let mut meta = metadata(o);
    let attrs = match meta.remove("attributes").map(chat::json_or_string) {
        Some(Value::Object(a)) => spans::flatten(a),
        _ => Map::new(),
    };
    let resource = match meta.remove("resourceAttributes") {
        Some(Value::Object(r)) => {
            resources.push(r);
            resources.len() - 1
        }
        _ => 0,
    };
    meta.remove("scope");
    let input = o
        .get("input")
        .filter(|v| !v.is_null())
        .cloned()
        .map(chat::json_or_string);
    let output = o
        .get("output")
        .filter(|v| !v.is_null())
        .cloned()
        .map(chat::json_or_string);
    let name = text_at(o, "name").unwrap_or_default().to_owned();
    let mut given = Parts::default();
    let tool_name = if hint == Some("tool") {
        chat::non_empty(&name)
    } else if hint.is_none() {
        let from_result = output.as_ref().and_then(tool_message_name);
        if from_result.is_some() {
            hint = Some("tool");
        }
        from_result
    } else {
        None
    };
    if let Some(tool_name) = tool_name {
        let arguments = input.clone().map(chat::call_arguments);
        given.tool = Some(chat::tool_call(tool_name, arguments, None));
    }
    if hint == Some("retrieval") {
        given.documents = output.as_ref().and_then(documents);
    }
    given.output = match (hint, output) {
        (Some("llm"), Some(out)) => Some(chat::output_from_messages(&out).unwrap_or(out)),
        (_, out) => out,
    };
    given.input = input;
    if t == "AGENT" {
        given.agent = chat::non_empty(&name);
    }
    given.model = text_at(o, "model").map(str::to_owned);
    let u = o.get("usageDetails").or_else(|| o.get("usage"));
    // The counts as `usageDetails` (or the older `usage`) holds them, else the observation's own
    // fields: `promptTokens` (older exports), `inputUsage` (the v3 API).
    let own = |keys: [&str; 2]| keys.iter().find_map(|k| o.get(*k).and_then(chat::count));
    let input_tokens = u
        .and_then(|u| u.get("input").or_else(|| u.get("promptTokens")))
        .and_then(chat::count)
        .or_else(|| own(["promptTokens", "inputUsage"]));
    let output_tokens = u
        .and_then(|u| u.get("output").or_else(|| u.get("completionTokens")))
        .and_then(chat::count)
        .or_else(|| own(["completionTokens", "outputUsage"]));
    // Langfuse gives every observation a usage, zeros on spans and events: a count of 0 on a
    // step that is not a model call measured nothing.
    let measured = hint == Some("llm")
        || [input_tokens, output_tokens]
            .iter()
            .any(|n| n.is_some_and(|n| n > 0));
    if measured {
        given.input_tokens = input_tokens;
        given.output_tokens = output_tokens;
    }
    given.cost_usd = recorded_cost(o).filter(|&c| c > 0.0 || hint == Some("llm"));
    let mut attrs = attrs;
    attrs.insert("langfuse.type".to_owned(), Value::String(t.to_owned()));
    keep_fields(
        o,
        &[
            "model",
            "modelParameters",
            "level",
            "statusMessage",
            "version",
        ],
        "langfuse",
        &mut attrs,
    );
    if !meta.is_empty() {
        attrs.insert("langfuse.metadata".to_owned(), Value::Object(meta));
    }
    let failed = text_at(o, "level") == Some("ERROR");
    Span {
        trace_id: text_at(o, "traceId").unwrap_or_default().to_owned(),
        span_id: text_at(o, "id").unwrap_or_default().to_owned(),
        parent_id: text_at(o, "parentObservationId").map(str::to_owned),
        name,
        start_ns: nanos(o, "startTime"),
        end_ns: nanos(o, "endTime"),
        attrs,
        status: if failed {
            StatusCode::Error
        } else {
            StatusCode::Unset
        },
        status_message: failed.then(|| {
            text_at(o, "statusMessage")
                .unwrap_or("the observation has level ERROR")
                .to_owned()
        }),
        resource,
        given,
        kind_hint: hint,
        wrapper_hint: wrapper,
        ..Span::default()
    }
}

/// The fields of a trace object that the run reads besides [`TRACE_ATTRIBUTES`] (the object may
/// be the whole file, with its observations, so it is not copied whole).
const TRACE_FIELDS: [&str; 5] = ["id", "name", "input", "output", "scores"];

/// The fields of a trace object the run keeps as its attributes (`langfuse.*`).
const TRACE_ATTRIBUTES: [&str; 6] = [
    "metadata",
    "tags",
    "userId",
    "sessionId",
    "release",
    "version",
];

/// One trace's observations decoded, owning everything it needs from the parsed file.
struct Decoded {
    /// The trace object's fields in [`TRACE_FIELDS`] and [`TRACE_ATTRIBUTES`], when the file has
    /// a trace object.
    trace: Option<Value>,
    trace_id: String,
    spans: Vec<Span>,
    resources: Vec<Map<String, Value>>,
}

fn decode(trace: Option<&Value>, obs: &[&Value]) -> Decoded {
    let mut resources = vec![Map::new()];
    let spans: Vec<Span> = obs.iter().map(|o| span(o, &mut resources)).collect();
    let trace_id = trace
        .and_then(|t| text_at(t, "id"))
        .or_else(|| obs.first().and_then(|o| text_at(o, "traceId")))
        .unwrap_or("trace")
        .to_owned();
    Decoded {
        trace: trace.map(kept_trace),
        trace_id,
        spans,
        resources,
    }
}

/// The fields of a trace object a run reads ([`TRACE_FIELDS`], [`TRACE_ATTRIBUTES`]), copied.
fn kept_trace(t: &Value) -> Value {
    let mut kept = Map::new();
    for key in TRACE_FIELDS.into_iter().chain(TRACE_ATTRIBUTES) {
        if let Some(x) = t.get(key) {
            kept.insert(key.to_owned(), x.clone());
        }
    }
    Value::Object(kept)
}

fn build_run(decoded: Decoded, build: Build) -> ImportedRun {
    let Decoded {
        trace,
        trace_id,
        spans: decoded,
        resources,
    } = decoded;
    let trace = trace.as_ref();
    let mut run = spans::build_run(
        &trace_id,
        decoded,
        spans::Source {
            noun: "observation",
            resources: &resources,
            hex_ids: false,
        },
        build,
    );
    let Some(t) = trace else { return run };
    let Some(r) = run.value.as_object_mut() else {
        return run;
    };
    if let Some(name) = text_at(t, "name") {
        r.insert("title".to_owned(), Value::String(name.to_owned()));
    }
    // The trace's own input and output state the task and the answer when they read as prose.
    if let Some(task) = t.get("input").and_then(run_text::task_text) {
        r.insert("task".to_owned(), Value::String(task));
    }
    if let Some(answer) = t.get("output").and_then(run_text::answer_text) {
        r.insert("final_answer".to_owned(), Value::String(answer));
        if r.get("status").and_then(Value::as_str) == Some("error") {
            // It answered: the run finished, whatever failed on the way.
            r.remove("error");
            outcome::assume_failed(r);
            run.warnings.push(spans::status_guess());
        }
    }
    // A score the trace carries that says whether the answer was right decides what nothing
    // else recorded.
    if outcome::is_assumed(r)
        && let Some(said) = t.get("scores").and_then(outcome::from_scores)
    {
        said.write(r);
        run.warnings
            .retain(|w| w.field.as_deref() != Some("status"));
    }
    let mut attributes = match r.remove("attributes") {
        Some(Value::Object(a)) => a,
        _ => Map::new(),
    };
    keep_fields(t, &TRACE_ATTRIBUTES, "langfuse", &mut attributes);
    if !attributes.is_empty() {
        r.insert("attributes".to_owned(), Value::Object(attributes));
    }
    run
}

/// A retriever's output as documents: an array (or `{documents: [...]}`) of strings or of objects
/// with `pageContent`, `page_content`, `content` or `text`.
fn documents(out: &Value) -> Option<Vec<Value>> {
    let list = match out {
        Value::Array(l) => l,
        Value::Object(o) => o.get("documents").and_then(Value::as_array)?,
        _ => return None,
    };
    let docs: Vec<Value> = list
        .iter()
        .filter_map(|d| {
            let text = match d {
                Value::String(s) => s.clone(),
                Value::Object(_) => ["pageContent", "page_content", "content", "text"]
                    .iter()
                    .find_map(|k| d.get(*k).and_then(Value::as_str))?
                    .to_owned(),
                _ => return None,
            };
            let mut m = Map::new();
            if let Some(id) = d.get("id").and_then(Value::as_str) {
                m.insert("id".to_owned(), Value::String(id.to_owned()));
            }
            m.insert("text".to_owned(), Value::String(text));
            let source = d
                .get("metadata")
                .and_then(|md| md.get("source"))
                .and_then(Value::as_str);
            if let Some(s) = source {
                m.insert("source".to_owned(), Value::String(s.to_owned()));
            }
            Some(Value::Object(m))
        })
        .collect();
    (docs.len() == list.len()).then_some(docs)
}

#[cfg(test)]
mod cost_tests;

#[cfg(test)]
mod tests;
