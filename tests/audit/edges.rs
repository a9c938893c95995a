//! Hand-made extremes through the real binary (`validate`, `analyze`, `analyze --json` and the
//! headless screen): 100,000 steps, 1 MB strings everywhere, nesting at and past the JSON
//! parser's limit, numbers out of every range, ids shaped like link values and shared between
//! steps and units, bidi overrides, zero-width and combining characters, control bytes and lone
//! surrogates. Each must finish with exit 0 (or 2 for a file that is not JSON) and print nothing
//! raw.

use super::support::{KEYS, assert_inert_bytes, show, tdn};
use serde_json::{Value, json};
use std::path::Path;

/// Runs the binary on `path` with every printing command and checks exit codes and inertness.
fn end_to_end(dir: &Path, path: &Path, loads: bool) {
    let p = path.to_str().unwrap();
    let want = if loads { 0 } else { 2 };
    for args in [
        vec!["validate", p],
        vec!["analyze", p],
        vec!["analyze", "--json", p],
        vec![p, "--render", "80x24", "--keys", KEYS],
    ] {
        let out = tdn(dir, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(want), "{args:?}: {}", show(&out));
        assert_inert_bytes(
            &out.stdout
                .iter()
                .map(|&b| if b == b'\n' { b' ' } else { b })
                .collect::<Vec<_>>(),
            &format!("{args:?} stdout"),
        );
        assert_inert_bytes(
            &out.stderr
                .iter()
                .map(|&b| if b == b'\n' { b' ' } else { b })
                .collect::<Vec<_>>(),
            &format!("{args:?} stderr"),
        );
    }
}

fn write_run(dir: &Path, name: &str, v: &Value) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

#[test]
fn a_hundred_thousand_steps_load_analyse_and_render() {
    let dir = tempfile::tempdir().unwrap();
    let steps: Vec<Value> = (0..100_000)
        .map(|i| {
            let id = format!("s{i}");
            match i % 5 {
                0 => json!({"id": id, "kind": "user", "output": format!("order ORD-{} please \u{1b}[31m", i % 997)}),
                1 => json!({"id": id, "kind": "llm", "output": {"tool_call": {"name": "lookup", "arguments": {"order": format!("ORD-{}", i % 997)}}},
                            "usage": {"input_tokens": 1000, "output_tokens": 20}}),
                2 => json!({"id": id, "kind": "tool", "tool": {"name": "lookup", "arguments": {"order": format!("ORD-{}", i % 997)}},
                            "error": if i % 7 == 0 { Value::from("order not found \u{202e}") } else { Value::Null },
                            "output": "status shipped on 2026-11-06"}),
                3 => json!({"id": id, "kind": "retrieval", "input": "policy", "documents": [{"text": "Refunds take 5 days.", "outdated": i % 11 == 0}]}),
                _ => json!({"id": id, "kind": "llm", "parent": format!("s{}", i - 1), "output": "The order ORD-1 shipped."}),
            }
        })
        .collect();
    let v = json!({"format": "tdn.run/1", "id": "big", "status": "failed", "limits": {"max_steps": 50},
                   "model": {"context_window": 1000}, "final_answer": "Your order shipped on 2026-11-06.",
                   "tools": [{"name": "lookup", "mutates": true}], "steps": steps});
    let p = write_run(dir.path(), "big.json", &v);
    let p = p.to_str().unwrap();
    for args in [
        vec!["analyze", "--json", p],
        vec![p, "--render", "80x24", "--keys", "G j 2 j"],
    ] {
        let out = tdn(dir.path(), &args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        assert_inert_bytes(
            &out.stdout
                .iter()
                .map(|&b| if b == b'\n' { b' ' } else { b })
                .collect::<Vec<_>>(),
            "big run",
        );
    }
}

#[test]
fn one_megabyte_strings_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let mb = |c: &str| c.repeat((1 << 20) / c.len());
    let big = mb("Friday ORD-1042 \u{1b}[2J ");
    let words = mb("refund policy ");
    let v = json!({
        "format": "tdn.run/1", "id": mb("i"), "title": big, "status": "failed", "task": words,
        "final_answer": words, "reference_answer": big, "error": big,
        "tools": [{"name": mb("t"), "description": words, "mutates": true}],
        "context_units": [{"id": "u", "kind": "document", "text": big}],
        "steps": [
            {"id": mb("s"), "kind": "user", "output": big, "name": big, "agent": big},
            {"id": "s2", "kind": "llm", "input": big, "output": words, "context": {"sent": ["u"], "available": ["u"]}},
            {"id": "s3", "kind": "tool", "tool": {"name": mb("t"), "arguments": {"x": big}}, "error": big},
            {"id": "s4", "kind": "retrieval", "input": big, "documents": [{"id": big, "text": words, "source": big, "outdated": true}]},
            {"id": "s5", "kind": "memory_read", "memory": {"key": big, "value": words}},
        ]
    });
    let p = write_run(dir.path(), "mb.json", &v);
    end_to_end(dir.path(), &p, true);
}

#[test]
fn nesting_numbers_ids_and_unicode_at_the_edges() {
    let dir = tempfile::tempdir().unwrap();
    // Nested below serde's limit loads; far past it is bad JSON, exit 2.
    let mut deep = json!("leaf");
    for i in 0..120 {
        deep = if i % 2 == 0 {
            json!([deep])
        } else {
            json!({"k": deep})
        };
    }
    let v = json!({"format": "tdn.run/1", "id": "deep", "status": "failed",
                   "steps": [{"id": "s1", "kind": "llm", "output": deep, "input": deep}]});
    end_to_end(dir.path(), &write_run(dir.path(), "deep.json", &v), true);
    let p = dir.path().join("deeper.json");
    let text = format!(
        "{{\"format\": \"tdn.run/1\", \"id\": \"d\", \"status\": \"failed\", \"steps\": [{{\"id\": \"s1\", \"kind\": \"llm\", \"output\": {}{}}}]}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(&p, text).unwrap();
    end_to_end(dir.path(), &p, false);

    // Numbers out of every range the run format uses.
    let v = json!({
        "format": "tdn.run/1", "id": "nums", "status": "failed",
        "model": {"context_window": 0}, "limits": {"max_steps": -1},
        "context_units": [{"id": "u", "kind": "document", "text": "t", "tokens": -5}],
        "steps": [
            {"id": "s1", "kind": "llm", "usage": {"input_tokens": 1e300, "output_tokens": -1}, "context_window": 1.5,
             "started_at": 1e20, "ended_at": "not a date", "output": [1e308, -1e308, 5e-324, -0.0, u64::MAX, i64::MIN]},
            {"id": "s2", "kind": "llm", "usage": {"input_tokens": u64::MAX}, "context_window": u64::MAX,
             "started_at": "2026-13-45T99:99:99Z", "ended_at": -1},
            {"id": "s3", "kind": "tool", "tool": {"name": "t", "arguments": {"n": 1e308}}, "error": "NaN"},
            {"id": "s4", "kind": "llm", "usage": {"input_tokens": "NaN"}, "context_window": "Infinity"}
        ],
        "final_answer": "It costs NaN dollars, or Infinity, or 1e308."
    });
    end_to_end(dir.path(), &write_run(dir.path(), "nums.json", &v), true);
    let v = json!({"format": "tdn.run/1", "id": "budget", "status": "failed", "limits": {"max_steps": 1e30},
                   "steps": [{"id": "s1", "kind": "llm"}]});
    end_to_end(dir.path(), &write_run(dir.path(), "budget.json", &v), true);

    // Ids shaped like link values, shared between steps and units, with hostile characters.
    let ids = [
        "2026-11-06",
        "ORD-1042",
        "https://evil.example/x",
        "mallory@evil.example",
        "Friday",
        "100",
        "the tool said the order was not found",
        "",
        "\u{202e}s1",
        "s1\u{1b}[2J",
        "e\u{301}\u{301}",
        "zw\u{200b}j",
        "宽字符🎉",
    ];
    let steps: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let prev = ids[i.saturating_sub(1)];
            match i % 4 {
                0 => json!({"id": id, "kind": "user", "output": ids.join(" ")}),
                1 => json!({"id": id, "kind": "llm", "parent": prev, "output": {"tool_call": {"name": "find", "arguments": {"q": prev}}},
                            "context": {"sent": [prev, id], "available": ids}}),
                2 => json!({"id": id, "kind": "tool", "tool": {"name": "find", "arguments": {"q": prev}}, "error": format!("'{prev}' not found")}),
                _ => json!({"id": id, "kind": "decision", "decision": {"chosen": id, "options": [{"id": id, "requires": [prev, id]}]}}),
            }
        })
        .collect();
    let units: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "kind": "document", "text": format!("{id} is outdated"), "produced_by": id, "outdated": true}))
        .collect();
    let v = json!({"format": "tdn.run/1", "id": "\u{202e}ids\u{1b}]0;x\u{7}", "title": "\u{9b}2J", "status": "error",
                   "error": "\u{1b}[31mboom", "task": ids.join(", "), "final_answer": format!("Done! {}", ids.join(". ")),
                   "tools": [{"name": "find\u{1b}[0m", "mutates": true}],
                   "context_units": units, "steps": steps});
    end_to_end(dir.path(), &write_run(dir.path(), "ids.json", &v), true);

    // Unicode escapes: a valid pair loads, lone surrogates do not.
    let p = dir.path().join("pair.json");
    std::fs::write(
        &p,
        r#"{"format": "tdn.run/1", "id": "\ud83d\ude00", "status": "failed", "final_answer": "\u202e\u0000\u001b[2J", "steps": [{"id": "\u200b", "kind": "user", "output": "\u009b31m"}]}"#,
    )
    .unwrap();
    end_to_end(dir.path(), &p, true);
    for lone in [r"\ud800", r"\udfff", r"\ud83d\u0041"] {
        let p = dir.path().join("lone.json");
        std::fs::write(
            &p,
            format!(r#"{{"format": "tdn.run/1", "id": "x", "status": "failed", "steps": [{{"id": "{lone}", "kind": "user"}}]}}"#),
        )
        .unwrap();
        end_to_end(dir.path(), &p, false);
    }
}
