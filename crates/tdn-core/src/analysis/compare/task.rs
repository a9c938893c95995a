//! Runs of the same task in one file (τ-bench results hold several trials of each task): which
//! task a run names, and which runs of a task failed and which succeeded.

use crate::analysis::model::{Run, RunStatus, value_text};
use serde_json::Value;

/// The id of the task a run was made for, when the run names one: `task_id` in its attributes,
/// at its top level, or in one namespace of its attributes (a τ-bench record's is kept as
/// `attributes.taubench.task_id`). A number is read as its digits.
pub fn task_id(run: &Run) -> Option<String> {
    let text = |v: &Value| match v {
        Value::String(_) | Value::Number(_) => {
            let t = value_text(v);
            let t = t.trim();
            (!t.is_empty()).then(|| t.to_owned())
        }
        _ => None,
    };
    run.attributes
        .get("task_id")
        .and_then(text)
        .or_else(|| run.extra.get("task_id").and_then(text))
        .or_else(|| {
            run.attributes
                .values()
                .filter_map(|v| v.get("task_id"))
                .find_map(text)
        })
}

/// The runs of one task, by position in the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskRuns {
    /// Runs that failed or crashed.
    pub failed: Vec<usize>,
    /// Runs that succeeded.
    pub succeeded: Vec<usize>,
    /// Runs that stopped unfinished.
    pub unfinished: Vec<usize>,
}

impl TaskRuns {
    /// True when the file holds no run of the task.
    pub fn is_empty(&self) -> bool {
        self.failed.is_empty() && self.succeeded.is_empty() && self.unfinished.is_empty()
    }
}

/// The runs among `runs` (in file order) whose task is `task`.
pub fn task_runs<'a>(runs: impl IntoIterator<Item = &'a Run>, task: &str) -> TaskRuns {
    let mut out = TaskRuns::default();
    let task = task.trim();
    for (i, run) in runs.into_iter().enumerate() {
        if task_id(run).as_deref() != Some(task) {
            continue;
        }
        match run.status {
            RunStatus::Succeeded => out.succeeded.push(i),
            RunStatus::Unfinished => out.unfinished.push(i),
            RunStatus::Failed | RunStatus::Error => out.failed.push(i),
        }
    }
    out
}
