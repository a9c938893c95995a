//! `tdn-tui analyze` and `tdn-tui validate` as a user runs them: the sample runs give the
//! verdicts sample-runs/README.md promises, hostile and broken files give clean messages and the
//! exit codes of docs/report.md and docs/run-format.md, and the judge runs only as the user
//! allowed. Expected values come from sample-runs/README.md and the specs; the README's and
//! docs' examples and lists are checked against the program (analyze/docs.rs).

#[path = "analyze/cost.rs"]
mod cost;
#[path = "analyze/docs.rs"]
mod docs;
#[path = "analyze/eval.rs"]
mod eval;
#[path = "analyze/judge.rs"]
mod judge;
#[path = "analyze/names.rs"]
mod names;
#[path = "analyze/stdout.rs"]
mod stdout;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary with a clean environment: no judge, no user config, in `cwd`.
fn tdn(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
    c.args(args)
        .current_dir(cwd)
        .env_remove("TDN_JUDGE")
        .env_remove("TDN_EMBEDDER")
        .env("HOME", cwd)
        .env("XDG_CONFIG_HOME", cwd.join(".config"))
        .env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    tdn(dir.path(), args).output().unwrap()
}

fn sample(name: &str) -> String {
    root()
        .join("sample-runs")
        .join(format!("{name}.json"))
        .display()
        .to_string()
}

/// A real export's path (tests/fixtures/import/real/).
fn real_export(name: &str) -> String {
    root()
        .join("tests/fixtures/import/real")
        .join(name)
        .display()
        .to_string()
}

fn report(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one compact object per run");
    serde_json::from_str(&text).unwrap()
}

fn json_report(name: &str) -> Value {
    report(&run(&["analyze", "--json", &sample(name)]))
}

/// What sample-runs/README.md says the debugger finds in each sample.
struct Expect {
    name: &'static str,
    verdict: Option<(&'static str, &'static str)>,
    fault: &'static str,
    claims: &'static [&'static str],
}

const EXPECT: &[Expect] = &[
    Expect {
        name: "calendar-friday",
        verdict: Some(("s4", "wrong_value")),
        fault: "agent",
        claims: &["contradicted"],
    },
    Expect {
        name: "refund-outdated-policy",
        verdict: Some(("s3", "outdated_source")),
        fault: "agent",
        claims: &["stale"],
    },
    Expect {
        name: "track-package-wrong-tool",
        verdict: Some(("s2", "wrong_tool")),
        fault: "agent",
        // "Your package is out for delivery and will arrive today by 8 pm.": one claim, the
        // second verb shares the first's subject.
        claims: &["unsupported"],
    },
    Expect {
        name: "warranty-search-loop",
        verdict: Some(("s6", "repeated_call")),
        fault: "agent",
        claims: &["supported"],
    },
    Expect {
        name: "invoice-page-injection",
        verdict: Some(("s3", "prompt_injection")),
        fault: "agent",
        claims: &["supported", "supported"],
    },
    Expect {
        name: "contract-context-full",
        verdict: Some(("s2", "context_full")),
        fault: "agent",
        claims: &["no_claim", "partial"],
    },
    Expect {
        name: "seat-memory-mismatch",
        verdict: Some(("s3", "memory_mismatch")),
        fault: "agent",
        claims: &["supported", "supported"],
    },
    Expect {
        name: "replacement-failed-precondition",
        verdict: Some(("s4", "failed_precondition")),
        fault: "agent",
        claims: &["supported", "unsupported"],
    },
    Expect {
        name: "label-crash",
        verdict: None,
        fault: "agent",
        claims: &[],
    },
    Expect {
        name: "account-not-found",
        verdict: Some(("s2", "wrong_value")),
        fault: "user",
        claims: &["partial"],
    },
    Expect {
        name: "flight-change-declined",
        verdict: None,
        fault: "user",
        claims: &["no_claim", "supported"],
    },
    Expect {
        name: "cancel-waiting-for-user",
        verdict: None,
        fault: "unfinished",
        claims: &["partial", "supported", "no_claim"],
    },
    Expect {
        name: "order-status-succeeded",
        verdict: None,
        fault: "none",
        claims: &["supported"],
    },
    Expect {
        name: "refund-wrong-order",
        verdict: None,
        fault: "agent",
        claims: &["supported"],
    },
    Expect {
        name: "office-hours-flat-context",
        verdict: None,
        fault: "agent",
        claims: &["supported"],
    },
];

/// Samples whose only finding names no fault: the first lead (step, category) the README
/// promises, listed apart from the suspects.
const LEADS: &[(&str, &str, &str)] = &[
    ("label-crash", "s4", "run_error"),
    ("refund-wrong-order", "s5", "point_of_no_return"),
];

#[test]
fn a_sample_whose_finding_names_no_fault_lists_it_as_a_lead_not_a_suspect() {
    for (name, step, category) in LEADS {
        let r = json_report(name);
        assert!(r["verdict"].is_null(), "{name}");
        assert_eq!(r["suspects"].as_array().map(Vec::len), Some(0), "{name}");
        let lead = &r["leads"][0];
        assert_eq!(
            (
                lead["step"].as_str(),
                lead["category"].as_str(),
                lead["rank"].as_u64()
            ),
            (Some(*step), Some(*category), Some(1)),
            "{name}"
        );
    }
}

#[test]
fn every_sample_gives_the_verdict_fault_and_claims_its_readme_promises() {
    for e in EXPECT {
        let r = json_report(e.name);
        assert_eq!(r["format"], "tdn.report/1");
        let verdict = r["verdict"].as_object().map(|v| {
            (
                v["step"].as_str().unwrap().to_owned(),
                v["category"].as_str().unwrap().to_owned(),
            )
        });
        assert_eq!(
            verdict,
            e.verdict.map(|(s, c)| (s.to_owned(), c.to_owned())),
            "{}",
            e.name
        );
        assert_eq!(r["fault"]["party"], e.fault, "{}", e.name);
        let labels: Vec<&str> = r["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, e.claims, "{}", e.name);
        assert_eq!(
            r["fault"]["party"] == "none",
            r["run"]["status"] == "succeeded",
            "{}",
            e.name
        );
        if r["run"]["status"] == "unfinished" {
            assert_eq!(r["fault"]["party"], "unfinished");
        }
    }
}

#[test]
fn the_samples_cover_every_detector_label_and_party() {
    let names: Vec<&str> = EXPECT.iter().map(|e| e.name).collect();
    let mut detectors = std::collections::BTreeSet::new();
    let mut evidence_lines = 0;
    for n in &names {
        let r = json_report(n);
        let leads = r["leads"].as_array().unwrap();
        for s in r["suspects"].as_array().unwrap().iter().chain(leads) {
            detectors.insert(s["detector"].as_str().unwrap().to_owned());
            evidence_lines += s["evidence"].as_array().unwrap().len();
        }
    }
    // The detectors whose findings merge into a better suspect on the same step still show as
    // `also:` evidence; the ones below are each some sample's own suspect.
    for d in [
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
    ] {
        assert!(
            detectors.contains(d),
            "no sample exercises {d}: {detectors:?}"
        );
    }
    assert!(evidence_lines > 20);
    let labels: std::collections::BTreeSet<&str> = EXPECT
        .iter()
        .flat_map(|e| e.claims.iter().copied())
        .collect();
    assert_eq!(labels.len(), 6, "{labels:?}");
    let parties: std::collections::BTreeSet<&str> = EXPECT.iter().map(|e| e.fault).collect();
    assert_eq!(parties.len(), 4, "{parties:?}");
    assert!(EXPECT.len() >= 8);
}

#[test]
fn the_friday_case_blames_the_step_that_wrote_friday() {
    let r = json_report("calendar-friday");
    let s = r["suspects"].as_array().unwrap();
    assert_eq!(s[0]["role"], "root_cause");
    assert_eq!(s[0]["detector"], "tool_errors");
    assert_eq!(
        s[0]["evidence"][0],
        "its output flows into step 's5' (position 5), where the failure surfaced"
    );
    assert_eq!(
        (
            s[1]["step"].as_str(),
            s[1]["category"].as_str(),
            s[1]["role"].as_str(),
            s[1]["cause"].as_str()
        ),
        (
            Some("s6"),
            Some("contradicted_claim"),
            Some("symptom"),
            Some("s4")
        )
    );
    // The failed call at s5 only showed the decision's effect: not listed, its evidence is the
    // cause's.
    assert!(s.iter().all(|x| x["step"] != "s5"));
    assert!(s[0]["evidence"].as_array().unwrap().iter().any(|e| {
        e.as_str()
            .unwrap()
            .contains("yet the final answer says it worked")
    }));
    assert!(
        r["links"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["from"] == "s4" && l["to"] == "s5" && l["value"] == "Friday")
    );
    assert_eq!(r["claims"][0]["evidence_step"], "s5");
    assert_eq!(r["claims"][0]["origin_step"], "s6");
}

#[test]
fn the_refund_case_traces_120_to_the_outdated_policy() {
    let r = json_report("refund-outdated-policy");
    assert_eq!(r["suspects"][0]["role"], "root_cause");
    assert_eq!(
        (
            r["suspects"][1]["step"].as_str(),
            r["suspects"][1]["cause"].as_str()
        ),
        (Some("s4"), Some("s3"))
    );
    assert_eq!(
        (
            r["claims"][0]["evidence_step"].as_str(),
            r["claims"][0]["origin_step"].as_str()
        ),
        (Some("s3"), Some("s4"))
    );
    assert!(
        r["verdict"]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e
                .as_str()
                .unwrap()
                .contains("document 'policy-2019' is marked outdated"))
    );
}

#[test]
fn text_output_names_the_suspects_and_fault_without_scores() {
    let out = run(&["analyze", &sample("calendar-friday")]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Top suspect: step 's4' (position 4): wrong value"),
        "{text}"
    );
    assert!(
        text.contains("2. step 's6' (position 6): contradicted claim"),
        "{text}"
    );
    assert!(
        !text.contains("step 's5' (position 5): tool error"),
        "{text}"
    );
    assert!(text.contains("Fault: agent."), "{text}");
    assert!(text.contains("[contradicted]"), "{text}");
    assert!(text.contains("correlation, not proof"), "{text}");
    for score in ["0.99", "0.72", "0.64", "%"] {
        assert!(!text.contains(score), "{score} printed: {text}");
    }
}

#[test]
fn validate_prints_one_line_per_warning_and_exits_0() {
    let f = root().join("tests/fixtures/analyze/warnings.json");
    let out = run(&["validate", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let prefix = format!("{}: warning: ", f.display());
    assert!(
        lines[0].starts_with(&prefix)
            && lines[0].contains("step 'a2' (position 2)")
            && lines[0].contains("kind"),
        "{text}"
    );
    assert!(
        lines[1].starts_with(&prefix)
            && lines[1].contains("step 'a3' (position 3)")
            && lines[1].contains("\"parent\""),
        "{text}"
    );
    let clean = run(&["validate", &sample("calendar-friday")]);
    assert_eq!(clean.status.code(), Some(0));
    assert!(clean.stdout.is_empty());
}

#[test]
fn unloadable_files_exit_2_with_where_on_stderr() {
    let bad = root().join("tests/fixtures/analyze/bad-json.json");
    for cmd in ["validate", "analyze"] {
        let out = run(&[cmd, bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("{}:4:1: not valid JSON", bad.display())),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    let no_status = root().join("tests/fixtures/analyze/no-status.json");
    let out = run(&["analyze", "--json", no_status.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("\"status\" is missing")
    );
    let missing = run(&["analyze", "/nonexistent/run.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8(missing.stderr)
            .unwrap()
            .contains("/nonexistent/run.json")
    );
}

#[test]
fn reference_and_no_reference_together_is_bad_usage() {
    let out = run(&[
        "analyze",
        "--reference",
        "x",
        "--no-reference",
        &sample("label-crash"),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

const EVIL: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}x\u{0}";

fn hostile_run(n: usize) -> Value {
    let steps: Vec<Value> = (0..n)
        .map(|i| {
            let id = format!("s{i}{}", if i % 997 == 0 { EVIL } else { "" });
            match i % 4 {
                0 => serde_json::json!({"id": id, "kind": "user", "name": EVIL, "output": format!("ORD-{} {EVIL} costs ${}", i % 300, 100 + i % 50)}),
                1 => serde_json::json!({"id": id, "kind": "llm", "output": {"tool_call": {"name": "t", "arguments": {"id": format!("ORD-{}", i % 300), "q": EVIL}}}}),
                2 => serde_json::json!({"id": id, "kind": "tool", "tool": {"name": "t", "arguments": {"id": format!("ORD-{}", i % 300), "q": EVIL}},
                       "error": format!("not found: ORD-{} {EVIL}", i % 300)}),
                _ => serde_json::json!({"id": id, "kind": "retrieval", "input": "same", "documents": [{"text": format!("{EVIL} refunds are ${}", 100 + i % 7), "outdated": true}]}),
            }
        })
        .collect();
    serde_json::json!({"format": "tdn.run/1", "id": EVIL, "status": "failed", "task": EVIL,
        "final_answer": format!("{EVIL} You get $101 for ORD-1. ").repeat(40),
        "model": {"context_window": 1e300}, "limits": {"max_steps": 18446744073709551615u64},
        "tools": [{"name": "t", "mutates": true, "description": EVIL, "parameters": {"type": "object", "properties": {"id": {"type": "string", "format": "date-time"}}}}],
        "steps": steps})
}

fn has_hazard(s: &str) -> bool {
    s.chars()
        .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
}

#[test]
fn a_hostile_run_of_100000_steps_is_analysed_and_printed_inert() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("hostile.json");
    std::fs::write(&f, serde_json::to_string(&hostile_run(100_000)).unwrap()).unwrap();
    let out = tdn(dir.path(), &["analyze", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !has_hazard(&text),
        "raw control characters in the text output"
    );
    assert!(text.contains("Top suspect: step"));
    let out = tdn(dir.path(), &["analyze", "--json", f.to_str().unwrap()])
        .output()
        .unwrap();
    let json = String::from_utf8(out.stdout).unwrap();
    assert!(
        !has_hazard(json.trim_end()),
        "raw control characters in the JSON output"
    );
    let r: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(r["run"]["steps"], 100_000);
    assert_eq!(r["run"]["id"], EVIL, "JSON keeps the text, escaped");
    assert!(r["suspects"].as_array().unwrap().len() <= 1_000);
}

#[test]
fn giant_strings_and_deep_nesting_do_not_hang_or_panic() {
    let dir = tempfile::tempdir().unwrap();
    let giant = dir.path().join("giant.json");
    let mut v = hostile_run(8);
    v["steps"][1]["output"] = Value::String("ORD-1 $450 word ".repeat(2_000_000));
    v["final_answer"] = Value::String("y".repeat(10_000_000));
    std::fs::write(&giant, serde_json::to_string(&v).unwrap()).unwrap();
    let out = tdn(dir.path(), &["analyze", "--json", giant.to_str().unwrap()])
        .output()
        .unwrap();
    let r = report(&out);
    assert_eq!(r["run"]["steps"], 8);
    let deep = dir.path().join("deep.json");
    let nested = format!("{}1{}", "[".repeat(50_000), "]".repeat(50_000));
    std::fs::write(&deep, format!(r#"{{"format":"tdn.run/1","id":"d","status":"failed","steps":[{{"id":"s1","kind":"llm","output":{nested}}}]}}"#)).unwrap();
    let out = tdn(dir.path(), &["analyze", deep.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("deep.json:1:")
    );
}

#[test]
fn a_file_holding_several_runs_gives_one_report_per_run_in_file_order() {
    let f = root().join("tests/fixtures/import/taubench.json");
    let out = run(&["analyze", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["run"]["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, vec!["task-7-trial-0", "task-8-trial-1"]);
    let out = run(&["analyze", f.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.matches("\nRun '").count() + usize::from(text.starts_with("Run '")),
        2
    );
    let one = run(&["analyze", "--json", "--index", "1", f.to_str().unwrap()]);
    assert_eq!(report(&one)["run"]["id"], "task-8-trial-1");
    assert_eq!(
        run(&["validate", f.to_str().unwrap()]).status.code(),
        Some(0)
    );
}
