//! Search drift (docs/how-it-decides.md, "Detect"): in a failed multi-agent run (two or more
//! named agents), the run's first search
//! query leaves out most of the task: it holds under [`SEARCH_DRIFT_MAX_SHARE`] of the task's
//! content words, so what it finds may not answer the question asked. A weak suspect (it ranks
//! below direct evidence), there so the search is among the places to look.
//!
//! A query is a retrieval step's input, a tool call's `query`, `q`, `search`, `search_query` or
//! `keywords` argument, or a step's `attributes.query` (importers set it for a browsing agent's
//! "I typed '…'" report). Only the first query is judged. Linear in the run. No I/O.

use super::answer::multi_agent;
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, count};
use crate::analysis::claims::words::terms;
use crate::analysis::model::{Step, StepKind};
use crate::analysis::rank::params::{
    SEARCH_DRIFT, SEARCH_DRIFT_MAX_SHARE, SEARCH_DRIFT_SHOWN, TASK_DRIFT_MIN_TASK_TERMS,
};
use serde_json::Value;
use std::collections::HashSet;

/// Argument names that hold a search query.
const QUERY_KEYS: &[&str] = &["query", "q", "search", "search_query", "keywords"];

/// The first search query that leaves out most of the task.
pub struct SearchDrift;

impl Detector for SearchDrift {
    fn id(&self) -> DetectorId {
        DetectorId::SearchDrift
    }

    fn doc(&self) -> &'static str {
        "In a failed run, a first search query that leaves out most of the task's content words."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() || !multi_agent(run) {
            return Vec::new();
        }
        let Some(task) = run.task.as_deref() else {
            return Vec::new();
        };
        let task_terms: Vec<String> = terms(task).into_iter().map(|t| t.key).collect();
        if task_terms.len() < TASK_DRIFT_MIN_TASK_TERMS {
            return Vec::new();
        }
        let Some((i, query)) = run
            .steps
            .iter()
            .enumerate()
            .find_map(|(i, s)| query_of(s).map(|q| (i, q)))
        else {
            return Vec::new();
        };
        let held: HashSet<String> = terms(query).into_iter().map(|t| t.key).collect();
        let dropped: Vec<&str> = task_terms
            .iter()
            .filter(|t| !held.contains(*t))
            .map(String::as_str)
            .collect();
        let kept = task_terms.len() - dropped.len();
        if count(kept) / count(task_terms.len()) >= SEARCH_DRIFT_MAX_SHARE {
            return Vec::new();
        }
        let shown: Vec<String> = dropped
            .iter()
            .take(SEARCH_DRIFT_SHOWN)
            .map(|w| quote(w))
            .collect();
        vec![
            Finding::new(
                i,
                Category::SearchDrift,
                DetectorId::SearchDrift,
                SEARCH_DRIFT,
                Nature::Suspect,
                "the first search leaves out most of the task".to_owned(),
            )
            .because(format!(
                "{} searches for {}, which holds {kept} of the task's {} content words",
                step(run, i),
                quote(query),
                task_terms.len()
            ))
            .because(format!("it leaves out {}", shown.join(", "))),
        ]
    }
}

/// The search query a step sent, if it is a search.
fn query_of(s: &Step) -> Option<&str> {
    if s.kind == StepKind::Retrieval
        && let Some(Value::String(q)) = &s.input
    {
        return Some(q.as_str());
    }
    if let Some(call) = &s.tool
        && let Some(q) = QUERY_KEYS
            .iter()
            .find_map(|k| call.arguments.get(*k).and_then(Value::as_str))
    {
        return Some(q);
    }
    s.attributes.get("query").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::{facts_for, team};
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    const TASK: &str = "Which gyms near Tompkins Square Park have fitness classes before 7am?";

    #[test]
    fn a_first_search_that_drops_most_of_the_task_is_flagged() {
        let run = RunBuilder::failed()
            .task(TASK)
            .tool_ok(
                "s1",
                "web_search",
                json!({"query": "gyms in New York"}),
                "results",
            )
            .tool_ok("s2", "web_search", json!({"query": "New York"}), "results")
            .build();
        let found = facts_for(&team(run), |f| SearchDrift.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (0, Category::SearchDrift)
        );
    }

    #[test]
    fn a_search_that_keeps_the_task_or_a_run_without_searches_is_not() {
        let run = RunBuilder::failed()
            .task(TASK)
            .retrieval(
                "s1",
                "gyms near Tompkins Square Park fitness classes before 7am",
                vec![],
            )
            .build();
        assert!(facts_for(&team(run), |f| SearchDrift.detect(f)).is_empty());
        let none = RunBuilder::failed()
            .task(TASK)
            .tool_ok("s1", "get_order", json!({"id": "A1"}), "ok")
            .build();
        assert!(facts_for(&team(none), |f| SearchDrift.detect(f)).is_empty());
    }
}
