//! Edited, deleted, inserted and relabelled lines: each fails `ledger verify` (exit 1) with the
//! line, type and id of the record that no longer reconstructs.

use super::*;

#[test]
fn an_edited_effect_fails_verify_naming_line_type_and_id() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    f.ledger.close_cohort("b-1", &Policy::default()).unwrap();
    let at = f.line_of(|v| v["type"] == "attribution");
    let mut lines = f.lines();
    let id: String = serde_json::from_str::<Value>(&lines[at]).unwrap()["attribution_id"]
        .as_str()
        .unwrap()
        .chars()
        .take(8)
        .collect();
    assert!(lines[at].contains("\"effect\":-1,"));
    lines[at] = lines[at].replace("\"effect\":-1,", "\"effect\":-0.5,");
    f.write_lines(&lines);
    let path = f.path().to_str().unwrap();
    let o = f.cli(&["ledger", "verify", path]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "{path}:{}: attribution {id}: effect -0.5 != -1 recomputed from 2 trials",
        at + 1
    );
    assert!(stdout(&o).lines().any(|l| l == want), "{}", stdout(&o));
    assert!(stdout(&o).ends_with("1 failed\n"), "{}", stdout(&o));
}

#[test]
fn a_deleted_line_fails_verify() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    let first_sample = f.line_of(|v| v["type"] == "sample");
    let mut lines = f.lines();
    lines.remove(first_sample);
    f.write_lines(&lines);
    let o = f.cli(&["ledger", "verify", f.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let path = f.path().display().to_string();
    assert!(
        out.contains(&format!("{path}:{}: sample ", first_sample + 1)),
        "{out}"
    );
    assert!(out.contains("'prev' does not match"), "{out}");
    assert!(
        out.contains("names no earlier sample"),
        "the trial lost its baseline:\n{out}"
    );
}

#[test]
fn an_inserted_line_fails_verify() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    let at = f.line_of(|v| v["type"] == "sample");
    let mut lines = f.lines();
    let copy = lines[at].clone();
    lines.insert(at + 1, copy);
    f.write_lines(&lines);
    let (code, v) = verify_json(&f);
    assert_eq!(code, 1);
    let codes: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"chain") && codes.contains(&"duplicate"),
        "{codes:?}"
    );
}

#[test]
fn paired_shadow_records_are_never_upgraded_and_never_omitted() {
    let f = Fixture::new();
    for seed in 0..2 {
        f.append(
            "b-1",
            &f.spec(ExperimentKind::Baseline, &[], &[], seed),
            true,
        );
        let two = f.append(
            "b-1",
            &f.spec(ExperimentKind::Ablate, &["doc-a", "doc-b"], &[], seed),
            false,
        );
        assert_eq!(two.trials.len(), 2, "one trial per removed unit");
        assert!(
            two.trials
                .iter()
                .all(|t| t.evidence_level.as_str() == "paired_shadow")
        );
        let replay = f.append(
            "b-1",
            &f.spec(ExperimentKind::Replay, &[], &[], seed),
            false,
        );
        assert_eq!(replay.trials.len(), 1);
        assert_eq!(
            (
                replay.trials[0].component_kind.as_str(),
                replay.trials[0].evidence_level.as_str()
            ),
            ("replay", "paired_shadow")
        );
    }
    let closed = f.ledger.close_cohort("b-1", &Policy::default()).unwrap();
    assert_eq!(closed.attributions.len(), 3);
    for a in &closed.attributions {
        assert_eq!(a.evidence_level.as_str(), "paired_shadow");
        // Removing a unit departed from the failure: harmful with it. The replay is the "with"
        // side: departing after it is an effect of +1, retained.
        let want = if a.component_kind == "replay" {
            "retained"
        } else {
            "harmful"
        };
        assert_eq!(a.disposition.as_str(), want, "{a:?}");
    }
    assert_eq!(verify_json(&f).0, 0);
    let o = f.cli(&[
        "ledger",
        "select",
        f.path().to_str().unwrap(),
        "--epoch",
        EPOCH,
        "--json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    for c in v["components"].as_array().unwrap() {
        assert_eq!(c["included"], true, "{c}");
        if c["component_id"] == "doc-a" || c["component_id"] == "doc-b" {
            assert_eq!(
                (c["reason"].as_str(), c["disposition"].as_str()),
                (Some("shadow_only"), Some("harmful"))
            );
        }
    }
    // Relabel one trial as causal and repair the whole chain: the diff still says no.
    let at = f.line_of(|v| v["type"] == "trial" && v["component_id"] == "doc-a");
    let mut lines = f.lines();
    lines[at] = lines[at].replace("\"paired_shadow\"", "\"causal_ablation\"");
    f.write_lines(&rechain(lines));
    let (code, v) = verify_json(&f);
    assert_eq!(code, 1);
    let p = v["problems"].as_array().unwrap();
    assert!(
        p.iter()
            .any(|p| p["line"] == at + 1 && p["code"] == "level"),
        "{v}"
    );
    assert!(
        !p.iter().any(|p| p["code"] == "chain"),
        "the chain was repaired: {v}"
    );
}
