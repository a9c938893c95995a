//! Tests of eval scoring: predictions, exact matching of any accepted step, agents, tallies,
//! baselines and each rule's own precision.

use super::*;
use crate::analysis::model::{RunStatus, Step, StepKind};

fn label(steps: &[usize], agent: Option<&str>) -> Resolved {
    Resolved {
        steps: steps.to_vec(),
        has_steps: !steps.is_empty(),
        missing: 0,
        agent: agent.map(str::to_owned),
    }
}

fn report(suspects: serde_json::Value) -> Report {
    let v = serde_json::json!({
        "format": "tdn.report/1",
        "run": {"id": "r", "status": "failed", "steps": 3, "source_format": "whowhen", "warnings": []},
        "verdict": null,
        "fault": {"party": "agent", "why": ""},
        "suspects": suspects,
        "confidence": {"clear_winner": false, "margin": null, "lead": null, "shortlist": [],
                       "strategy": "", "reason": ""},
        "links": [], "claims": [], "influence": null, "dropped": null, "judge": null
    });
    serde_json::from_value(v).unwrap_or_else(|e| panic!("test report: {e}"))
}

fn suspect(rank: usize, index: usize) -> serde_json::Value {
    serde_json::json!({"rank": rank, "step": format!("h{index}"), "index": index,
        "category": format!("c{index}"), "detector": "d", "title": "t", "score": 1.0,
        "confidence": 1.0, "role": "suspect", "evidence": []})
}

fn run_of(agents: &[&str]) -> Run {
    let mut run = Run::new("r", RunStatus::Failed);
    for (i, agent) in agents.iter().enumerate() {
        let mut s = Step::new(format!("h{i}"), StepKind::Agent);
        s.agent = Some((*agent).to_owned());
        run.steps.push(s);
    }
    run.reindex();
    run
}

#[test]
fn a_prediction_takes_suspects_in_rank_order_and_the_first_ones_agent() {
    let run = run_of(&["A", "B", "C", "D"]);
    let r = report(serde_json::json!([
        suspect(2, 1),
        suspect(1, 3),
        suspect(3, 1),
        suspect(4, 0),
        suspect(5, 2)
    ]));
    let p = predict(&r, &run);
    assert_eq!(p.steps, vec![3, 1, 0]);
    assert_eq!(p.agent.as_deref(), Some("D"));
    assert_eq!(p.rule.as_deref(), Some("c3"));
    let none = predict(&report(serde_json::json!([])), &run);
    assert_eq!(none, Prediction::default());
    let out_of_range = predict(&report(serde_json::json!([suspect(1, 40)])), &run);
    assert_eq!((out_of_range.steps, out_of_range.agent), (vec![40], None));
}

#[test]
fn step_matches_are_exact_integers_and_any_accepted_step_counts() {
    // A label of 1 is not matched by a prediction of 12, 10 or 21.
    let o = judge(&label(&[1], None), &[12, 10, 21], None);
    assert_eq!((o.top1, o.top3, o.agent), (Some(false), Some(false), None));
    let o = judge(&label(&[1], None), &[4, 1, 9], None);
    assert_eq!((o.top1, o.top3), (Some(false), Some(true)));
    let o = judge(&label(&[9], None), &[4, 1, 7, 9], None);
    assert_eq!(o.top3, Some(false), "the fourth guess is outside the top 3");
    let o = judge(&label(&[0], None), &[], None);
    assert_eq!((o.top1, o.top3), (Some(false), Some(false)));
    let o = judge(&label(&[2, 7], None), &[7, 1], None);
    assert_eq!((o.top1, o.top3), (Some(true), Some(true)));
    let o = judge(&label(&[], Some("A")), &[7], Some("a"));
    assert_eq!((o.top1, o.top3, o.agent), (None, None, Some(true)));
}

#[test]
fn agents_match_ignoring_case_and_outer_space() {
    let o = judge(&label(&[], Some("WebSurfer")), &[2], Some(" websurfer"));
    assert_eq!(o.agent, Some(true));
    let o = judge(&label(&[], Some("Orchestrator")), &[2], None);
    assert_eq!(o.agent, Some(false));
    let o = judge(&label(&[], Some("Web")), &[2], Some("WebSurfer"));
    assert_eq!(o.agent, Some(false), "a prefix is not the agent");
}

fn key(set: &str) -> RunKey {
    RunKey {
        file: format!("{set}/x.json"),
        set: set.into(),
        index: None,
        run: "r".into(),
        ..RunKey::default()
    }
}

fn pred(steps: &[usize], agent: Option<&str>, rule: Option<&str>) -> Prediction {
    Prediction {
        steps: steps.to_vec(),
        agent: agent.map(str::to_owned),
        rule: rule.map(str::to_owned),
    }
}

fn finding(rule: &str, step: usize) -> RuleFinding {
    RuleFinding {
        rule: rule.into(),
        detector: "d".into(),
        step,
    }
}

#[test]
fn tallies_count_only_runs_with_the_label_part_and_rules_by_their_own_best_finding() {
    let run = run_of(&["a", "b", "c", "d"]);
    let results = vec![
        RunResult::new(
            key("B"),
            &run,
            &label(&[1], Some("a")),
            pred(&[1, 2], Some("a"), Some("x")),
            vec![finding("x", 1), finding("y", 1)],
        ),
        RunResult::new(
            key("B"),
            &run,
            &label(&[3], Some("a")),
            pred(&[2, 3], Some("b"), Some("x")),
            vec![finding("x", 2), finding("y", 3)],
        ),
        RunResult::new(
            key("A"),
            &run,
            &label(&[0], None),
            pred(&[], None, None),
            Vec::new(),
        ),
    ];
    let (sets, total) = summarize(&results);
    assert_eq!(
        sets.iter().map(|s| s.set.as_str()).collect::<Vec<_>>(),
        ["A", "B"]
    );
    let b = &sets[1];
    assert_eq!((b.runs, b.predicted), (2, 2));
    assert_eq!((b.step_top1.hits, b.step_top1.total), (1, 2));
    assert_eq!((b.step_top3.hits, b.step_top3.total), (2, 2));
    assert_eq!(b.step_top1.rate, Some(0.5));
    assert_eq!((total.runs, total.predicted), (3, 2));
    assert_eq!((total.agent.hits, total.agent.total), (1, 2));
    assert_eq!(sets[0].agent.rate, None);
    assert_eq!(total.step_top3.rate, Some(2.0 / 3.0));
    // y's best finding hit both times, x's once: y ranks first; x led twice, right once.
    let rules: Vec<_> = b
        .rules
        .iter()
        .map(|r| (r.rule.as_str(), r.fired, r.hits, r.lead, r.lead_hits))
        .collect();
    assert_eq!(rules, [("y", 2, 2, 0, 0), ("x", 2, 1, 2, 1)]);
    // first_step picks 0, 1, 2: right first guess in A (label 0), top-3 in A and B/1.
    let first = total
        .baselines
        .iter()
        .find(|x| x.name == "first_step")
        .cloned()
        .unwrap_or_default();
    assert_eq!((first.top1.hits, first.top3.hits), (1.0, 2.0));
    let random = &total.baselines[0];
    assert_eq!(random.name, "random");
    // one labelled step of four candidates each time: 1/4 and 3/4 per run.
    assert!((random.top1.hits - 0.75).abs() < 1e-12);
    assert_eq!(random.top3.rate, Some(0.75));
}

#[test]
fn grouped_suspects_count_at_their_own_ranks() {
    let run = Run::new("r", RunStatus::Failed);
    let mut lead = suspect(1, 7);
    lead["similar"] = serde_json::json!([
        {"rank": 3, "step": "h9", "index": 9, "score": 0.5},
        {"rank": 5, "step": "h11", "index": 11, "score": 0.4}
    ]);
    let r = report(serde_json::json!([lead, suspect(2, 4), suspect(4, 2)]));
    assert_eq!(predict(&r, &run).steps, vec![7, 4, 9]);
}

#[test]
fn leads_are_never_predicted() {
    let run = run_of(&["A", "B", "C"]);
    let mut r = report(serde_json::json!([suspect(1, 2)]));
    r.leads = vec![serde_json::from_value(suspect(1, 0)).unwrap_or_else(|e| panic!("{e}"))];
    assert_eq!(predict(&r, &run).steps, vec![2]);
    r.suspects.clear();
    assert_eq!(predict(&r, &run), Prediction::default());
}

#[test]
fn a_derived_reading_is_a_set_of_its_own_and_stays_out_of_the_total() {
    let run = run_of(&["a", "b", "c", "d"]);
    let any = RunResult::new(
        key("trail"),
        &run,
        &label(&[1, 3], None),
        pred(&[3], None, None),
        Vec::new(),
    );
    let earliest = RunResult::new(
        RunKey {
            reading: Reading::Earliest,
            ..key("trail earliest")
        },
        &run,
        &label(&[1], None),
        pred(&[3], None, None),
        Vec::new(),
    );
    let (sets, total) = summarize(&[any, earliest]);
    let names: Vec<_> = sets
        .iter()
        .map(|s| (s.set.as_str(), s.step_top1.hits))
        .collect();
    assert_eq!(names, [("trail", 1), ("trail earliest", 0)]);
    assert_eq!((total.runs, total.step_top1.hits), (1, 1));
}
