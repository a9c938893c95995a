//! Langfuse traces: a trace with its `observations` (what `GET /api/public/traces/{id}` returns),
//! `{"trace": {...}, "observations": [...]}`, or a bare list of observations (an array, or
//! `{"data": [...]}` as `GET /api/public/observations` returns; one run per `traceId`, in order of
//! first appearance). One step per observation, a parent (`parentObservationId`) before its
//! children, siblings by `startTime`.
//!
//! Pure: no I/O, no panic on any input. Inputs and outputs that are strings holding JSON are
//! parsed.

use super::{ImportError, ImportedRun, Importer, SourceFormat, chat, tree};
use crate::analysis::load::{Document, Warning};
use crate::analysis::model::RUN_FORMAT;
use serde_json::{Map, Value};
use std::collections::HashMap;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

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
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<RunParts<'_>> = Vec::new();
    for o in list.iter().filter(|o| looks_like_observation(o)) {
        let t = o.get("traceId").and_then(Value::as_str).unwrap_or_default();
        let g = *at.entry(t).or_insert_with(|| {
            out.push((None, Vec::new()));
            out.len() - 1
        });
        if let Some((_, members)) = out.get_mut(g) {
            members.push(o);
        }
    }
    out
}

/// Lenient for types this version does not know: a string `type` and a `traceId` or `startTime`.
fn looks_like_observation(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string)
        && (v.get("traceId").is_some() || v.get("startTime").is_some())
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
            if let Some(list) = observations {
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
        "{\"trace\", \"observations\": [...]} or a list of observations (type GENERATION, SPAN, ... with traceId or startTime), also under \"data\""
    }

    fn sniff(&self, doc: &Document) -> bool {
        let Document::One(v) = doc else { return false };
        match v {
            Value::Array(list) => list.first().is_some_and(is_observation),
            Value::Object(o) => match o.get("observations").and_then(Value::as_array) {
                Some(list) => {
                    list.first().is_none_or(is_observation)
                        && (o.contains_key("trace") || o.contains_key("id"))
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
        let all = runs(&doc);
        let n = all.len();
        if n == 0 {
            return Err(ImportError(
                "no Langfuse trace or observations found".to_owned(),
            ));
        }
        Ok(super::pick(all, index, "trace(s)")?
            .into_iter()
            .map(|(trace, obs)| build_run(trace, &obs))
            .collect())
    }
}

fn text_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn nanos(v: &Value, key: &str) -> Option<i128> {
    let s = text_at(v, key)?;
    OffsetDateTime::parse(s.trim(), &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp_nanos)
}

fn kind(t: &str) -> &'static str {
    match t {
        "GENERATION" => "llm",
        "TOOL" => "tool",
        "RETRIEVER" => "retrieval",
        "AGENT" => "agent",
        _ => "event",
    }
}

fn build_run(trace: Option<&Value>, obs: &[&Value]) -> ImportedRun {
    let mut warnings = Vec::new();
    let ids: Vec<String> = obs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            text_at(o, "id")
                .map(str::to_owned)
                .unwrap_or_else(|| format!("observation-{}", i + 1))
        })
        .collect();
    let nodes: Vec<tree::Node<'_>> = obs
        .iter()
        .zip(&ids)
        .map(|(o, id)| tree::Node {
            id,
            parent: text_at(o, "parentObservationId"),
            start: nanos(o, "startTime"),
        })
        .collect();
    let ordered = tree::order(&nodes);
    if ordered.missing_parents > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} observation(s) name a parent observation that is not in the file; they are shown at the top level",
                ordered.missing_parents
            ),
        ));
    }

    if ordered.cycles > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} observation(s) form a cycle of parent ids; the cycle was broken at its earliest observation",
                ordered.cycles
            ),
        ));
    }

    let mut used = tree::UniqueIds::with_capacity(obs.len());
    let mut step_ids: Vec<Option<String>> = vec![None; obs.len()];
    let mut agents: Vec<Option<String>> = vec![None; obs.len()];
    let mut steps = Vec::with_capacity(obs.len());
    let mut first_error: Option<String> = None;
    for &i in &ordered.order {
        let (Some(o), Some(base)) = (obs.get(i), ids.get(i)) else {
            continue;
        };
        let (id, _) = used.claim(base);
        let parent = ordered.parent.get(i).copied().flatten();
        let t = text_at(o, "type").unwrap_or("EVENT");
        let k = kind(t);
        let own_agent = (t == "AGENT")
            .then(|| text_at(o, "name").map(str::to_owned))
            .flatten();
        let agent = own_agent.or_else(|| parent.and_then(|p| agents.get(p).cloned().flatten()));
        let mut step = Map::new();
        step.insert("id".to_owned(), Value::String(id.clone()));
        if let Some(p) = parent.and_then(|p| step_ids.get(p).cloned().flatten()) {
            step.insert("parent".to_owned(), Value::String(p));
        }
        step.extend(observation_step(o, k, t));
        if let Some(e) = step.get("error").and_then(Value::as_str)
            && first_error.is_none()
        {
            first_error = Some(e.to_owned());
        }
        if let Some(a) = &agent {
            step.insert("agent".to_owned(), Value::String(a.clone()));
        }
        if let Some(slot) = agents.get_mut(i) {
            *slot = agent;
        }
        if let Some(slot) = step_ids.get_mut(i) {
            *slot = Some(id);
        }
        steps.push(Value::Object(step));
    }
    for m in used.repeat_messages("observation id") {
        warnings.push(Warning::run(Some("steps"), m));
    }

    let mut run = Map::new();
    run.insert("format".to_owned(), Value::String(RUN_FORMAT.to_owned()));
    let run_id = trace
        .and_then(|t| text_at(t, "id"))
        .or_else(|| obs.first().and_then(|o| text_at(o, "traceId")))
        .unwrap_or("trace");
    run.insert("id".to_owned(), Value::String(run_id.to_owned()));
    if let Some(name) = trace.and_then(|t| text_at(t, "name")) {
        run.insert("title".to_owned(), Value::String(name.to_owned()));
    }
    let output = trace
        .and_then(|t| t.get("output"))
        .cloned()
        .map(chat::json_or_string)
        .and_then(|o| super::run_text::answer_text(&o));
    match (&first_error, &output) {
        (Some(e), None) => {
            run.insert("status".to_owned(), Value::String("error".to_owned()));
            run.insert("error".to_owned(), Value::String(e.clone()));
        }
        _ => {
            run.insert("status".to_owned(), Value::String("failed".to_owned()));
            warnings.push(Warning::run(
                Some("status"),
                "the trace does not say whether its outcome was right; the run is taken as failed so it can be diagnosed",
            ));
        }
    }
    let task = trace
        .and_then(|t| t.get("input"))
        .cloned()
        .map(chat::json_or_string)
        .and_then(|i| super::run_text::task_text(&i));
    if let Some(t) = task {
        run.insert("task".to_owned(), Value::String(t));
    }
    if let Some(a) = output {
        run.insert("final_answer".to_owned(), Value::String(a));
    }
    if let Some(t) = trace {
        let mut attributes = Map::new();
        for key in [
            "metadata",
            "tags",
            "userId",
            "sessionId",
            "release",
            "version",
        ] {
            if let Some(v) = t.get(key).filter(|v| !v.is_null()) {
                attributes.insert(format!("langfuse.{key}"), v.clone());
            }
        }
        if !attributes.is_empty() {
            run.insert("attributes".to_owned(), Value::Object(attributes));
        }
    }
    run.insert("steps".to_owned(), Value::Array(steps));
    ImportedRun {
        value: Value::Object(run),
        warnings,
    }
}

fn observation_step(o: &Value, kind: &'static str, t: &str) -> Map<String, Value> {
    let mut step = Map::new();
    step.insert("kind".to_owned(), Value::String(kind.to_owned()));
    if let Some(name) = text_at(o, "name") {
        step.insert("name".to_owned(), Value::String(name.to_owned()));
    }
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
    let output = match (kind, output) {
        ("llm", Some(out)) => Some(chat::output_from_messages(&out).unwrap_or(out)),
        (_, out) => out,
    };
    if kind == "tool"
        && let Some(name) = text_at(o, "name")
    {
        let mut tool = Map::new();
        tool.insert("name".to_owned(), Value::String(name.to_owned()));
        if let Some(args) = &input {
            tool.insert("arguments".to_owned(), args.clone());
        }
        step.insert("tool".to_owned(), Value::Object(tool));
    }
    if kind == "retrieval"
        && let Some(docs) = output.as_ref().and_then(documents)
    {
        step.insert("documents".to_owned(), Value::Array(docs));
    }
    if let Some(i) = input {
        step.insert("input".to_owned(), i);
    }
    if let Some(out) = output {
        step.insert("output".to_owned(), out);
    }
    let level = text_at(o, "level");
    if level == Some("ERROR") {
        let msg = text_at(o, "statusMessage").unwrap_or("the observation has level ERROR");
        step.insert("error".to_owned(), Value::String(msg.to_owned()));
    }
    let u = o.get("usageDetails").or_else(|| o.get("usage"));
    let input_tokens = u
        .and_then(|u| u.get("input").or_else(|| u.get("promptTokens")))
        .and_then(chat::count)
        .or_else(|| o.get("promptTokens").and_then(chat::count));
    let output_tokens = u
        .and_then(|u| u.get("output").or_else(|| u.get("completionTokens")))
        .and_then(chat::count)
        .or_else(|| o.get("completionTokens").and_then(chat::count));
    // Langfuse gives every observation a usage, zeros on spans and events: a count of 0 on a
    // step that is not a model call measured nothing.
    let measured = kind == "llm"
        || [input_tokens, output_tokens]
            .iter()
            .any(|n| n.is_some_and(|n| n > 0));
    if measured && let Some(usage) = chat::usage(input_tokens, output_tokens) {
        step.insert("usage".to_owned(), usage);
    }
    for (field, key) in [("started_at", "startTime"), ("ended_at", "endTime")] {
        if nanos(o, key).is_some()
            && let Some(s) = text_at(o, key)
        {
            step.insert(field.to_owned(), Value::String(s.to_owned()));
        }
    }
    let mut attributes = Map::new();
    attributes.insert("langfuse.type".to_owned(), Value::String(t.to_owned()));
    for key in [
        "model",
        "modelParameters",
        "metadata",
        "level",
        "statusMessage",
        "version",
    ] {
        if let Some(v) = o.get(key).filter(|v| !v.is_null()) {
            attributes.insert(format!("langfuse.{key}"), v.clone());
        }
    }
    step.insert("attributes".to_owned(), Value::Object(attributes));
    step
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_are_recognised_and_others_are_not() {
        let obs = json!({"id": "o1", "traceId": "t", "type": "SPAN", "startTime": "2024-01-01T00:00:00Z"});
        let with_trace = Document::One(json!({"id": "t", "observations": [obs.clone()]}));
        assert!(Langfuse.sniff(&with_trace));
        assert!(Langfuse.sniff(&Document::One(json!([obs.clone()]))));
        assert!(Langfuse.sniff(&Document::One(json!({"data": [obs]}))));
        assert!(!Langfuse.sniff(&Document::One(
            json!({"observations": [{"type": "X"}], "id": "t"})
        )));
        assert!(!Langfuse.sniff(&Document::One(json!([{"traj": []}]))));
    }

    #[test]
    fn bare_observations_group_by_trace_in_order_of_first_appearance() {
        let doc = Document::One(json!([
            {"id": "a", "traceId": "t2", "type": "SPAN"},
            {"id": "b", "traceId": "t1", "type": "SPAN"},
            {"id": "c", "traceId": "t2", "type": "EVENT"},
        ]));
        assert_eq!(Langfuse.count(&doc), 2);
        let runs = Langfuse.import(doc, Some(0)).unwrap_or_default();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].value["id"], "t2");
        assert_eq!(runs[0].value["steps"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn zero_usage_is_kept_for_model_calls_only() {
        let zero = json!({"input": 0, "output": 0});
        let doc = Document::One(json!({"id": "t", "observations": [
            {"id": "g", "traceId": "t", "type": "GENERATION", "usage": zero},
            {"id": "s", "traceId": "t", "type": "SPAN", "usage": zero},
            {"id": "k", "traceId": "t", "type": "TOOL", "usage": {"input": 3, "output": 0}},
        ]}));
        let runs = Langfuse.import(doc, None).unwrap_or_default();
        let steps = runs[0].value["steps"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let usage = |id: &str| {
            steps
                .iter()
                .find(|s| s["id"] == id)
                .map(|s| s.get("usage").cloned())
        };
        assert!(
            usage("g").flatten().is_some(),
            "a model call's zero is a count"
        );
        assert_eq!(usage("s"), Some(None), "a span's zeros measured nothing");
        assert!(usage("k").flatten().is_some());
    }

    #[test]
    fn a_cycle_of_parents_and_a_repeated_id_are_warned_about() {
        let doc = Document::One(json!({"id": "t", "observations": [
            {"id": "a", "traceId": "t", "type": "SPAN", "parentObservationId": "b"},
            {"id": "b", "traceId": "t", "type": "SPAN", "parentObservationId": "a"},
            {"id": "a", "traceId": "t", "type": "EVENT"},
        ]}));
        let runs = Langfuse.import(doc, None).unwrap_or_default();
        assert_eq!(runs.len(), 1);
        let said = |what: &str| runs[0].warnings.iter().any(|w| w.message.contains(what));
        assert!(
            said("2 observation(s) form a cycle"),
            "{:?}",
            runs[0].warnings
        );
        assert!(
            said("the repeat became step 'a-2'"),
            "{:?}",
            runs[0].warnings
        );
    }

    #[test]
    fn retriever_outputs_become_documents_only_when_every_item_has_text() {
        assert_eq!(
            documents(&json!([{"pageContent": "p", "metadata": {"source": "s.md"}}, "plain"])),
            Some(vec![
                json!({"text": "p", "source": "s.md"}),
                json!({"text": "plain"})
            ])
        );
        assert_eq!(documents(&json!([{"score": 1}])), None);
        assert_eq!(documents(&json!("text")), None);
    }
}
