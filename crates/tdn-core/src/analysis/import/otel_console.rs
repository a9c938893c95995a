//! The OpenTelemetry SDK's console exporter: each span printed as `span.to_json()` (`name`,
//! `context: {trace_id, span_id}` with `0x` before the hex, `kind: "SpanKind.INTERNAL"`,
//! `parent_id`, `start_time` / `end_time`, `status: {status_code, description}`, `attributes`,
//! `events`, `resource: {attributes}`), one object per span, several in a row, an array of them, or
//! regrouped by trace as `{"traces": [{"trace_id", "spans": [...]}]}`. One run per trace id.
//! Decoding is shared with Phoenix (`span_json`); each span is read by the shared span reader.
//! Pure; never panics.

use super::SourceFormat;
use super::span_json::SpanJson;

/// The console-exporter importer: spans without `span_kind`.
pub static OTEL_CONSOLE: SpanJson = SpanJson {
    format: SourceFormat::OtelConsole,
    span_kind: false,
    looks_for: "spans with \"name\", \"context\": {\"trace_id\", \"span_id\"} and no \"span_kind\" (one per object, in an array, or under {\"traces\": [{\"spans\"}]})",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::document::Document;
    use crate::analysis::import::Importer;
    use serde_json::json;

    #[test]
    fn console_spans_in_a_row_read_hex_ids_status_and_times() {
        let root = json!({"name": "agent", "context": {"trace_id": "0x5b8efff798038103d269b633813fc60c",
            "span_id": "0x051581bf3cb55c13"}, "kind": "SpanKind.INTERNAL", "parent_id": null,
            "start_time": "2024-01-01T00:00:00.000000Z", "end_time": "2024-01-01T00:00:02.000000Z",
            "status": {"status_code": "UNSET"}, "attributes": {"gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "planner"}, "events": [], "resource": {"attributes": {"service.name": "svc"}}});
        let child = json!({"name": "tool", "context": {"trace_id": "0x5b8efff798038103d269b633813fc60c",
            "span_id": "0x6e0c63257de34c92"}, "kind": "SpanKind.INTERNAL", "parent_id": "0x051581bf3cb55c13",
            "start_time": 1704067201000000000_u64, "end_time": 1704067201500000000_u64,
            "status": {"status_code": "ERROR", "description": "timeout"},
            "attributes": {"gen_ai.tool.name": "lookup"}, "events": []});
        let doc = Document::Lines(vec![child, root]);
        assert!(OTEL_CONSOLE.sniff(&doc));
        let runs = OTEL_CONSOLE.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(run["id"], "5b8efff798038103d269b633813fc60c");
        assert_eq!(run["steps"][0]["id"], "051581bf3cb55c13");
        assert_eq!(run["steps"][0]["agent"], "planner");
        assert_eq!(run["steps"][1]["tool"]["name"], "lookup");
        assert_eq!(run["steps"][1]["error"], "timeout");
        assert_eq!(run["steps"][1]["started_at"], 1_704_067_201_000_i64);
        assert_eq!(run["steps"][0]["attributes"]["otel.span_kind"], "internal");
        assert_eq!(run["attributes"]["otel.resource"]["service.name"], "svc");
        assert!(
            runs[0]
                .warnings
                .iter()
                .all(|w| !w.message.contains("hex digits"))
        );
    }

    #[test]
    fn phoenix_spans_are_not_console_spans() {
        let doc =
            Document::One(json!([{"name": "x", "context": {"span_id": "a"}, "span_kind": "LLM"}]));
        assert!(!OTEL_CONSOLE.sniff(&doc));
    }
}
