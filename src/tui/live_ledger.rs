//! The run's attribution ledger as the experiments pane shows it (attribution-ledger.md §5-7):
//! its trials, the latest verified attribution of each unit (disposition and evidence level, as
//! recorded), and the batches a crash left open, each marked ready to aggregate once its last
//! sample is older than the runner's time-out and no job of this screen is running it.
//!
//! Reads the ledger under its shared lock (`ledger::history`, `ledger::verify_path`); writes only
//! when the user asks to aggregate ([`aggregate`]). Decides no verdict: everything shown is a
//! record of the file.

use super::experiment_port::{LedgerAttribution, LedgerCohort, LedgerHistory, LedgerTrial};
use crate::experiments::ledger::{self, Ledger, Location, Policy, Status};
use std::collections::{HashMap, HashSet};
use time::OffsetDateTime;

/// What the ledger at `location` holds about `run_id`. `timeout_s` is the runner's time-out;
/// `running` the cohorts of this screen's running jobs; `now` the current time.
pub fn load(
    location: &Location,
    run_id: &str,
    timeout_s: f64,
    running: &HashSet<String>,
    now: OffsetDateTime,
) -> LedgerHistory {
    let path = &location.path;
    let mut out = LedgerHistory {
        path: Some(path.display().to_string()),
        ..LedgerHistory::default()
    };
    let mut notes = Vec::new();
    let h = match ledger::history(path, run_id) {
        Ok(None) => return out,
        Ok(Some(h)) => h,
        Err(e) => {
            out.note = Some(format!("cannot read the ledger: {e}"));
            return out;
        }
    };
    if h.failures > 0 {
        notes.push(format!(
            "{} line(s) of '{}' failed verification and are not shown as evidence; run 'tdn-tui ledger verify' on it",
            h.failures,
            path.display()
        ));
    }
    let run_cohorts: HashSet<&str> = h.trials.iter().map(|t| t.trial.cohort.as_str()).collect();
    out.trials = h
        .trials
        .iter()
        .map(|t| LedgerTrial {
            when: Some(t.trial.tested_at.clone()),
            experiment: t.trial.experiment.clone(),
            units: vec![t.trial.component_id.clone()],
            effect: t.effect,
            status: t.status.as_str().to_owned(),
            result: None,
        })
        .collect();
    out.attributions = latest_attributions(&h.attributions);
    match ledger::verify_path(path) {
        Ok(checked) => {
            let cutoff = ledger::naming::timestamp(now - time::Duration::seconds_f64(timeout_s));
            out.open_cohorts = ledger::open_cohorts(&checked)
                .into_iter()
                .filter(|c| run_cohorts.contains(c.cohort.as_str()))
                .map(|c| LedgerCohort {
                    ready: c.last_finished_at < cutoff && !running.contains(&c.cohort),
                    cohort: c.cohort,
                    trials: c.trials,
                    last_finished_at: c.last_finished_at,
                })
                .collect();
        }
        Err(e) => notes.push(format!("cannot look for open batches: {e}")),
    }
    out.note = (!notes.is_empty()).then(|| notes.join("; "));
    out
}

/// The latest attribution of each unit (by kind, id and text digest) that did not fail
/// verification, in ledger order, with how many earlier ones it follows.
fn latest_attributions(all: &[ledger::HistoryAttribution]) -> Vec<LedgerAttribution> {
    let mut latest: HashMap<(&str, &str, &str), (usize, usize)> = HashMap::new();
    for (i, a) in all.iter().enumerate() {
        if a.status == Status::Failed {
            continue;
        }
        let r = &a.attribution;
        let key = (
            r.component_kind.as_str(),
            r.component_id.as_str(),
            r.component_digest.as_str(),
        );
        let e = latest.entry(key).or_insert((i, 0));
        if e.0 != i {
            *e = (i, e.1 + 1);
        }
    }
    let mut picked: Vec<(usize, usize)> = latest.into_values().collect();
    picked.sort_unstable();
    picked
        .into_iter()
        .filter_map(|(i, earlier)| {
            let a = all.get(i)?;
            let r = &a.attribution;
            Some(LedgerAttribution {
                kind: r.component_kind.clone(),
                unit: r.component_id.clone(),
                disposition: r.disposition.as_str().to_owned(),
                evidence_level: r.evidence_level.as_str().to_owned(),
                effect: r.effect,
                confidence: r.confidence,
                trials: r.trial_ids.len(),
                tested_at: r.tested_at.clone(),
                status: a.status.as_str().to_owned(),
                line: a.line,
                earlier,
            })
        })
        .collect()
}

/// Aggregates the open batches `cohorts` of the ledger at `location` under `policy`, and says
/// what was appended.
pub fn aggregate(
    location: &Location,
    cohorts: &[String],
    policy: Policy,
) -> Result<String, String> {
    if cohorts.is_empty() {
        return Err("no open batch is ready to aggregate".to_owned());
    }
    let l =
        Ledger::open(&location.path, location.scope, &location.name).map_err(|e| e.to_string())?;
    let mut written = 0usize;
    for c in cohorts {
        let closed = l.close_cohort(c, &policy).map_err(|e| e.to_string())?;
        written += closed.attributions.len();
    }
    Ok(format!(
        "aggregated {} open batch(es): {written} attribution(s) appended to '{}'",
        cohorts.len(),
        location.path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::{LoadOptions, load_str};
    use crate::experiments::ledger::Scope;
    use crate::experiments::run_ledger::RunLedger;
    use crate::experiments::sink::{FinishedSample, SampleRecordOutcome, SampleSink};
    use crate::experiments::spec::{ExperimentKind, ExperimentSpec};

    const RUN: &str = r#"{"format": "tdn.run/1", "id": "r1", "status": "failed",
        "final_answer": "the recorded answer",
        "context_units": [{"id": "u1", "kind": "document", "text": "one"},
                          {"id": "u2", "kind": "memory", "text": "two"}],
        "steps": [{"id": "s1", "kind": "llm", "output": "x",
                   "context": {"available": ["u1", "u2"], "sent": ["u1", "u2"]}}]}"#;

    fn sample(cohort: &str, kind: ExperimentKind, seed: u64, flipped: bool) -> FinishedSample {
        FinishedSample {
            cohort: cohort.to_owned(),
            evaluator_epoch: "exact|tdn-tui/test".to_owned(),
            run_id: "r1".to_owned(),
            run_status: crate::analysis::model::RunStatus::Failed,
            runner_command: "./agent".to_owned(),
            spec: ExperimentSpec {
                run: "/r1.json".to_owned(),
                run_id: "r1".to_owned(),
                experiment: kind,
                remove: if kind == ExperimentKind::Ablate {
                    vec!["u1".to_owned()]
                } else {
                    vec![]
                },
                restore: vec![],
                from_step: None,
                patch: None,
                seed,
                sample: seed,
            },
            finished_at: "2026-08-17T10:00:00Z".to_owned(),
            outcome: SampleRecordOutcome::Answered {
                output: "x".to_owned(),
                flipped,
                similarity: None,
            },
            cost: None,
        }
    }

    #[test]
    fn a_crash_leaves_an_open_batch_that_becomes_ready_after_the_time_out_and_aggregates() {
        let dir = tempfile::tempdir().unwrap();
        let run = load_str(RUN, &dir.path().join("r1.json"), &LoadOptions::default())
            .unwrap()
            .remove(0)
            .run;
        let location = Location {
            path: dir.path().join("r1.ledger.jsonl"),
            scope: Scope::Run,
            name: "r1".to_owned(),
        };
        // A closed batch: 'u1' is harmful (removing it departs from the failure in both seeds).
        let sink = RunLedger::open(&location, &run, Policy::default()).unwrap();
        for seed in 0..2 {
            sink.append(&sample("b-1", ExperimentKind::Baseline, seed, false))
                .unwrap();
            sink.append(&sample("b-1", ExperimentKind::Ablate, seed, true))
                .unwrap();
        }
        sink.close_cohort("b-1").unwrap();
        // A batch a crash cut short: trials, no attributions.
        sink.append(&sample("b-2", ExperimentKind::Baseline, 0, false))
            .unwrap();
        sink.append(&sample("b-2", ExperimentKind::Ablate, 0, false))
            .unwrap();

        let at = |s: &str| {
            time::PrimitiveDateTime::parse(
                s,
                time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z"),
            )
            .unwrap()
            .assume_utc()
        };
        let none = HashSet::new();
        let soon = load(&location, "r1", 300.0, &none, at("2026-08-17T10:04:00Z"));
        assert_eq!(soon.trials.len(), 3);
        assert_eq!(soon.attributions.len(), 1);
        let a = &soon.attributions[0];
        assert_eq!(
            (
                a.unit.as_str(),
                a.disposition.as_str(),
                a.evidence_level.as_str()
            ),
            ("u1", "harmful", "causal_ablation")
        );
        assert_eq!((a.trials, a.earlier), (2, 0));
        assert_eq!(soon.open_cohorts.len(), 1);
        assert!(
            !soon.open_cohorts[0].ready,
            "younger than the time-out: its session may still run"
        );
        let later = load(&location, "r1", 300.0, &none, at("2026-08-17T10:06:00Z"));
        assert!(later.open_cohorts[0].ready);
        let mine: HashSet<String> = ["b-2".to_owned()].into();
        let running = load(&location, "r1", 300.0, &mine, at("2026-08-17T10:06:00Z"));
        assert!(
            !running.open_cohorts[0].ready,
            "a job of this screen runs it"
        );

        let said = aggregate(&location, &["b-2".to_owned()], Policy::default()).unwrap();
        assert!(said.contains("1 attribution(s)"), "{said}");
        let after = load(&location, "r1", 300.0, &none, at("2026-08-17T10:06:00Z"));
        assert!(after.open_cohorts.is_empty());
        // The newer attribution of 'u1' supersedes the first: one row, one earlier.
        assert_eq!(after.attributions.len(), 1);
        assert_eq!(after.attributions[0].earlier, 1);
        assert_eq!(after.attributions[0].disposition, "uncertain");
        let checked = ledger::verify_path(&location.path).unwrap();
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    }
}
