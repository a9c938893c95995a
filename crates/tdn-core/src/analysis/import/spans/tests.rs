//! The span tree as a run: ids kept, containers marked, ids that are not OpenTelemetry's warned.

use super::*;
use serde_json::json;

fn span(id: &str, parent: Option<&str>, attrs: Value) -> Span {
    Span {
        trace_id: "0af7651916cd43dd8448eb211c80319c".into(),
        span_id: id.into(),
        parent_id: parent.map(str::to_owned),
        name: id.into(),
        attrs: match attrs {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        ..Span::default()
    }
}

fn run_of(spans: &[Span], hex_ids: bool) -> ImportedRun {
    let trace = spans
        .first()
        .map(|s| s.trace_id.clone())
        .unwrap_or_default();
    build_run(
        &trace,
        spans.to_vec(),
        Source {
            noun: "span",
            resources: &[],
            hex_ids,
        },
        Build::Json,
    )
}

#[test]
fn a_smolagents_tree_marks_its_wrappers_and_keeps_span_ids() {
    let spans = [
        span("a1a1a1a1a1a1a1a1", None, json!({})),
        span(
            "b2b2b2b2b2b2b2b2",
            Some("a1a1a1a1a1a1a1a1"),
            json!({
            "openinference.span.kind": "AGENT",
            "input.value": "{\"task\": \"Which actor played Ray?\"}",
            "output.value": "Marek"}),
        ),
        span(
            "c3c3c3c3c3c3c3c3",
            Some("b2b2b2b2b2b2b2b2"),
            json!({"openinference.span.kind": "CHAIN"}),
        ),
        span(
            "d4d4d4d4d4d4d4d4",
            Some("c3c3c3c3c3c3c3c3"),
            json!({"openinference.span.kind": "LLM"}),
        ),
        span("e5e5e5e5e5e5e5e5", Some("a1a1a1a1a1a1a1a1"), json!({})),
    ];
    let run = run_of(&spans, true).value;
    let steps = run["steps"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "a1a1a1a1a1a1a1a1",
            "b2b2b2b2b2b2b2b2",
            "c3c3c3c3c3c3c3c3",
            "d4d4d4d4d4d4d4d4",
            "e5e5e5e5e5e5e5e5"
        ]
    );
    let containers: Vec<bool> = steps.iter().map(|s| s["container"] == true).collect();
    assert_eq!(containers, [true, true, true, false, false]);
    assert_eq!(run["task"], "Which actor played Ray?");
    assert_eq!(run["final_answer"], "Marek");
}

#[test]
fn ids_that_are_not_opentelemetry_s_are_warned_once_each() {
    let mut spans = [
        span("ABC", None, json!({})),
        span("0000000000000000", Some("ABC"), json!({})),
        span("f6f6f6f6f6f6f6f6", Some("ABC"), json!({})),
    ];
    for s in &mut spans {
        s.trace_id = "5B8EFFF798038103D269B633813FC60".into(); // 31 digits
    }
    let r = run_of(&spans, true);
    let said: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        said.iter().any(|m| m
            .starts_with("the trace id '5B8EFFF798038103D269B633813FC60' is not 32 hex digits")),
        "{said:?}"
    );
    assert!(
        said.iter().any(
            |m| m.starts_with("2 span id(s) are not 16 hex digits ('ABC', '0000000000000000')")
        ),
        "{said:?}"
    );
    assert_eq!(
        r.value["steps"][1]["parent"], "ABC",
        "kept as written, parents still resolve"
    );
    assert!(
        run_of(&spans, false)
            .warnings
            .iter()
            .all(|w| !w.message.contains("hex digits"))
    );
}

#[test]
fn a_wide_and_deep_tree_of_many_agents_builds_in_one_pass() {
    // 10,000 top-level agents, each with a tool call, then a chain 10,000 deep: nothing here may
    // look at every agent for every step.
    let mut spans = Vec::new();
    for i in 0..10_000 {
        let agent = format!("a{i}");
        spans.push(span(
            &agent,
            None,
            json!({"openinference.span.kind": "AGENT"}),
        ));
        spans.push(span(
            &format!("t{i}"),
            Some(&agent),
            json!({"openinference.span.kind": "TOOL", "tool.name": "final_answer",
                   "input.value": "{\"answer\": \"42\"}"}),
        ));
    }
    for i in 0..10_000 {
        let parent = (i > 0).then(|| format!("c{}", i - 1));
        spans.push(span(&format!("c{i}"), parent.as_deref(), json!({})));
    }
    let run = run_of(&spans, false).value;
    assert_eq!(run["steps"].as_array().map(Vec::len), Some(30_000));
    assert_eq!(run["final_answer"], "42");
}

#[test]
fn traces_group_in_order_of_first_appearance_and_resources_are_kept_once() {
    let groups = by_trace([
        ("t2", 'a'),
        ("t1", 'b'),
        ("t2", 'c'),
        ("t3", 'd'),
        ("t1", 'e'),
    ]);
    assert_eq!(
        groups,
        [
            ("t2", vec!['a', 'c']),
            ("t1", vec!['b', 'e']),
            ("t3", vec!['d'])
        ]
    );
    let mut r = Resources::default();
    let svc = |name: &str| match json!({"service.name": name}) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    assert_eq!(r.intern(svc("a")), 0);
    assert_eq!(r.intern(svc("b")), 1);
    assert_eq!(r.intern(svc("a")), 0);
    assert_eq!(r.list.len(), 2);
}

/// A model call's input is read as messages where its step is built (issue 28); the task the
/// outcome reads from those inputs must be the one it read when the units took them later.
#[test]
fn the_task_is_read_from_model_inputs_taken_out_as_they_are_built() {
    let messages = |text: &str| {
        json!({"openinference.span.kind": "LLM",
               "input.value": json!([{"role": "system", "content": "You are an agent."},
                                     {"role": "user", "content": text}]).to_string()})
    };
    // An agent that made two model calls, each sent a system prompt and one user message.
    let two_calls = |first: &str, second: &str| {
        let agent = "a1a1a1a1a1a1a1a1";
        let agent_kind = json!({"openinference.span.kind": "AGENT"});
        [
            span(agent, None, agent_kind),
            span("b2b2b2b2b2b2b2b2", Some(agent), messages(first)),
            span("c3c3c3c3c3c3c3c3", Some(agent), messages(second)),
        ]
    };
    // A smolagents prompt: the task follows `New task:` in a later call, not the first.
    let run = run_of(
        &two_calls(
            "Plan the search first.",
            "New task:\nWhich river runs through Vienna?",
        ),
        true,
    );
    assert_eq!(run.value["task"], "Which river runs through Vienna?");
    // Both calls' inputs became messages: no input is left on them.
    let steps = run.value["steps"].as_array().cloned().unwrap_or_default();
    assert!(steps.iter().all(|s| s.get("input").is_none()));
    let called: Vec<usize> = run.messages.iter().map(|(at, _)| *at).collect();
    assert_eq!(called, [1, 2]);
    // Without the prompt's marker, the last user message of the first call that has one.
    let spans = two_calls("Which river runs through Vienna?", "And through Budapest?");
    assert_eq!(
        run_of(&spans, true).value["task"],
        "Which river runs through Vienna?"
    );
    // A model call at the root states the task with its own input.
    let spans = [span(
        "a1a1a1a1a1a1a1a1",
        None,
        messages("Which river runs through Vienna?"),
    )];
    assert_eq!(
        run_of(&spans, true).value["task"],
        "Which river runs through Vienna?"
    );
}
