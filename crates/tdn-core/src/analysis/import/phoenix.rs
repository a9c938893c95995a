//! Phoenix span JSON, as its client (`get_spans`) and REST API return spans: `name`,
//! `context.trace_id` / `span_id`, `parent_id`, `span_kind` (`LLM`, `TOOL`, `AGENT`, `CHAIN`,
//! ...), `start_time` / `end_time`, `status_code`, `status_message`, flat OpenInference
//! `attributes`, `events`; a list of spans, an object of such lists, or `{"data": [...]}`. One run
//! per trace id. Decoding is shared with the console exporter (`span_json`); each span is read by
//! the shared span reader. Pure; never panics.

use super::SourceFormat;
use super::span_json::SpanJson;

/// The Phoenix importer: spans with `span_kind`.
pub static PHOENIX: SpanJson = SpanJson {
    format: SourceFormat::Phoenix,
    span_kind: true,
    looks_for: "spans with \"name\", \"context\": {\"trace_id\", \"span_id\"} and \"span_kind\" (a list, an object of lists, or {\"data\": [...]})",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::document::Document;
    use crate::analysis::import::Importer;
    use serde_json::json;

    #[test]
    fn phoenix_spans_group_by_trace_and_read_their_kind() {
        let span = |trace: &str,
                    id: &str,
                    parent: Option<&str>,
                    kind: &str,
                    attrs: serde_json::Value| {
            json!({"name": id, "context": {"trace_id": trace, "span_id": id}, "parent_id": parent,
                   "span_kind": kind, "start_time": "2026-07-09T00:00:00+00:00",
                   "status_code": "OK", "attributes": attrs})
        };
        let doc = Document::One(json!({
            "first": [
                span("00000000000000000015bfc9bdc170aa", "0000000000000000", None, "AGENT",
                     json!({"input.value": "save it", "output.value": "Saved."})),
                span("00000000000000000015bfc9bdc170aa", "0000000000000001", Some("0000000000000000"), "TOOL",
                     json!({"tool.name": "save", "input.value": "{\"name\": \"x\"}"}))],
            "second": [span("000000000000000003e86c1ad72fb951", "0000000000000000", None, "LLM",
                            json!({"llm.output_messages.0.message.content": "hi"}))]
        }));
        assert!(PHOENIX.sniff(&doc));
        assert_eq!(PHOENIX.count(&doc), 2);
        let runs = PHOENIX.import(doc, None).unwrap_or_default();
        assert_eq!(runs.len(), 2);
        let first = &runs[0].value;
        assert_eq!(first["steps"][0]["kind"], "agent");
        assert_eq!(first["steps"][0]["container"], true);
        assert_eq!(
            first["steps"][1]["parent"], "0000000000000000",
            "an all-zero id is kept"
        );
        assert_eq!(first["steps"][1]["tool"]["arguments"], json!({"name": "x"}));
        assert_eq!(first["task"], "save it");
        assert_eq!(first["final_answer"], "Saved.");
        assert!(
            runs[0]
                .warnings
                .iter()
                .any(|w| w.message.contains("span id(s) are not 16 hex digits")),
            "{:?}",
            runs[0].warnings
        );
        assert_eq!(runs[1].value["steps"][0]["kind"], "llm");
    }
}
