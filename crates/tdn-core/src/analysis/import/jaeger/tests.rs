//! Jaeger's trace JSON on hand-written traces in the shape its UI downloads.

use super::*;
use serde_json::json;

fn tag(key: &str, value: Value) -> Value {
    let kind = match &value {
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        _ => "string",
    };
    json!({"key": key, "type": kind, "value": value})
}

/// A GenAI agent's trace as Jaeger stores it: a chat span under an agent span, a tool span that
/// failed with an exception log, the process's service name and tags.
fn trace() -> Value {
    let t = "5b8efff798038103d269b633813fc60c";
    json!({"traceID": t, "processes": {"p1": {"serviceName": "support-agent",
            "tags": [tag("telemetry.sdk.language", json!("python"))]}},
        "spans": [
        {"traceID": t, "spanID": "6e0c63257de34c92", "operationName": "execute_tool lookup_order",
         "references": [{"refType": "CHILD_OF", "traceID": t, "spanID": "051581bf3cb55c13"}],
         "startTime": 1_704_067_201_500_000_u64, "duration": 250_000, "processID": "p1",
         "tags": [tag("gen_ai.operation.name", json!("execute_tool")),
                  tag("gen_ai.tool.name", json!("lookup_order")),
                  tag("gen_ai.tool.call.arguments", json!("{\"order_id\": \"A-17\"}")),
                  tag("otel.status_code", json!("ERROR")),
                  tag("otel.status_description", json!("order service timed out")),
                  tag("span.kind", json!("internal"))],
         "logs": [{"timestamp": 1_704_067_201_700_000_u64, "fields": [
             tag("event", json!("exception")), tag("exception.type", json!("TimeoutError"))]}]},
        {"traceID": t, "spanID": "051581bf3cb55c13", "operationName": "invoke_agent support",
         "references": [], "startTime": 1_704_067_200_000_000_u64, "duration": 3_000_000,
         "processID": "p1",
         "tags": [tag("gen_ai.operation.name", json!("invoke_agent")),
                  tag("gen_ai.agent.name", json!("support"))]},
        {"traceID": t, "spanID": "a1a2a3a4a5a6a7a8", "operationName": "chat gpt-4o",
         "references": [{"refType": "CHILD_OF", "traceID": t, "spanID": "051581bf3cb55c13"}],
         "startTime": 1_704_067_200_100_000_u64, "duration": 1_200_000, "processID": "p1",
         "tags": [tag("gen_ai.operation.name", json!("chat")),
                  tag("gen_ai.request.model", json!("gpt-4o")),
                  tag("gen_ai.usage.input_tokens", json!(52)),
                  tag("gen_ai.usage.output_tokens", json!(9)),
                  tag("gen_ai.input.messages", json!(json!([
                      {"role": "user", "parts": [{"type": "text", "content": "Where is order A-17?"}]}
                  ]).to_string()))]}
    ]})
}

#[test]
fn a_downloaded_trace_reads_its_tree_status_times_events_and_service() {
    let doc = Document::One(
        json!({"data": [trace()], "total": 0, "limit": 0, "offset": 0,
                                   "errors": null}),
    );
    assert!(Jaeger.sniff(&doc));
    assert_eq!(
        crate::analysis::import::sniff(&doc),
        Some(SourceFormat::Jaeger)
    );
    assert_eq!(Jaeger.count(&doc), 1);
    let runs = Jaeger.import(doc, None).unwrap_or_default();
    let run = &runs[0].value;
    assert_eq!(run["id"], "5b8efff798038103d269b633813fc60c");
    let steps = run["steps"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    // The parent first, then its children by start time.
    assert_eq!(
        ids,
        ["051581bf3cb55c13", "a1a2a3a4a5a6a7a8", "6e0c63257de34c92"]
    );
    let (agent, chat, tool) = (&steps[0], &steps[1], &steps[2]);
    assert_eq!(agent["kind"], "agent");
    assert_eq!(chat["kind"], "llm");
    assert_eq!(chat["parent"], "051581bf3cb55c13");
    assert_eq!(chat["usage"]["input_tokens"], 52);
    assert_eq!(run["task"], "Where is order A-17?");
    assert_eq!(tool["kind"], "tool");
    assert_eq!(tool["tool"]["name"], "lookup_order");
    assert_eq!(tool["tool"]["arguments"]["order_id"], "A-17");
    assert_eq!(tool["error"], "order service timed out");
    // Microseconds to milliseconds: start 1704067201.5 s, 250 ms long.
    assert_eq!(tool["started_at"], 1_704_067_201_500_i64);
    assert_eq!(tool["ended_at"], 1_704_067_201_750_i64);
    // Jaeger's own tags for OpenTelemetry fields are read as the span's status, kind and events
    // (kept as the span reader keeps them), not copied as tags.
    let kept = tool["attributes"].as_object().cloned().unwrap_or_default();
    assert!(
        !kept.contains_key("span.kind") && !kept.contains_key("otel.status_description"),
        "{kept:?}"
    );
    assert_eq!(kept.get("otel.status_code"), Some(&json!("error")));
    assert_eq!(kept.get("otel.span_kind"), Some(&json!("internal")));
    assert_eq!(kept["otel.events"][0]["name"], "exception");
    assert_eq!(
        run["attributes"]["otel.resource"]["service.name"],
        "support-agent"
    );
}

#[test]
fn an_error_tag_fails_a_span_and_one_trace_or_a_list_is_read_too() {
    let mut t = trace();
    // The tool span with only Jaeger's `error` tag (older clients): it failed.
    if let Some(tags) = t["spans"][0]["tags"].as_array_mut() {
        tags.retain(|x| {
            !x["key"]
                .as_str()
                .is_some_and(|k| k.starts_with("otel.status"))
        });
        tags.push(tag("error", json!(true)));
    }
    for doc in [Document::One(t.clone()), Document::One(json!([t]))] {
        assert!(Jaeger.sniff(&doc));
        let runs = Jaeger.import(doc, None).unwrap_or_default();
        let tool = &runs[0].value["steps"][2];
        assert_eq!(tool["id"], "6e0c63257de34c92");
        assert!(tool["error"].as_str().is_some(), "{tool}");
    }
}

#[test]
fn other_shapes_are_not_jaeger() {
    for v in [
        json!({"data": [{"id": "o1", "traceId": "t", "type": "SPAN"}]}),
        json!({"traceID": "t", "spans": [{"name": "x", "context": {"span_id": "a"}}]}),
        json!([{"spanID": "a"}]),
        json!({"data": []}),
    ] {
        assert!(!Jaeger.sniff(&Document::One(v.clone())), "{v}");
    }
}

/// Spans that leave their trace id to their trace are counted by it, as they are grouped, so
/// `--index` reaches every trace.
#[test]
fn spans_without_their_own_trace_id_count_under_their_trace() {
    let trace = |id: &str| json!({"traceID": id, "spans": [{"spanID": "a1", "operationName": "step", "tags": []}]});
    let doc = Document::One(json!({"data": [trace("t1"), trace("t2")]}));
    assert_eq!(Jaeger.count(&doc), 2);
    let second = Jaeger.import(doc, Some(1)).unwrap_or_default();
    assert_eq!(second[0].value["id"], "t2");
}
