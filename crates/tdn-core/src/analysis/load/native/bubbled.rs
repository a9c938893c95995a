//! A failure that bubbled up is counted once. When a tool fails, frameworks mark every span that
//! wraps it failed too (smolagents marks `Step N` and `CodeAgent.run`, LangChain the chain); left
//! as they are, the analysis would see one fault as two or three. So a container step (`container:
//! true`) whose own subtree holds a failed step gives up its `error`: the message moves to its
//! attributes (`container.error`, with `container.error_from` naming the first failed step inside
//! it that still counts as failed), where the step detail still shows it. A container with no failed step inside keeps its
//! error: that failure is its own (code run by the step itself, a time-out of the whole agent).
//!
//! One pass from the last step to the first, so linear; parents always come earlier once loaded.

use crate::analysis::model::Step;
use hashbrown::HashMap;
use serde_json::Value;

/// The attribute that keeps a container's own error message once it is taken as its child's.
pub const CONTAINER_ERROR: &str = "container.error";
/// The attribute naming the failed step inside the container that the error came from.
pub const CONTAINER_ERROR_FROM: &str = "container.error_from";

/// Moves the error of each container that has a failed step below it into its attributes.
/// `position` holds each step's position by id (the loader's own index of the steps, so no
/// second copy of every id is made: issue 11).
pub(super) fn one_failure_per_fault(steps: &mut [Step], position: &HashMap<String, usize>) {
    // For each step, the first failed step strictly inside it (by position), once known.
    let mut failed_inside: Vec<Option<usize>> = vec![None; steps.len()];
    for i in (0..steps.len()).rev() {
        let inner = failed_inside.get(i).copied().flatten();
        let inner_id = inner
            .filter(|_| steps.get(i).is_some_and(|s| s.container))
            .and_then(|f| steps.get(f))
            .map(|s| s.id.0.clone());
        let Some(step) = steps.get_mut(i) else {
            continue;
        };
        if step.container
            && let Some(from) = inner_id
            && let Some(error) = step.error.take()
        {
            step.extras_mut()
                .attributes
                .insert(CONTAINER_ERROR.to_owned(), Value::String(error));
            step.extras_mut()
                .attributes
                .insert(CONTAINER_ERROR_FROM.to_owned(), Value::String(from));
        }
        let Some(p) = step
            .parent
            .as_ref()
            .and_then(|p| position.get(p.as_str()).copied())
        else {
            continue;
        };
        // The first failed step inside the parent: this step when it still fails, else the first
        // failed step inside this one; the earliest position wins.
        let mine = if step.failed() { Some(i) } else { inner };
        if let (Some(m), Some(slot)) = (mine, failed_inside.get_mut(p)) {
            *slot = Some(slot.map_or(m, |old: usize| old.min(m)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{StepId, StepKind};

    fn positions(steps: &[Step]) -> HashMap<String, usize> {
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.0.clone(), i))
            .collect()
    }

    fn step(id: &str, parent: Option<&str>, container: bool, error: Option<&str>) -> Step {
        let mut s = Step::new(id, StepKind::Event);
        s.parent = parent.map(|p| StepId(p.to_owned()));
        s.container = container;
        s.error = error.map(str::to_owned);
        s
    }

    #[test]
    fn a_wrapper_failed_by_its_tool_keeps_the_message_in_attributes_only() {
        let mut steps = vec![
            step("agent", None, true, Some("AgentError: step 2 failed")),
            step(
                "step2",
                Some("agent"),
                true,
                Some("Error when executing tool x"),
            ),
            step("llm", Some("step2"), false, None),
            step(
                "tool",
                Some("step2"),
                false,
                Some("TypeError: bad argument"),
            ),
        ];
        let position = positions(&steps);
        one_failure_per_fault(&mut steps, &position);
        let failed: Vec<&str> = steps
            .iter()
            .filter(|s| s.failed())
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(failed, ["tool"], "one fault, one failure");
        assert_eq!(
            steps[1].attributes().get(CONTAINER_ERROR),
            Some(&Value::String("Error when executing tool x".into()))
        );
        assert_eq!(
            steps[1].attributes().get(CONTAINER_ERROR_FROM),
            Some(&Value::String("tool".into()))
        );
        assert_eq!(
            steps[0].attributes().get(CONTAINER_ERROR_FROM),
            Some(&Value::String("tool".into())),
            "the failure the analysis still sees"
        );
    }

    #[test]
    fn a_container_without_a_failed_step_inside_and_a_plain_parent_keep_their_errors() {
        let mut steps = vec![
            step("run", None, true, Some("code raised NameError")),
            step("llm", Some("run"), false, None),
            step("plain", None, false, Some("outer")),
            step("child", Some("plain"), false, Some("inner")),
        ];
        let position = positions(&steps);
        one_failure_per_fault(&mut steps, &position);
        assert!(steps[0].failed(), "its own failure");
        assert!(steps[2].failed(), "not a container: not merged");
        assert!(steps[3].failed());
        assert!(steps[0].attributes().is_empty());
    }
}
