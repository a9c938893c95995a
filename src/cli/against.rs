//! `--against GOOD` (analyze and the screen): the good run a run is compared with. GOOD is read
//! once; for a file of several runs the good run is the one `--against-index` names, else the
//! first run of the analysed run's task that succeeded (as `diff --task` picks it).

use super::args::AgainstArgs;
use crate::analysis::compare::{task_id, task_runs};
use crate::analysis::load::{self, LoadOptions};
use crate::analysis::model::{Run, inert_line};
use std::path::Path;

/// The runs of the GOOD file.
pub struct GoodRuns {
    runs: Vec<Run>,
    label: String,
    /// `--against-index`.
    fixed: Option<usize>,
}

/// A good run picked for a run: its position in the GOOD file and where it came from, for the
/// page.
pub struct Picked<'a> {
    /// The good run.
    pub run: &'a Run,
    /// `good.json` or `results.json (run 55)`.
    pub label: String,
}

impl GoodRuns {
    /// Reads the file `--against` names (none without it).
    pub fn load(args: &AgainstArgs) -> anyhow::Result<Option<GoodRuns>> {
        let Some(path) = &args.against else {
            return Ok(None);
        };
        Ok(Some(GoodRuns::read(path, args.against_index)?))
    }

    /// Reads the runs of `path` (only the one at `index`, when given).
    pub fn read(path: &Path, index: Option<usize>) -> anyhow::Result<GoodRuns> {
        let runs = load::load_path(
            path,
            &LoadOptions {
                format: None,
                index,
            },
        )?;
        if runs.is_empty() {
            anyhow::bail!("{}: the file holds no run to compare with", path.display());
        }
        Ok(GoodRuns {
            runs: runs.into_iter().map(|l| l.run).collect(),
            // The file's name: the page and the screen say which run, not where it lies.
            label: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            fixed: index,
        })
    }

    /// The good run for `bad`: the only run read, else the first run of `bad`'s task that
    /// succeeded (not `bad` itself); why there is none otherwise.
    pub fn pick(&self, bad: &Run) -> Result<Picked<'_>, String> {
        if self.runs.len() == 1 {
            let label = match self.fixed {
                Some(i) => format!("{} (run {i})", self.label),
                None => self.label.clone(),
            };
            return self
                .runs
                .first()
                .map(|run| Picked { run, label })
                .ok_or_else(|| "no run to compare with".to_owned());
        }
        let count = self.runs.len();
        let Some(task) = task_id(bad) else {
            return Err(format!(
                "'{}' holds {count} runs and run '{}' names no task: pick the good run with --against-index N",
                inert_line(&self.label),
                inert_line(&bad.id)
            ));
        };
        let of_task = task_runs(&self.runs, &task);
        let found = of_task
            .succeeded
            .iter()
            .copied()
            .find(|&i| self.runs.get(i).is_some_and(|r| r.id != bad.id));
        match found.and_then(|i| self.runs.get(i).map(|r| (i, r))) {
            Some((i, run)) => Ok(Picked {
                run,
                label: format!(
                    "{} (run {i}, the first of task '{}' that succeeded)",
                    self.label,
                    inert_line(&task)
                ),
            }),
            None => Err(format!(
                "'{}' holds no other run of task '{}' that succeeded: pick the good run with --against-index N",
                inert_line(&self.label),
                inert_line(&task)
            )),
        }
    }
}
