//! The `experiment` and `localize` commands: verdicts against a real stand-in agent, the JSON
//! shape of docs/experiments.md, consent, and exit codes.

use crate::support::{RUN, Scenario};
use serde_json::Value;

const AGENT: &str = "python3 agent.py";
const FLIP: &str = "contains:$120";

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[test]
fn removing_the_outdated_policy_is_a_confirmed_flip_with_the_spec_json_shape() {
    let s = Scenario::new();
    let (code, j, err) =
        s.experiment_json(&["--runner", AGENT, "--ablate", "policy-2019", "--flip", FLIP]);
    assert_eq!(code, 0, "{err}");
    for k in [
        "experiment",
        "units",
        "verdict",
        "flips",
        "samples",
        "completed",
        "baseline",
        "flags",
        "similarity",
        "cost",
        "class",
        "errors",
        "ledger",
    ] {
        assert!(j.get(k).is_some(), "missing '{k}' in {j}");
    }
    assert_eq!(j["experiment"], "ablate");
    assert_eq!(j["units"], serde_json::json!(["policy-2019"]));
    assert_eq!(j["verdict"], "confirmed");
    assert_eq!(
        (
            j["flips"].as_u64(),
            j["samples"].as_u64(),
            j["completed"].as_u64()
        ),
        (Some(3), Some(3), Some(3))
    );
    let b = &j["baseline"];
    assert_eq!(
        (
            b["flips"].as_u64(),
            b["samples"].as_u64(),
            b["stable"].as_bool()
        ),
        (Some(0), Some(3), Some(true))
    );
    assert_eq!(j["flags"], serde_json::json!([]));
    assert_eq!(keys(&j["similarity"]), vec!["max", "mean", "min", "stdev"]);
    // A lone experiment has no placebo band: never stable, never a cost cause.
    assert_eq!(j["cost"]["stable"], false);
    assert_eq!(j["cost"]["reduced_cost_on_removal"], false);
    assert_eq!(j["class"], "content-bug");
    assert_eq!(j["errors"], serde_json::json!([]));
    assert_eq!(j["ledger"], "refund-outdated-policy.ledger.jsonl");
}

#[test]
fn ablating_a_step_removes_the_units_it_produced() {
    let s = Scenario::new();
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--ablate",
        "s2",
        "--samples",
        "2",
        "--flip",
        FLIP,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        j["units"],
        serde_json::json!(["policy-2019", "policy-2024"])
    );
    assert_eq!(j["samples"], 2);
    assert_eq!(j["verdict"], "confirmed");
}

#[test]
fn removing_an_innocent_unit_is_not_confirmed_and_restoring_the_dropped_policy_flips() {
    let s = Scenario::new();
    let (_, j, _) = s.experiment_json(&["--runner", AGENT, "--ablate", "tone", "--flip", FLIP]);
    assert_eq!(j["verdict"], "not-confirmed");
    assert_eq!(j["class"], "no-detected-effect");
    assert_eq!(
        j["cost"]["loops_saved"], 1.0,
        "3 loops with the tone unit, 2 without"
    );
    let (_, j, _) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--restore",
        "policy-2024",
        "--flip",
        FLIP,
    ]);
    assert_eq!(j["experiment"], "restore");
    assert_eq!(j["verdict"], "confirmed");
    assert_eq!(j["cost"], Value::Null, "restored units get no cost verdict");
    assert_eq!(j["class"], "content-bug");
}

#[test]
fn a_probe_the_run_says_changes_nothing_runs_with_a_note() {
    let s = Scenario::new();
    // policy-2019 was sent (never dropped); policy-2024 was dropped (never sent).
    let (_, j, err) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--restore",
        "policy-2019",
        "--flip",
        FLIP,
    ]);
    assert_eq!(j["experiment"], "restore", "it still runs");
    assert!(
        err.contains("'policy-2019' was never dropped in this run"),
        "{err}"
    );
    let (_, _, err) =
        s.experiment_json(&["--runner", AGENT, "--ablate", "policy-2024", "--flip", FLIP]);
    assert!(
        err.contains("'policy-2024' was never sent to a model step"),
        "{err}"
    );
    let (_, _, err) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--restore",
        "policy-2024",
        "--flip",
        FLIP,
    ]);
    assert!(!err.contains("never"), "a dropped unit gets no note: {err}");
}

#[test]
fn the_baseline_alone_has_no_units_verdict_cost_or_class() {
    let s = Scenario::new();
    let (code, j, err) = s.experiment_json(&["--runner", AGENT, "--baseline", "--flip", FLIP]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["experiment"], "baseline");
    assert_eq!(j["units"], serde_json::json!([]));
    for k in ["verdict", "cost", "class"] {
        assert_eq!(j[k], Value::Null, "{k}");
    }
    assert_eq!(j["baseline"]["stable"], true);
}

#[test]
fn a_flaky_baseline_makes_the_verdict_inconclusive() {
    let s = Scenario::new();
    // Seed 1 of the unchanged scenario gives the other answer.
    let flaky = "if [ \"$TDN_EXPERIMENT\" = baseline ] && [ \"$TDN_SEED\" = 1 ]; then echo 'You will be refunded $80.'; else python3 agent.py; fi";
    let (code, j, err) =
        s.experiment_json(&["--runner", flaky, "--ablate", "policy-2019", "--flip", FLIP]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["baseline"]["flips"], 1);
    assert_eq!(j["baseline"]["stable"], false);
    assert_eq!(j["flags"], serde_json::json!(["baseline-unstable"]));
    assert_eq!(j["verdict"], "inconclusive");
    assert_eq!(j["flips"], 3);
    assert!(
        j["claim"]
            .as_str()
            .unwrap()
            .contains("unchanged scenario itself changed outcome")
    );
}

#[test]
fn a_replay_sends_the_step_and_the_patch() {
    let s = Scenario::new();
    let replay = "python3 -c 'import json,sys; s=json.load(sys.stdin); print(json.dumps({\"output\": s[\"patch\"] if s[\"experiment\"] == \"replay\" and s[\"from_step\"] == \"s4\" else \"You will be refunded $120 for order 1182.\"}))'";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        replay,
        "--replay",
        "s4",
        "--patch",
        "You get $80.",
        "--samples",
        "2",
        "--flip",
        "exact",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["experiment"], "replay");
    assert_eq!(j["from_step"], "s4");
    assert_eq!(j["units"], serde_json::json!([]));
    assert_eq!(j["verdict"], "confirmed", "{j}");
    assert_eq!(j["class"], Value::Null, "a replay has no class");
}

#[test]
fn no_runner_bad_ids_and_runs_without_an_answer_exit_2() {
    let s = Scenario::new();
    let out = s.tdn(&["experiment", RUN, "--ablate", "policy-2019"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runner"));
    for (args, mention) in [
        (vec!["--ablate", "nope"], "'nope'"),
        (vec!["--ablate", "s4"], "--replay 's4'"),
        (vec!["--restore", "s2"], "'s2'"),
        (vec!["--replay", "s9"], "'s9'"),
        (vec!["--ablate", "tone", "--flip", "sameish"], "'sameish'"),
        (vec!["--ablate", "tone", "--timeout", "0"], "--timeout"),
    ] {
        let mut all = vec!["experiment", RUN, "--runner", AGENT];
        all.extend(args);
        let out = s.tdn(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(mention), "{all:?}: {err}");
    }
    let out = s.tdn(&[
        "experiment",
        "no-final-answer.json",
        "--runner",
        AGENT,
        "--baseline",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("final_answer"));
    let out = s.tdn(&["localize", "no-final-answer.json", "--runner", AGENT]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_runner_from_the_current_folder_needs_yes_and_one_given_by_config_path_does_not() {
    let s = Scenario::new();
    s.write(
        "tdn.toml",
        "[runner]\ncommand = \"python3 agent.py\"\n[experiments]\nflip = \"contains:$120\"\n",
    );
    for sub in ["experiment", "localize"] {
        let mut args = vec![sub, RUN];
        if sub == "experiment" {
            args.extend(["--ablate", "policy-2019"]);
        }
        let out = s.tdn(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert!(
            err.contains("'python3 agent.py'") && err.contains("tdn.toml") && err.contains("--yes"),
            "{err}"
        );
    }
    let (code, j, err) = s.experiment_json(&["--ablate", "policy-2019", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["verdict"], "confirmed");
    std::fs::rename(s.path("tdn.toml"), s.path("mine.toml")).unwrap();
    let (code, _, err) = s.experiment_json(&["--ablate", "policy-2019", "--config", "mine.toml"]);
    assert_eq!(code, 0, "a --config file is the user's own: {err}");
}

#[test]
fn the_ledger_path_can_be_overridden() {
    let s = Scenario::new();
    let (_, j, _) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--baseline",
        "--samples",
        "2",
        "--flip",
        FLIP,
        "--ledger",
        "elsewhere.jsonl",
    ]);
    assert_eq!(j["ledger"], "elsewhere.jsonl");
}

#[test]
fn a_file_of_several_runs_needs_an_index() {
    let s = Scenario::new();
    let tau = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/taubench.json");
    std::fs::copy(tau, s.path("tau.json")).unwrap();
    for sub in ["experiment", "localize"] {
        let mut args = vec![sub, "tau.json", "--runner", AGENT];
        if sub == "experiment" {
            args.push("--baseline");
        }
        let out = s.tdn(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert!(err.contains("--index"), "{sub}: {err}");
    }
    let out = s.tdn(&[
        "experiment",
        "tau.json",
        "--index",
        "1",
        "--runner",
        "false",
        "--baseline",
        "--samples",
        "2",
        "--flip",
        "exact",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("choose one with --index"));
}

#[test]
fn localize_prints_the_report_with_experiments() {
    let s = Scenario::new();
    let out = s.tdn(&[
        "localize",
        RUN,
        "--runner",
        AGENT,
        "--json",
        "--flip",
        FLIP,
        "--samples",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["format"], "tdn.report/1");
    let ex = &j["experiments"];
    assert_eq!(ex["ledger"], "refund-outdated-policy.ledger.jsonl");
    for k in ["baseline", "flags", "runner_calls"] {
        assert!(ex.get(k).is_some(), "missing experiments.{k}: {ex}");
    }
    // Each probed entry carries its verdict; the baseline and every probe ran `samples` times.
    let probed = |section: &Value, list: &str| -> usize {
        section[list].as_array().map_or(0, |a| {
            a.iter().filter(|e| e.get("verdict").is_some()).count()
        })
    };
    let n = probed(&j["influence"], "scores") + probed(&j["dropped"], "dropped");
    let calls = ex["runner_calls"].as_u64().unwrap() as usize;
    assert_eq!(calls, if n == 0 { 0 } else { 2 * (n + 1) }, "{ex}");
}

#[test]
fn a_ledger_of_another_run_or_no_ledger_at_all_is_refused_before_anything_runs() {
    let s = Scenario::new();
    let (code, _, err) = s.experiment_json(&[
        "--runner",
        AGENT,
        "--baseline",
        "--samples",
        "2",
        "--flip",
        FLIP,
    ]);
    assert_eq!(code, 0, "{err}");
    // Another run (another id) whose default ledger place holds the first run's ledger.
    let text = std::fs::read_to_string(s.path(RUN)).unwrap();
    let other = text.replacen(
        "\"id\": \"refund-outdated-policy\"",
        "\"id\": \"refund-copy\"",
        1,
    );
    assert_ne!(other, text, "the fixture's id was replaced");
    s.write("copy.json", &other);
    std::fs::copy(
        s.path("refund-outdated-policy.ledger.jsonl"),
        s.path("copy.ledger.jsonl"),
    )
    .unwrap();
    s.write("pids", "");
    let runner = "echo x >> pids; python3 agent.py";
    let out = s.tdn(&["experiment", "copy.json", "--runner", runner, "--baseline"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'refund-outdated-policy', not of run 'refund-copy'")
            && err.contains("--ledger"),
        "{err}"
    );
    s.write("junk.jsonl", "this is not a ledger\n");
    let out = s.tdn(&[
        "experiment",
        RUN,
        "--runner",
        runner,
        "--baseline",
        "--ledger",
        "junk.jsonl",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a tdn-tui ledger"), "{err}");
    assert_eq!(
        std::fs::read_to_string(s.path("pids")).unwrap(),
        "",
        "the runner was never called"
    );
}

#[test]
fn localize_asks_the_judge_under_the_runners_consent_rule() {
    let s = crate::support::SampleRuns::new();
    let judge = r#"cat > /dev/null; echo '{"step": "s4", "reason": "refunded ORD-2211, not the ORD-2210 the user named"}'"#;
    // refund-wrong-order has no context units: nothing is re-run, but the ranking asks the judge.
    let out = s
        .command(&[
            "localize",
            "refund-wrong-order.json",
            "--runner",
            "false",
            "--json",
        ])
        .env("TDN_JUDGE", judge)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["judge"]["error"], Value::Null, "{j}");
    assert_eq!(
        j["judge"]["step"], "s5",
        "the plan rule moves the judge's step to the decision that made the refund call: {j}"
    );
    assert_eq!(j["experiments"]["runner_calls"], 0);
    assert_eq!(
        j["experiments"]["ledger"],
        Value::Null,
        "nothing was written"
    );
    // A judge from the folder's tdn.toml is not yet the user's word.
    let toml = std::fs::read_to_string(s.path("tdn.toml")).unwrap();
    std::fs::write(
        s.path("tdn.toml"),
        format!("{toml}\n[judge]\ncommand = \"./judge.sh\"\n"),
    )
    .unwrap();
    let out = s.tdn(&["localize", "refund-wrong-order.json", "--runner", "false"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("judge command './judge.sh'") && err.contains("--yes"),
        "{err}"
    );
}

/// Issue 26: what the experiment spent is in its JSON (the job's time, tokens and dollars, then
/// each sample's), and in the ledger: each sample's time and dollars, and each trial what its two
/// samples spent, which `ledger verify` checks.
#[test]
fn the_time_and_cost_of_the_job_and_each_sample_are_in_the_json_and_the_ledger() {
    let s = Scenario::new();
    let (code, j, err) =
        s.experiment_json(&["--runner", AGENT, "--ablate", "policy-2019", "--flip", FLIP]);
    assert_eq!(code, 0, "{err}");
    let spent = &j["spent"];
    // Six runs of the agent, 1,000 tokens and $0.002 each (the agent says so).
    assert_eq!(spent["tokens"].as_f64(), Some(6000.0), "{spent}");
    let usd = spent["usd"].as_f64().expect("dollars");
    assert!((usd - 0.012).abs() < 1e-9, "{spent}");
    let samples = spent["samples"].as_array().expect("samples");
    assert_eq!(samples.len(), 6, "{spent}");
    for (probe, n) in [("baseline", 3), ("experiment", 3)] {
        assert_eq!(
            samples.iter().filter(|x| x["probe"] == probe).count(),
            n,
            "{spent}"
        );
    }
    let slowest = samples
        .iter()
        .map(|x| x["duration_ms"].as_u64().expect("each sample's time"))
        .max()
        .unwrap_or(0);
    let job = spent["duration_ms"].as_u64().expect("the job's time");
    assert!(slowest > 0 && job >= slowest, "{spent}");
    let ledger = std::fs::read_to_string(s.path("refund-outdated-policy.ledger.jsonl")).unwrap();
    let lines: Vec<Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |t: &'static str| lines.iter().filter(move |v| v["type"] == t);
    assert_eq!(of("sample").count(), 6);
    for v in of("sample") {
        assert!(v["duration_ms"].as_u64().is_some(), "{v}");
        assert_eq!(v["cost"]["usd"].as_f64(), Some(0.002), "{v}");
    }
    let by_id = |id: &Value| of("sample").find(|v| v["sample_id"] == *id).unwrap();
    assert_eq!(of("trial").count(), 3);
    for t in of("trial") {
        for (side, sample) in [
            ("with_spent", "with_sample"),
            ("without_spent", "without_sample"),
        ] {
            let sm = by_id(&t[sample]);
            assert_eq!(t[side]["duration_ms"], sm["duration_ms"], "{t}");
            assert_eq!(t[side]["tokens"], sm["cost"]["tokens"], "{t}");
            assert_eq!(t[side]["usd"], sm["cost"]["usd"], "{t}");
        }
    }
    let out = s.tdn(&["ledger", "verify", "refund-outdated-policy.ledger.jsonl"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
