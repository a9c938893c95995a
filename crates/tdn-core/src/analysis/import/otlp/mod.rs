//! OTLP JSON traces: one `ExportTraceServiceRequest` object, an array of them, JSON lines of them
//! (the collector's file exporter), or a `batches` object. One run per trace id, in order of first
//! appearance; one step per span, read by the shared span reader (`spans`).
//!
//! `wire` decodes the format; `stream` decodes it while the text is parsed, so a big export is
//! never held as one tree of JSON values (the loader's way in); a parsed [`Document`] is decoded
//! by the same span reader. Pure: no I/O, no panic on any input.

pub(super) mod stream;
mod wire;

pub(super) use stream::decode_text;
pub(super) use wire::Decoded;

pub(super) use wire::span_kind;

use super::built::Build;
use super::spans;
use super::{ImportError, ImportedRun, Importer, SourceFormat};
use crate::analysis::document::Document;
use crate::analysis::warning::Warning;
use serde_json::Value;
use std::collections::HashSet;

/// The OTLP JSON importer.
pub struct Otlp;

fn requests(doc: &Document) -> Vec<&Value> {
    match doc {
        Document::One(Value::Array(items)) => items.iter().collect(),
        Document::One(v) => vec![v],
        Document::Lines(vs) => vs.iter().collect(),
    }
}

impl Importer for Otlp {
    fn format(&self) -> SourceFormat {
        SourceFormat::Otlp
    }

    fn looks_for(&self) -> &'static str {
        "an object (or an array of objects, or JSON lines) with resourceSpans, resource_spans or batches"
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
        import_into(doc, index, Build::Json)
    }
}

/// [`Otlp`]'s import, the steps built where `build` says.
pub(super) fn import_into(
    doc: Document,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    // Each value is taken apart as its spans are decoded, so the parsed file and the spans
    // are not both held whole.
    let requests = match doc {
        Document::One(Value::Array(items)) => items,
        Document::One(v) => vec![v],
        Document::Lines(vs) => vs,
    };
    import_decoded(wire::decode(requests), index, build)
}

/// How many runs (distinct trace ids) decoded spans hold (see [`Importer::count`]).
pub(super) fn count_decoded(decoded: &Decoded) -> usize {
    decoded
        .spans
        .iter()
        .map(|s| s.trace_id.as_str())
        .collect::<HashSet<_>>()
        .len()
}

/// The runs of decoded spans (only the one at `index` when given): one per trace id, in order of
/// first appearance.
pub(super) fn import_decoded(
    decoded: Decoded,
    index: Option<usize>,
    build: Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let wire::Decoded {
        spans: all,
        resources,
        not_traces,
    } = decoded;
    let groups = spans::by_trace(all.into_iter().map(|s| (s.trace_id.clone(), s)));
    if groups.is_empty() {
        return Err(ImportError(
            "no spans found; OTLP JSON lists them under resourceSpans, then scopeSpans, then spans"
                .to_owned(),
        ));
    }
    Ok(super::pick(groups, index, "trace(s)")?
        .into_iter()
        .map(|(trace_id, members)| {
            let src = spans::Source::otel(&resources);
            let mut run = spans::build_run(&trace_id, members, src, build);
            if not_traces > 0 {
                run.warnings.push(Warning::file(
                    None,
                    format!(
                        "{} JSON value(s) in the file hold no resourceSpans (logs or metrics from the same exporter); they were skipped",
                        not_traces
                    ),
                ));
            }
            run
        })
        .collect())
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
