//! `diff`: a failed run beside a good one (docs/compare.md). `diff GOOD BAD` reads two files of
//! any formats the loader reads; `diff FILE --task ID` takes a failed and a succeeded run of one
//! task from a file of several. Text for people, or with `--json` the comparison's JSON. Exit 0
//! when the runs were compared (whether or not they part), 2 for a file that cannot be loaded, a
//! task with no run to compare, or bad usage.

use super::args::DiffArgs;
use super::common::write_stdout;
use crate::analysis::compare::{self, Comparison, TaskRuns};
use crate::analysis::import::SourceFormat;
use crate::analysis::load::{self, LoadOptions, Loaded};
use crate::analysis::model::{Run, inert_line};
use anyhow::{Context, bail};
use std::path::Path;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let format = args.from.as_deref().and_then(SourceFormat::parse);
    let picked = match (&args.task, &args.bad) {
        (Some(task), _) => by_task(&args.good, task, format, args.good_index, args.bad_index)?,
        (None, Some(bad)) => Picked {
            good: one(&args.good, format, args.good_index.or(args.index))?,
            bad: one(bad, format, args.bad_index.or(args.index))?,
            note: None,
        },
        (None, None) => bail!("give the good run and the bad run, or one file and --task ID"),
    };
    let cmp = compare::compare(&picked.good.run, &picked.bad.run);
    if args.json {
        write_json(&cmp, &picked.good.run, &picked.bad.run)?;
    } else {
        let mut text = String::new();
        if let Some(note) = &picked.note {
            text.push_str(note);
            text.push('\n');
        }
        text.push_str(&compare::render_text(
            &cmp,
            &picked.good.run,
            &picked.bad.run,
            &picked.good.label,
            &picked.bad.label,
        ));
        write_stdout(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A loaded run and where it came from, for the page.
struct Side {
    run: Run,
    label: String,
}

struct Picked {
    good: Side,
    bad: Side,
    /// What was chosen, for the page (with --task).
    note: Option<String>,
}

/// The only run of `path`, or the one at `index`.
fn one(path: &Path, format: Option<SourceFormat>, index: Option<usize>) -> anyhow::Result<Side> {
    let loaded = load::load_one(path, &LoadOptions { format, index })?;
    let mut label = path.display().to_string();
    if let Some(i) = index {
        label.push_str(&format!(" (run {i})"));
    }
    Ok(Side {
        run: loaded.run,
        label,
    })
}

/// A failed and a succeeded run of `task` from the file at `path` (or the ones at the given
/// positions).
fn by_task(
    path: &Path,
    task: &str,
    format: Option<SourceFormat>,
    good_index: Option<usize>,
    bad_index: Option<usize>,
) -> anyhow::Result<Picked> {
    let mut runs: Vec<Loaded> = load::load_path(
        path,
        &LoadOptions {
            format,
            index: None,
        },
    )?;
    let shown = inert_line(task).into_owned();
    let file = path.display().to_string();
    let of_task = compare::task_runs(runs.iter().map(|l| &l.run), task);
    if of_task.is_empty() {
        let mut named: Vec<String> = runs
            .iter()
            .filter_map(|l| compare::task_id(&l.run))
            .collect();
        named.sort();
        named.dedup();
        if named.is_empty() {
            bail!(
                "{file}: no run in the file names its task, so --task cannot pick runs; compare two runs with 'tdn-tui diff GOOD BAD --good-index N --bad-index M'"
            );
        }
        let listed: Vec<String> = named
            .iter()
            .take(20)
            .map(|t| inert_line(t).into_owned())
            .collect();
        let more = if named.len() > 20 { ", …" } else { "" };
        bail!(
            "{file}: no run of task '{shown}'; the file's tasks are {}{more}",
            listed.join(", ")
        );
    }
    let bad = match bad_index {
        Some(i) => i,
        None => *of_task.failed.first().with_context(|| {
            format!(
                "{file}: task '{shown}' has no failed run to compare ({})",
                tally(&of_task)
            )
        })?,
    };
    let good = match good_index {
        Some(i) => i,
        None => *of_task.succeeded.first().with_context(|| {
            format!(
                "{file}: task '{shown}' has no succeeded run to compare with ({})",
                tally(&of_task)
            )
        })?,
    };
    let count = runs.len();
    for i in [good, bad] {
        if i >= count {
            bail!(
                "{file}: there is no run {i}; the file holds {count} (0 to {})",
                count.saturating_sub(1)
            );
        }
    }
    let note = format!(
        "task '{shown}': {}; comparing run {bad} with run {good} (--bad-index and --good-index pick others)",
        tally(&of_task)
    );
    let take = |runs: &mut Vec<Loaded>, i: usize| {
        let run = std::mem::replace(
            &mut runs[i].run,
            Run::new("", crate::analysis::model::RunStatus::Failed),
        );
        Side {
            run,
            label: format!("{file} (run {i})"),
        }
    };
    let good_side = take(&mut runs, good);
    let bad_side = if bad == good {
        Side {
            run: good_side.run.clone(),
            label: good_side.label.clone(),
        }
    } else {
        take(&mut runs, bad)
    };
    Ok(Picked {
        good: good_side,
        bad: bad_side,
        note: Some(note),
    })
}

/// The runs of a task by outcome: `succeeded 55; failed 5, 105, 155`.
fn tally(t: &TaskRuns) -> String {
    let list = |v: &[usize]| {
        v.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    for (name, v) in [
        ("succeeded", &t.succeeded),
        ("failed", &t.failed),
        ("unfinished", &t.unfinished),
    ] {
        if !v.is_empty() {
            parts.push(format!("{name} {}", list(v)));
        }
    }
    format!("runs {}", parts.join("; "))
}

/// Writes the comparison's JSON to stdout through a buffer, one line; a closed pipe ends quietly.
fn write_json(cmp: &Comparison, good: &Run, bad: &Run) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, &cmp.json(good, bad))
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = out.into_parts();
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Ok(())
            } else {
                Err(e).context("cannot write to stdout")
            }
        }
    }
}
