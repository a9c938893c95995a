//! Blame the decision (docs/how-it-decides.md, "Walk back"): a suspect is a step where an agent
//! decided (a model turn, an agent's message) or a tool or service that itself failed. A finding
//! that landed on a step which only showed a decision's effect (the result of a call, a search
//! that returned nothing) moves to the model step that made the call, and its evidence says where
//! the effect showed. A container (a step wrapping other steps) is never a suspect: what it
//! reports happened inside it, and the detectors place it there (a container's own failure on the
//! latest decision inside it). Linear in the run; no I/O.

use super::Role;
use super::walk_back::Walked;
use crate::analysis::detect::{Category, Facts, decides};
use crate::analysis::model::{Step, StepKind};
use crate::analysis::say::{step as step_name, tool_of};

/// True when the step wraps other steps (an agent run, a chain, a numbered step of a loop) and
/// did nothing of its own.
pub fn is_container(step: &Step) -> bool {
    step.is_container()
}

/// True when a finding is about the step itself failing or returning something wrong, so it
/// stays where it is: the tool or its service failed, a read returned orders, outdated text or
/// another value than was written, or a failure no decision explains.
fn stays(category: Category, role: Role) -> bool {
    match category {
        Category::ServiceError
        | Category::PromptInjection
        | Category::OutdatedSource
        | Category::MemoryMismatch
        | Category::BlockedPage
        | Category::RunError => true,
        // A failure the walk back tied to a decision is listed there; one it could not tie
        // stays on the failed step.
        Category::ToolError | Category::StepError | Category::InvalidArguments => {
            role != Role::Symptom
        }
        _ => false,
    }
}

/// The model step that decided step `i`, when `i` is not itself a decision: the model step that
/// issued the call (for a tool call), else the latest model step before it.
pub fn decider(facts: &Facts<'_>, i: usize) -> Option<usize> {
    let run = facts.run;
    let s = run.steps.get(i)?;
    if s.kind.is_model() || s.kind == StepKind::User {
        return None;
    }
    facts
        .caller(i)
        .or_else(|| run.steps.get(..i)?.iter().rposition(decides))
}

/// Moves every finding to the decision behind it (see the module doc); findings on containers
/// with no model step inside them are dropped.
pub fn to_decisions(facts: &Facts<'_>, items: Vec<Walked>) -> Vec<Walked> {
    let run = facts.run;
    let mut out = Vec::with_capacity(items.len());
    for mut w in items {
        let at = w.finding.step;
        let Some(s) = run.steps.get(at) else { continue };
        // What a wrapper reports happened inside it, and the detectors report that where it
        // happened: nothing is left to blame on the wrapper itself.
        if is_container(s) {
            continue;
        }
        // A symptom whose cause is known stays where it showed, as a record; on a step that
        // did not decide anything (a call's result) it is not listed.
        if w.cause.is_some() {
            w.finding.effect_only = !s.kind.is_model() && s.kind != StepKind::User;
            out.push(w);
            continue;
        }
        if stays(w.finding.category, w.role) {
            out.push(w);
            continue;
        }
        if let Some(m) = decider(facts, at) {
            let what = if s.tool.is_some() {
                format!(
                    "it made the call to {} at {}",
                    tool_of(run, at),
                    step_name(run, at)
                )
            } else {
                format!("it decided what {} did", step_name(run, at))
            };
            w.finding
                .evidence
                .insert(0, format!("{what}, where this showed"));
            w.finding.shown_at = Some(at);
            w.finding.step = m;
        }
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::check_claims;
    use crate::analysis::detect::{Facts, detect_all};
    use crate::analysis::links::{LinkGraph, StepTexts};
    use crate::analysis::model::Run;
    use crate::analysis::rank::walk_back;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn moved(run: &Run) -> Vec<(usize, &'static str)> {
        let texts = StepTexts::build(run);
        let links = LinkGraph::build(run, &texts);
        let claims = check_claims(run, &texts);
        let facts = Facts::new(run, &texts, &links, &claims);
        let mut v: Vec<_> = to_decisions(&facts, walk_back(&facts, detect_all(&facts)))
            .into_iter()
            .map(|w| (w.finding.step, w.finding.category.as_str()))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn the_first_state_changing_call_is_blamed_on_the_turn_that_made_it() {
        let run = RunBuilder::failed()
            .tool_def("cancel_order", "", json!(null), true)
            .user("u0", "What is the status of order ORD-1042?")
            .llm("m1", "Cancelling ORD-1042 now.")
            .tool_ok(
                "t2",
                "cancel_order",
                json!({"order_id": "ORD-1042"}),
                "cancelled",
            )
            .build();
        let v = moved(&run);
        assert!(v.contains(&(1, "point_of_no_return")), "{v:?}");
        assert!(v.iter().all(|(s, _)| *s != 2), "{v:?}");
    }

    #[test]
    fn a_service_failure_stays_on_the_tool() {
        let run = RunBuilder::failed()
            .user("u0", "Book the room.")
            .llm("m1", "Booking.")
            .tool_err(
                "t2",
                "book_room",
                json!({"room": "Orion"}),
                "upstream timed out",
            )
            .build();
        assert!(
            moved(&run).contains(&(2, "service_error")),
            "{:?}",
            moved(&run)
        );
    }

    fn coordinated(next_is_instruction: bool) -> Run {
        let by = |agent: &str, attrs: serde_json::Value| {
            let agent = agent.to_owned();
            move |s: &mut Step| {
                s.agent = Some(agent);
                if let serde_json::Value::Object(m) = attrs {
                    s.extras_mut().attributes.extend(m);
                }
            }
        };
        let b = RunBuilder::failed()
            .task("Which gyms near the park open before 7am?")
            .llm("o1", "Please search for gyms near the park.")
            .with(by("Orchestrator", json!({"to": "WebSurfer"})))
            .llm(
                "w2",
                "I typed 'gyms near the park'. Results: Iron Forge Fitness, Blue Lotus Gym.",
            )
            .with(by("WebSurfer", json!({"url": "https://search/?q=gyms"})))
            .llm(
                "o3",
                "Updated Ledger: we found Iron Forge Fitness and Blue Lotus Gym near the park.",
            )
            .with(by("Orchestrator", json!({"review": {"progress": true}})));
        let b = if next_is_instruction {
            b.llm(
                "o4",
                "Please check the class times of Iron Forge Fitness and Blue Lotus Gym.",
            )
            .with(by("Orchestrator", json!({"to": "WebSurfer"})))
        } else {
            b.llm("o4", "Request satisfied.")
                .with(by("Orchestrator", json!({})))
        };
        b.answer("Iron Forge Fitness").build()
    }

    #[test]
    fn a_finding_on_a_coordinators_review_stays_on_the_review() {
        // The surfer first named the gym (answer origin); the review took it up (a hand-off).
        // Whatever the coordinator did next, the finding stays where the evidence is.
        for next_is_instruction in [true, false] {
            let v = moved(&coordinated(next_is_instruction));
            assert!(v.contains(&(2, "answer_handoff")), "{v:?}");
            assert!(v.iter().all(|(s, _)| *s != 3), "{v:?}");
        }
    }

    #[test]
    fn a_container_is_never_blamed_and_hands_its_failure_to_the_decision_inside() {
        let run = RunBuilder::failed()
            .step({
                let mut s = Step::new("agent", StepKind::Agent);
                s.container = true;
                s.error = Some("the agent stopped".into());
                s
            })
            .step({
                let mut s = Step::new("m1", StepKind::Llm);
                s.parent = Some(crate::analysis::model::StepId("agent".into()));
                s.output = Some(json!("Let me think.").into());
                s
            })
            .step({
                let mut s = Step::new("idle", StepKind::Agent);
                s.container = true;
                s.error = Some("nothing inside".into());
                s
            })
            .build();
        let v = moved(&run);
        assert!(v.contains(&(1, "execution_error")), "{v:?}");
        assert!(v.iter().all(|(s, _)| *s != 0 && *s != 2), "{v:?}");
    }
}
