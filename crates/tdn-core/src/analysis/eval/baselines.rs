//! Guesses that read no evidence, scored beside the rules so that what the rules add is visible:
//! a uniform random step (its expected hit rate, computed exactly, not sampled) and trivial
//! positional picks (the first steps, the first model steps, the decisions behind the first
//! state-changing calls, the first failed steps, the last model steps, and the model call that
//! gave the final answer).
//!
//! Every guess picks among the steps a suspect may be: containers (a wrapper around other steps)
//! are left out, as the blame leaves them out. Each trivial baseline ranks up to [`TOP_K`] steps,
//! so its top-3 is, for example, "the last three model calls".

use super::labels::Resolved;
use super::score::TOP_K;
use crate::analysis::model::{Run, Step};

/// The trivial baselines, in table order: name and what it picks.
pub const BASELINES: &[(&str, &str)] = &[
    ("first_step", "the first steps"),
    ("first_model", "the first model steps"),
    (
        "first_change",
        "the model steps that made the first state-changing calls",
    ),
    ("first_failure", "the first failed steps"),
    ("last_model", "the last model steps, latest first"),
    ("answer_call", "the model call that gave the final answer"),
];

/// The name of the random baseline.
pub const RANDOM: &str = "random";

/// True when a step may be blamed at all: not a container of other steps.
pub fn candidate(step: &Step) -> bool {
    !crate::analysis::rank::is_container(step)
}

/// The model step that decided a call: the latest model step before it, else the call itself.
pub fn decision_of(run: &Run, i: usize) -> usize {
    run.steps
        .get(..i)
        .and_then(|before| {
            before
                .iter()
                .rposition(|s| s.kind.is_model() && candidate(s))
        })
        .unwrap_or(i)
}

fn state_changing(run: &Run, s: &Step) -> bool {
    s.tool
        .as_ref()
        .is_some_and(|c| crate::analysis::state_change::changes_state(run, &c.name))
}

fn push(out: &mut Vec<usize>, i: usize) {
    if out.len() < TOP_K && !out.contains(&i) {
        out.push(i);
    }
}

/// The steps the named trivial baseline picks, best first (at most [`TOP_K`]).
pub fn pick(name: &str, run: &Run) -> Vec<usize> {
    let mut out = Vec::with_capacity(TOP_K);
    let steps = run.steps.iter().filter(|s| candidate(s));
    match name {
        "first_step" => steps.take(TOP_K).for_each(|s| push(&mut out, s.index)),
        "first_model" => steps
            .filter(|s| s.kind.is_model())
            .take(TOP_K)
            .for_each(|s| push(&mut out, s.index)),
        "first_change" => {
            for s in steps.filter(|s| state_changing(run, s)) {
                push(&mut out, decision_of(run, s.index));
                if out.len() == TOP_K {
                    break;
                }
            }
        }
        "first_failure" => steps
            .filter(|s| s.failed())
            .take(TOP_K)
            .for_each(|s| push(&mut out, s.index)),
        "answer_call" => {
            if let Some(i) = answer_call(run) {
                push(&mut out, i);
            }
        }
        "last_model" => run
            .steps
            .iter()
            .rev()
            .filter(|s| candidate(s) && s.kind.is_model())
            .take(TOP_K)
            .for_each(|s| push(&mut out, s.index)),
        _ => {}
    }
    out
}

/// The model call that gave the final answer, the one pick that reads nothing but where the run
/// ended: the decision behind the last successful call to a final-answer tool (`final_answer`,
/// `final_result`, `finish`), else the last model step.
pub fn answer_call(run: &Run) -> Option<usize> {
    use crate::analysis::model::FINAL_ANSWER_TOOLS;
    let call = run.steps.iter().rposition(|s| {
        candidate(s)
            && !s.failed()
            && s.tool
                .as_ref()
                .is_some_and(|t| FINAL_ANSWER_TOOLS.contains(&t.name.as_str()))
    });
    match call {
        Some(c) => {
            let d = decision_of(run, c);
            (d != c).then_some(d)
        }
        None => run
            .steps
            .iter()
            .rposition(|s| candidate(s) && s.kind.is_model()),
    }
}

/// The chance that a uniform random pick of distinct candidate steps hits the label: with one
/// pick, and with [`TOP_K`] picks (fewer when the run has fewer candidates). Exact.
pub fn random_expectation(run: &Run, label: &Resolved) -> (f64, f64) {
    let n = run.steps.iter().filter(|s| candidate(s)).count();
    let h = label
        .steps
        .iter()
        .filter(|&&i| run.steps.get(i).is_some_and(candidate))
        .count();
    if n == 0 || h == 0 {
        return (0.0, 0.0);
    }
    let f = |x: usize| f64::from(u32::try_from(x).unwrap_or(u32::MAX));
    let top1 = f(h) / f(n);
    // P(no hit in k picks without replacement) = prod_{i<k} (n-h-i)/(n-i).
    let k = TOP_K.min(n);
    let mut miss = 1.0;
    for i in 0..k {
        if n - h < i + 1 {
            miss = 0.0;
            break;
        }
        miss *= f(n - h - i) / f(n - i);
    }
    (top1, 1.0 - miss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{RunStatus, StepKind, ToolCall};

    fn run(kinds: &[StepKind]) -> Run {
        let mut r = Run::new("r", RunStatus::Failed);
        for (i, k) in kinds.iter().enumerate() {
            r.steps.push(Step::new(format!("s{i}"), *k));
        }
        r.reindex();
        r
    }

    fn label(steps: &[usize]) -> Resolved {
        Resolved {
            steps: steps.to_vec(),
            has_steps: true,
            ..Resolved::default()
        }
    }

    #[test]
    fn random_is_the_exact_expectation() {
        use StepKind::*;
        let r = run(&[User, Llm, Tool, Llm, Tool, Llm, Llm, User, Llm, Llm]);
        // one labelled step of ten: 1/10 first guess; three distinct picks: 3/10.
        let (a, b) = random_expectation(&r, &label(&[4]));
        assert!(
            (a - 0.1).abs() < 1e-12 && (b - 0.3).abs() < 1e-12,
            "{a} {b}"
        );
        // two of ten: 1 - (8/10)(7/9)(6/8) = 1 - 336/720.
        let (a, b) = random_expectation(&r, &label(&[1, 2]));
        assert!((a - 0.2).abs() < 1e-12, "{a}");
        assert!((b - (1.0 - 336.0 / 720.0)).abs() < 1e-12, "{b}");
        // a run of two steps: three picks take both.
        let short = run(&[User, Llm]);
        assert_eq!(random_expectation(&short, &label(&[1])), (0.5, 1.0));
        assert_eq!(random_expectation(&short, &label(&[])), (0.0, 0.0));
    }

    #[test]
    fn the_first_change_is_the_decision_that_made_it() {
        use StepKind::*;
        let mut r = run(&[User, Llm, Tool, Llm, Tool, Tool]);
        r.tools.push(crate::analysis::model::Tool {
            name: "refund".into(),
            mutates: true,
            ..crate::analysis::model::Tool::default()
        });
        for i in [2, 4, 5] {
            r.steps[i].tool = Some(Box::new(ToolCall {
                name: if i == 2 { "lookup" } else { "refund" }.into(),
                ..ToolCall::default()
            }));
        }
        r.reindex();
        // the calls at 4 and 5 were both decided at 3.
        assert_eq!(pick("first_change", &r), vec![3]);
        // no final-answer call: the last model step gave the answer.
        assert_eq!(pick("answer_call", &r), vec![3]);
        r.steps[5].tool = Some(Box::new(ToolCall {
            name: "final_answer".into(),
            ..ToolCall::default()
        }));
        r.steps.push(Step::new("s6", Llm));
        r.reindex();
        // the decision before the final-answer call, not the model step after it.
        assert_eq!(pick("answer_call", &r), vec![3]);
        r.steps[5].error = Some("bad".into());
        // a failed final-answer call gave no answer: the last model step did.
        assert_eq!(pick("answer_call", &r), vec![6]);
        assert_eq!(pick("first_model", &r), vec![1, 3, 6]);
        r.steps[2].error = Some("boom".into());
        assert_eq!(pick("first_failure", &r), vec![2, 5]);
        assert_eq!(pick("nope", &r), Vec::<usize>::new());
    }

    #[test]
    fn containers_are_never_picked() {
        use StepKind::*;
        let mut r = run(&[Agent, Llm, Tool, Llm]);
        r.steps[0].container = true;
        assert_eq!(pick("first_step", &r), vec![1, 2, 3]);
        assert_eq!(pick("last_model", &r), vec![3, 1]);
        // the labelled container cannot be hit; 3 candidates, none labelled.
        assert_eq!(random_expectation(&r, &label(&[0])), (0.0, 0.0));
    }
}
