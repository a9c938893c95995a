//! The attribution ledger with real files: samples appended through the library as the runner
//! appends them, then `tdn-tui ledger show|verify|plan|select` run as a user runs them. Expected
//! values follow spec/attribution-ledger.md (score rule, effects, levels, exit codes), never the
//! code under test.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tdn_tui::analysis::load::{LoadOptions, load_one};
use tdn_tui::analysis::model::Run;
use tdn_tui::experiments::ledger::digest::sha256_hex;
use tdn_tui::experiments::ledger::{
    Appended, Entry, Ledger, NewSample, Policy, SampleOutcome, Scope, locate,
};
use tdn_tui::experiments::spec::{ExperimentKind, ExperimentSpec};

const EPOCH: &str = "similarity<0.8@hashed|tdn-tui/test";
const RUNNER: &str = "python3 agent.py";

/// A failed run: the agent rejected a claim after reading three sent units; `mem` was available
/// but not sent.
fn run_json() -> Value {
    json!({
        "format": "tdn.run/1", "id": "cal-1", "status": "failed",
        "task": "approve claim 42?", "final_answer": "REJECTED",
        "context_units": [
            {"id": "sys", "kind": "instruction", "text": "You are a claims agent."},
            {"id": "doc-a", "kind": "document", "text": "Policy A: reject claims over 500.", "tokens": 9},
            {"id": "doc-b", "kind": "document", "text": "Policy B: claims are fine."},
            {"id": "mem", "kind": "memory", "text": "Customer is VIP"}
        ],
        "steps": [
            {"id": "s1", "kind": "user", "input": "approve claim 42?"},
            {"id": "s2", "kind": "llm", "output": "REJECTED",
             "context": {"available": ["sys", "doc-a", "doc-b", "mem"], "sent": ["sys", "doc-a", "doc-b"]}}
        ]
    })
}

struct Fixture {
    dir: tempfile::TempDir,
    run_path: PathBuf,
    run: Run,
    ledger: Ledger,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let run_path = dir.path().join("cal-1.json");
        std::fs::write(&run_path, run_json().to_string()).unwrap();
        let run = load_one(&run_path, &LoadOptions::default()).unwrap().run;
        let loc = locate(&run_path, None, 1, &run.id);
        assert_eq!(loc.path, dir.path().join("cal-1.ledger.jsonl"));
        let ledger = Ledger::open(&loc.path, loc.scope, &loc.name).unwrap();
        Fixture {
            dir,
            run_path,
            run,
            ledger,
        }
    }

    fn path(&self) -> &Path {
        self.ledger.path()
    }

    fn spec(
        &self,
        kind: ExperimentKind,
        remove: &[&str],
        restore: &[&str],
        seed: u64,
    ) -> ExperimentSpec {
        ExperimentSpec {
            run: self.run_path.display().to_string(),
            run_id: self.run.id.clone(),
            experiment: kind,
            remove: remove.iter().map(|s| s.to_string()).collect(),
            restore: restore.iter().map(|s| s.to_string()).collect(),
            from_step: (kind == ExperimentKind::Replay).then(|| "s2".to_owned()),
            patch: None,
            seed,
            sample: seed,
        }
    }

    fn append(&self, cohort: &str, spec: &ExperimentSpec, reproduced: bool) -> Appended {
        self.append_with(&self.ledger, cohort, spec, Ok(reproduced))
    }

    fn append_with(
        &self,
        ledger: &Ledger,
        cohort: &str,
        spec: &ExperimentSpec,
        outcome: Result<bool, &str>,
    ) -> Appended {
        let outcome = match outcome {
            Ok(reproduced) => Ok(SampleOutcome {
                output: if reproduced { "REJECTED" } else { "APPROVED" },
                reproduced,
            }),
            Err(e) => Err(e.to_owned()),
        };
        ledger
            .append_sample(&NewSample {
                cohort,
                evaluator_epoch: EPOCH,
                run: &self.run,
                runner_command: RUNNER,
                spec,
                finished_at: time::macros::datetime!(2026-08-17 10:00:00 UTC),
                outcome,
                cost: None,
            })
            .unwrap()
    }

    /// Seeds 0 and 1 of baseline + ablation of doc-a; seed 1 finishes the ablation first.
    /// Failed run: reproducing the failure scores 0, departing from it scores 1 (spec §4).
    fn causal_batch(&self, cohort: &str) {
        let base0 = self.append(
            cohort,
            &self.spec(ExperimentKind::Baseline, &[], &[], 0),
            true,
        );
        assert!(base0.trials.is_empty());
        let abl0 = self.append(
            cohort,
            &self.spec(ExperimentKind::Ablate, &["doc-a"], &[], 0),
            false,
        );
        assert_eq!(abl0.trials.len(), 1, "{abl0:?}");
        let abl1 = self.append(
            cohort,
            &self.spec(ExperimentKind::Ablate, &["doc-a"], &[], 1),
            false,
        );
        assert!(abl1.trials.is_empty(), "no baseline for seed 1 yet");
        let base1 = self.append(
            cohort,
            &self.spec(ExperimentKind::Baseline, &[], &[], 1),
            true,
        );
        assert_eq!(base1.trials.len(), 1, "the baseline completes the pair");
        for t in abl0.trials.iter().chain(&base1.trials) {
            assert_eq!(t.component_id, "doc-a");
            assert_eq!(t.evidence_level.as_str(), "causal_ablation");
            assert_eq!(t.effect, -1.0, "with doc-a 0, without 1");
        }
    }

    fn cli(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
            .args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path())
            .output()
            .unwrap()
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.path())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn write_lines(&self, lines: &[String]) {
        std::fs::write(self.path(), lines.join("\n") + "\n").unwrap();
    }

    fn line_of(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.lines()
            .iter()
            .position(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| pred(&v)))
            .unwrap()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn verify_json(f: &Fixture) -> (i32, Value) {
    let o = f.cli(&["ledger", "verify", f.path().to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    (o.status.code().unwrap(), v)
}

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

/// Recomputes every `prev` so that only the edited content is wrong.
fn rechain(lines: Vec<String>) -> Vec<String> {
    use tdn_tui::experiments::ledger::canonical::{canonical, parse_strict};
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        let mut v = parse_strict(&l).unwrap();
        if v.get("schema").is_some() {
            v["prev"] = out
                .last()
                .map(|p| json!(sha256_hex(p.as_bytes())))
                .unwrap_or(Value::Null);
        }
        out.push(canonical(&v).unwrap());
    }
    out
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
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("run 'cal-1', not of run 'cal-2'"),
        "{err}"
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
