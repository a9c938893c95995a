//! Appending as the runner does: trials formed from fsynced samples, attributions on closing a
//! cohort, torn tails reported and sealed, two writers on one linear chain, run-scope ledgers.

use super::*;

#[test]
fn a_baseline_and_ablation_form_causal_trials_and_an_attribution_that_verifies() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    let closed = f.ledger.close_cohort("b-1", &Policy::default()).unwrap();
    assert_eq!(closed.attributions.len(), 1);
    let a = &closed.attributions[0];
    assert_eq!(
        (
            a.component_id.as_str(),
            a.evidence_level.as_str(),
            a.effect,
            a.confidence
        ),
        ("doc-a", "causal_ablation", -1.0, 0.5)
    );
    assert_eq!(a.disposition.as_str(), "harmful");
    assert_eq!(a.supersedes, None);
    let (code, v) = verify_json(&f);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["format"], "tdn.ledger-verify/1");
    assert_eq!(v["ok"], true);
    let c = &v["counts"];
    assert_eq!(
        (
            c["failed"].as_u64(),
            c["unbound"].as_u64(),
            c["torn"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(c["lines"], c["verified"]);
    // The output text is never stored, only its hash.
    let text = std::fs::read_to_string(f.path()).unwrap();
    assert!(!text.contains("APPROVED"));
    assert!(text.contains(&sha256_hex(b"APPROVED")));
    // Closing again appends nothing; a later trial of the closed cohort is refused.
    assert!(
        f.ledger
            .close_cohort("b-1", &Policy::default())
            .unwrap()
            .attributions
            .is_empty()
    );
    let late = f.append(
        "b-1",
        &f.spec(ExperimentKind::Ablate, &["doc-b"], &[], 0),
        false,
    );
    assert_eq!(late.refused[0].code.as_str(), "cohort_closed");
    assert_eq!(verify_json(&f).0, 0);
}

#[test]
fn a_torn_last_line_is_reported_then_sealed_by_the_next_writer() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    let before = f.lines().len();
    let mut bytes = std::fs::read(f.path()).unwrap();
    bytes.extend_from_slice(b"{\"schema\":2,\"type\":\"sample\",\"sample_id\":\"0f");
    std::fs::write(f.path(), &bytes).unwrap();
    let o = f.cli(&["ledger", "verify", f.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "a torn tail is not fatal");
    assert!(
        stdout(&o).contains(&format!("line {}: torn, 43 bytes, ignored", before + 1)),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains(" 1 torn, 0 failed"), "{}", stdout(&o));

    // A second writer (another process would do the same) seals it before appending.
    let other = Ledger::open(f.path(), Scope::Run, "cal-1").unwrap();
    f.append_with(
        &other,
        "b-2",
        &f.spec(ExperimentKind::Baseline, &[], &[], 0),
        Ok(true),
    );
    let lines = f.lines();
    assert!(lines[before].starts_with("{\"schema\":2,\"type\":\"sample\",\"sample_id\":\"0f"));
    let torn: Value = serde_json::from_str(&lines[before + 1]).unwrap();
    assert_eq!(
        (
            torn["type"].as_str(),
            torn["line"].as_u64(),
            torn["bytes"].as_u64()
        ),
        (Some("torn"), Some(before as u64 + 1), Some(43))
    );
    assert_eq!(
        torn["prev"].as_str(),
        Some(sha256_hex(lines[before].as_bytes()).as_str())
    );
    let (code, v) = verify_json(&f);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["counts"]["torn"], 1);
    assert!(
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["code"] == "torn_sealed")
    );
}

#[test]
fn a_whole_last_line_missing_only_its_newline_is_completed_not_sealed() {
    let f = Fixture::new();
    f.causal_batch("b-1");
    let mut bytes = std::fs::read(f.path()).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(f.path(), &bytes).unwrap();
    let n = f.lines().len();
    f.append("b-2", &f.spec(ExperimentKind::Baseline, &[], &[], 0), true);
    assert!(
        !std::fs::read_to_string(f.path())
            .unwrap()
            .contains("\"type\":\"torn\"")
    );
    assert!(f.lines().len() > n);
    assert_eq!(verify_json(&f).0, 0);
}

#[test]
fn two_writers_at_once_append_whole_lines_on_one_linear_chain() {
    let f = Fixture::new();
    const PER_WRITER: u64 = 40;
    std::thread::scope(|scope| {
        for w in 0..2 {
            let f = &f;
            scope.spawn(move || {
                // Each writer has its own file handle: the file lock keeps them apart.
                let mine = Ledger::open(f.path(), Scope::Run, "cal-1").unwrap();
                let cohort = format!("b-w{w}");
                for seed in 0..PER_WRITER {
                    f.append_with(
                        &mine,
                        &cohort,
                        &f.spec(ExperimentKind::Baseline, &[], &[], seed),
                        Ok(true),
                    );
                    f.append_with(
                        &mine,
                        &cohort,
                        &f.spec(ExperimentKind::Ablate, &["doc-b"], &[], seed),
                        Ok(true),
                    );
                }
            });
        }
    });
    let lines = f.lines();
    let count = |t: &str| {
        lines
            .iter()
            .filter(|l| l.contains(&format!("\"type\":\"{t}\"")))
            .count()
    };
    assert_eq!(count("sample"), 4 * PER_WRITER as usize);
    assert_eq!(count("trial"), 2 * PER_WRITER as usize);
    for w in lines.windows(2) {
        let v: Value = serde_json::from_str(&w[1]).expect("every line is whole JSON");
        assert_eq!(
            v["prev"].as_str(),
            Some(sha256_hex(w[0].as_bytes()).as_str())
        );
    }
    let (code, v) = verify_json(&f);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["counts"]["unbound"].as_u64(),
        Some(2 * PER_WRITER),
        "cohorts not closed yet"
    );
}

#[test]
fn a_run_scope_ledger_refuses_another_runs_samples() {
    let f = Fixture::new();
    let mut other = f.run.clone();
    other.id = "cal-2".to_owned();
    let spec = f.spec(ExperimentKind::Baseline, &[], &[], 0);
    let err = f
        .ledger
        .append_sample(&NewSample {
            cohort: "b-1",
            evaluator_epoch: EPOCH,
            run: &other,
            runner_command: RUNNER,
            spec: &spec,
            finished_at: time::OffsetDateTime::now_utc(),
            outcome: Err("boom".to_owned()),
            cost: None,
            duration_ms: None,
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("run 'cal-1', not of run 'cal-2'"),
        "{err}"
    );
}
