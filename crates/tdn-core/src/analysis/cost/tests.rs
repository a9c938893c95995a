use super::*;
use crate::analysis::model::{ModelInfo, RunStatus, StepId, StepKind, Usage};

fn step(id: &str, parent: Option<&str>, usage: Option<Usage>, model: Option<&str>) -> Step {
    let mut s = Step::new(id, StepKind::Llm);
    s.parent = parent.map(|p| StepId(p.to_owned()));
    if let Some(u) = usage {
        s.extras_mut().usage = Some(u);
    }
    if let Some(m) = model {
        s.call_mut().model = Some(m.to_owned());
    }
    s
}

fn tokens(i: u64, o: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens: Some(i),
        output_tokens: Some(o),
        cost_usd: None,
    })
}

fn paid(usd: f64) -> Option<Usage> {
    Some(Usage {
        cost_usd: Some(Box::new(usd)),
        ..Usage::default()
    })
}

fn run(steps: Vec<Step>) -> Run {
    let mut r = Run::new("r", RunStatus::Failed);
    r.steps = steps;
    r.reindex();
    r
}

#[test]
fn recorded_costs_are_added_and_marked_recorded() {
    let r = run(vec![
        step("a", None, paid(0.00061), Some("gpt-4o")),
        step("b", None, paid(0.0011775), Some("gpt-4o")),
        step("c", None, None, None),
    ]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert!((c.total_usd - 0.0017875).abs() < 1e-12);
    assert_eq!(c.source, CostSource::Recorded);
    assert_eq!(c.total_from, TotalFrom::Steps);
    assert_eq!(c.steps.len(), 2);
    assert!(!c.estimated());
}

#[test]
fn tokens_without_a_cost_are_priced_and_marked_estimated() {
    let mut r = run(vec![
        step("a", None, tokens(1000, 100), Some("gpt-4o-2024-08-06")),
        step("b", None, paid(0.001), None),
        step("c", None, tokens(10, 10), Some("my-llama")),
        step("d", None, tokens(10, 10), None),
    ]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    let a = &c.steps[0];
    assert_eq!(a.source, CostSource::Estimated);
    assert_eq!(a.priced_as.as_deref(), Some("gpt-4o"));
    assert!((a.usd - 0.0035).abs() < 1e-12);
    assert!((c.total_usd - 0.0045).abs() < 1e-12);
    assert!(c.estimated());
    assert_eq!(c.unpriced_models, ["my-llama"]);
    assert_eq!(c.unpriced_steps, 1);
    // The run's model prices a step that names none.
    r.model = Some(ModelInfo {
        name: Some("gpt-4o-mini".to_owned()),
        context_window: None,
    });
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert_eq!(c.unpriced_steps, 0);
    assert_eq!(
        c.steps.last().and_then(|s| s.priced_as.as_deref()),
        Some("gpt-4o-mini")
    );
}

#[test]
fn a_parent_whose_children_cost_is_not_counted_twice() {
    let r = run(vec![
        step("agent", None, paid(0.000371), None),
        step("chat1", Some("agent"), paid(0.00019125), None),
        step("wrap", Some("agent"), None, None),
        step("chat2", Some("wrap"), paid(0.000094), None),
        step("alone", None, paid(0.001), None),
    ]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    let counted: Vec<&str> = c
        .steps
        .iter()
        .filter(|s| s.in_total)
        .map(|s| s.step.as_str())
        .collect();
    assert_eq!(counted, ["chat1", "chat2", "alone"]);
    assert!((c.total_usd - (0.00019125 + 0.000094 + 0.001)).abs() < 1e-12);
}

#[test]
fn the_runs_recorded_total_wins_and_nothing_gives_no_section() {
    let mut r = run(vec![step("a", None, paid(0.002255), None)]);
    r.cost_usd = Some(0.003905);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert_eq!(c.total_from, TotalFrom::Run);
    assert!((c.total_usd - 0.003905).abs() < 1e-12);
    assert!((c.recorded_usd - 0.002255).abs() < 1e-12);
    let bare = run(vec![step("a", None, None, Some("gpt-4o"))]);
    assert_eq!(cost_section(&bare, &Prices::built_in()), None);
}

#[test]
fn dollars_read_with_two_significant_digits_below_one() {
    assert_eq!(format_usd(0.0045, false), "$0.0045");
    assert_eq!(format_usd(0.004512, true), "~$0.0045");
    assert_eq!(format_usd(0.000075, false), "$0.000075");
    assert_eq!(format_usd(0.0123, false), "$0.012");
    assert_eq!(format_usd(0.5, false), "$0.5");
    assert_eq!(format_usd(1.234, false), "$1.23");
    assert_eq!(format_usd(1234.6, true), "~$1235");
    assert_eq!(format_usd(0.0, false), "$0");
    assert_eq!(format_usd(1e-9, false), "<$0.000001");
    assert_eq!(format_usd(f64::NAN, true), "~$0");
}

#[test]
fn the_summary_says_where_the_total_came_from() {
    let r = run(vec![
        step("a", None, paid(0.001), None),
        step("b", None, tokens(1000, 100), Some("gpt-4o")),
        step("c", None, tokens(5, 5), Some("my-llama")),
    ]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert_eq!(
        summary(&c),
        format!(
            "~$0.0045: $0.001 recorded and ~$0.0035 estimated from tokens at the prices of {PRICES_AS_OF} (2 steps); left out: calls to my-llama (no price known; [prices] in tdn.toml adds one)"
        )
    );
    let r = run(vec![step("a", None, paid(0.0045), None)]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert_eq!(summary(&c), "$0.0045, as the trace records it (1 step)");
}

#[test]
fn hostile_token_counts_neither_overflow_nor_panic() {
    let r = run(vec![step(
        "a",
        None,
        tokens(u64::MAX, u64::MAX),
        Some("gpt-4o"),
    )]);
    let c = cost_section(&r, &Prices::built_in()).expect("a cost");
    assert!(c.total_usd.is_finite() && c.total_usd > 0.0);
}

#[test]
fn a_run_whose_models_have_no_price_says_which() {
    let r = run(vec![step(
        "a",
        None,
        tokens(10, 10),
        Some("claude-fable-5"),
    )]);
    let c = cost_section(&r, &Prices::built_in()).expect("a section naming the model");
    assert!(!c.known());
    assert_eq!(c.unpriced_models, ["claude-fable-5"]);
    assert_eq!(
        summary(&c),
        "unknown: no step records a cost; left out: calls to claude-fable-5 (no price known; [prices] in tdn.toml adds one)"
    );
}
