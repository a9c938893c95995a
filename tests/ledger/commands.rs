//! `ledger show|verify|plan|select` through the binary: formats, selections, plans, legacy
//! history, and exit codes.

use super::*;

#[test]
fn schema_one_history_is_kept_as_legacy_unverified() {
    let f = Fixture::new();
    let doc_a = Entry::of_unit(f.run.unit("doc-a").unwrap())
        .digest()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("team.ledger.jsonl");
    let trial = json!({"trial_id": "t-old", "component_kind": "document", "component_id": "doc-a",
        "component_digest": doc_a, "tested_bundle": "b-old", "comparison_bundle": "b-old-minus",
        "evidence_level": "causal_ablation", "evaluator_epoch": EPOCH, "cohort": "c-old",
        "run_id": "cal-1", "runner_sha256": "r", "seed": 0, "with_score": 0.0, "without_score": 1.0,
        "token_cost": 9, "tested_at": "2025-01-01T00:00:00Z", "interactions": []});
    let attribution = json!({"attribution_id": "a-old", "component_kind": "document",
        "component_id": "doc-a", "component_digest": doc_a, "tested_bundle": "b-old",
        "evidence_level": "causal_ablation", "evaluator_epoch": EPOCH, "cohort": "c-old",
        "effect": -1.0, "confidence": 0.25, "disposition": "harmful", "token_cost": 9,
        "tested_at": "2025-01-01T00:00:00Z", "trial_ids": ["t-old"], "interactions": []});
    let header = json!({"type": "ledger", "scope": "scenario", "name": "team"});
    std::fs::write(&path, format!("{header}\n{trial}\n{attribution}\n")).unwrap();
    let l = Ledger::open(&path, Scope::Scenario, "team").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count(),
        3,
        "opening rewrites nothing"
    );
    f.append_with(
        &l,
        "b-new",
        &f.spec(ExperimentKind::Baseline, &[], &[], 0),
        Ok(true),
    );
    let bin = |args: &[&str]| f.cli(args);
    let p = path.to_str().unwrap();
    let o = bin(&["ledger", "verify", p, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["counts"]["legacy_unverified"], 1);
    assert_eq!(v["counts"]["failed"], 0);
    let show = stdout(&bin(&["ledger", "show", p]));
    assert!(
        show.lines().nth(2).unwrap().contains("[legacy_unverified"),
        "{show}"
    );
    // It cannot demote doc-a, even in its own bundle's epoch.
    let o = bin(&[
        "ledger",
        "select",
        p,
        "--run",
        f.run_path.to_str().unwrap(),
        "--epoch",
        EPOCH,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let doc_a = v["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["component_id"] == "doc-a")
        .unwrap();
    assert_eq!(
        (
            doc_a["included"].as_bool(),
            doc_a["reason"].as_str(),
            doc_a["disposition"].as_str()
        ),
        (Some(true), Some("unverified"), Some("uncertain")),
        "{doc_a}"
    );
}

#[test]
fn show_plan_and_select_through_the_binary() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    f.append("b-1", &f.spec(ExperimentKind::Baseline, &[], &[], 2), false);
    f.append(
        "b-1",
        &f.spec(ExperimentKind::Ablate, &["doc-b"], &[], 0),
        true,
    );
    f.ledger.close_cohort("b-1", &Policy::default()).unwrap();
    let p = f.path().to_str().unwrap();
    let run = f.run_path.to_str().unwrap();

    let show = f.cli(&["ledger", "show", p]);
    assert_eq!(show.status.code(), Some(0));
    let text = stdout(&show);
    assert!(
        text.lines().any(|l| l.contains("attribution")
            && l.contains("document/doc-a causal_ablation effect -1 confidence 0.5 harmful")),
        "{text}"
    );
    // A failed run: departing from the recorded failure scores 1 (never called "fixed").
    assert!(
        text.lines().any(|l| l.contains("sample")
            && l.ends_with("ablate [doc-a] seed 0: departed from the recorded outcome (score 1)")),
        "{text}"
    );
    assert!(!text.contains("fixed"));
    let sj: Value =
        serde_json::from_str(&stdout(&f.cli(&["ledger", "show", p, "--json"]))).unwrap();
    assert_eq!(sj["format"], "tdn.ledger-show/1");
    assert_eq!(sj["records"][0]["type"], "ledger");
    assert!(
        sj["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["verified"] == true)
    );

    // One cohort, cadence 5: nothing is due; all candidates deferred, in priority order.
    let o = f.cli(&[
        "ledger", "plan", p, "--budget", "3", "--epoch", EPOCH, "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            v["format"].as_str(),
            v["trigger"].as_str(),
            v["spent"].as_u64()
        ),
        (Some("tdn.ledger-plan/1"), Some("not_due"), Some(0))
    );
    assert_eq!(v["inputs"]["current_generation"], 1);
    let deferred: Vec<&str> = v["deferred"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["component_id"].as_str().unwrap())
        .collect();
    assert_eq!(deferred.len(), 2);
    // doc-b: 1 trial, effect 0 (confidence 0.25) outranks doc-a (2 trials, confidence 0.5).
    assert_eq!(deferred, ["doc-b", "doc-a"]);
    // Cadence 1 makes it due; K = 3 samples per re-test, budget 3: only the first fits.
    let o = f.cli(&[
        "ledger",
        "plan",
        p,
        "--budget",
        "3",
        "--cadence",
        "1",
        "--epoch",
        EPOCH,
        "--run",
        run,
        "--json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["trigger"].as_str(), v["spent"].as_u64()),
        (Some("cadence"), Some(3))
    );
    assert_eq!(v["selected"][0]["component_id"], "doc-b");
    assert_eq!(v["selected"][0]["experiment"], "ablate");
    assert_eq!(v["selected"][0]["estimated_cost"], 3);

    let o = f.cli(&[
        "ledger", "select", p, "--run", run, "--epoch", EPOCH, "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["format"], "tdn.ledger-select/1");
    let by_id = |id: &str| {
        v["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["component_id"] == id)
            .unwrap()
            .clone()
    };
    let a = by_id("doc-a");
    assert_eq!(
        (
            a["included"].as_bool(),
            a["reason"].as_str(),
            a["disposition"].as_str()
        ),
        (Some(false), Some("demoted"), Some("harmful"))
    );
    assert_eq!(a["token_cost"], 9);
    let b = by_id("doc-b");
    assert_eq!(
        (b["included"].as_bool(), b["reason"].as_str()),
        (Some(true), Some("uncertain"))
    );
    assert_eq!(by_id("sys")["reason"], "no_evidence");
    // Another epoch ignores every record.
    let o = f.cli(&[
        "ledger",
        "select",
        p,
        "--epoch",
        "exact|tdn-tui/test",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["components"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["reason"] == "no_evidence")
    );
}

#[test]
fn unreadable_files_and_bad_arguments_exit_2() {
    let f = Fixture::new();
    let missing = f.dir.path().join("missing.ledger.jsonl");
    for args in [
        vec!["ledger", "verify", missing.to_str().unwrap()],
        vec!["ledger", "show", missing.to_str().unwrap()],
        vec!["ledger", "verify", f.run_path.to_str().unwrap()],
        vec!["ledger", "select", f.run_path.to_str().unwrap()],
        vec!["ledger", "plan", f.path().to_str().unwrap()],
        vec![
            "ledger",
            "plan",
            f.path().to_str().unwrap(),
            "--budget",
            "x",
        ],
    ] {
        let o = f.cli(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let o = f.cli(&["ledger", "verify", f.run_path.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a tdn-tui ledger"));
}
