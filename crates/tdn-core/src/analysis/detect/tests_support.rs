//! Shared setup for detector unit tests: build the facts of a run and run one detector; make a
//! run read as a multi-agent log.

use super::Facts;
use crate::analysis::claims::check_claims;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::Run;

/// Runs `detect` over the facts of `run`.
pub fn facts_for<T>(run: &Run, detect: impl Fn(&Facts<'_>) -> T) -> T {
    let texts = StepTexts::build(run);
    let links = LinkGraph::build(run, &texts);
    let claims = check_claims(run, &texts);
    let facts = Facts::new(run, &texts, &links, &claims);
    detect(&facts)
}

/// Names two agents taking turns on the run's steps, so it reads as a multi-agent log.
pub fn team(mut run: Run) -> Run {
    for (k, s) in run.steps.iter_mut().enumerate() {
        s.agent = Some(if k % 2 == 0 { "Planner" } else { "Solver" }.to_owned());
    }
    run
}
