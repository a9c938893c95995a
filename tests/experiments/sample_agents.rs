//! The stand-in agents of sample-runs/, used as a new user would: from a copy of the folder (so
//! the ledgers land there, not in the source tree), with its tdn.toml and `--yes`. Every sample
//! run with context units has a scenario whose baseline reproduces the recorded answer, and each
//! scenario gives the verdicts its story promises (sample-runs/agents/scenarios.json).

use crate::support::{SampleRuns, python};
use serde_json::Value;
use std::path::Path;

fn runs_with_units(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        if v["context_units"].as_array().is_some_and(|u| !u.is_empty())
            && !v["final_answer"].is_null()
        {
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_sample_run_with_context_units_has_an_agent_that_reproduces_its_answer() {
    if !python() {
        eprintln!("python3 is not installed: skipping the stand-in agent tests");
        return;
    }
    let s = SampleRuns::new();
    let runs = runs_with_units(s.dir.path());
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "contract-context-full.json",
            "office-hours-flat-context.json",
            "refund-outdated-policy.json"
        ]
    );
    for (name, _) in &runs {
        let (code, j) = s.experiment(name, &["--baseline", "--samples", "2"]);
        assert_eq!(code, 0, "{name}: {j}");
        assert_eq!(j["completed"], 2, "{name}: the agent failed: {j}");
        assert_eq!(
            j["baseline"]["stable"], true,
            "{name}: the unchanged scenario must give the recorded answer exactly: {j}"
        );
    }
}

#[test]
fn the_refund_scenario_confirms_the_outdated_policy_and_its_restored_successor() {
    if !python() {
        return;
    }
    let s = SampleRuns::new();
    let run = "refund-outdated-policy.json";
    for (args, verdict, class) in [
        (
            vec!["--ablate", "policy-2019"],
            "confirmed",
            Value::from("content-bug"),
        ),
        (
            vec!["--restore", "policy-2024"],
            "confirmed",
            Value::from("content-bug"),
        ),
        (
            vec!["--ablate", "tone"],
            "not-confirmed",
            Value::from("no-detected-effect"),
        ),
        (
            vec!["--replay", "s4", "--patch", "You will be refunded $80."],
            "confirmed",
            Value::Null,
        ),
        (vec!["--replay", "s4"], "not-confirmed", Value::Null),
    ] {
        let (code, j) = s.experiment(run, &args);
        assert_eq!(code, 0, "{args:?}: {j}");
        assert_eq!(j["verdict"], verdict, "{args:?}: {j}");
        assert_eq!(j["class"], class, "{args:?}");
        assert_eq!(j["baseline"]["stable"], true, "{args:?}");
        if args[1] == "tone" {
            assert_eq!(
                j["cost"]["loops_saved"], 1.0,
                "the tone instruction costs a loop"
            );
        }
    }
}

#[test]
fn the_default_similarity_rule_with_the_hashed_embedder_separates_the_refund_answers() {
    if !python() {
        return;
    }
    // tdn.toml chooses `exact`; --flip puts the default rule back (influence.md §7: similarity
    // under the session's embedder, hashed by default, flipped strictly below 0.8).
    let s = SampleRuns::new();
    let (code, j) = s.experiment(
        "refund-outdated-policy.json",
        &["--ablate", "policy-2019", "--flip", "similarity"],
    );
    assert_eq!(code, 0, "{j}");
    assert_eq!(
        j["baseline"]["stable"], true,
        "identical answers never flip"
    );
    assert_eq!(j["verdict"], "confirmed", "{j}");
    assert!(j["similarity"]["max"].as_f64().unwrap() < 0.8, "{j}");
}

#[test]
fn localize_on_the_refund_run_finds_the_content_bug_and_the_cost_cause() {
    if !python() {
        return;
    }
    let s = SampleRuns::new();
    let out = s.tdn(&["localize", "refund-outdated-policy.json", "--yes", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = |list: &Value, id: &str| -> Value {
        list.as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no entry '{id}' in {list}"))
    };
    let scores = &j["influence"]["scores"];
    let p2019 = entry(scores, "policy-2019");
    assert_eq!(
        (&p2019["verdict"], &p2019["class"]),
        (&Value::from("confirmed"), &Value::from("content-bug"))
    );
    // Not a flip, but the only unit whose removal saves a loop, beyond every placebo.
    let tone = entry(scores, "tone");
    assert_eq!(tone["verdict"], "not-confirmed");
    assert_eq!(tone["class"], "cost-cause");
    assert_eq!(tone["cost"]["reduced_cost_on_removal"], true);
    let restored = entry(&j["dropped"]["dropped"], "policy-2024");
    assert_eq!(restored["verdict"], "confirmed");
    assert_eq!(restored["cost"], Value::Null);
    for e in scores
        .as_array()
        .unwrap()
        .iter()
        .chain(j["dropped"]["dropped"].as_array().unwrap())
    {
        for k in ["verdict", "flips", "samples", "similarity", "cost", "class"] {
            assert!(e.get(k).is_some(), "'{k}' missing on {e}");
        }
    }
    let ex = &j["experiments"];
    assert_eq!(ex["ledger"], "refund-outdated-policy.ledger.jsonl");
    assert_eq!(
        ex["runner_calls"], 15,
        "3 samples × (baseline + 3 ablations + 1 restoration)"
    );
    assert_eq!(ex["flags"], serde_json::json!([]));
}

#[test]
fn the_flat_context_and_contract_scenarios_prove_only_what_they_should() {
    if !python() {
        return;
    }
    let s = SampleRuns::new();
    let office = "office-hours-flat-context.json";
    // Either look-alike alone hides behind the other; together they change the answer.
    for (args, verdict) in [
        (vec!["--ablate", "u-berlin"], "not-confirmed"),
        (vec!["--ablate", "s2"], "confirmed"),
        (vec!["--restore", "u-hamburg"], "confirmed"),
    ] {
        let mut all = args.clone();
        all.extend(["--samples", "2"]);
        let (code, j) = s.experiment(office, &all);
        assert_eq!(
            (code, &j["verdict"]),
            (0, &Value::from(verdict)),
            "{args:?}: {j}"
        );
    }
    let (_, j) = s.experiment(
        "contract-context-full.json",
        &["--restore", "u-section-14", "--samples", "2"],
    );
    assert_eq!(j["verdict"], "confirmed", "{j}");
    let (_, j) = s.experiment(
        "contract-context-full.json",
        &["--ablate", "u-section-3", "--samples", "2"],
    );
    assert_eq!(j["verdict"], "not-confirmed", "{j}");
    // The office ledger holds the pair ablation as shadow evidence only (attribution-ledger.md
    // §1: two units removed together are not isolated).
    let show = s.tdn(&[
        "ledger",
        "show",
        "office-hours-flat-context.ledger.jsonl",
        "--json",
    ]);
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    let levels: Vec<(String, String)> = shown["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "attribution")
        .map(|r| {
            (
                r["record"]["component_id"].as_str().unwrap().to_owned(),
                r["record"]["evidence_level"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        levels.contains(&("u-berlin".to_owned(), "paired_shadow".to_owned()))
            && levels.contains(&("u-berlin".to_owned(), "causal_ablation".to_owned()))
            && levels.contains(&("u-hamburg".to_owned(), "causal_ablation".to_owned())),
        "{levels:?}"
    );
}

#[test]
fn the_ledger_verifies_after_experiments_and_localize() {
    if !python() {
        return;
    }
    let s = SampleRuns::new();
    let run = "refund-outdated-policy.json";
    let (code, j) = s.experiment(run, &["--ablate", "policy-2019", "--samples", "2"]);
    assert_eq!(code, 0, "{j}");
    let ledger = j["ledger"].as_str().unwrap().to_owned();
    assert_eq!(ledger, "refund-outdated-policy.ledger.jsonl");
    let a = &j["attributions"][0];
    assert_eq!(
        (&a["unit"], &a["disposition"], &a["evidence_level"]),
        (
            &Value::from("policy-2019"),
            &Value::from("harmful"),
            &Value::from("causal_ablation")
        ),
        "{j}"
    );
    let out = s.tdn(&["localize", run, "--yes", "--samples", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ledger: refund-outdated-policy.ledger.jsonl"),
        "{text}"
    );
    let (code, v) = s.verify(&ledger);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    let c = &v["counts"];
    assert_eq!(
        (&c["failed"], &c["unbound"]),
        (&Value::from(0), &Value::from(0)),
        "{v}"
    );
    assert!(c["verified"].as_u64().unwrap() > 20, "{v}");
}

/// Issue 26: the folder's runner re-runs only the runs its stand-in has a scenario for. Asked to
/// re-run another, the engine refuses before anything runs, and says which runs it covers and how
/// to use another runner, instead of an error per sample.
#[test]
fn a_run_the_sample_runner_does_not_cover_is_refused_before_anything_runs() {
    let s = SampleRuns::new();
    let out = s.tdn(&[
        "experiment",
        "calendar-friday.json",
        "--yes",
        "--replay",
        "s4",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the runner re-runs only runs"), "{err}");
    assert!(err.contains("not run 'cal-0007'"), "{err}");
    assert!(err.contains("--runner 'CMD'"), "{err}");
    assert!(!s.path("calendar-friday.ledger.jsonl").exists());
}

/// A ledger written before samples recorded their time and dollars still verifies, and takes a
/// new batch whose lines carry them: the fields are additive.
#[test]
fn an_older_ledger_verifies_and_takes_new_batches_with_their_time_and_cost() {
    if !python() {
        eprintln!("python3 is not installed: skipping the stand-in agent tests");
        return;
    }
    let s = SampleRuns::new();
    let ledger = s.path("refund-outdated-policy.ledger.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/experiments/refund-before-spent.ledger.jsonl"),
        &ledger,
    )
    .unwrap();
    let before = std::fs::read_to_string(&ledger).unwrap();
    assert!(!before.contains("duration_ms") && !before.contains("with_spent"));
    let verify = |s: &SampleRuns| {
        let out = s.tdn(&[
            "ledger",
            "verify",
            "refund-outdated-policy.ledger.jsonl",
            "--json",
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "{v}");
        assert_eq!(v["counts"]["failed"], 0, "{v}");
        v
    };
    verify(&s);
    let (code, j) = s.experiment("refund-outdated-policy.json", &["--restore", "policy-2024"]);
    assert_eq!(code, 0, "{j}");
    let after = std::fs::read_to_string(&ledger).unwrap();
    let added: Vec<Value> = after
        .lines()
        .skip(before.lines().count())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        added
            .iter()
            .filter(|v| v["type"] == "sample")
            .all(|v| v["duration_ms"].as_u64().is_some())
    );
    assert!(
        added
            .iter()
            .filter(|v| v["type"] == "trial")
            .all(|v| v["with_spent"].is_object() && v["without_spent"].is_object())
    );
    let v = verify(&s);
    assert_eq!(
        v["counts"]["verified"].as_u64(),
        Some(after.lines().count() as u64),
        "{v}"
    );
}
