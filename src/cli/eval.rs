//! `eval`: step and agent accuracy on labelled runs, beside the random and trivial baselines and
//! each rule's own precision. Folders are walked for `.json` files (a folder holding `traces/`
//! and `annotations/` is one set of traces, each labelled by the annotation file of the same
//! name), the files are analysed in parallel on every core, a progress line is drawn on stderr
//! when it is a terminal, and the result is a table (or `--json`, the `tdn.eval/2` object).

use super::args::EvalArgs;
use super::common::{EXIT_USAGE, settings, write_stdout};
use crate::analysis::eval::{
    EvalReport, FileError, Label, LabelFile, Reading, RunKey, RunResult, Unlabelled,
    annotation_label, inline_label, predict, rule_findings, set_name,
};
use crate::analysis::load::{self, LoadOptions};
use crate::analysis::model::inert_line;
use crate::analysis::report::{AnalyzeOptions, ReferenceChoice, analyze};
use anyhow::Context;
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Width of the progress bar, in cells.
const BAR_CELLS: usize = 30;

/// One run file to score, with what its folder says about it.
struct Input {
    path: PathBuf,
    /// The set, when the folder names it (annotated traces).
    set: Option<String>,
    /// The label from the annotation file of the same name.
    label: Option<Label>,
}

/// Runs the subcommand.
pub fn run(args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let inputs = collect(&args.paths)?;
    if inputs.is_empty() {
        eprintln!(
            "tdn-tui: eval: no .json files under the given paths; give run files or folders of them"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let mut labels = LabelFile::default();
    for p in &args.labels {
        labels.extend(read_labels(p)?);
    }
    let mut settings = settings(&args.config, |_| {})?;
    if let Some(note) = super::common::embedder_consent(&mut settings) {
        eprintln!("tdn-tui: warning: {note}");
    }
    let embedder = crate::experiments::embedder::from_settings(&settings);
    let opts = AnalyzeOptions {
        reference: if args.no_reference {
            ReferenceChoice::Ignore
        } else {
            ReferenceChoice::FromRun
        },
        embedder: embedder.as_ref(),
        confidence: settings.confidence,
        judge: None,
        against: None,
        prices: &settings.prices,
    };

    let progress = Progress::new(inputs.len());
    let outcomes: Vec<FileOutcome> = inputs
        .par_iter()
        .map(|f| {
            let o = eval_file(f, &labels, &opts, args.no_reference);
            progress.tick();
            o
        })
        .collect();
    progress.finish();

    let mut runs = Vec::new();
    let mut unlabelled = Vec::new();
    let mut errors = Vec::new();
    for o in outcomes {
        runs.extend(o.runs);
        unlabelled.extend(o.unlabelled);
        errors.extend(o.error);
    }
    for e in &errors {
        eprintln!("tdn-tui: eval: skipped {}", inert_line(&e.message));
    }
    let report = EvalReport::new(!args.no_reference, runs, unlabelled, errors);
    if report.runs.is_empty() {
        eprintln!(
            "tdn-tui: eval: none of the {} file(s) holds a labelled run; Who&When files carry their labels, other runs need --labels FILE",
            inputs.len()
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let text = if args.json {
        serde_json::to_string(&report).context("cannot serialise the evaluation")? + "\n"
    } else if args.rules {
        crate::analysis::eval::render_table(&report)
            + "\n"
            + &crate::analysis::eval::render_rules(&report)
    } else {
        crate::analysis::eval::render_table(&report)
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// A labels file, or a folder of annotation files (each labels the run file of its name).
fn read_labels(p: &Path) -> anyhow::Result<LabelFile> {
    if p.is_dir() {
        let mut out = LabelFile::default();
        for (name, label) in read_annotations(p)? {
            out.insert(name, label);
        }
        return Ok(out);
    }
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("{}: cannot read the labels file", p.display()))?;
    LabelFile::parse(&text).with_context(|| format!("{}", p.display()))
}

/// The annotation files of a folder by file name; files that are not annotations, or name no
/// error, give no label.
fn read_annotations(dir: &Path) -> anyhow::Result<HashMap<String, Label>> {
    let mut out = HashMap::new();
    for path in json_files(dir)? {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Some(label) = serde_json::from_str(&text)
            .ok()
            .and_then(|v| annotation_label(&v))
        {
            out.insert(name, label);
        }
    }
    Ok(out)
}

/// What one file gave.
#[derive(Default)]
struct FileOutcome {
    runs: Vec<RunResult>,
    unlabelled: Vec<Unlabelled>,
    error: Option<FileError>,
}

fn eval_file(
    input: &Input,
    labels: &LabelFile,
    opts: &AnalyzeOptions<'_>,
    no_reference: bool,
) -> FileOutcome {
    let path = &input.path;
    let file = path.display().to_string();
    let mut out = FileOutcome::default();
    let loaded = match load::load_path(path, &LoadOptions::default()) {
        Ok(l) => l,
        Err(e) => {
            out.error = Some(FileError {
                file,
                message: e.to_string(),
            });
            return out;
        }
    };
    let many = loaded.len() > 1;
    let set = input
        .set
        .clone()
        .or_else(|| set_name(path, many))
        .unwrap_or_default();
    for (i, mut l) in loaded.into_iter().enumerate() {
        let index = many.then_some(i);
        let label = inline_label(&l.run)
            .or_else(|| input.label.clone())
            .or_else(|| labels.lookup(path, index).cloned());
        let Some(label) = label else {
            out.unlabelled.push(Unlabelled {
                file: file.clone(),
                index,
                run: l.run.id.clone(),
            });
            continue;
        };
        if no_reference {
            // The setting holds whatever the analysis does with `ReferenceChoice::Ignore`.
            l.run.reference_answer = None;
        }
        let report = analyze(&l, opts);
        let predicted = predict(&report, &l.run);
        let mut rules = None;
        for (reading, resolved) in label.readings(&l.run) {
            let found = if resolved.has_steps {
                rules
                    .get_or_insert_with(|| rule_findings(&l.run, l.run.reference_answer.as_deref()))
                    .clone()
            } else {
                Vec::new()
            };
            let key = RunKey {
                file: file.clone(),
                set: match reading {
                    Reading::Any => set.clone(),
                    r => format!("{set} {}", r.suffix()),
                },
                reading,
                index,
                run: l.run.id.clone(),
            };
            out.runs.push(RunResult::new(
                key,
                &l.run,
                &resolved,
                predicted.clone(),
                found,
            ));
        }
    }
    out
}

/// Every `.json` file under a folder, sorted. Symbolic links to folders are not followed.
fn json_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .with_context(|| format!("{}: cannot list the folder", dir.display()))?;
        for entry in entries {
            let entry =
                entry.with_context(|| format!("{}: cannot list the folder", dir.display()))?;
            let path = entry.path();
            let ft = entry.file_type()?;
            if ft.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Every `.json` file named or found under a named folder, sorted, each once. A folder holding
/// `traces/` and `annotations/` gives its traces, each with the annotation of the same name, as
/// one set named after the folder.
fn collect(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut out: Vec<Input> = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .with_context(|| format!("{}: cannot read; give run files or folders", p.display()))?;
        if !meta.is_dir() {
            out.push(Input {
                path: p.clone(),
                set: None,
                label: None,
            });
            continue;
        }
        let (traces, notes) = (p.join("traces"), p.join("annotations"));
        if traces.is_dir() && notes.is_dir() {
            let set = p
                .canonicalize()
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()));
            let mut annotations = read_annotations(&notes)?;
            for path in json_files(&traces)? {
                let label = path
                    .file_name()
                    .and_then(|n| annotations.remove(&*n.to_string_lossy()));
                out.push(Input {
                    path,
                    set: set.clone(),
                    label,
                });
            }
            continue;
        }
        out.extend(json_files(p)?.into_iter().map(|path| Input {
            path,
            set: None,
            label: None,
        }));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// A progress line on stderr, drawn only when stderr is a terminal.
struct Progress {
    total: usize,
    done: AtomicUsize,
    draw: Option<Mutex<std::io::Stderr>>,
}

impl Progress {
    fn new(total: usize) -> Self {
        let err = std::io::stderr();
        let draw = err.is_terminal().then(|| Mutex::new(err));
        Progress {
            total,
            done: AtomicUsize::new(0),
            draw,
        }
    }

    fn tick(&self) {
        let Some(lock) = &self.draw else {
            self.done.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // Counting under the lock keeps the drawn numbers in order across threads.
        if let Ok(mut err) = lock.lock() {
            let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
            let filled = (done * BAR_CELLS)
                .checked_div(self.total)
                .unwrap_or(BAR_CELLS)
                .min(BAR_CELLS);
            let bar = "#".repeat(filled) + &".".repeat(BAR_CELLS - filled);
            let _ = write!(err, "\r  eval [{bar}] {done}/{} files", self.total);
            let _ = err.flush();
        }
    }

    fn finish(&self) {
        if let Some(lock) = &self.draw
            && let Ok(mut err) = lock.lock()
        {
            let _ = write!(err, "\r{}\r", " ".repeat(BAR_CELLS + 40));
            let _ = err.flush();
        }
    }
}
