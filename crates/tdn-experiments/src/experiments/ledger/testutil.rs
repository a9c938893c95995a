//! Test doubles for the ledger's unit tests (compiled only under `cfg(test)`): a small failed run
//! with three sent units and one available, a ledger in a temporary folder, functions that append
//! samples, and `rechain` to repair the hash chain after an edit so that only the edited content
//! is wrong.

use super::canonical::{canonical, parse_strict};
use super::digest::sha256_hex;
use super::record::{Policy, Scope};
use super::session::{Appended, NewSample, SampleOutcome};
use super::store::Ledger;
use super::verify::{Checked, verify_path};
use crate::analysis::model::{ContextUnit, Run, RunStatus, Step, StepContext, StepKind};
use crate::experiments::spec::{ExperimentKind, ExperimentSpec};
use serde_json::{Value, json};
use std::path::Path;

pub const EPOCH: &str = "exact|tdn-tui/test";

pub fn run() -> Run {
    let mut r = Run::new("cal-1", RunStatus::Failed);
    r.final_answer = Some("REJECTED".to_owned());
    for (id, kind, text) in [
        ("sys", "instruction", "You are a claims agent."),
        ("doc-a", "document", "Policy A: reject claims over 500."),
        ("doc-b", "document", "Policy B: claims are fine."),
        ("mem", "memory", "Customer is VIP"),
    ] {
        r.context_units.push(ContextUnit {
            id: id.into(),
            kind: kind.to_owned(),
            text: text.to_owned(),
            ..ContextUnit::default()
        });
    }
    let mut s = Step::new("s1", StepKind::Llm);
    s.context = Some(Box::new(StepContext {
        available: Some(vec![
            "sys".into(),
            "doc-a".into(),
            "doc-b".into(),
            "mem".into(),
        ]),
        sent: vec!["sys".into(), "doc-a".into(), "doc-b".into()],
    }));
    r.steps.push(s);
    r.reindex();
    r
}

pub struct T {
    /// Kept so the folder lives as long as the ledger.
    _dir: tempfile::TempDir,
    pub run: Run,
    pub ledger: Ledger,
}

impl T {
    pub fn new() -> T {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("l.ledger.jsonl"), Scope::Run, "cal-1").unwrap();
        T {
            _dir: dir,
            run: run(),
            ledger,
        }
    }

    pub fn path(&self) -> &Path {
        self.ledger.path()
    }

    pub fn add(
        &self,
        cohort: &str,
        kind: ExperimentKind,
        units: &[&str],
        seed: u64,
        reproduced: bool,
    ) -> Appended {
        let ids: Vec<String> = units.iter().map(|s| s.to_string()).collect();
        let spec = ExperimentSpec {
            run: "/runs/cal-1.json".to_owned(),
            run_id: "cal-1".to_owned(),
            experiment: kind,
            remove: if kind == ExperimentKind::Ablate {
                ids.clone()
            } else {
                vec![]
            },
            restore: if kind == ExperimentKind::Restore {
                ids
            } else {
                vec![]
            },
            from_step: (kind == ExperimentKind::Replay).then(|| "s1".to_owned()),
            patch: None,
            seed,
            sample: seed,
            source: None,
        };
        self.ledger
            .append_sample(&NewSample {
                cohort,
                evaluator_epoch: EPOCH,
                run: &self.run,
                runner_command: "./agent",
                spec: &spec,
                finished_at: time::macros::datetime!(2026-08-17 10:00:00 UTC),
                outcome: Ok(SampleOutcome {
                    output: if reproduced { "REJECTED" } else { "APPROVED" },
                    reproduced,
                }),
                cost: None,
                duration_ms: Some(250 + seed),
            })
            .unwrap()
    }

    /// Baseline and an ablation of each of `units`, one unit per probe, for `seeds`, then close.
    pub fn batch(&self, cohort: &str, units: &[&str], seeds: u64) {
        for seed in 0..seeds {
            self.add(cohort, ExperimentKind::Baseline, &[], seed, true);
            for u in units {
                self.add(cohort, ExperimentKind::Ablate, &[u], seed, false);
            }
        }
        self.ledger
            .close_cohort(cohort, &Policy::default())
            .unwrap();
    }

    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.path())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub fn values(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Writes `lines` back with a repaired chain.
    pub fn write_rechained(&self, lines: Vec<String>) {
        std::fs::write(self.path(), rechain(lines).join("\n") + "\n").unwrap();
    }

    pub fn check(&self) -> Checked {
        verify_path(self.path()).unwrap()
    }
}

/// Recomputes every schema-2 line's `prev`.
pub fn rechain(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        match parse_strict(&l) {
            Ok(mut v) if v.get("schema").is_some() => {
                v["prev"] = out
                    .last()
                    .map(|p| json!(sha256_hex(p.as_bytes())))
                    .unwrap_or(Value::Null);
                out.push(canonical(&v).unwrap());
            }
            _ => out.push(l),
        }
    }
    out
}

/// The (line, code) of every failure.
pub fn failures(c: &Checked) -> Vec<(usize, &'static str)> {
    c.problems
        .iter()
        .filter(|p| p.severity == super::verify::Severity::Failure)
        .map(|p| (p.line, p.code))
        .collect()
}
