//! `tdn-tui eval` on every kind of labelled set in one command: a folder of traces with a folder
//! of annotation files (any annotated step is a hit; traces without an annotated error are not
//! scored), and a labels file accepting several steps for a run of a file holding several runs.
//! Expected values come from reading the runs (sample-runs/calendar-friday.json: six steps,
//! `s4` at index 3 wrote "Friday"; the τ-bench fixture: eight messages in its first record).

use super::{root, tdn};
use serde_json::{Value, json};
use std::path::Path;

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A folder `notes-set/` of traces and annotations, and a labels file for the τ-bench fixture.
fn bench(dir: &Path) -> (String, String, String) {
    let set = dir.join("notes-set");
    let friday = std::fs::read_to_string(root().join("sample-runs/calendar-friday.json")).unwrap();
    write(&set.join("traces/a.json"), &friday);
    write(&set.join("traces/b.json"), &friday);
    // `s4` wrote the value the tool rejected; `zz` names no step of the run.
    write(
        &set.join("annotations/a.json"),
        r#"{"trace_id": "a", "errors": [{"location": "s4", "category": "x"}, {"location": "zz"}]}"#,
    );
    // No annotated error: not scored.
    write(
        &set.join("annotations/b.json"),
        r#"{"trace_id": "b", "errors": []}"#,
    );
    let tau = dir.join("tau/taubench.json");
    let fixture =
        std::fs::read_to_string(root().join("tests/fixtures/import/taubench.json")).unwrap();
    write(&tau, &fixture);
    let labels = dir.join("tau.labels.json");
    write(&labels, r#"{"taubench.json#0": {"step": [1, 2]}}"#);
    (
        set.display().to_string(),
        tau.display().to_string(),
        labels.display().to_string(),
    )
}

/// Runs `tdn-tui` with `args` in `dir`, checks it succeeded, and reads its JSON output.
fn tdn_json(dir: &Path, args: &[&str]) -> Value {
    let out = tdn(dir, args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn baseline<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["baselines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no baseline {name}: {v}"))
}

#[test]
fn eval_scores_annotated_traces_and_labels_files_in_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let (set, tau, labels) = bench(dir.path());
    let v = tdn_json(
        dir.path(),
        &["eval", &set, &tau, "--labels", &labels, "--json"],
    );
    assert_eq!(v["format"], "tdn.eval/2");
    let names: Vec<&str> = v["sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["set"].as_str().unwrap())
        .collect();
    // The annotated folder is one set named after it; the file of several runs is its own set.
    assert_eq!(names, ["notes-set", "taubench"]);
    assert_eq!(v["total"]["runs"], 2);
    let runs = v["runs"].as_array().unwrap();
    let a = runs
        .iter()
        .find(|r| r["file"].as_str().unwrap().ends_with("a.json"))
        .unwrap();
    assert_eq!(
        a["label"],
        json!({"steps": [3], "missing": 1, "agent": null})
    );
    assert_eq!(a["top1"], true, "{a}");
    // One labelled step of six: a random pick is right 1/6 of the time, three picks 1/2.
    let random = baseline(a, "random");
    assert!((random["top1"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-9);
    assert!((random["top3"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(baseline(a, "first_step")["steps"], json!([0, 1, 2]));
    assert_eq!(baseline(a, "last_model")["steps"], json!([5, 3, 1]));
    assert_eq!(baseline(a, "last_model")["top1"], 0.0);
    assert_eq!(baseline(a, "last_model")["top3"], 1.0);
    // The failed booking at s5 was decided at s4: the baseline names the decision.
    assert_eq!(baseline(a, "first_change")["steps"], json!([3]));
    assert!(
        a["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["rule"] == "wrong_value" && r["step"] == 3 && r["hit"] == true),
        "{a}"
    );
    // b.json has no annotated error: listed, not scored.
    assert!(
        v["unlabelled"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["file"].as_str().unwrap().ends_with("b.json"))
    );
    let t = runs.iter().find(|r| r["index"] == 0).unwrap();
    assert_eq!(t["label"]["steps"], json!([1, 2]));
    assert_eq!(
        baseline(t, "first_step")["top1"],
        0.0,
        "step 0 is the system prompt"
    );
    assert_eq!(baseline(t, "first_step")["top3"], 1.0);

    let out = tdn(
        dir.path(),
        &["eval", &set, &tau, "--labels", &labels, "--rules"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text.lines().next().unwrap_or_default();
    for col in [
        "step top-1",
        "random",
        "first step",
        "first change",
        "last model",
    ] {
        assert!(head.contains(col), "{col}: {text}");
    }
    assert!(text.lines().any(|l| l.starts_with("notes-set ")), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("wrong_value") && l.contains("100.0%")),
        "{text}"
    );
}

#[test]
fn a_labels_folder_of_annotations_labels_run_files_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let friday = std::fs::read_to_string(root().join("sample-runs/calendar-friday.json")).unwrap();
    write(&dir.path().join("runs/x.json"), &friday);
    write(
        &dir.path().join("notes/x.json"),
        r#"{"errors": [{"location": "s2"}, {"location": "s6"}]}"#,
    );
    let runs = dir.path().join("runs").display().to_string();
    let notes = dir.path().join("notes").display().to_string();
    let v = tdn_json(dir.path(), &["eval", &runs, "--labels", &notes, "--json"]);
    assert_eq!(v["runs"][0]["label"]["steps"], json!([1, 5]));
}
