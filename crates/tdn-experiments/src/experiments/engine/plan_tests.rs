//! Tests of planning: what each request becomes against a small run, and what is refused.

use super::*;
use crate::analysis::load::{LoadOptions, load_str};
use crate::experiments::ledger::{Location, Scope};
use std::path::{Path, PathBuf};

const RUN: &str = r#"{"format": "tdn.run/1", "id": "r", "status": "failed", "final_answer": "$120",
  "context_units": [
    {"id": "policy-2019", "kind": "document", "text": "Refunds: full price", "produced_by": "s2"},
    {"id": "policy-2024", "kind": "document", "text": "Refunds: 80 dollars", "produced_by": "s2"},
    {"id": "note", "kind": "memory", "text": "VIP"}],
  "steps": [{"id": "s1", "kind": "user"}, {"id": "s2", "kind": "retrieval"},
            {"id": "s3", "kind": "llm", "context": {"available": ["policy-2019", "policy-2024", "note"],
                                                    "sent": ["policy-2019", "note"]}}]}"#;

fn subject(text: &str) -> Subject {
    let run = load_str(text, Path::new("r.json"), &LoadOptions::default())
        .unwrap()
        .remove(0)
        .run;
    Subject {
        run: Arc::new(run),
        report: None,
        run_path: PathBuf::from("/r.json"),
        run_file: Arc::new(super::super::run_file::RunFile::native(PathBuf::from(
            "/r.json",
        ))),
        ledger: Location {
            path: PathBuf::from("r.ledger.jsonl"),
            scope: Scope::Run,
            name: "r".to_owned(),
        },
    }
}

const CAPS: Caps = Caps {
    max_suspects: 2,
    max_candidates: 2,
};

fn plan(request: Request) -> Result<Planned, EngineError> {
    plan_request(&subject(RUN), &request, CAPS)
}

fn interventions(p: &Planned) -> Vec<Intervention> {
    p.probes
        .iter()
        .map(|p| p.probe.intervention.clone())
        .collect()
}

#[test]
fn a_step_stands_for_the_units_it_produced_and_an_id_for_a_unit_first() {
    let p = plan(Request::Ablate(vec![
        Target::Id("note".into()),
        Target::Id("s2".into()),
        Target::Unit("policy-2019".into()),
    ]))
    .unwrap();
    assert_eq!(
        interventions(&p),
        [
            Intervention::Baseline,
            Intervention::Ablate(vec![
                "note".into(),
                "policy-2019".into(),
                "policy-2024".into()
            ])
        ],
        "one probe, the units together, each once"
    );
    assert_eq!(p.probes[1].probe.baseline, Some(ProbeId(0)));
}

#[test]
fn what_cannot_be_tested_is_refused_with_the_id() {
    let refused = |r: Request| match plan(r) {
        Err(EngineError::Plan(e)) => e,
        other => panic!("not refused: {:?}", other.map(|p| interventions(&p))),
    };
    assert_eq!(
        refused(Request::Ablate(vec![Target::Step("s3".into())])),
        PlanError::NothingProduced("s3".into())
    );
    assert_eq!(
        refused(Request::Ablate(vec![Target::Id("nope".into())])),
        PlanError::NoUnitOrStep("nope".into())
    );
    assert_eq!(
        refused(Request::Restore(vec!["s2".into()])),
        PlanError::NoUnit("s2".into())
    );
    assert_eq!(
        refused(Request::Replay {
            from: "s9".into(),
            patch: None
        }),
        PlanError::NoStep("s9".into())
    );
    assert_eq!(
        refused(Request::Ablate(Vec::new())),
        PlanError::Empty("ablate")
    );
    assert_eq!(refused(Request::Localize), PlanError::NothingToLocalize);
    let no_answer = RUN.replace(r#""final_answer": "$120","#, "");
    assert!(matches!(
        plan_request(&subject(&no_answer), &Request::Baseline, CAPS),
        Err(EngineError::NoFinalAnswer { .. })
    ));
}

#[test]
fn a_sweep_is_capped_and_says_what_it_left_out() {
    let p = plan(Request::AblateEach(vec![
        Target::Step("s3".into()),
        Target::Unit("note".into()),
        Target::Unit("policy-2019".into()),
        Target::Unit("note".into()),
        Target::Unit("policy-2024".into()),
    ]))
    .unwrap();
    assert_eq!(
        interventions(&p),
        [
            Intervention::Baseline,
            Intervention::Ablate(vec!["note".into()]),
            Intervention::Ablate(vec!["policy-2019".into()]),
        ],
        "at most max_suspects probes, a repeat probed once"
    );
    assert_eq!(p.probes[1].asked, Some(Target::Unit("note".into())));
    assert_eq!(p.left_out.len(), 2, "{:?}", p.left_out);
    assert!(
        p.left_out[0].starts_with("1 more on the list left out"),
        "{:?}",
        p.left_out
    );
    assert!(
        p.left_out[1].contains("can only be replayed"),
        "{:?}",
        p.left_out
    );
}

#[test]
fn a_probe_that_changes_nothing_the_run_recorded_still_runs_with_a_note() {
    let p = plan(Request::Ablate(vec![Target::Unit("policy-2024".into())])).unwrap();
    assert_eq!(p.probes.len(), 2);
    assert!(
        p.notes[0].contains("'policy-2024' was never sent"),
        "{:?}",
        p.notes
    );
    let p = plan(Request::Restore(vec!["note".into()])).unwrap();
    assert!(
        p.notes[0].contains("'note' was never dropped"),
        "{:?}",
        p.notes
    );
    let p = plan(Request::Restore(vec!["policy-2024".into()])).unwrap();
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}
