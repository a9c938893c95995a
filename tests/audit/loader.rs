//! docs/run-format.md, paragraph by paragraph: every loader error exits 2 naming the file and
//! where (line and column, or step and field), every warning is one line of `validate` and one
//! entry of `run.warnings`, and a file holding several runs takes `--index` on every command.

use super::support::{fixture, report_of, root, run, show, stderr, stdout, tdn, write};
use serde_json::{Value, json};

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
    // The header leads with the run's task (issue 26), which tells the two runs apart.
    let task: String = reports[1]["run"]["task"]
        .as_str()
        .expect("the run records a task")
        .chars()
        .take(20)
        .collect();
    assert_ne!(reports[0]["run"]["task"], reports[1]["run"]["task"]);
    assert!(stdout(&out).contains(&task), "{}", show(&out));
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
