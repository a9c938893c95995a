//! Task drift (docs/how-it-decides.md, "Detect"): in a failed run that opens with an agent's
//! message briefing the team (a manager's or orchestrator's plan, before any user message; an
//! `agent` step, not a model call's output or a container), the brief
//! leaves out the task it was given: it holds under [`TASK_DRIFT_MAX_SHARE`] of the task's content
//! words. Everything after it works on the wrong problem. Needs the run's `task`; a brief
//! shorter than [`TASK_DRIFT_MIN_BRIEF_TERMS`] distinct words (a greeting) is not judged. Linear
//! in the brief and the task. No I/O.

use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, count};
use crate::analysis::claims::words::terms;
use crate::analysis::model::StepKind;
use crate::analysis::params::{
    TASK_DRIFT, TASK_DRIFT_MAX_SHARE, TASK_DRIFT_MIN_BRIEF_TERMS, TASK_DRIFT_MIN_TASK_TERMS,
};
use hashbrown::HashSet;

/// An opening brief that leaves out the task.
pub struct TaskDrift;

/// A message one agent wrote to the others (`agent` steps of a multi-agent conversation), not a
/// model call's output: only a message can brief a team.
fn is_message(s: &crate::analysis::model::Step) -> bool {
    s.kind == StepKind::Agent && super::decides(s)
}

impl Detector for TaskDrift {
    fn id(&self) -> DetectorId {
        DetectorId::TaskDrift
    }

    fn doc(&self) -> &'static str {
        "In a failed run that opens with a model's brief to the team, a brief that leaves out most of the task."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let Some(task) = run.task.as_deref() else {
            return Vec::new();
        };
        let task_terms: HashSet<String> = terms(task).into_iter().map(|t| t.key).collect();
        if task_terms.len() < TASK_DRIFT_MIN_TASK_TERMS {
            return Vec::new();
        }
        let Some(i) = run
            .steps
            .iter()
            .position(|s| super::decides(s) || s.kind == StepKind::User)
            .filter(|&i| run.steps.get(i).is_some_and(is_message))
        else {
            return Vec::new();
        };
        let brief: HashSet<String> = terms(&f.texts.produced(i))
            .into_iter()
            .map(|t| t.key)
            .collect();
        if brief.len() < TASK_DRIFT_MIN_BRIEF_TERMS {
            return Vec::new();
        }
        let kept = task_terms.iter().filter(|t| brief.contains(*t)).count();
        let share = count(kept) / count(task_terms.len());
        if share >= TASK_DRIFT_MAX_SHARE {
            return Vec::new();
        }
        vec![
            Finding::new(
                i,
                Category::TaskDrift,
                DetectorId::TaskDrift,
                TASK_DRIFT,
                Nature::Suspect,
                "the opening brief leaves out the task".to_owned(),
            )
            .because(format!(
                "{} opens the run and briefs the team, but holds {kept} of the task's {} content words",
                step(run, i),
                task_terms.len()
            ))
            .because(format!(
                "the task: {}; the brief begins {}",
                quote(task),
                quote(&short(&f.texts.produced(i), 200))
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;

    const TASK: &str = "Which westernmost university awarded a bachelor's degree to a secretary of homeland security before April 2019?";
    const OFF: &str = "Analyze and resolve the issue causing the code execution to fail with exit code 1 and output unknown language. Review the provided code to identify syntax or logical errors, debug the code to pinpoint the exact cause of the failure, optimize the code if necessary and verify the correctness of the solution by running it successfully.";
    const ON: &str = "Find every secretary of homeland security before April 2019, the university of each bachelor's degree, and report the westernmost university. Review the sources carefully, verify each degree, then compute the answer and check it twice before reporting it back to the team.";

    fn agent(id: &str, text: &str) -> crate::analysis::model::Step {
        let mut s = crate::analysis::model::Step::new(id, StepKind::Agent);
        s.agent = Some("Planner".into());
        s.output = Some(serde_json::json!(text).into());
        s
    }

    #[test]
    fn a_brief_about_something_else_is_flagged() {
        let run = RunBuilder::failed()
            .task(TASK)
            .step(agent("s1", OFF))
            .step(agent("s2", "ok"))
            .build();
        let found = facts_for(&run, |f| TaskDrift.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].step, found[0].category), (0, Category::TaskDrift));
    }

    #[test]
    fn a_model_calls_own_output_or_a_container_is_no_brief() {
        // The first model call of a single agent (its own notes) briefs no team.
        let call = RunBuilder::failed().task(TASK).llm("s1", OFF).build();
        assert!(facts_for(&call, |f| TaskDrift.detect(f)).is_empty());
        // An agent run's span holds its children's work, not a message of its own.
        let mut wrapper = agent("run", OFF);
        wrapper.container = true;
        let run = RunBuilder::failed().task(TASK).step(wrapper).build();
        assert!(facts_for(&run, |f| TaskDrift.detect(f)).is_empty());
    }

    #[test]
    fn a_faithful_brief_a_user_opening_or_a_short_greeting_is_not() {
        let on = RunBuilder::failed()
            .task(TASK)
            .step(agent("s1", ON))
            .build();
        assert!(facts_for(&on, |f| TaskDrift.detect(f)).is_empty());
        let user_first = RunBuilder::failed()
            .task(TASK)
            .user("u1", TASK)
            .step(agent("s1", OFF))
            .build();
        assert!(facts_for(&user_first, |f| TaskDrift.detect(f)).is_empty());
        let greeting = RunBuilder::failed()
            .task(TASK)
            .step(agent("s1", "Hi! How can I help you today?"))
            .build();
        assert!(facts_for(&greeting, |f| TaskDrift.detect(f)).is_empty());
    }
}
