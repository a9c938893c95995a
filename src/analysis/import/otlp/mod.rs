//! OTLP JSON traces: one `ExportTraceServiceRequest` object, an array of them, JSON lines of them
//! (the collector's file exporter), or a `batches` object. One run per trace id, in order of first
//! appearance; one step per span, a parent before its children and siblings by start time.
//!
//! `wire` decodes the format, `step` turns a span into a step with the help of `genai` and
//! `openinference`, `attrs` rebuilds indexed attribute keys. Pure: no I/O, no panic on any input.

mod attrs;
mod genai;
mod openinference;
mod step;
mod wire;

use super::{ImportError, ImportedRun, Importer, SourceFormat, chat, tree};
use crate::analysis::load::{Document, Warning};
use crate::analysis::model::RUN_FORMAT;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use wire::Span;

/// The OTLP JSON importer.
pub struct Otlp;

fn requests(doc: &Document) -> Vec<&Value> {
    match doc {
        Document::One(Value::Array(items)) => items.iter().collect(),
        Document::One(v) => vec![v],
        Document::Lines(vs) => vs.iter().collect(),
    }
}

/// Span positions grouped by trace id, traces in order of first appearance.
fn group(spans: &[Span]) -> Vec<(String, Vec<usize>)> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        let g = *at.entry(s.trace_id.as_str()).or_insert_with(|| {
            groups.push((s.trace_id.clone(), Vec::new()));
            groups.len() - 1
        });
        if let Some((_, members)) = groups.get_mut(g) {
            members.push(i);
        }
    }
    groups
}

impl Importer for Otlp {
    fn format(&self) -> SourceFormat {
        SourceFormat::Otlp
    }

    fn sniff(&self, doc: &Document) -> bool {
        match doc {
            Document::One(Value::Array(items)) => items.first().is_some_and(wire::is_request),
            Document::One(v) => wire::is_request(v),
            // Any line: a file exporter shared with a logs or metrics pipeline may start with one.
            Document::Lines(vs) => vs.iter().any(wire::is_request),
        }
    }

    fn count(&self, doc: &Document) -> usize {
        let mut seen = HashSet::new();
        for request in requests(doc) {
            for rs in wire::resource_spans(request) {
                for ss in wire::scope_spans(rs) {
                    for span in wire::raw_spans(ss).iter().filter(|s| s.is_object()) {
                        let id = wire::get(span, &["traceId", "trace_id"])
                            .and_then(wire::id)
                            .unwrap_or_default();
                        seen.insert(id);
                    }
                }
            }
        }
        seen.len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        let decoded = wire::decode(requests(&doc));
        let groups = group(&decoded.spans);
        if groups.is_empty() {
            return Err(ImportError(
                "no spans found; OTLP JSON lists them under resourceSpans, then scopeSpans, then spans"
                    .to_owned(),
            ));
        }
        Ok(super::pick(groups, index, "trace(s)")?
            .into_iter()
            .map(|(trace_id, members)| {
                let spans: Vec<&Span> = members
                    .iter()
                    .filter_map(|&i| decoded.spans.get(i))
                    .collect();
                let mut run = build_run(&trace_id, &spans, &decoded.resources);
                if decoded.not_traces > 0 {
                    run.warnings.push(Warning::run(
                        None,
                        format!(
                            "{} JSON value(s) in the file hold no resourceSpans (logs or metrics from the same exporter); they were skipped",
                            decoded.not_traces
                        ),
                    ));
                }
                run
            })
            .collect())
    }
}

fn build_run(trace_id: &str, spans: &[&Span], resources: &[Map<String, Value>]) -> ImportedRun {
    let mut warnings = Vec::new();
    let nodes: Vec<tree::Node<'_>> = spans
        .iter()
        .map(|s| tree::Node {
            id: &s.span_id,
            parent: s.parent_id.as_deref(),
            start: s.start_ns.map(i128::from),
        })
        .collect();
    let ordered = tree::order(&nodes);
    if ordered.missing_parents > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} span(s) name a parent span that is not in the file; they are shown at the top level",
                ordered.missing_parents
            ),
        ));
    }
    if ordered.cycles > 0 {
        warnings.push(Warning::run(
            Some("steps"),
            format!(
                "{} span(s) form a cycle of parent ids; the cycle was broken at its earliest span",
                ordered.cycles
            ),
        ));
    }

    let mut step_ids: Vec<Option<String>> = vec![None; spans.len()];
    let mut agents: Vec<Option<String>> = vec![None; spans.len()];
    let mut used = tree::UniqueIds::with_capacity(spans.len());
    let mut steps = Vec::with_capacity(spans.len());
    let mut tools: Vec<Value> = Vec::new();
    let mut tool_names: HashSet<String> = HashSet::new();
    let mut model: Option<String> = None;
    let mut kinds: Vec<&'static str> = Vec::with_capacity(spans.len());
    for (pos, &i) in ordered.order.iter().enumerate() {
        let Some(span) = spans.get(i) else { continue };
        let built = step::build(span);
        let base = if span.span_id.is_empty() {
            format!("span-{}", pos + 1)
        } else {
            span.span_id.clone()
        };
        let (id, _) = used.claim(&base);
        let parent = ordered
            .parent
            .get(i)
            .copied()
            .flatten()
            .and_then(|p| step_ids.get(p).cloned().flatten());
        let mut obj = Map::new();
        obj.insert("id".to_owned(), Value::String(id.clone()));
        if let Some(p) = parent {
            obj.insert("parent".to_owned(), Value::String(p));
        }
        obj.extend(built.step);
        let own_agent = obj.get("agent").and_then(Value::as_str).map(str::to_owned);
        let agent = own_agent.clone().or_else(|| {
            ordered
                .parent
                .get(i)
                .copied()
                .flatten()
                .and_then(|p| agents.get(p).cloned().flatten())
        });
        if own_agent.is_none()
            && let Some(a) = &agent
        {
            obj.insert("agent".to_owned(), Value::String(a.clone()));
        }
        if let Some(slot) = agents.get_mut(i) {
            *slot = agent;
        }
        if let Some(slot) = step_ids.get_mut(i) {
            *slot = Some(id);
        }
        for t in built.tools {
            if let Some(name) = t.get("name").and_then(Value::as_str)
                && tool_names.insert(name.to_owned())
            {
                tools.push(t);
            }
        }
        if model.is_none() {
            model = built.model;
        }
        kinds.push(built.kind);
        steps.push(obj);
    }
    for m in used.repeat_messages("span id") {
        warnings.push(Warning::run(Some("steps"), m));
    }

    let mut run = Map::new();
    run.insert("format".to_owned(), Value::String(RUN_FORMAT.to_owned()));
    let run_id = if trace_id.is_empty() {
        "trace".to_owned()
    } else {
        trace_id.to_owned()
    };
    run.insert("id".to_owned(), Value::String(run_id));
    let root = ordered.order.first().and_then(|&i| spans.get(i));
    if let Some(r) = root.filter(|r| !r.name.is_empty()) {
        run.insert("title".to_owned(), Value::String(r.name.clone()));
    }
    let root_error = steps
        .iter()
        .filter(|s| !s.contains_key("parent"))
        .find_map(|s| s.get("error").and_then(Value::as_str));
    match root_error {
        Some(e) => {
            run.insert("status".to_owned(), Value::String("error".to_owned()));
            run.insert("error".to_owned(), Value::String(e.to_owned()));
        }
        None => {
            run.insert("status".to_owned(), Value::String("failed".to_owned()));
            warnings.push(Warning::run(
                Some("status"),
                "the trace does not say whether its outcome was right; the run is taken as failed so it can be diagnosed",
            ));
        }
    }
    if let Some(t) = task(&steps, &kinds) {
        run.insert("task".to_owned(), Value::String(t));
    }
    if let Some(a) = final_answer(&steps, &kinds) {
        run.insert("final_answer".to_owned(), Value::String(a));
    }
    if let Some(m) = model {
        let mut mo = Map::new();
        mo.insert("name".to_owned(), Value::String(m));
        run.insert("model".to_owned(), Value::Object(mo));
    }
    if !tools.is_empty() {
        run.insert("tools".to_owned(), Value::Array(tools));
    }
    let mut attributes = Map::new();
    if let Some(res) = root.and_then(|r| resources.get(r.resource))
        && !res.is_empty()
    {
        attributes.insert("otel.resource".to_owned(), Value::Object(res.clone()));
    }
    if !attributes.is_empty() {
        run.insert("attributes".to_owned(), Value::Object(attributes));
    }
    run.insert(
        "steps".to_owned(),
        Value::Array(steps.into_iter().map(Value::Object).collect()),
    );
    ImportedRun {
        value: Value::Object(run),
        warnings,
    }
}

/// The task of the root step's input, else of the first model step's.
fn task(steps: &[Map<String, Value>], kinds: &[&str]) -> Option<String> {
    steps
        .first()
        .and_then(|s| s.get("input"))
        .and_then(chat::task_text)
        .or_else(|| {
            steps
                .iter()
                .zip(kinds)
                .filter(|(_, k)| **k == "llm")
                .find_map(|(s, _)| s.get("input").and_then(chat::task_text))
        })
}

/// The answer of the root step's output, else the last model step's output text.
fn final_answer(steps: &[Map<String, Value>], kinds: &[&str]) -> Option<String> {
    let text = |s: &Map<String, Value>| s.get("output").and_then(chat::message_text);
    steps
        .first()
        .and_then(|s| s.get("output"))
        .and_then(chat::answer_text)
        .or_else(|| {
            steps
                .iter()
                .zip(kinds)
                .rev()
                .filter(|(_, k)| **k == "llm")
                .find_map(|(s, _)| text(s))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chain_root_gives_task_and_answer_from_its_input_and_output_objects() {
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        let doc = Document::One(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
             "name": "AgentExecutor", "attributes": [
                attr("openinference.span.kind", "CHAIN"),
                attr("input.value", "{\"input\": \"How many refunds?\"}"),
                attr("output.value", "{\"input\": \"How many refunds?\", \"output\": \"12.\"}")]}
        ]}]}]}));
        let runs = Otlp.import(doc, None).unwrap_or_default();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].value["task"], "How many refunds?");
        assert_eq!(runs[0].value["final_answer"], "12.");
    }

    #[test]
    fn a_file_exporter_shared_with_logs_is_read_from_its_trace_lines() {
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": []}]}]});
        let traces = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
             "name": "chat", "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}
        ]}]}]});
        let doc = Document::Lines(vec![logs, traces]);
        assert!(Otlp.sniff(&doc));
        let runs = Otlp.import(doc, None).unwrap_or_default();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].value["steps"][0]["kind"], "llm");
        assert!(
            runs[0].warnings.iter().any(|w| w
                .message
                .starts_with("1 JSON value(s) in the file hold no resourceSpans")),
            "{:?}",
            runs[0].warnings
        );
    }
}
