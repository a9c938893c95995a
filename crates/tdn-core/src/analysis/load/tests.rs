//! Loader rules of docs/run-format.md: each error stops with the file, step and field named; each
//! warning drops the offending part and the run still loads.

use super::*;
use crate::analysis::model::{RunStatus, StepKind, UnitId};
use serde_json::json;

fn load_json(v: serde_json::Value) -> Result<Loaded, LoadError> {
    let text = v.to_string();
    load_str(&text, Path::new("run.json"), &LoadOptions::default()).map(|mut runs| runs.remove(0))
}

fn msg(r: Result<Loaded, LoadError>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn minimal(steps: serde_json::Value) -> serde_json::Value {
    json!({"format": "tdn.run/1", "id": "r1", "status": "failed", "steps": steps})
}

#[test]
fn bad_json_names_file_line_and_column() {
    let e = load_str(
        "{\n  \"format\": \"tdn.run/1\",\n  \"id\": oops\n}",
        Path::new("run.json"),
        &LoadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("run.json:3:9: not valid JSON"), "{e}");
}

#[test]
fn values_in_a_row_are_read_whether_one_per_line_or_pretty_printed() {
    let one = "{\"resourceSpans\": []}";
    let pretty = "{\n  \"resourceSpans\": []\n}";
    for text in [
        format!("{one}\n{one}\n"),
        format!("{one}\r\n\r\n{one}\r\n"),
        format!("{pretty}\n{pretty}\n"),
    ] {
        match parse_document(&text, Path::new("t.json")) {
            Ok(Document::Lines(vs)) => assert_eq!(vs.len(), 2, "{text:?}"),
            other => panic!("{text:?} gave {other:?}"),
        }
    }
    let e = parse_document(&format!("{one}\n{{\"a\": }}\n"), Path::new("t.json"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.json:2:7: not valid JSON"), "{e}");
}

#[test]
fn json_after_a_native_run_is_named_as_the_problem() {
    let run = minimal(json!([{"id": "s1", "kind": "user"}])).to_string();
    let e = load_str(
        &format!("{run} 5"),
        Path::new("run.json"),
        &LoadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("more JSON follows"), "{e}");
}

#[test]
fn an_empty_file_says_so() {
    for text in ["", "  \n\r\n"] {
        let e = parse_document(text, Path::new("e.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("e.json:1:1:") && e.contains("the file is empty"),
            "{e}"
        );
    }
}

#[test]
fn a_step_without_kind_names_the_step_and_field() {
    let e = msg(load_json(minimal(
        json!([{"id": "s1", "kind": "user"}, {"id": "s2"}]),
    )));
    assert_eq!(
        e,
        "run.json: step 's2' (position 2): \"kind\" is missing; give one of user, llm, tool, retrieval, memory_read, memory_write, decision, agent, system, event"
    );
}

#[test]
fn duplicate_step_ids_are_an_error() {
    let e = msg(load_json(minimal(
        json!([{"id": "a", "kind": "user"}, {"id": "a", "kind": "llm"}]),
    )));
    assert!(
        e.contains("step 'a' (position 2)") && e.contains("position 1"),
        "{e}"
    );
}

#[test]
fn top_level_errors() {
    // An array is no run, but it may be a trace: the message names each format tried (issue 10).
    let array = msg(load_json(json!([1, 2])));
    assert!(
        array.contains("the file holds a JSON array of 2 item(s) that matches no known trace format; tried, in order:"),
        "{array}"
    );
    assert!(array.contains("\n  messages: "), "{array}");
    assert!(!array.contains("must be a JSON object"), "{array}");
    assert!(
        msg(load_json(
            json!({"id": "x", "status": "failed", "steps": []})
        ))
        .contains("\"format\" is missing")
    );
    assert!(
        msg(load_json(
            json!({"format": "tdn.run/9", "id": "x", "status": "failed", "steps": []})
        ))
        .contains("tdn.run/9")
    );
    assert!(
        msg(load_json(
            json!({"format": "tdn.run/1", "status": "failed", "steps": []})
        ))
        .contains("\"id\" is missing")
    );
    assert!(
        msg(load_json(
            json!({"format": "tdn.run/1", "id": "x", "status": "crashed", "steps": []})
        ))
        .contains("\"status\"")
    );
    assert!(
        msg(load_json(
            json!({"format": "tdn.run/1", "id": "x", "status": "failed", "steps": {}})
        ))
        .contains("\"steps\"")
    );
    assert!(msg(load_json(minimal(json!(["s1"])))).contains("position 1"));
}

#[test]
fn recoverable_problems_are_warnings_and_the_reference_is_dropped() {
    let run = json!({
        "format": "tdn.run/1", "id": "r1", "status": "failed",
        "context_units": [
            {"id": "u1", "kind": "document", "text": "a"},
            {"id": "u1", "kind": "document", "text": "b"},
            {"id": "u2", "kind": "memory", "text": "c", "produced_by": "nowhere"}
        ],
        "steps": [
            {"id": "s1", "kind": "user", "parent": "s1"},
            {"id": "s2", "kind": "weird", "parent": "s3"},
            {"id": "s3", "kind": "llm", "parent": "s1", "usage": {"input_tokens": "many"},
             "context": {"available": ["u1", "ghost"], "sent": ["u1"]}},
            {"id": "s4", "kind": "decision", "decision": {"chosen": "a", "options": [{"id": "a", "requires": ["s9", "s3"]}]}}
        ]
    });
    let loaded = load_json(run).unwrap();
    let fields: Vec<_> = loaded
        .warnings
        .iter()
        .map(|w| w.field.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        fields,
        [
            "kind",
            "usage",
            "context_units",
            "context_units",
            "parent",
            "parent",
            "context",
            "requires"
        ],
        "{:#?}",
        loaded.warnings
    );
    let r = &loaded.run;
    assert_eq!(r.steps[0].parent, None);
    assert_eq!(r.steps[1].kind, StepKind::Event);
    assert_eq!(r.steps[1].kind_name(), Some("weird"));
    assert_eq!(r.steps[1].parent, None);
    assert_eq!(r.steps[2].parent.as_ref().map(|p| p.as_str()), Some("s1"));
    assert_eq!(r.unit("u1").map(|u| u.text.as_str()), Some("a"));
    assert_eq!(r.unit("u2").and_then(|u| u.produced_by.clone()), None);
    let ctx = r.steps[2].context.as_ref().unwrap();
    assert_eq!(ctx.available.as_ref().unwrap().len(), 1);
    let req = &r.steps[3].decision.as_ref().unwrap().options[0].requires;
    assert_eq!(req.len(), 1);
    assert_eq!(r.steps[2].index, 2);
    assert_eq!(r.status, RunStatus::Failed);
}

#[test]
fn empty_steps_load_with_a_warning() {
    let loaded = load_json(minimal(json!([]))).unwrap();
    assert!(loaded.run.steps.is_empty());
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(loaded.warnings[0].field.as_deref(), Some("steps"));
}

#[test]
fn unknown_fields_are_kept() {
    let mut v = minimal(json!([{"id": "s1", "kind": "user", "x_custom": {"a": 1}}]));
    v["recorder"] = json!("sdk 1.2");
    let loaded = load_json(v).unwrap();
    assert_eq!(loaded.run.extra.get("recorder"), Some(&json!("sdk 1.2")));
    assert_eq!(
        loaded.run.steps[0].extra().get("x_custom"),
        Some(&json!({"a": 1}))
    );
    assert!(loaded.warnings.is_empty());
}

#[test]
fn hostile_step_ids_are_inert_in_messages() {
    let e = msg(load_json(minimal(json!([{"id": "\u{1b}[2J", "kind": 5}]))));
    assert!(!e.contains('\u{1b}'), "{e:?}");
    assert!(e.contains("\\u{1b}[2J"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let e = load_str(&deep, Path::new("deep.json"), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("deep.json:1:"), "{e}");
}

#[test]
fn warnings_past_the_cap_are_counted_in_one() {
    let steps: Vec<serde_json::Value> = (0..1_500)
        .map(|i| json!({"id": format!("s{i}"), "kind": "weird"}))
        .collect();
    let loaded = load_json(minimal(json!(steps))).expect("a run with odd kinds loads");
    let w = &loaded.warnings;
    assert_eq!(w.len(), warning::MAX_WARNINGS + 1);
    assert!(w[0].message.contains("unknown kind 'weird'"), "{:?}", w[0]);
    assert_eq!(w[0].index, Some(0));
    let last = &w[warning::MAX_WARNINGS].message;
    assert!(
        last.starts_with("500 more warning(s) are not listed"),
        "{last}"
    );
    assert_eq!(loaded.run.steps.len(), 1_500, "the steps are all kept");
}

#[test]
fn container_is_read_kept_when_written_back_and_a_bad_value_is_warned() {
    let l = load_json(minimal(json!([
        {"id": "a", "kind": "agent", "container": true, "error": "step failed"},
        {"id": "t", "kind": "tool", "parent": "a", "tool": {"name": "x"}, "error": "timeout"},
        {"id": "e", "kind": "event", "container": "yes"}
    ])))
    .unwrap_or_else(|e| panic!("{e}"));
    let run = &l.run;
    assert!(run.steps[0].is_container());
    assert!(!run.steps[1].is_container());
    assert!(!run.steps[2].is_container());
    assert!(
        l.warnings
            .iter()
            .any(|w| w.field.as_deref() == Some("container")),
        "{:?}",
        l.warnings
    );
    // The wrapper's failure came from the tool inside it: one failure, the message still kept.
    assert_eq!(run.steps[0].error, None);
    assert_eq!(run.steps[0].attributes()["container.error"], "step failed");
    assert_eq!(run.steps[1].error.as_deref(), Some("timeout"));
    let written = serde_json::to_value(&run.steps[0]).unwrap_or_default();
    assert_eq!(written["container"], true);
    let plain = serde_json::to_value(&run.steps[1]).unwrap_or_default();
    assert!(plain.get("container").is_none(), "false is not written");
}

#[test]
fn a_run_read_from_its_file_is_the_run_read_from_its_text_errors_and_all() {
    let run = minimal(json!([
        {"id": "a", "kind": "llm", "output": "h\u{e9}llo", "usage": {"input_tokens": "x"}},
        {"id": "b", "kind": "tool", "parent": "a"}
    ]))
    .to_string();
    let cases: Vec<Vec<u8>> = vec![
        run.clone().into_bytes(),
        [b"\xef\xbb\xbf".as_slice(), run.as_bytes()].concat(),
        [b"\xef\xbb\xbf\xef\xbb\xbf".as_slice(), run.as_bytes()].concat(),
        run.replace("\"b\"", "\"a\"").into_bytes(),
        run.replace("\"tool\"", "5").into_bytes(),
        run.replace("\"r1\"", "7").into_bytes(),
        run.replace("\"b\"", "\"b\u{1}\"").into_bytes(),
        run.replace("\"b\"", "\"b\\ud800\"").into_bytes(),
        {
            // a byte that is not UTF-8 inside a step
            let mut bytes = run.clone().into_bytes();
            bytes.insert(run.find("\"b\"").unwrap_or(0) + 2, 0xff);
            bytes
        },
        format!("{run} 5").into_bytes(),
        run.replace("}]", "},]").into_bytes(),
        Vec::new(),
    ];
    let dir = std::env::temp_dir();
    for (n, bytes) in cases.iter().enumerate() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("tdn-load-path-{nanos}-{n}.json"));
        std::fs::write(&path, bytes).unwrap();
        for index in [None, Some(0), Some(1)] {
            let opts = LoadOptions {
                format: None,
                index,
            };
            let from_file = load_path(&path, &opts);
            let from_text = read_text(&path).and_then(|text| load_str(&text, &path, &opts));
            match (from_file, from_text) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.len(), b.len());
                    for (a, b) in a.iter().zip(&b) {
                        assert_eq!(a.run, b.run, "{n}");
                        assert_eq!(a.warnings, b.warnings, "{n}");
                        assert_eq!(a.source_format, b.source_format, "{n}");
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{n}"),
                (a, b) => panic!("case {n}: file {a:?}; text {b:?}"),
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Many context units, read in parallel runs of units: the units kept and every warning come in
/// the units' order, each unit's warnings together, as when they were read one after another.
#[test]
fn context_unit_warnings_keep_the_units_order_however_many_units() {
    // Unit k (of 600: several tasks of units, fewer warnings than the loader lists) is written
    // so that k % 7 picks its problem.
    let units: Vec<serde_json::Value> = (0..600)
        .map(|k| match k % 7 {
            0 => json!(k),
            1 => json!({"kind": "document", "text": "no id"}),
            // The id of unit k - 4 (a kept unit, k - 4 % 7 == 5), from the second round on.
            2 if k >= 7 => {
                json!({"id": format!("u{}", k - 4), "kind": "document", "text": "again"})
            }
            3 => json!({"id": format!("u{k}"), "text": "no kind", "tokens": -1}),
            4 => json!({"id": format!("u{k}"), "kind": "memory", "produced_by": "ghost"}),
            _ => json!({"id": format!("u{k}"), "kind": "document", "text": format!("t{k}")}),
        })
        .collect();
    let run = json!({
        "format": "tdn.run/1", "id": "r1", "status": "failed",
        "context_units": units,
        "steps": [{"id": "s1", "kind": "user"}]
    });
    let loaded = load_json(run).unwrap();
    // What the rules of docs/run-format.md say of each unit, in order.
    let mut want: Vec<String> = Vec::new();
    let mut kept: Vec<String> = Vec::new();
    for k in 0..600 {
        match k % 7 {
            0 => want.push(format!("context_units[{k}] is a number, not an object")),
            1 => want.push(format!("context_units[{k}] has no string \"id\"")),
            2 if k >= 7 => want.push(format!(
                "context_units[{k}] repeats the unit id 'u{}'",
                k - 4
            )),
            3 => {
                want.push(format!("context unit 'u{k}' has no string \"kind\""));
                want.push(format!("context unit 'u{k}': \"tokens\" is not"));
                kept.push(format!("u{k}"));
            }
            4 => {
                want.push(format!("context unit 'u{k}' has no string \"text\""));
                want.push(format!(
                    "context unit 'u{k}': \"produced_by\" names no step"
                ));
                kept.push(format!("u{k}"));
            }
            _ => kept.push(format!("u{k}")),
        }
    }
    let got: Vec<&str> = loaded.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(g.starts_with(w.as_str()), "{g} / {w}");
    }
    let ids: Vec<&str> = loaded
        .run
        .context_units
        .iter()
        .map(|u| u.id.as_str())
        .collect();
    assert_eq!(ids, kept);
    assert_eq!(loaded.run.unit("u5").map(|u| u.text.as_str()), Some("t5"));
}

/// A step's `context` names units of the run: each problem drops what it touches, with a
/// warning that says what it was, in the order the format lists them.
#[test]
fn a_steps_context_keeps_the_units_it_names_and_warns_of_the_rest() {
    let text = r#"{"format": "tdn.run/1", "id": "r", "status": "failed",
        "context_units": [{"id": "u1", "kind": "document", "text": "a"}],
        "steps": [
          {"id": "s1", "kind": "llm", "context": {"available": ["u1", "ghost", 3], "sent": ["u1"]}},
          {"id": "s2", "kind": "llm", "context": "all of it"},
          {"id": "s3", "kind": "llm", "context": {"available": null}},
          {"id": "s4", "kind": "llm", "context": {"available": {"u1": true}, "sent": ["u1", "u1"]}},
          {"id": "s5", "kind": "llm", "context": {"sent": ["u1"], "sent": ["gone"]}}
        ]}"#;
    let loaded = load_str(text, Path::new("run.json"), &LoadOptions::default())
        .unwrap()
        .remove(0);
    let context = |i: usize| {
        loaded.run.steps[i].context.as_ref().map(|c| {
            let ids = |v: &[UnitId]| v.iter().map(|u| u.as_str().to_owned()).collect::<Vec<_>>();
            (c.available.as_deref().map(ids), ids(&c.sent))
        })
    };
    let u1 = || "u1".to_owned();
    assert_eq!(context(0), Some((Some(vec![u1()]), vec![u1()])));
    assert_eq!(context(1), None);
    assert_eq!(context(2), Some((None, vec![])));
    assert_eq!(context(3), Some((Some(vec![]), vec![u1(), u1()])));
    // A repeated key: the last value counts, as for every object of a run.
    assert_eq!(context(4), Some((None, vec![])));
    let got: Vec<&str> = loaded.warnings.iter().map(|w| w.message.as_str()).collect();
    let want = [
        "\"context.available\" names unit 'ghost', which is not in context_units",
        "\"context.available\" holds a number, not a unit id",
        "\"context\" is a string, not an object",
        "\"context.sent\" is missing; taken as nothing sent",
        "\"context.available\" is an object, not an array of unit ids",
        "\"context.sent\" names unit 'gone', which is not in context_units",
    ];
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(want) {
        assert!(g.contains(w), "{g} / {w}");
    }
}
