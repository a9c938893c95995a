//! The command contracts paragraph by paragraph: docs/run-format.md (loader errors and warnings,
//! `validate`, several runs in one file and `--index`), docs/report.md (fields, null rules,
//! `fault.party`, the reference flags, exit codes), docs/influence.md §10 (the toolbox beyond the
//! parity fixtures), docs/experiments.md (consent for every command a `tdn.toml` in the current
//! folder names; `--config PATH`) and docs/ledger.md (`ledger verify` output). Expected values
//! come from those documents.

use super::support::{fixture, report_of, root, run, run_stdin, show, tdn};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A minimal valid run with these steps.
fn with_steps(steps: Value) -> String {
    json!({"format": "tdn.run/1", "id": "r", "status": "failed", "steps": steps}).to_string()
}

#[test]
fn every_loader_error_exits_2_naming_the_file_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "not-json",
            "{\"format\": \"tdn.run/1\",\n  \"id\": x}".to_owned(),
            vec!["not-json.json:2:9:", "not valid JSON"],
        ),
        ("array", "[1, 2]".to_owned(), vec!["array.json", "object"]),
        (
            "no-format",
            r#"{"id": "a", "status": "failed", "steps": []}"#.to_owned(),
            vec!["\"format\"", "missing"],
        ),
        (
            "bad-format",
            r#"{"format": "tdn.run/9", "id": "a", "status": "failed", "steps": []}"#.to_owned(),
            vec!["\"format\"", "tdn.run/9"],
        ),
        (
            "no-id",
            r#"{"format": "tdn.run/1", "status": "failed", "steps": []}"#.to_owned(),
            vec!["\"id\"", "missing"],
        ),
        (
            "id-number",
            r#"{"format": "tdn.run/1", "id": 5, "status": "failed", "steps": []}"#.to_owned(),
            vec!["\"id\"", "a number"],
        ),
        (
            "bad-status",
            r#"{"format": "tdn.run/1", "id": "a", "status": "done", "steps": []}"#.to_owned(),
            vec!["\"status\"", "'done'", "unfinished"],
        ),
        (
            "status-number",
            r#"{"format": "tdn.run/1", "id": "a", "status": 1, "steps": []}"#.to_owned(),
            vec!["\"status\""],
        ),
        (
            "no-steps",
            r#"{"format": "tdn.run/1", "id": "a", "status": "failed"}"#.to_owned(),
            vec!["\"steps\"", "missing"],
        ),
        (
            "steps-object",
            r#"{"format": "tdn.run/1", "id": "a", "status": "failed", "steps": {}}"#.to_owned(),
            vec!["\"steps\"", "an object"],
        ),
        (
            "step-not-object",
            with_steps(json!([{"id": "s1", "kind": "user"}, 5])),
            vec!["position 2", "object"],
        ),
        (
            "step-no-id",
            with_steps(json!([{"id": "s1", "kind": "user"}, {"kind": "llm"}])),
            vec!["position 2", "\"id\""],
        ),
        (
            "step-id-number",
            with_steps(json!([{"id": 7, "kind": "llm"}])),
            vec!["position 1", "\"id\""],
        ),
        (
            "step-no-kind",
            with_steps(json!([{"id": "s1", "kind": "user"}, {"id": "s2"}])),
            vec!["step 's2' (position 2)", "\"kind\""],
        ),
        (
            "duplicate",
            with_steps(json!([{"id": "s1", "kind": "user"}, {"id": "s1", "kind": "llm"}])),
            vec!["step 's1' (position 2)", "position 1", "unique"],
        ),
    ];
    for (name, text, wants) in cases {
        let path = write(dir.path(), &format!("{name}.json"), &text);
        for cmd in ["validate", "analyze"] {
            let out = run(&[cmd, &path]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{name} {cmd}: {}", show(&out));
            assert!(err.contains(&format!("{name}.json")), "{name}: {err}");
            for w in &wants {
                assert!(err.contains(w), "{name} {cmd}: want {w:?} in {err}");
            }
            assert!(out.stdout.is_empty(), "{name} {cmd}: nothing on stdout");
        }
    }
    // Invalid UTF-8 bytes: line and column of the first bad byte.
    let p = dir.path().join("latin1.json");
    std::fs::write(&p, b"{\"format\": \"tdn.run/1\",\n \"id\": \"caf\xe9\"}").unwrap();
    let out = run(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(stderr(&out).contains("latin1.json:2:"), "{}", show(&out));
    // A lone surrogate in a \u escape is not valid JSON.
    let p = write(
        dir.path(),
        "surrogate.json",
        r#"{"format": "tdn.run/1", "id": "\ud800", "status": "failed", "steps": []}"#,
    );
    let out = run(&["analyze", &p]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(stderr(&out).contains("surrogate.json:1:"), "{}", show(&out));
}

#[test]
fn a_missing_file_is_named_once_and_exits_2() {
    let out = run(&["analyze", "/nonexistent/run.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(
        err.matches("No such file").count(),
        1,
        "the cause is printed once: {err}"
    );
}

#[test]
fn every_warning_is_one_line_naming_step_and_field_and_the_run_loads() {
    let dir = tempfile::tempdir().unwrap();
    let text = json!({
        "format": "tdn.run/1", "id": "w", "status": "failed", "title": 5,
        "context_units": [
            {"id": "u", "kind": "document", "text": "x", "produced_by": "nope"},
            {"id": "u", "kind": "document", "text": "y"}
        ],
        "steps": [
            {"id": "s1", "kind": "weird", "parent": "s2"},
            {"id": "s2", "kind": "llm", "parent": "s2", "usage": "lots",
             "context": {"sent": ["u", "zz"], "available": ["qq"]}},
            {"id": "s3", "kind": "decision", "requires": 1,
             "decision": {"chosen": "a", "options": [{"id": "a", "requires": ["s9", "s3", "s4"]}]}},
            {"id": "s4", "kind": "user", "parent": "ghost", "custom_field": {"kept": true}}
        ]
    })
    .to_string();
    let path = write(dir.path(), "warns.json", &text);
    let out = run(&["validate", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    let want: &[&[&str]] = &[
        &["\"title\""],
        &["step 's1' (position 1)", "kind", "'weird'", "event"],
        &["step 's2' (position 2)", "\"usage\""],
        &["'nope'", "produced_by"],
        &["'u'"],
        &["step 's1' (position 1)", "\"parent\"", "later"],
        &["step 's2' (position 2)", "\"parent\"", "itself"],
        &["step 's2' (position 2)", "'qq'"],
        &["step 's2' (position 2)", "'zz'"],
        &["step 's3' (position 3)", "'s9'"],
        &["step 's3' (position 3)", "itself"],
        &["step 's3' (position 3)", "'s4'"],
        &["step 's4' (position 4)", "'ghost'"],
    ];
    for w in want {
        assert!(
            lines.iter().any(|l| w.iter().all(|x| l.contains(x))),
            "no warning line with {w:?} in:\n{}",
            lines.join("\n")
        );
    }
    assert!(lines.iter().all(|l| l.starts_with(&path)), "{lines:?}");
    // The same warnings reach the report, with step, index and field.
    let r = report_of(&run(&["analyze", "--json", &path]));
    let ws = r["run"]["warnings"].as_array().unwrap();
    assert_eq!(ws.len(), lines.len());
    for w in ws {
        let keys: Vec<&str> = w.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["message", "step", "index", "field"], "{w}");
    }
    let s4 = ws.iter().find(|w| w["step"] == "s4").unwrap();
    assert_eq!((&s4["index"], &s4["field"]), (&json!(3), &json!("parent")));
    let title = ws.iter().find(|w| w["field"] == "title").unwrap();
    assert_eq!(
        (&title["step"], &title["index"]),
        (&Value::Null, &Value::Null)
    );
    // An empty run loads with a warning and analyses to nothing.
    let empty = write(dir.path(), "empty.json", &with_steps(json!([])));
    let out = run(&["validate", &empty]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out).lines().count(), 1);
    let r = report_of(&run(&["analyze", "--json", &empty]));
    assert_eq!(
        (&r["verdict"], &r["influence"], &r["dropped"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
}

#[test]
fn several_runs_in_one_file_and_index_on_every_command() {
    let tau = root()
        .join("tests/fixtures/import/taubench.json")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // analyze: one report per line, in file order; --index picks one.
    let out = tdn(d, &["analyze", "--json", &tau]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let reports: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    let one = report_of(
        &tdn(d, &["analyze", "--json", "--index", "1", &tau])
            .output()
            .unwrap(),
    );
    assert_eq!(one["run"]["id"], reports[1]["run"]["id"]);
    assert_ne!(reports[0]["run"]["id"], reports[1]["run"]["id"]);
    // validate handles every run; an index past the end is exit 2 on every command.
    assert_eq!(
        tdn(d, &["validate", &tau]).output().unwrap().status.code(),
        Some(0)
    );
    for args in [
        vec!["validate", "--index", "2", &tau],
        vec!["analyze", "--index", "2", &tau],
        vec!["import", "--index", "2", &tau, "-o", "x.json"],
        vec!["--render", "80x24", "--index", "2", &tau],
    ] {
        let out = tdn(d, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        assert!(
            stderr(&out).contains("--index 2"),
            "{args:?}: {}",
            show(&out)
        );
    }
    // import, experiment and localize ask for one run.
    for args in [
        vec!["import", &tau, "-o", "x.json"],
        vec!["experiment", &tau, "--runner", "true", "--baseline"],
        vec!["localize", &tau, "--runner", "true"],
    ] {
        let out = tdn(d, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        assert!(stderr(&out).contains("--index"), "{args:?}: {}", show(&out));
    }
    assert!(!d.join("x.json").exists());
    let out = tdn(d, &["import", "--index", "1", &tau, "-o", "x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let imported: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("x.json")).unwrap()).unwrap();
    assert_eq!(imported["id"], reports[1]["run"]["id"]);
    // The screen lists the runs without --index and opens one with it.
    let out = tdn(d, &["--render", "80x24", &tau]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let screen = stdout(&out);
    assert!(screen.contains("2 runs"), "{screen}");
    let out = tdn(d, &["--render", "80x24", "--index", "1", &tau])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains(reports[1]["run"]["id"].as_str().unwrap()),
        "{}",
        show(&out)
    );
    // A native file holds one run: --index 0 is it, --index 1 is out of range.
    let cal = fixture("weather-500");
    assert_eq!(
        report_of(&run(&["analyze", "--json", "--index", "0", &cal]))["run"]["id"],
        "audit-weather-500"
    );
    assert_eq!(
        run(&["validate", "--index", "1", &cal]).status.code(),
        Some(2)
    );
}

#[test]
fn the_reference_flags_follow_the_report_contract() {
    let cal = root()
        .join("sample-runs/calendar-friday.json")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let rf = write(dir.path(), "ref.txt", "Your call is booked for 2026-11-06.");
    let ranked = |args: &[&str]| {
        let mut a = vec!["analyze", "--json"];
        a.extend_from_slice(args);
        a.push(&cal);
        report_of(&run(&a))["influence"]["ranked_by"].clone()
    };
    assert_eq!(ranked(&[]), "contrastive", "the run has a reference_answer");
    assert_eq!(ranked(&["--no-reference"]), "semantic");
    assert_eq!(ranked(&["--reference", "x"]), "contrastive");
    assert_eq!(ranked(&["--reference-file", &rf]), "contrastive");
    let w500 = fixture("weather-500");
    let r = report_of(&run(&["analyze", "--json", &w500]));
    assert_eq!(r["influence"]["ranked_by"], "semantic");
    let r = report_of(&run(&["analyze", "--json", "--reference", "Rain", &w500]));
    assert_eq!(r["influence"]["ranked_by"], "contrastive");
    for bad in [
        vec!["--no-reference", "--reference", "x"],
        vec!["--no-reference", "--reference-file", rf.as_str()],
        vec!["--reference", "x", "--reference-file", rf.as_str()],
        vec!["--reference-file", "/nonexistent/ref.txt"],
    ] {
        let mut a = vec!["analyze", "--json"];
        a.extend_from_slice(&bad);
        a.push(&cal);
        let out = run(&a);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", show(&out));
        assert!(out.stdout.is_empty());
    }
}

fn audit_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("tests/fixtures/audit"))
        .unwrap()
        .chain(std::fs::read_dir(root().join("sample-runs")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn every_report_keeps_the_fields_and_null_rules_of_the_contract() {
    for f in audit_files() {
        let r = report_of(&run(&["analyze", "--json", &f]));
        assert_eq!(r["format"], "tdn.report/1");
        let keys = [
            "format",
            "run",
            "verdict",
            "fault",
            "suspects",
            "confidence",
            "links",
            "claims",
            "influence",
            "dropped",
            "judge",
        ];
        for k in keys {
            assert!(r.get(k).is_some(), "{f}: no {k}");
        }
        assert_eq!(r["judge"], Value::Null, "{f}: no judge was asked");
        let suspects = r["suspects"].as_array().unwrap();
        assert_eq!(r["verdict"].is_null(), suspects.is_empty(), "{f}");
        let status = r["run"]["status"].as_str().unwrap();
        let party = r["fault"]["party"].as_str().unwrap();
        assert_eq!(
            party == "none",
            status == "succeeded",
            "{f}: {party} / {status}"
        );
        if status == "unfinished" {
            assert_eq!(party, "unfinished", "{f}");
        }
        assert!(
            ["agent", "user", "unfinished", "none"].contains(&party),
            "{f}"
        );
        let run_json: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let ids: Vec<&str> = run_json["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        let mut seen = std::collections::HashSet::new();
        let mut last = f64::INFINITY;
        for (k, s) in suspects.iter().enumerate() {
            assert_eq!(s["rank"], k + 1, "{f}");
            let i = s["index"].as_u64().unwrap() as usize;
            assert_eq!(ids[i], s["step"], "{f}: index is the 0-based position");
            assert!(seen.insert(i), "{f}: one suspect per step");
            let score = s["score"].as_f64().unwrap();
            assert!(score <= last && (0.0..=0.99).contains(&score), "{f}: {s}");
            last = score;
            assert!(s["confidence"].is_number(), "{f}");
            let role = s["role"].as_str().unwrap();
            assert!(["root_cause", "symptom", "suspect"].contains(&role), "{f}");
            assert_eq!(
                role == "symptom",
                s.get("cause").is_some_and(|c| !c.is_null()),
                "{f}: {s}"
            );
            assert!(
                [
                    "tool_errors",
                    "wrong_tool",
                    "point_of_no_return",
                    "loops",
                    "retrieval_quality",
                    "prompt_injection",
                    "context_window",
                    "memory_consistency",
                    "planning",
                    "hallucination",
                    "run_status",
                    "judge"
                ]
                .contains(&s["detector"].as_str().unwrap()),
                "{f}: {s}"
            );
        }
        if let Some(v) = r["verdict"].as_object() {
            assert_eq!(v["step"], suspects[0]["step"]);
            assert_eq!(v["index"], suspects[0]["index"]);
            assert_eq!(v["category"], suspects[0]["category"]);
        }
        for c in r["claims"].as_array().unwrap() {
            let label = c["label"].as_str().unwrap();
            assert!(
                [
                    "supported",
                    "partial",
                    "unsupported",
                    "contradicted",
                    "stale",
                    "no_claim"
                ]
                .contains(&label),
                "{f}"
            );
            for k in ["evidence_step", "origin_step"] {
                assert!(
                    c[k].is_null() || ids.contains(&c[k].as_str().unwrap()),
                    "{f}: {c}"
                );
            }
            if label == "unsupported" || label == "no_claim" {
                assert!(c["evidence_step"].is_null(), "{f}: {c}");
            }
        }
        if run_json.get("final_answer").is_none() {
            assert!(r["claims"].as_array().unwrap().is_empty(), "{f}");
            assert!(r["influence"].is_null(), "{f}");
        }
        let any_context = run_json["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.get("context").is_some());
        assert_eq!(r["dropped"].is_null(), !any_context, "{f}");
        if let Some(inf) = r["influence"].as_object() {
            let want = if run_json.get("reference_answer").is_some() {
                "contrastive"
            } else {
                "semantic"
            };
            assert_eq!(inf["ranked_by"], want, "{f}");
            assert_eq!(inf["embedder"], "hashed", "{f}");
        }
        for l in r["links"].as_array().unwrap() {
            let from = ids.iter().position(|i| *i == l["from"]).unwrap();
            let to = ids.iter().position(|i| *i == l["to"]).unwrap();
            assert!(from < to, "{f}: links point forward: {l}");
        }
    }
}

fn toolbox(args: &[&str], input: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    run_stdin(dir.path(), args, input.as_bytes())
}

fn ok_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", show(out));
    let text = stdout(out);
    assert!(text.ends_with('\n') && text.lines().count() == 1, "{text}");
    serde_json::from_str(&text).unwrap()
}

fn fails(out: &Output, code: i32, names: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", show(out));
    assert!(out.stdout.is_empty(), "{}", show(out));
    assert!(stderr(out).contains(names), "want {names:?}: {}", show(out));
}

#[test]
fn the_confidence_toolbox_beyond_the_fixtures() {
    let two = r#"{"scores": [{"id": "a", "score": 0.9}, {"id": "b", "score": 0.5}]}"#;
    // FILE, '-' and stdin give the same answer.
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "in.json", two);
    let from_file = ok_json(&run(&["confidence", &f]));
    assert_eq!(ok_json(&toolbox(&["confidence", "-"], two)), from_file);
    assert_eq!(ok_json(&toolbox(&["confidence"], two)), from_file);
    assert_eq!(from_file["strategy"], "margin>=0.05");
    // Duplicate ids are allowed; non-finite strings rank last.
    let v = ok_json(&toolbox(
        &["confidence"],
        r#"{"scores": [{"id": "a", "score": "NaN"}, {"id": "a", "score": 0.2},
                       {"id": "c", "score": "Infinity"}, {"id": "d", "score": "-Infinity"}]}"#,
    ));
    assert_eq!(
        (&v["lead"], &v["clear_winner"]),
        (&json!("a"), &json!(true))
    );
    assert_eq!(
        v["margin"],
        Value::Null,
        "the runner-up has no usable score"
    );
    // Other strings, null and missing scores are exit 2 naming the entry.
    for bad in [r#""0.5""#, "null", "true", r#""nan""#, r#""inf""#] {
        let input = format!(r#"{{"scores": [{{"id": "a", "score": {bad}}}]}}"#);
        fails(&toolbox(&["confidence"], &input), 2, "scores[0]");
    }
    fails(
        &toolbox(&["confidence"], r#"{"scores": [{"id": "a"}]}"#),
        2,
        "scores[0]",
    );
    fails(&toolbox(&["confidence"], r#"{"score": []}"#), 2, "scores");
    fails(&toolbox(&["confidence"], "[]"), 2, "object");
    fails(&toolbox(&["confidence"], ""), 2, "JSON");
    // Options: both strategies is exit 2; negative or NaN values reach validation, even with no
    // scores; -0 and Infinity are values.
    let empty = r#"{"scores": []}"#;
    fails(
        &toolbox(&["confidence", "--margin", "0.1", "--ratio", "0.1"], empty),
        2,
        "--margin",
    );
    fails(
        &toolbox(&["confidence", "--margin", "-1"], empty),
        2,
        "--margin",
    );
    fails(
        &toolbox(&["confidence", "--ratio", "NaN"], empty),
        2,
        "--ratio",
    );
    fails(
        &toolbox(&["confidence", "--band", "-0.5"], empty),
        2,
        "--band",
    );
    fails(
        &toolbox(&["confidence", "--band", "wide"], empty),
        2,
        "--band",
    );
    let v = ok_json(&toolbox(
        &["confidence", "--band", "-0", "--margin", "-0"],
        two,
    ));
    assert_eq!(v["strategy"], "margin>=0");
    assert_eq!(v["shortlist"], json!(["a"]), "band 0 keeps only the lead");
    let v = ok_json(&toolbox(&["confidence", "--ratio", "inf"], two));
    assert_eq!(
        (&v["strategy"], &v["clear_winner"]),
        (&json!("ratio>=Infinity"), &json!(false))
    );
    let v = ok_json(&toolbox(&["confidence", "--margin", "0.0000001"], two));
    assert_eq!(v["strategy"], "margin>=1e-7");
    let v = ok_json(&toolbox(&["confidence", "--band", "Infinity"], two));
    assert_eq!(v["shortlist"], json!(["a", "b"]));
    // Unknown fields are ignored, so influence output can be piped in.
    let v = ok_json(&toolbox(
        &["confidence"],
        r#"{"ranked_by": "x", "scores": [{"id": "a", "score": 1, "signals": {}}], "extra": 1}"#,
    ));
    assert_eq!(v["lead"], "a");
    // 100,000 scores.
    let many: Vec<Value> = (0..100_000)
        .map(|i| json!({"id": format!("u{i}"), "score": f64::from(i % 997) / 997.0}))
        .collect();
    let v = ok_json(&toolbox(
        &["confidence"],
        &json!({"scores": many}).to_string(),
    ));
    assert_eq!(v["lead"], "u996");
}

#[test]
fn the_influence_and_dropped_toolbox_beyond_the_fixtures() {
    let dup_and_bad_weight = r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
        "weights": {"fa": "NaN", "avg": 0, "persist": 0, "depth": 0}}"#;
    // Semantic checks weights first; contrastive checks ids first.
    fails(&toolbox(&["influence"], dup_and_bad_weight), 2, "fa");
    let with_ref = dup_and_bad_weight.replacen("\"answer\"", "\"reference\": \"r\", \"answer\"", 1);
    fails(&toolbox(&["influence"], &with_ref), 2, "'a'");
    for w in [r#""Infinity""#, r#""-Infinity""#, "-0.5", r#""0.4""#] {
        let input = format!(
            r#"{{"answer": "x", "evidence": [{{"id": "a", "text": "x"}}],
                "weights": {{"fa": 0.4, "avg": 0.3, "persist": {w}, "depth": 0.1}}}}"#
        );
        fails(&toolbox(&["influence"], &input), 2, "persist");
    }
    fails(
        &toolbox(
            &["influence"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}], "weights": {"fa": 1, "avg": 0, "persist": 0}}"#,
        ),
        2,
        "depth",
    );
    fails(
        &toolbox(
            &["influence", "--scorer", "contrastive"],
            r#"{"answer": "x", "evidence": []}"#,
        ),
        2,
        "reference",
    );
    fails(&toolbox(&["influence"], r#"{"evidence": []}"#), 2, "answer");
    fails(
        &toolbox(
            &["influence", "--margin", "1", "--ratio", "1"],
            r#"{"answer": "x", "evidence": []}"#,
        ),
        2,
        "--ratio",
    );
    fails(
        &toolbox(
            &["influence", "--embedder", "bogus"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}]}"#,
        ),
        2,
        "--embedder",
    );
    // An embedder that fails is exit 1.
    fails(
        &toolbox(
            &["influence", "--embedder", "cmd:echo broken >&2; exit 3"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "y"}]}"#,
        ),
        1,
        "broken",
    );
    // Any persistence threshold is accepted; the lexical scorer ignores --embedder.
    let v = ok_json(&toolbox(
        &["influence", "--scorer", "lexical", "--embedder", "bogus"],
        r#"{"answer": "refund policy", "evidence": [{"id": "a", "text": "refund policy", "ancestors": ["refund"]}],
            "persistence_threshold": -5}"#,
    ));
    assert_eq!(
        (&v["ranked_by"], &v["embedder"]),
        (&json!("lexical"), &Value::Null)
    );
    assert_eq!(v["scores"][0]["signals"]["persist"], 1.0);
    // `--scorer semantic --embedder lexical` equals `--scorer lexical` (influence.md §1).
    let input = r#"{"answer": "The office opens at 9:00 on weekdays", "evidence": [
        {"id": "a", "text": "Berlin office opens at 9:00", "ancestors": ["The office opens at nine"]},
        {"id": "b", "text": "Parking is free on weekdays", "ancestors": []}]}"#;
    let lex = ok_json(&toolbox(&["influence", "--scorer", "lexical"], input));
    let sem = ok_json(&toolbox(
        &["influence", "--scorer", "semantic", "--embedder", "lexical"],
        input,
    ));
    for (a, b) in lex["scores"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sem["scores"].as_array().unwrap())
    {
        assert_eq!(a["id"], b["id"]);
        assert!((a["score"].as_f64().unwrap() - b["score"].as_f64().unwrap()).abs() < 1e-12);
    }
    // Huge input: 2,000 items with 5 ancestors each.
    let ev: Vec<Value> = (0..2_000)
        .map(|i| {
            json!({"id": format!("e{i}"), "text": format!("evidence {i} about refunds"),
                        "ancestors": ["a", "b", "c", "d", format!("e {i}")]})
        })
        .collect();
    let v = ok_json(&toolbox(
        &["influence", "--embedder", "mock"],
        &json!({"answer": "refunds", "evidence": ev}).to_string(),
    ));
    assert_eq!(v["scores"].as_array().unwrap().len(), 2_000);
    // dropped: first occurrence wins, sent-only ids count, bare strings are ids.
    let v = ok_json(&toolbox(
        &["dropped"],
        r#"{"available": ["a", {"id": "b", "content": "B"}, {"id": "a", "content": "A2"}, {"id": "c", "content": "C"}],
            "sent": ["b", {"id": "extra"}], "note": 1}"#,
    ));
    assert_eq!(
        v["dropped"],
        json!([{"id": "a"}, {"id": "c", "content": "C"}])
    );
    assert_eq!(
        (&v["available_count"], &v["sent_count"]),
        (&json!(3), &json!(2))
    );
    fails(
        &toolbox(&["dropped"], r#"{"available": [5], "sent": []}"#),
        2,
        "available[0]",
    );
}

/// A folder holding a `tdn.toml` whose every command would leave a marker file.
struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    fn new(toml: &str) -> Folder {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("marker");
        std::fs::write(
            dir.path().join("tdn.toml"),
            toml.replace("MARK", &marker.display().to_string()),
        )
        .unwrap();
        std::fs::copy(
            root().join("sample-runs/refund-outdated-policy.json"),
            dir.path().join("run.json"),
        )
        .unwrap();
        Folder { dir }
    }

    fn run(&self, args: &[&str]) -> (Output, bool) {
        let marker = self.dir.path().join("marker");
        let _ = std::fs::remove_file(&marker);
        let out = tdn(self.dir.path(), args).output().unwrap();
        (out, marker.exists())
    }
}

#[test]
fn a_tdn_toml_in_the_current_folder_is_not_the_users_word_for_any_command() {
    // The runner: experiment and localize exit 2 naming the file and the command.
    let f = Folder::new("[runner]\ncommand = \"touch MARK\"\n");
    for args in [
        vec!["experiment", "run.json", "--baseline", "--samples", "2"],
        vec!["localize", "run.json", "--samples", "2"],
    ] {
        let (out, ran) = f.run(&args);
        assert!(!ran, "{args:?} ran the runner without --yes");
        fails(&out, 2, "tdn.toml");
        assert!(stderr(&out).contains("touch"), "{}", show(&out));
    }
    let (out, ran) = f.run(&[
        "experiment",
        "run.json",
        "--baseline",
        "--samples",
        "2",
        "--yes",
    ]);
    assert!(ran, "--yes allows it: {}", show(&out));

    // The judge: analyze leaves it out with a warning saying how to allow it.
    let f = Folder::new("[judge]\ncommand = \"touch MARK\"\n");
    let (out, ran) = f.run(&["analyze", "--json", "run.json"]);
    assert!(!ran);
    let r = report_of(&out);
    assert_eq!(r["judge"], Value::Null);
    assert!(
        r["run"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains("--yes")),
        "{}",
        r["run"]["warnings"]
    );

    // A cmd: embedder: analyze, eval and the screen do not run it without --yes.
    let f = Folder::new("[embedder]\nname = \"cmd:touch MARK; exit 1\"\n");
    let ww = root()
        .join("tests/fixtures/import/whowhen/algorithm-generated.json")
        .display()
        .to_string();
    for args in [
        vec!["analyze", "--json", "run.json"],
        vec!["run.json", "--render", "80x24"],
        vec!["eval", ww.as_str()],
        vec!["experiment", "run.json", "--runner", "true", "--baseline"],
        vec!["localize", "run.json", "--runner", "true"],
    ] {
        let (out, ran) = f.run(&args);
        assert!(
            !ran,
            "{args:?} ran the embedder without --yes: {}",
            show(&out)
        );
    }
    let (_, ran) = f.run(&["analyze", "--json", "--yes", "run.json"]);
    assert!(ran, "--yes allows the embedder");

    // A cmd: flip rule: experiment exits 2.
    let f = Folder::new("[experiments]\nflip = \"cmd:touch MARK\"\n");
    let (out, ran) = f.run(&["experiment", "run.json", "--runner", "true", "--baseline"]);
    assert!(!ran);
    fails(&out, 2, "flip");

    // --config PATH: missing or broken is exit 2; a broken tdn.toml found in the folder is
    // reported and the defaults are used.
    let f = Folder::new("this is [ not toml");
    for args in [
        vec!["analyze", "--config", "/nonexistent/tdn.toml", "run.json"],
        vec!["analyze", "--config", "tdn.toml", "run.json"],
        vec![
            "experiment",
            "--config",
            "/nonexistent/tdn.toml",
            "run.json",
            "--runner",
            "true",
            "--baseline",
        ],
    ] {
        let (out, _) = f.run(&args);
        fails(&out, 2, "tdn.toml");
    }
    let (out, _) = f.run(&["analyze", "--json", "run.json"]);
    report_of(&out);
    assert!(stderr(&out).contains("tdn.toml"), "{}", show(&out));
}

#[test]
fn ledger_verify_prints_one_line_per_problem_then_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.ledger.jsonl");
    // Not a ledger: exit 2 on stderr.
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let out = run(&["ledger", "verify", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    // An empty header-only ledger with a torn tail: exit 0, the tail is a warning.
    let header = json!({"schema": 2, "type": "ledger", "prev": null, "scope": "scenario",
                        "name": "x", "created_at": "2026-01-01T00:00:00Z", "created_by": "tdn-tui/0"});
    std::fs::write(&path, format!("{header}\n{{\"schema\": 2, \"ty")).unwrap();
    let p = path.to_str().unwrap();
    let out = run(&["ledger", "verify", p]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let last = text.lines().last().unwrap();
    let summary = regex::Regex::new(
        r"^\d+ lines: \d+ verified, \d+ legacy_unverified, \d+ unbound trials, 1 torn, 0 failed$",
    )
    .unwrap();
    assert!(summary.is_match(last), "{text}");
    let problem = regex::Regex::new(r"^.+x\.ledger\.jsonl:2: \S+( [0-9a-f]{8})?: ").unwrap();
    assert!(text.lines().any(|l| problem.is_match(l)), "{text}");
    let out = run(&["ledger", "verify", "--json", p]);
    let v = ok_json(&out);
    assert_eq!(v["format"], "tdn.ledger-verify/1");
    assert_eq!(v["ok"], true);
    let counts: Vec<&str> = v["counts"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "lines",
        "verified",
        "legacy_unverified",
        "unbound",
        "torn",
        "failed",
    ] {
        assert!(counts.contains(&k), "{counts:?}");
    }
    for p in v["problems"].as_array().unwrap() {
        for k in ["line", "type", "id", "code", "message"] {
            assert!(p.get(k).is_some(), "{p}");
        }
    }
    // A line in the middle that does not parse is a failure: exit 1.
    std::fs::write(&path, format!("{header}\nnot json\n{header}\n")).unwrap();
    let out = run(&["ledger", "verify", p]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stdout(&out).trim_end().ends_with("failed"),
        "{}",
        show(&out)
    );
}

#[test]
fn the_toolbox_reads_no_config_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tdn.toml"),
        "[embedder]\nname = \"mock\"\n[confidence]\nstrategy = \"ratio:0.5\"\nband = 5\n",
    )
    .unwrap();
    let v = ok_json(&run_stdin(
        dir.path(),
        &["influence"],
        br#"{"answer": "refund policy", "evidence": [{"id": "a", "text": "refund"}]}"#,
    ));
    assert_eq!(v["embedder"], "hashed");
    assert_eq!(v["confidence"]["strategy"], "margin>=0.05");
    let v = ok_json(&run_stdin(
        dir.path(),
        &["confidence"],
        br#"{"scores": [{"id": "a", "score": 1}, {"id": "b", "score": 0.5}]}"#,
    ));
    assert_eq!(
        (&v["strategy"], &v["shortlist"]),
        (&json!("margin>=0.05"), &json!(["a"]))
    );
}
