//! Unit tests of verification: ledgers written through the store, then edited one rule at a time
//! (with the hash chain repaired, so that only the edited rule can catch it).

use super::Status;
use crate::experiments::ledger::attribute::attribute;
use crate::experiments::ledger::canonical::canonical;
use crate::experiments::ledger::error::LedgerError;
use crate::experiments::ledger::parse::trial_from_value;
use crate::experiments::ledger::record::{Policy, RecordType, line_value};
use crate::experiments::ledger::select::{bundle_from_ledger, history_of, select, units_of};
use crate::experiments::ledger::testutil::{EPOCH, T, failures};
use crate::experiments::ledger::{Ledger, Scope, verify_path};
use crate::experiments::spec::ExperimentKind;

fn index_of(t: &T, pred: impl Fn(&serde_json::Value) -> bool) -> usize {
    t.values().iter().position(pred).unwrap()
}

#[test]
fn a_clean_batch_verifies_with_every_line_verified() {
    let t = T::new();
    t.batch("b-1", &["doc-a", "doc-b"], 2);
    let c = t.check();
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert!(c.status.iter().all(|s| *s == Status::Verified));
}

#[test]
fn an_unsealed_unparsable_line_in_the_middle_fails() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 1);
    let mut lines = t.lines();
    // Before the attribution: no trial's chain (bound into its source digest) moves.
    let at = lines.len() - 1;
    lines.insert(at, "{\"schema\":2,".to_owned());
    t.write_rechained(lines);
    let c = t.check();
    assert_eq!(failures(&c), [(at + 1, "unparsable")]);
}

#[test]
fn a_second_header_and_a_newer_schema_fail() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 1);
    let mut lines = t.lines();
    let header = lines[0].clone();
    lines.push(header);
    lines.push("{\"schema\":3,\"type\":\"sample\",\"prev\":null}".to_owned());
    t.write_rechained(lines);
    let c = t.check();
    let n = c.status.len();
    assert_eq!(failures(&c), [(n - 1, "header"), (n, "field")]);
    assert!(
        c.problems
            .last()
            .unwrap()
            .message
            .contains("schema 3 is newer")
    );
}

#[test]
fn a_trial_dropped_from_a_consistent_attribution_is_caught_by_the_cohort_check() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 2);
    let values = t.values();
    let first_trial = values.iter().find(|v| v["type"] == "trial").unwrap();
    let trial = trial_from_value(first_trial).unwrap();
    let agg = attribute(&[trial], EPOCH, &Policy::default()).unwrap();
    let forged = line_value(RecordType::Attribution, None, agg.attributions[0].fields());
    let at = index_of(&t, |v| v["type"] == "attribution");
    let mut lines = t.lines();
    lines[at] = canonical(&forged).unwrap();
    t.write_rechained(lines);
    let c = t.check();
    assert_eq!(failures(&c), [(at + 1, "cohort")], "{:?}", c.problems);
}

#[test]
fn an_interrupted_aggregation_is_incomplete_then_completed_by_the_next_session() {
    let t = T::new();
    t.batch("b-1", &["doc-a", "doc-b"], 1);
    let mut lines = t.lines();
    let last = lines.pop().unwrap();
    assert!(last.contains("\"type\":\"attribution\""));
    std::fs::write(t.path(), lines.join("\n") + "\n").unwrap();
    let c = t.check();
    assert!(c.ok());
    let warn = c.problems.iter().find(|p| p.code == "incomplete").unwrap();
    assert_eq!(warn.line, lines.len());
    let next = Ledger::open(t.path(), Scope::Run, "cal-1").unwrap();
    let closed = next.close_cohort("b-1", &Policy::default()).unwrap();
    assert_eq!((closed.already, closed.attributions.len()), (1, 1));
    assert_eq!(
        t.lines().last(),
        Some(&last),
        "the same attribution is written again"
    );
    assert!(t.check().problems.is_empty());
}

#[test]
fn the_next_batch_appends_the_rest_of_an_interrupted_aggregation() {
    let t = T::new();
    t.batch("b-1", &["doc-a", "doc-b"], 1);
    let mut lines = t.lines();
    let cut: serde_json::Value = serde_json::from_str(&lines.pop().unwrap()).unwrap();
    assert_eq!(cut["type"], "attribution");
    std::fs::write(t.path(), lines.join("\n") + "\n").unwrap();
    assert!(t.check().problems.iter().any(|p| p.code == "incomplete"));
    // Another batch, not the interrupted one, closes on the same ledger.
    t.batch("b-2", &["doc-a"], 1);
    let c = t.check();
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let again = t
        .values()
        .into_iter()
        .filter(|v| v["attribution_id"] == cut["attribution_id"])
        .count();
    assert_eq!(again, 1, "the missing attribution is written once");
    t.batch("b-3", &["doc-b"], 1);
    let ids: Vec<_> = t
        .values()
        .into_iter()
        .filter(|v| v["attribution_id"] == cut["attribution_id"])
        .collect();
    assert_eq!(ids.len(), 1, "a complete cohort gets nothing more");
}

#[test]
fn a_trial_after_its_cohort_closed_fails() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 2);
    let late = t.add("b-1", ExperimentKind::Ablate, &["doc-b"], 0, false);
    assert_eq!(late.refused[0].code.as_str(), "cohort_closed");
    let mut lines = t.lines();
    let trial = index_of(&t, |v| v["type"] == "trial" && v["seed"] == 1);
    let moved = lines.remove(trial);
    lines.push(moved);
    t.write_rechained(lines);
    let codes: Vec<&str> = failures(&t.check()).into_iter().map(|(_, c)| c).collect();
    assert!(codes.contains(&"cohort_closed"), "{codes:?}");
    assert!(
        codes.contains(&"reference"),
        "the attribution lists a trial not above it: {codes:?}"
    );
}

#[test]
fn an_edited_unit_digest_fails_its_bundle_and_cascades() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 1);
    let mut lines = t.lines();
    assert!(lines[1].contains("\"type\":\"bundle\""));
    let v: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    let old = v["units"][0]["text_sha256"].as_str().unwrap().to_owned();
    lines[1] = lines[1].replace(&old, &"0".repeat(64));
    t.write_rechained(lines);
    let c = t.check();
    let f = failures(&c);
    assert!(f.contains(&(2, "digest")), "{f:?}");
    let sample = index_of(&t, |v| v["type"] == "sample") + 1;
    assert!(f.contains(&(sample, "depends")), "{f:?}");
    assert!(
        c.problems
            .iter()
            .any(|p| p.line == sample && p.message == "depends on line 2, which failed")
    );
    let attribution = c.status.len();
    assert!(
        f.contains(&(attribution, "depends")),
        "the cascade reaches the attribution: {f:?}"
    );
}

#[test]
fn a_score_that_disagrees_with_reproduced_fails() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 1);
    let at = index_of(&t, |v| {
        v["type"] == "sample" && v["experiment"] == "baseline"
    });
    let mut lines = t.lines();
    lines[at] = lines[at].replace("\"score\":0", "\"score\":1");
    t.write_rechained(lines);
    let f = failures(&t.check());
    assert_eq!(f.first(), Some(&(at + 1, "score")), "{f:?}");
}

/// Issue 26: a trial copies what each of its samples spent; an edited copy is caught (a trial
/// written before it was recorded carries none and is not asked for one).
#[test]
fn what_a_trial_says_its_samples_spent_is_checked_against_them() {
    let t = T::new();
    t.batch("b-1", &["doc-a"], 1);
    let at = index_of(&t, |v| v["type"] == "trial");
    let values = t.values();
    let trial = &values[at];
    assert_eq!(trial["with_spent"]["duration_ms"], 250, "{trial}");
    assert_eq!(trial["without_spent"]["duration_ms"], 250, "{trial}");
    let mut lines = t.lines();
    lines[at] = lines[at].replace(
        "\"without_spent\":{\"duration_ms\":250}",
        "\"without_spent\":{\"duration_ms\":9}",
    );
    assert_ne!(lines[at], t.lines()[at], "the edit applies");
    t.write_rechained(lines);
    let f = failures(&t.check());
    assert_eq!(f.first(), Some(&(at + 1, "without_spent")), "{f:?}");
}

#[test]
fn files_that_are_not_ledgers_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        verify_path(&empty),
        Err(LedgerError::NotALedger { .. })
    ));
    let run = dir.path().join("run.json");
    std::fs::write(&run, "{\n \"format\": \"tdn.run/1\"\n}\n").unwrap();
    assert!(matches!(
        verify_path(&run),
        Err(LedgerError::NotALedger { .. })
    ));
    assert!(matches!(
        Ledger::open(&run, Scope::Run, "x"),
        Err(LedgerError::NotALedger { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(&run).unwrap(),
        "{\n \"format\": \"tdn.run/1\"\n}\n",
        "never written"
    );
}

#[test]
fn a_restoration_is_causal_and_selection_lists_it_for_restoring() {
    let t = T::new();
    for seed in 0..2 {
        t.add("b-1", ExperimentKind::Baseline, &[], seed, true);
        let r = t.add("b-1", ExperimentKind::Restore, &["mem"], seed, false);
        assert_eq!(r.trials.len(), 1);
        assert_eq!(r.trials[0].evidence_level.as_str(), "causal_ablation");
        assert_eq!(
            r.trials[0].effect, 1.0,
            "with mem the run departs from the failure"
        );
    }
    t.ledger.close_cohort("b-1", &Policy::default()).unwrap();
    let c = t.check();
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let current = super::super::plan::newest_baseline(&c).unwrap().to_owned();
    let bundle = bundle_from_ledger(&c, &current).unwrap();
    let s = select(&current, &units_of(&bundle, None), &history_of(&c), EPOCH);
    assert_eq!(s.restore.len(), 1);
    assert_eq!(
        (
            s.restore[0].component_id.as_str(),
            s.restore[0].disposition.as_str()
        ),
        ("mem", "retained")
    );
    assert!(s.components.iter().all(|c| c.included));
}

#[test]
fn a_cancelled_batch_keeps_its_trials_as_history_and_nothing_can_conclude_from_them() {
    let t = T::new();
    t.add("b-1", ExperimentKind::Baseline, &[], 0, true);
    t.add("b-1", ExperimentKind::Ablate, &["doc-a"], 0, false);
    let c = t.ledger.cancel_cohort("b-1", "received SIGINT").unwrap();
    assert_eq!(c.trials, 1);
    let checked = t.check();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    assert_eq!(checked.counts().cancelled, 1);
    assert_eq!(checked.counts().unbound, 0);
    // Closing it afterwards, by name or as a batch left open, writes nothing; a later sample of
    // it forms no trial.
    assert!(
        t.ledger
            .close_cohort("b-1", &Policy::default())
            .unwrap()
            .attributions
            .is_empty()
    );
    assert!(
        t.ledger
            .cancel_cohort("b-1", "again")
            .unwrap()
            .line
            .is_none()
    );
    let late = t.add("b-1", ExperimentKind::Ablate, &["doc-b"], 0, false);
    assert!(
        late.trials.is_empty() && !late.refused.is_empty(),
        "{late:?}"
    );
    assert!(crate::experiments::ledger::open_cohorts(&t.check()).is_empty());
    assert!(
        !t.lines()
            .iter()
            .any(|l| l.contains(r#""type":"attribution""#))
    );

    // An attribution forged for the cancelled batch fails; so does a cancel that leaves out a
    // trial of its batch.
    let trials: Vec<_> = t
        .values()
        .iter()
        .filter(|v| v["type"] == "trial")
        .map(|v| trial_from_value(v).unwrap())
        .collect();
    let agg = attribute(&trials, EPOCH, &Policy::default()).unwrap();
    let mut lines = t.lines();
    lines.push(
        canonical(&line_value(
            RecordType::Attribution,
            None,
            agg.attributions[0].fields(),
        ))
        .unwrap(),
    );
    t.write_rechained(lines.clone());
    let codes: Vec<&str> = failures(&t.check()).iter().map(|(_, c)| *c).collect();
    assert!(codes.contains(&"cohort_cancelled"), "{codes:?}");
    lines.pop();
    let at = index_of(&t, |v| v["type"] == "cancel");
    let mut cancel: serde_json::Value = serde_json::from_str(&lines[at]).unwrap();
    cancel["trial_ids"] = serde_json::json!([]);
    lines[at] = canonical(&cancel).unwrap();
    t.write_rechained(lines);
    assert_eq!(failures(&t.check()), [(at + 1, "trial_ids")]);
}
