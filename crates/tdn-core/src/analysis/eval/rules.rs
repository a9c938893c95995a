//! Each rule on its own: for one run, the best-scored finding of every category that found
//! something, after the walk back and the ranking (the same pipeline `analyze` runs), so that a
//! rule's precision (how often its own best finding is a labelled step) can be measured apart
//! from the others.

use super::score::RuleFinding;
use crate::analysis::claims::check_claims;
use crate::analysis::detect::{Facts, detect_all};
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::Run;
use crate::analysis::rank::{Scored, listed, score_all, walk_back};
use std::collections::HashMap;

/// The best listed finding of each category, in category name order.
pub fn rule_findings(run: &Run, reference: Option<&str>) -> Vec<RuleFinding> {
    let texts = StepTexts::build(run);
    let links = LinkGraph::build(run, &texts);
    let checked = check_claims(run, &texts);
    let facts = Facts::new(run, &texts, &links, &checked).with_reference(reference);
    let scored = score_all(&facts, walk_back(&facts, detect_all(&facts)));
    best_per_category(&scored)
}

fn better(a: &Scored, b: &Scored) -> bool {
    a.score
        .total_cmp(&b.score)
        .then(a.finding.confidence.total_cmp(&b.finding.confidence))
        .then(b.finding.step.cmp(&a.finding.step))
        .is_gt()
}

fn best_per_category(scored: &[Scored]) -> Vec<RuleFinding> {
    let mut best: HashMap<&'static str, &Scored> = HashMap::new();
    for s in scored.iter().filter(|s| listed(s)) {
        let name = s.finding.category.as_str();
        match best.get(name) {
            Some(b) if !better(s, b) => {}
            _ => {
                best.insert(name, s);
            }
        }
    }
    let mut out: Vec<RuleFinding> = best
        .into_iter()
        .map(|(rule, s)| RuleFinding {
            rule: rule.to_owned(),
            detector: s.finding.detector.as_str().to_owned(),
            step: s.finding.step,
        })
        .collect();
    out.sort_by(|a, b| a.rule.cmp(&b.rule));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn each_category_reports_its_own_best_step() {
        // A failing call whose error names the value the model wrote: the model step is the
        // wrong_value root cause; the failed call itself only showed the effect.
        let run = RunBuilder::failed()
            .user("u0", "Book the call for 2026-11-06.")
            .llm("m1", "I will book it for Friday 2026-11-07.")
            .tool_err(
                "t2",
                "create_event",
                json!({"date": "2026-11-07"}),
                "invalid date '2026-11-07': not a working day",
            )
            .build();
        let found = rule_findings(&run, None);
        let wrong = found.iter().find(|f| f.rule == "wrong_value");
        assert_eq!(wrong.map(|f| f.step), Some(1), "{found:?}");
        assert!(
            found.iter().all(|f| f.rule != "tool_error"),
            "a symptom with a known cause is not a suspect: {found:?}"
        );
    }
}
