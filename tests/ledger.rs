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

pub const EPOCH: &str = "similarity<0.8@hashed|tdn-tui/test";
pub const RUNNER: &str = "python3 agent.py";

/// A failed run: the agent rejected a claim after reading three sent units; `mem` was available
/// but not sent.
pub fn run_json() -> Value {
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

pub struct Fixture {
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
            source: None,
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
                duration_ms: None,
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

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn verify_json(f: &Fixture) -> (i32, Value) {
    let o = f.cli(&["ledger", "verify", f.path().to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    (o.status.code().unwrap(), v)
}

/// Recomputes every `prev` so that only the edited content is wrong.
pub fn rechain(lines: Vec<String>) -> Vec<String> {
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

#[path = "ledger/commands.rs"]
mod commands;
#[path = "ledger/store.rs"]
mod store;
#[path = "ledger/tamper.rs"]
mod tamper;
