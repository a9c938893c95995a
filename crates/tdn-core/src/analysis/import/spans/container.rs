//! Which steps of a span tree are containers (`container: true`): a step with at least one step
//! below it that either
//! - a convention names a wrapper: OpenInference `AGENT` or `CHAIN`, GenAI `invoke_agent` /
//!   `create_agent`, OpenLLMetry `workflow`, `task` or `agent`, a Vercel AI SDK `ai.generateText`
//!   / `ai.streamText` (or `Object`) call around its model calls, a Langfuse `AGENT` or `CHAIN`,
//!   an OpenAI Agents SDK `agent` span; or
//! - no convention gives a kind (a harness's own span, a plain OpenTelemetry span, a Langfuse
//!   `SPAN`) and some step below it is a model call, a tool call or a retrieval: its children
//!   carry the work.
//!
//! A step with nothing below it is never a container, and neither is a model or tool call, even
//! when spans sit below it (an SDK span inside an instrumented call). Linear: one pass from the
//! last step to the first; parents always come earlier.

/// What the marking needs to know about one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Facts {
    /// The step kind (`llm`, `tool`, `agent`, `event`, ...).
    pub kind: &'static str,
    /// A convention (or the format) named the kind.
    pub stated: bool,
    /// A convention (or the format) names the step a wrapper of others.
    pub wrapper: bool,
    /// The position of the parent step.
    pub parent: Option<usize>,
}

/// True for a step kind that is work done, not wrapping.
pub fn is_work(kind: &str) -> bool {
    matches!(kind, "llm" | "tool" | "retrieval")
}

/// For each step, whether it is a container.
pub fn mark(facts: &[Facts]) -> Vec<bool> {
    let n = facts.len();
    let mut has_child = vec![false; n];
    let mut work_below = vec![false; n];
    for i in (0..n).rev() {
        let Some(f) = facts.get(i) else { continue };
        let Some(p) = f.parent.filter(|&p| p < i) else {
            continue;
        };
        let below = work_below.get(i).copied().unwrap_or(false);
        if let Some(slot) = has_child.get_mut(p) {
            *slot = true;
        }
        if let Some(slot) = work_below.get_mut(p) {
            *slot |= is_work(f.kind) || below;
        }
    }
    facts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let child = has_child.get(i).copied().unwrap_or(false);
            let work = work_below.get(i).copied().unwrap_or(false);
            child && !is_work(f.kind) && (f.wrapper || (!f.stated && work))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(kind: &'static str, stated: bool, wrapper: bool, parent: Option<usize>) -> Facts {
        Facts {
            kind,
            stated,
            wrapper,
            parent,
        }
    }

    #[test]
    fn wrappers_and_kindless_spans_around_work_are_containers() {
        let facts = [
            f("event", false, false, None),    // 0 harness root, work below
            f("agent", true, true, Some(0)),   // 1 AGENT
            f("event", true, true, Some(1)),   // 2 CHAIN "Step 1"
            f("llm", true, false, Some(2)),    // 3
            f("tool", true, false, Some(2)),   // 4
            f("event", false, false, Some(0)), // 5 harness leaf
            f("event", true, true, Some(0)),   // 6 CHAIN with nothing below
            f("event", false, false, None),    // 7 kindless root, only plumbing below
            f("event", false, false, Some(7)), // 8
            f("llm", true, false, None),       // 9 a model call with a span inside
            f("event", false, false, Some(9)), // 10
        ];
        assert_eq!(
            mark(&facts),
            [
                true, true, true, false, false, false, false, false, false, false, false
            ]
        );
    }
}
