//! The model call's recorded input (`messages`, `model`), the units' places in it (`at`) and
//! where the status came from (`status_from`, `status_why`): read, warned when of the wrong type,
//! and written back so that the written run loads equal.

use super::*;
use crate::analysis::model::{MessageCall, StatusFrom, UnitAt};
use serde_json::json;

fn load_json(v: serde_json::Value) -> Loaded {
    let text = v.to_string();
    load_str(&text, Path::new("run.json"), &LoadOptions::default())
        .map(|mut runs| runs.remove(0))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn warned(l: &Loaded, part: &str) -> bool {
    l.warnings.iter().any(|w| w.message.contains(part))
}

fn call_run() -> serde_json::Value {
    json!({
        "format": "tdn.run/1", "id": "r1", "status": "failed",
        "status_from": "assumed", "status_why": "nothing recorded it",
        "context_units": [
            {"id": "sys", "kind": "instruction", "text": "Be brief.",
             "at": [{"step": "m1", "message": 0}, {"step": "m2", "message": 0}]},
            {"id": "doc", "kind": "document", "text": "Grüße €5", "produced_by": "r",
             "at": [{"step": "m1", "message": 1, "start": 8, "end": 16}]}
        ],
        "steps": [
            {"id": "r", "kind": "retrieval", "documents": [{"text": "Grüße €5"}]},
            {"id": "m1", "kind": "llm", "model": "gpt-x",
             "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Context Grüße €5\nQ?", "name": "ann", "cache": true},
                {"role": "assistant", "content": null,
                 "tool_calls": [{"id": "c1", "name": "f", "arguments": "{\"a\": 1}"}]},
                {"role": "tool", "content": "42", "tool_call_id": "c1"}
             ],
             "context": {"sent": ["sys", "doc"]}},
            {"id": "m2", "kind": "llm", "messages": [{"role": "system", "content": "Be brief."}],
             "context": {"sent": ["sys"]}}
        ]
    })
}

#[test]
fn messages_model_places_and_the_status_source_are_read() {
    let l = load_json(call_run());
    assert!(l.warnings.is_empty(), "{:#?}", l.warnings);
    let run = &l.run;
    assert_eq!(run.status_from, StatusFrom::Assumed);
    assert_eq!(run.status_why.as_deref(), Some("nothing recorded it"));
    let m1 = &run.steps[1];
    assert_eq!(m1.request_model(), Some("gpt-x"));
    let msgs = m1.messages();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[1].name.as_deref(), Some("ann"));
    assert_eq!(msgs[1].extra.get("cache"), Some(&json!(true)));
    assert_eq!(msgs[2].content, "", "null content is empty");
    assert_eq!(
        msgs[2].tool_calls,
        vec![MessageCall {
            id: Some("c1".into()),
            name: "f".into(),
            arguments: "{\"a\": 1}".into()
        }]
    );
    assert_eq!(msgs[3].tool_call_id.as_deref(), Some("c1"));
    let doc = run.unit("doc").expect("doc");
    assert_eq!(doc.at, vec![UnitAt::span("m1", 1, 8, 16)]);
    assert_eq!(doc.at[0].slice(&msgs[1].content), Some(doc.text.as_str()));
    assert_eq!(run.unit("sys").map(|u| u.at.len()), Some(2));
    assert!(run.steps[0].messages().is_empty());
}

#[test]
fn a_written_run_loads_back_equal() {
    let first = load_json(call_run()).run;
    let written = serde_json::to_value(&first).unwrap_or_default();
    assert_eq!(written["status_from"], "assumed");
    assert_eq!(written["steps"][1]["model"], "gpt-x");
    assert_eq!(written["steps"][1]["messages"][2]["content"], "");
    assert_eq!(written["context_units"][1]["at"][0]["start"], 8);
    let again = load_json(written).run;
    assert_eq!(first, again);
    // The default source is not written.
    let mut plain = first.clone();
    plain.status_from = StatusFrom::Recorded;
    plain.status_why = None;
    let w = serde_json::to_value(&plain).unwrap_or_default();
    assert!(w.get("status_from").is_none() && w.get("status_why").is_none());
}

#[test]
fn parts_of_the_wrong_type_are_warned_and_ignored() {
    let mut v = call_run();
    v["status_from"] = json!("maybe");
    v["steps"][1]["model"] = json!(5);
    v["steps"][1]["messages"][1]["content"] = json!([{"type": "text", "text": "x"}]);
    v["steps"][1]["messages"][1]["name"] = json!(7);
    v["steps"][1]["messages"][2]["tool_calls"][0]["arguments"] = json!({"a": 1});
    v["steps"][2]["messages"] = json!([{"content": "no role"}]);
    let l = load_json(v);
    for part in [
        "\"status_from\" is 'maybe'",
        "\"model\" is a number",
        "messages[1].content is an array",
        "messages[1].name is a number",
        "arguments is an object, not JSON text",
        "messages[0] has no string \"role\"; \"messages\" was ignored",
    ] {
        assert!(warned(&l, part), "{part}: {:#?}", l.warnings);
    }
    let run = &l.run;
    assert_eq!(run.status_from, StatusFrom::Recorded);
    assert_eq!(run.steps[1].request_model(), None);
    assert_eq!(run.steps[1].messages()[1].content, "");
    assert_eq!(
        run.steps[1].messages()[2].tool_calls[0].arguments,
        "{\"a\":1}"
    );
    assert!(run.steps[2].messages().is_empty());
    // The entry pointing into the ignored list is dropped.
    assert_eq!(run.unit("sys").map(|u| u.at.len()), Some(1));
    assert!(warned(&l, "records 0 message(s)"));
    let mut v = call_run();
    v["steps"][1]["messages"] = json!("hi");
    assert!(warned(
        &load_json(v),
        "\"messages\" is a string, not an array"
    ));
}

#[test]
fn places_are_checked_against_the_steps() {
    let mut v = call_run();
    v["context_units"][1]["at"] = json!([
        {"step": "ghost", "message": 0},
        {"step": "m1", "message": 9},
        {"step": "m1", "message": 1, "start": 8, "end": 99},
        {"step": "m1", "message": 1, "start": 9, "end": 8},
        {"step": "m1", "message": 1, "start": 8},
        {"step": "m1", "message": -1},
        {"step": "m1", "message": 1, "start": 10, "end": 18},
        "x",
        {"step": "m1", "message": 1, "start": 8, "end": 16}
    ]);
    v["context_units"][0]["at"] = json!({"step": "m1"});
    v["steps"][2]["context"] = json!({"sent": []});
    v["context_units"].as_array_mut().unwrap().push(
        json!({"id": "late", "kind": "instruction", "text": "Be brief.", "at": [{"step": "m2", "message": 0}]}),
    );
    let l = load_json(v);
    for part in [
        "names no step of this run ('ghost')",
        "names messages[9] of step 'm1' (position 2), which records 4 message(s)",
        "gives 8..99 in messages[1]",
        "gives 9..8 in messages[1]",
        "gives one of \"start\" and \"end\" without the other",
        "has no \"message\" position",
        "is not the unit's text",
        "at[7] is not an object",
        "\"at\" is an object, not an array",
        "context unit 'late' sits in the messages of step 'm2' (position 3), whose context.sent does not list it",
    ] {
        assert!(warned(&l, part), "{part}: {:#?}", l.warnings);
    }
    let doc = l.run.unit("doc").expect("doc");
    // Kept: the one whose text differs (warned) and the right one.
    assert_eq!(
        doc.at,
        vec![UnitAt::span("m1", 1, 10, 18), UnitAt::span("m1", 1, 8, 16)]
    );
    assert!(l.run.unit("sys").is_some_and(|u| u.at.is_empty()));
}

#[test]
fn hostile_places_cost_a_bounded_comparison() {
    // One long unit named many times at the same long message: the text comparisons stop at
    // the budget, every entry is still bounds-checked, and the load finishes.
    let long = "x".repeat(100_000);
    let at: Vec<serde_json::Value> = (0..5_000)
        .map(|_| json!({"step": "m", "message": 0, "start": 0, "end": 100_000}))
        .collect();
    let v = json!({
        "format": "tdn.run/1", "id": "r", "status": "failed",
        "context_units": [{"id": "u", "kind": "document", "text": long, "at": at}],
        "steps": [{"id": "m", "kind": "llm", "messages": [{"role": "user", "content": long}],
                   "context": {"sent": ["u"]}}]
    });
    let l = load_json(v);
    assert!(l.warnings.is_empty(), "{:#?}", l.warnings);
    assert_eq!(l.run.unit("u").map(|u| u.at.len()), Some(5_000));
}

#[test]
fn recorded_costs_are_read_and_written_back_and_bad_ones_warned() {
    let mut v = call_run();
    v["cost_usd"] = json!(0.0039);
    v["steps"][1]["usage"] = json!({"input_tokens": 5, "cost_usd": 0.0012});
    let l = load_json(v.clone());
    assert_eq!(l.run.cost_usd, Some(0.0039));
    let u = l.run.steps[1].usage().cloned().unwrap_or_default();
    assert_eq!((u.input_tokens, u.cost()), (Some(5), Some(0.0012)));
    let written = serde_json::to_value(&l.run).unwrap_or_default();
    assert_eq!(written["cost_usd"], 0.0039);
    assert_eq!(written["steps"][1]["usage"]["cost_usd"], 0.0012);
    v["cost_usd"] = json!(-1);
    v["steps"][1]["usage"] = json!({"cost_usd": "lots"});
    let l = load_json(v);
    assert_eq!(l.run.cost_usd, None);
    assert_eq!(l.run.steps[1].usage().and_then(|u| u.cost()), None);
    assert!(warned(&l, "\"cost_usd\" is a number"));
    assert!(warned(&l, "\"usage.cost_usd\" is not a number >= 0"));
}
