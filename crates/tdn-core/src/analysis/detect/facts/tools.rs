//! Which tool each step called, and whether it changes things.

use super::slots::Slots;
use crate::analysis::model::{Run, Tool};
use crate::analysis::state_change::name_says_action;
use hashbrown::HashMap;

/// For each step, the position in `run.tools` of the tool its call names: the first tool of that
/// name, the one `run.tool` finds.
pub(super) fn tools_called(run: &Run) -> Slots {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(run.tools.len());
    for (at, t) in run.tools.iter().enumerate() {
        first.entry(t.name.as_str()).or_insert(at);
    }
    let mut out = Slots::with_capacity(run.steps.len());
    for s in &run.steps {
        out.push(
            s.tool
                .as_ref()
                .and_then(|c| first.get(c.name.as_str()).copied()),
        );
    }
    out
}

/// True when step `i` calls a tool that changes things: a listed tool by `changes` (its entry in
/// [`RunFacts::changes`]), any other by its name.
pub(super) fn step_changes_state(run: &Run, tool_at: &Slots, changes: &[bool], i: usize) -> bool {
    let Some(call) = run.steps.get(i).and_then(|s| s.tool.as_ref()) else {
        return false;
    };
    match tool_at.get(i) {
        Some(at) => changes.get(at).copied().unwrap_or(false),
        None => name_says_action(&call.name),
    }
}

/// The tool step `i` called, read from [`tools_called`]'s table.
pub(super) fn tool_of_step<'a>(run: &'a Run, tool_at: &Slots, i: usize) -> Option<&'a Tool> {
    run.tools.get(tool_at.get(i)?)
}
