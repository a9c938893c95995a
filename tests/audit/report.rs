//! docs/report.md, paragraph by paragraph: the reference flags and their exit codes, and on
//! every sample and audit run the fields, null rules, `fault.party` rules, ranks, indexes, roles
//! and detector names of the contract.

use super::support::{fixture, report_of, root, run, show, write};
use serde_json::Value;

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
                    "task_drift",
                    "made_up_data",
                    "answer_origin",
                    "code_failure",
                    "progress_stall",
                    "answer_handoff",
                    "final_answer",
                    "repeated_failure",
                    "confirmation",
                    "grounding",
                    "conflicting_change",
                    "instructions",
                    "blocked_source",
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
