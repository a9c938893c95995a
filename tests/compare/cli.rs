//! `tdn-tui diff` as a user runs it: an OTLP export against its `tdn.run/1` form made by
//! `tdn-tui import` (renamed, then with a step changed), the text page, `--task` on a results
//! file of several trials, and the errors.

use super::*;
use std::ffi::OsStr;

fn s(x: &str) -> &OsStr {
    x.as_ref()
}

/// `tdn-tui import` of a real export into `dir`, renamed; its runs' JSON.
fn imported(name: &str, index: Option<usize>, dir: &Path) -> (PathBuf, Value) {
    let out = dir.join("imported.json");
    let src = real(name);
    let mut args: Vec<&OsStr> = vec![s("import"), src.as_os_str(), s("-o"), out.as_os_str()];
    let n = index.map(|i| i.to_string());
    if let Some(n) = &n {
        args.extend([s("--index"), s(n)]);
    }
    let o = tdn(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    rename_native(&mut v);
    (out, v)
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

#[test]
fn an_otlp_export_and_its_imported_form_renamed_do_the_same_thing_until_a_step_changes() {
    let dir = tempfile::tempdir().unwrap();
    for (name, index) in [
        ("otlp/evilmartians__smol_deep_research_agent.json", None),
        ("otlp/dazzaji__test-traces.json", Some(1)),
    ] {
        let (path, mut run) = imported(name, index, dir.path());
        write(&path, &run);
        let src = real(name);
        let n = index.map(|i| i.to_string());
        let mut args: Vec<&OsStr> = vec![src.as_os_str(), path.as_os_str()];
        if let Some(n) = &n {
            args.extend([s("--good-index"), s(n)]);
        }
        let j = diff_json(&args);
        assert!(
            j["first_divergence"].is_null(),
            "{name}: {}",
            j["first_divergence"]
        );
        let rows = j["aligned"].as_array().unwrap();
        assert_eq!(rows.len(), run["steps"].as_array().unwrap().len());
        assert!(rows.iter().all(|r| r["match"] == "same"), "{name}");
        // The renamed ids are what the bad side names.
        assert_eq!(rows[0]["bad"]["step"], run["steps"][0]["id"]);
        assert_ne!(rows[0]["bad"]["step"], rows[0]["good"]["step"]);

        // Change the output of the last step that holds no other.
        let steps = run["steps"].as_array().unwrap();
        let at = steps
            .iter()
            .rposition(|st| {
                st.get("container").is_none()
                    && !steps
                        .iter()
                        .any(|other| other.get("parent") == st.get("id"))
            })
            .unwrap();
        run["steps"][at]["output"] =
            Value::from("a different result: 42 items, see https://example.org/other");
        write(&path, &run);
        let j = diff_json(&args);
        let f = &j["first_divergence"];
        assert_eq!(f["bad"]["index"], at, "{name}: {f}");
        assert_eq!(f["good"]["index"], at, "{name}: {f}");
        assert_eq!(f["bad"]["step"], run["steps"][at]["id"], "{name}");
        assert!(
            f["what"]["text"].as_str().unwrap().contains("42"),
            "{name}: {f}"
        );
        let differences = j["differences"].as_array().unwrap();
        assert!(
            differences.iter().any(|d| d["bad"]["index"] == at),
            "{name}"
        );
    }
}

#[test]
fn the_page_names_the_divergence_and_keeps_run_text_inert() {
    let dir = tempfile::tempdir().unwrap();
    let name = "langfuse/langfuse__openai-agents-2025-09-30.trace.json";
    let (path, mut run) = imported(name, None, dir.path());
    let at = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .position(|st| st.get("tool").is_some())
        .unwrap();
    run["steps"][at]["tool"]["arguments"]["city"] = Value::from("Osaka\u{1b}[2J\u{202e}");
    write(&path, &run);
    let src = real(name);
    let out = tdn(&[s("diff"), src.as_os_str(), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("first divergence: bad step"), "{text}");
    assert!(text.contains("argument 'city' of get_weather"), "{text}");
    assert!(text.contains("'Tokyo' in the good run"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains("\\u{1b}"), "{text}");
}

/// A results file of three τ-bench trials of task 7: the failed one of the fixture (it looked up
/// reservation ABC132 for ABC123), a trial that succeeded (it looked up ABC123, with other call
/// ids), and another task's trial.
pub(super) fn trials(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("import/taubench.json")).unwrap();
    let mut records: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut good = records[0].clone();
    good["trial"] = Value::from(1);
    good["reward"] = Value::from(1.0);
    let traj = good["traj"].as_array_mut().unwrap();
    traj[2]["tool_calls"][0]["function"]["arguments"] =
        Value::from("{\"reservation_id\": \"ABC123\"}");
    traj[2]["tool_calls"][0]["id"] = Value::from("call_77");
    traj[3]["tool_call_id"] = Value::from("call_77");
    traj[3]["content"] = Value::from("{\"reservation_id\": \"ABC123\", \"refundable\": true}");
    records.push(good);
    let path = dir.join("results.json");
    std::fs::write(&path, serde_json::to_string(&records).unwrap()).unwrap();
    path
}

#[test]
fn a_failed_trial_is_compared_with_a_succeeded_trial_of_its_task() {
    let dir = tempfile::tempdir().unwrap();
    let file = trials(dir.path());
    let j = diff_json(&[file.as_os_str(), s("--task"), s("7")]);
    let f = &j["first_divergence"];
    // The assistant's lookup (step 2 of the failed trial, run 0) against the good trial's (run 2).
    assert_eq!(f["bad"]["index"], 2, "{f}");
    assert_eq!(f["good"]["index"], 2, "{f}");
    assert_eq!(f["what"]["change"], "argument", "{f}");
    assert_eq!(f["what"]["key"], "reservation_id");
    assert_eq!(f["what"]["bad_value"], "ABC132");
    assert_eq!(f["what"]["good_value"], "ABC123");
    // The page says which trials were taken.
    let out = tdn(&[s("diff"), file.as_os_str(), s("--task"), s("7")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("task '7': runs succeeded 2; failed 0; comparing run 0 with run 2"),
        "{text}"
    );
    // The same trials by position.
    let j2 = diff_json(&[
        file.as_os_str(),
        file.as_os_str(),
        s("--good-index"),
        s("2"),
        s("--bad-index"),
        s("0"),
    ]);
    assert_eq!(j2, j);
}

#[test]
fn what_cannot_be_compared_is_said_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = trials(dir.path());
    for (args, says) in [
        (
            vec![file.as_os_str(), s("--task"), s("99")],
            "no run of task '99'; the file's tasks are 7, 8",
        ),
        (
            vec![file.as_os_str(), s("--task"), s("8")],
            "task '8' has no failed run",
        ),
        (vec![file.as_os_str(), file.as_os_str()], "--index"),
        (vec![file.as_os_str()], "BAD"),
    ] {
        let mut all = vec![s("diff")];
        all.extend(args.iter().copied());
        let out = tdn(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
