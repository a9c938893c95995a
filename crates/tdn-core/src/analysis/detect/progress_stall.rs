//! Progress stall (docs/how-it-decides.md, "Detect"): in a failed run whose coordinator reviews
//! the team's progress (a step with `attributes.review`, as the Who&When importer records
//! Magentic-One's progress ledger), the first review that says no progress is being made, or
//! that the team is in a loop, judged the work of the step before it. The agent of that step may
//! have been stuck for a while: its earlier steps on the same page (`attributes.url`) belong to
//! the same stall, so the step that first opened that page is the suspect. Without a page, the
//! judged step itself is.
//!
//! One backward walk from the first such review: linear in the run. No I/O.

use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::{Step, StepKind};
use crate::analysis::params::{STALL_INSTRUCTION, STALL_START};
use serde_json::Value;

/// The step that opened what the team got stuck on, by the coordinator's first stalled review.
pub struct ProgressStall;

impl Detector for ProgressStall {
    fn id(&self) -> DetectorId {
        DetectorId::ProgressStall
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the step that opened the page the team was stuck on when the coordinator first said no progress was being made."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let Some((r, review)) = run.steps.iter().enumerate().find_map(|(i, s)| {
            let rv = s.attributes().get("review")?;
            stalled(rv).then_some((i, rv))
        }) else {
            return Vec::new();
        };
        let reviewer = agent_of(run.steps.get(r));
        let Some(judged) = (0..r).rev().find(|&k| {
            run.steps
                .get(k)
                .is_some_and(|s| works(s) && agent_of(Some(s)).is_some_and(|a| Some(a) != reviewer))
        }) else {
            return Vec::new();
        };
        let agent = agent_of(run.steps.get(judged));
        let page = url_of(run.steps.get(judged));
        let mut start = judged;
        if let Some(u) = page {
            for k in (0..judged).rev() {
                let Some(s) = run.steps.get(k) else { break };
                if agent_of(Some(s)) != agent {
                    continue;
                }
                if url_of(Some(s)) == Some(u) {
                    start = k;
                } else {
                    break;
                }
            }
        }
        let verdict = match review.get("progress") {
            Some(Value::Bool(false)) => "no progress is being made",
            _ => "the team is in a loop",
        };
        let reason = review
            .get("reason")
            .and_then(Value::as_str)
            .map(|r| format!(": {}", quote(r)))
            .unwrap_or_default();
        let who = agent.map_or_else(|| "the agent".to_owned(), quote);
        let mut found = Finding::new(
            start,
            Category::ProgressStall,
            DetectorId::ProgressStall,
            STALL_START,
            Nature::Suspect,
            match page {
                Some(_) => "the team got stuck on the page this step opened".to_owned(),
                None => {
                    "the coordinator's first review found no progress after this step".to_owned()
                }
            },
        )
        .because(format!(
            "{} is the first review that says {verdict}{reason}",
            step(run, r)
        ));
        if let Some(u) = page {
            found = found.because(if start == judged {
                format!("{} opened {} just before it", step(run, start), quote(u))
            } else {
                format!(
                    "{who} stayed on {} from {} to {}",
                    quote(u),
                    step(run, start),
                    step(run, judged)
                )
            });
        }
        let mut out = vec![found];
        if let Some(k) = agent.and_then(|a| instruction_to(run, a, start)) {
            out.push(
                Finding::new(
                    k,
                    Category::StallInstruction,
                    DetectorId::ProgressStall,
                    STALL_INSTRUCTION,
                    Nature::Suspect,
                    "its instruction sent the agent to the work the team got stuck on".to_owned(),
                )
                .because(format!(
                    "it asked {who}: {}",
                    quote(&short(&f.texts.produced(k), 120))
                ))
                .because(format!(
                    "{who} acted on it at {}, where the team got stuck; {} is the first review that says {verdict}",
                    step(run, start),
                    step(run, r)
                )),
            );
        }
        out
    }
}

/// The latest instruction addressed to `agent` (`attributes.to`) before step `before`.
fn instruction_to(run: &crate::analysis::model::Run, agent: &str, before: usize) -> Option<usize> {
    let agent = agent.to_lowercase();
    run.steps.get(..before)?.iter().rposition(|s| {
        super::decides(s)
            && s.attributes()
                .get("to")
                .and_then(Value::as_str)
                .is_some_and(|t| t.trim().to_lowercase() == agent)
    })
}

/// A review that says no progress is being made, or that the team is in a loop.
fn stalled(review: &Value) -> bool {
    review.get("progress") == Some(&Value::Bool(false))
        || review.get("in_loop") == Some(&Value::Bool(true))
}

/// A step that does the team's work: a model or tool step (not a user or system message).
fn works(s: &Step) -> bool {
    super::decides(s) || s.kind == StepKind::Tool
}

fn agent_of(s: Option<&Step>) -> Option<&str> {
    s.and_then(|s| s.agent.as_deref())
        .map(str::trim)
        .filter(|a| !a.is_empty())
}

fn url_of(s: Option<&Step>) -> Option<&str> {
    s.and_then(|s| s.attributes().get("url"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|u| !u.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn by(agent: &str, to: Option<&str>, attrs: Value) -> impl FnOnce(&mut Step) {
        let agent = agent.to_owned();
        let to = to.map(str::to_owned);
        move |s: &mut Step| {
            s.agent = Some(agent);
            if let Some(t) = to {
                s.extras_mut().attributes.insert("to".to_owned(), json!(t));
            }
            if let Value::Object(m) = attrs {
                s.extras_mut().attributes.extend(m);
            }
        }
    }

    fn stalled_run() -> crate::analysis::model::Run {
        RunBuilder::failed()
            .task("Where are martial arts classes near the stock exchange?")
            .llm("o1", "Please search for martial arts schools near the exchange.")
            .with(by("Orchestrator", Some("WebSurfer"), json!({})))
            .llm("w1", "I typed 'martial arts'.")
            .with(by("WebSurfer", None, json!({"url": "https://search/?q=martial"})))
            .llm("o2", "Updated Ledger")
            .with(by("Orchestrator", None, json!({"review": {"progress": true}})))
            .llm("o3", "Please open the school listing and read the class times.")
            .with(by("Orchestrator", Some("WebSurfer"), json!({})))
            .llm("o4", "Next speaker WebSurfer")
            .with(by("Orchestrator", None, json!({})))
            .llm("w2", "I clicked 'NY Taekwondo'.")
            .with(by("WebSurfer", None, json!({"url": "https://ads.example/microscope"})))
            .llm("o5", "Updated Ledger")
            .with(by("Orchestrator", None, json!({"review": {"progress": true}})))
            .llm("w3", "I scrolled down.")
            .with(by("WebSurfer", None, json!({"url": "https://ads.example/microscope"})))
            .llm("o6", "Updated Ledger")
            .with(by(
                "Orchestrator",
                None,
                json!({"review": {"progress": false, "in_loop": true, "reason": "an unrelated page"}}),
            ))
            .build()
    }

    #[test]
    fn the_step_that_opened_the_page_of_the_stall_is_flagged() {
        let found = facts_for(&stalled_run(), |f| ProgressStall.detect(f));
        let got: Vec<(usize, f64)> = found.iter().map(|x| (x.step, x.confidence)).collect();
        // The page of the stall was opened at w2 (position 6); o3 (position 4) sent the surfer
        // there, the other reading of the same stall.
        assert_eq!(got, vec![(5, STALL_START), (3, STALL_INSTRUCTION)]);
        assert_eq!(found[1].category, Category::StallInstruction);
        assert!(
            found[1].evidence[0].contains("Please open the school listing"),
            "{:?}",
            found[1].evidence
        );
        assert!(
            found[0]
                .evidence
                .iter()
                .any(|e| e.contains("an unrelated page"))
        );
    }

    #[test]
    fn no_stalled_review_or_a_successful_run_gives_nothing() {
        let mut run = stalled_run();
        if let Some(s) = run.steps.last_mut() {
            s.extras_mut().attributes.insert(
                "review".to_owned(),
                json!({"progress": true, "in_loop": false}),
            );
        }
        assert!(facts_for(&run, |f| ProgressStall.detect(f)).is_empty());
        let mut ok = stalled_run();
        ok.status = crate::analysis::model::RunStatus::Succeeded;
        assert!(facts_for(&ok, |f| ProgressStall.detect(f)).is_empty());
        let plain = RunBuilder::failed()
            .llm("s1", "Looking.")
            .llm("s2", "No progress.")
            .build();
        assert!(facts_for(&plain, |f| ProgressStall.detect(f)).is_empty());
    }

    /// The orchestrator asks `to` to do `task`, the assistant answers, and the orchestrator's
    /// ledger reviews it with `review`.
    fn answered_then_reviewed(task: &str, to: &str, review: Value) -> crate::analysis::model::Run {
        RunBuilder::failed()
            .llm("o1", task)
            .with(by("Orchestrator", Some(to), json!({})))
            .llm("a1", "The total is 12.")
            .with(by("Assistant", None, json!({})))
            .llm("a2", "Updated Ledger")
            .with(by("Orchestrator", None, json!({ "review": review })))
            .build()
    }

    #[test]
    fn without_a_page_the_judged_step_itself_is_flagged() {
        let run = answered_then_reviewed(
            "Please compute the total from the two figures given.",
            "Assistant",
            json!({"in_loop": true}),
        );
        let found = facts_for(&run, |f| ProgressStall.detect(f));
        let got: Vec<usize> = found.iter().map(|x| x.step).collect();
        assert_eq!(got, vec![1, 0]);
    }

    #[test]
    fn an_agent_nobody_instructed_gets_no_instruction_behind_its_stall() {
        let run = answered_then_reviewed(
            "Please compute the total.",
            "Coder",
            json!({"progress": false}),
        );
        let found = facts_for(&run, |f| ProgressStall.detect(f));
        let got: Vec<_> = found.iter().map(|x| (x.step, x.category)).collect();
        assert_eq!(got, vec![(1, Category::ProgressStall)]);
    }
}
