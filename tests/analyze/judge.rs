//! The judge as `analyze` runs it: a scripted command through `TDN_JUDGE` or a config file, its
//! failures, and the consent rule for a judge found in a `tdn.toml` of the current folder
//! (runner.md "Where the command comes from", "The judge").

use super::{json_report, report, sample, tdn};
use serde_json::Value;
use std::process::Command;

fn judge_env(cmd: &str) -> (tempfile::TempDir, Command) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = tdn(
        dir.path(),
        &["analyze", "--json", &sample("refund-wrong-order")],
    );
    c.env("TDN_JUDGE", cmd);
    (dir, c)
}

#[test]
fn a_scripted_judge_adds_its_finding_and_the_plan_rule_moves_it() {
    let (_d, mut c) = judge_env(
        r#"cat > /dev/null; echo '{"step": "s4", "reason": "refunded ORD-2211, not the ORD-2210 the user named"}'"#,
    );
    let r = report(&c.output().unwrap());
    assert_eq!(r["judge"]["step"], "s5");
    assert_eq!(r["judge"]["error"], Value::Null);
    let top = &r["suspects"][0];
    assert_eq!(
        (
            top["step"].as_str(),
            top["detector"].as_str(),
            top["score"].as_f64()
        ),
        (Some("s5"), Some("judge"), Some(0.9))
    );
    let ev: Vec<&str> = top["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        ev.contains(
            &"plan first proposed at step 's4' (position 4); carried out by the call at step 's6' (position 6), made at step 's5' (position 5)"
        ),
        "{ev:?}"
    );
    // The first change is a lead, not a suspect: the rules picked none.
    assert!(ev.contains(&"the rules found no suspect"), "{ev:?}");
}

#[test]
fn the_text_report_says_the_step_the_judge_named_and_why_its_finding_moved() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdn(dir.path(), &["analyze", &sample("refund-wrong-order")])
        .env(
            "TDN_JUDGE",
            r#"cat > /dev/null; echo '{"step": "s4", "reason": "refunded the wrong order"}'"#,
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Judge: named step 's4': refunded the wrong order"),
        "{text}"
    );
    assert!(
        text.contains("The rules moved its finding to step 's5' because the plan proposed at step 's4' (position 4) was carried out at step 's5' (position 5)."),
        "{text}"
    );
}

#[test]
fn a_failing_slow_or_nonsensical_judge_leaves_the_rules_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("judge.toml");
    std::fs::write(&cfg, "[judge]\ntimeout_s = 1\n").unwrap();
    for (cmd, why) in [
        ("echo broken >&2; exit 1", "exited with status 1"),
        ("sleep 30", "timed out"),
        ("echo 'not json at all'", "JSON object"),
        (r#"echo '{"step": "s42", "reason": "x"}'"#, "not in the run"),
    ] {
        let mut c = tdn(
            dir.path(),
            &[
                "analyze",
                "--json",
                "--config",
                cfg.to_str().unwrap(),
                &sample("refund-wrong-order"),
            ],
        );
        c.env("TDN_JUDGE", cmd);
        let r = report(&c.output().unwrap());
        assert_eq!(r["verdict"], Value::Null, "{cmd}");
        assert_eq!(r["leads"][0]["step"], "s5", "{cmd}");
        assert_eq!(r["leads"][0]["category"], "point_of_no_return", "{cmd}");
        assert_eq!(r["judge"]["step"], Value::Null);
        let err = r["judge"]["error"].as_str().unwrap();
        assert!(err.contains(why), "{cmd}: {err}");
    }
}

#[test]
fn a_judge_from_a_tdn_toml_here_needs_yes() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("judge-ran");
    std::fs::write(
        dir.path().join("tdn.toml"),
        format!("[judge]\ncommand = \"touch '{}'; echo '{{\\\"step\\\": \\\"s2\\\", \\\"reason\\\": \\\"r\\\"}}'\"\n", marker.display()),
    )
    .unwrap();
    let r = report(
        &tdn(
            dir.path(),
            &["analyze", "--json", &sample("refund-wrong-order")],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(r["judge"], Value::Null);
    assert!(!marker.exists(), "the judge ran without --yes");
    let warnings: Vec<&str> = r["run"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("judge") && w.contains("--yes")),
        "{warnings:?}"
    );
    let r = report(
        &tdn(
            dir.path(),
            &["analyze", "--json", "--yes", &sample("refund-wrong-order")],
        )
        .output()
        .unwrap(),
    );
    assert!(marker.exists());
    assert_eq!(r["judge"]["step"], "s2");
}

#[test]
fn no_judge_is_asked_when_none_is_configured_or_the_rules_are_sure() {
    assert_eq!(json_report("refund-wrong-order")["judge"], Value::Null);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("asked");
    let mut c = tdn(
        dir.path(),
        &["analyze", "--json", &sample("calendar-friday")],
    );
    c.env("TDN_JUDGE", format!("touch '{}'", marker.display()));
    let r = report(&c.output().unwrap());
    assert_eq!(r["judge"], Value::Null);
    assert!(!marker.exists());
}
