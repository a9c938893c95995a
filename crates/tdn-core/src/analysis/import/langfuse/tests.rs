//! The Langfuse importer on hand-written documents: shapes, grouping, usage, warnings.

use super::*;
use serde_json::json;

#[test]
fn a_tool_result_names_its_tool_plain_or_serialised() {
    let plain = json!({"type": "tool", "name": "weather", "tool_call_id": "c1", "content": "4C"});
    assert_eq!(tool_message_name(&plain).as_deref(), Some("weather"));
    for class in ["ToolMessage", "ToolMessageChunk"] {
        let lc = json!({"lc": 1, "type": "constructor",
            "id": ["langchain_core", "messages", class],
            "kwargs": {"name": "weather", "tool_call_id": "c1", "content": "4C"}});
        assert_eq!(
            tool_message_name(&lc).as_deref(),
            Some("weather"),
            "{class}"
        );
    }
    let answer = json!({"lc": 1, "type": "constructor",
        "id": ["langchain_core", "messages", "AIMessage"],
        "kwargs": {"name": "bot", "tool_call_id": "c1", "content": "hi"}});
    assert_eq!(
        tool_message_name(&answer),
        None,
        "an AI message is no tool result"
    );
}

#[test]
fn shapes_are_recognised_and_others_are_not() {
    let obs =
        json!({"id": "o1", "traceId": "t", "type": "SPAN", "startTime": "2024-01-01T00:00:00Z"});
    let with_trace = Document::One(json!({"id": "t", "observations": [obs.clone()]}));
    assert!(Langfuse.sniff(&with_trace));
    assert!(Langfuse.sniff(&Document::One(json!([obs.clone()]))));
    assert!(Langfuse.sniff(&Document::One(json!({"data": [obs]}))));
    assert!(!Langfuse.sniff(&Document::One(
        json!({"observations": [{"type": "X"}], "id": "t"})
    )));
    assert!(!Langfuse.sniff(&Document::One(json!([{"traj": []}]))));
}

/// Langfuse's own framework-trace files put the traces beside their observations: each trace's
/// observations are a run, named by the trace of their `traceId`.
#[test]
fn traces_listed_beside_their_observations_are_one_run_each() {
    let obs = |id: &str, trace: &str| {
        json!({"id": id, "traceId": trace, "type": "GENERATION", "name": "chat",
               "startTime": "2025-09-19T21:59:59.034Z",
               "input": [{"role": "user", "content": format!("question {id}")}],
               "output": {"role": "assistant", "content": format!("answer {id}")}})
    };
    let doc = Document::One(json!({
        "traces": [{"id": "t1", "name": "First chat"}, {"id": "t2", "name": "Second chat"}],
        "observations": [obs("a", "t2"), obs("b", "t1"), obs("c", "t2")]}));
    assert!(Langfuse.sniff(&doc));
    assert_eq!(super::super::sniff(&doc), Some(SourceFormat::Langfuse));
    assert_eq!(Langfuse.count(&doc), 2);
    let runs = Langfuse.import(doc, None).unwrap_or_default();
    let named: Vec<(&str, &str, usize)> = runs
        .iter()
        .map(|r| {
            let v = &r.value;
            let steps = v["steps"].as_array().map_or(0, Vec::len);
            (
                v["id"].as_str().unwrap_or(""),
                v["title"].as_str().unwrap_or(""),
                steps,
            )
        })
        .collect();
    assert_eq!(named, [("t2", "Second chat", 2), ("t1", "First chat", 1)]);
    // Observations of a trace the list does not hold are still a run, with no trace's name.
    let doc = Document::One(json!({"traces": [{"id": "t1", "name": "First chat"}],
                                   "observations": [obs("a", "t9")]}));
    let runs = Langfuse.import(doc, None).unwrap_or_default();
    assert_eq!(runs[0].value["id"], "t9");
    assert!(runs[0].value.get("title").is_none_or(|t| t != "First chat"));
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
