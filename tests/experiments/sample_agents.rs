//! The stand-in agents of sample-runs/: every sample run with context units has a scenario, its
//! baseline reproduces the recorded answer, and its verdicts are the scenario's.

use crate::support::{RUN, Scenario};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn agent() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs/agents/stand_in.py");
    format!("python3 '{}'", p.display())
}

#[test]
fn the_stand_in_agent_gives_the_scenario_verdicts() {
    let s = Scenario::new();
    let a = agent();
    let flip = "contains:$120";
    for (args, verdict, class) in [
        (
            vec!["--ablate", "policy-2019"],
            "confirmed",
            Value::from("content-bug"),
        ),
        (
            vec!["--ablate", "tone"],
            "not-confirmed",
            Value::from("no-detected-effect"),
        ),
        (
            vec!["--restore", "policy-2024"],
            "confirmed",
            Value::from("content-bug"),
        ),
        (
            vec!["--replay", "s4", "--patch", "refund $80"],
            "confirmed",
            Value::Null,
        ),
    ] {
        let mut all = vec!["--runner", a.as_str(), "--flip", flip, "--samples", "2"];
        all.extend(args.iter().copied());
        let (code, j, err) = s.experiment_json(&all);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(j["verdict"], verdict, "{args:?}: {j}");
        assert_eq!(j["class"], class, "{args:?}");
        assert_eq!(j["baseline"]["stable"], true, "{args:?}");
    }
    let (_, j, _) = s.experiment_json(&[
        "--runner",
        a.as_str(),
        "--flip",
        flip,
        "--ablate",
        "tone",
        "--samples",
        "2",
    ]);
    assert_eq!(
        j["cost"]["loops_saved"], 1.0,
        "the tone instruction costs one loop in the scenario"
    );
}

fn sample_runs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    runs.retain(|p| p.extension().is_some_and(|e| e == "json"));
    runs.sort();
    runs
}

#[test]
fn every_sample_run_with_context_units_has_an_agent_that_reproduces_its_answer() {
    let s = Scenario::new();
    let a = agent();
    let mut checked = 0;
    for run in sample_runs().into_iter().chain([s.path(RUN)]) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
        let has_units = v["context_units"].as_array().is_some_and(|u| !u.is_empty());
        if !has_units || v["final_answer"].is_null() {
            continue;
        }
        let path = run.display().to_string();
        let out = s.tdn(&[
            "experiment",
            &path,
            "--runner",
            &a,
            "--baseline",
            "--samples",
            "2",
            "--flip",
            "exact",
            "--json",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{path}: {err}");
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["completed"], 2, "{path}: the agent failed: {j}");
        assert_eq!(
            j["baseline"]["stable"], true,
            "{path}: the unchanged scenario must give the recorded answer exactly"
        );
        checked += 1;
    }
    assert!(checked >= 1);
}
