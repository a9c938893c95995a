//! `analyze`: the diagnosis of each run in the file, as text for people, with `--json` (or
//! `--format json`) the report of docs/report.md (one compact object per line), or with
//! `--format markdown` a page to paste into a bug, with the verdicts the run's attribution ledger
//! holds. Exit 0 when every run was analysed, 2 for a file that cannot be loaded or bad usage. On
//! a terminal, stderr shows a progress bar meanwhile.

use super::args::{AnalyzeArgs, ReportFormat};
use super::common::{embedder_consent, load_options, reference_choice, settings, write_stdout};
use super::progress_bar::Bar;
use crate::analysis::judge::Judge;
use crate::analysis::load::{self, Warning};
use crate::analysis::progress::Progress;
use crate::analysis::report::{
    Against, AnalyzeOptions, MarkdownExtras, Report, VerdictRow, analyze_with_progress,
    render_markdown, render_text, write_json,
};
use crate::config::Settings;
use crate::experiments::command_judge::CommandJudge;
use crate::experiments::embedder;
use anyhow::Context;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs of this many steps or more give their freed memory back before a page for people is
/// made.
const TRIM_AFTER_STEPS: usize = 10_000;

/// Runs the subcommand.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let reference = reference_choice(&args.analysis.reference)?;
    let mut settings = settings(&args.config, |o| o.embedder.clone_from(&args.embedder))?;
    let mut notes: Vec<Warning> = Vec::new();
    if let Some(note) = embedder_consent(&mut settings) {
        notes.push(Warning::run(None, note));
    }
    let embedder = embedder::from_settings(&settings);
    let judge = judge_from(&settings, &mut notes);
    // A bar on stderr while a big run loads and is analysed; wiped before each report prints.
    let progress = Arc::new(Progress::new());
    let mut bar = Some(Bar::start(progress.clone()));
    let runs =
        load::load_path_with_progress(&args.run, &load_options(&args.analysis.input), &progress)?;
    let format = match (args.json, args.format) {
        (true, _) => ReportFormat::Json,
        (false, f) => f.unwrap_or(ReportFormat::Text),
    };
    let runs_in_file = runs.len();
    let good = super::against::GoodRuns::load(&args.against)?;
    let last = runs_in_file.saturating_sub(1);
    for (k, loaded) in runs.into_iter().enumerate() {
        let mut loaded = loaded;
        loaded.warnings.extend(notes.iter().cloned());
        super::common::settle_outcome(&mut loaded, &args.analysis.outcome, &reference);
        // Against a good run: the comparison is made here and handed to the analysis.
        let picked = match good.as_ref().map(|g| g.pick(&loaded.run)) {
            None => None,
            Some(Ok(p)) => Some(p),
            Some(Err(why)) if runs_in_file == 1 => anyhow::bail!("--against: {why}"),
            Some(Err(why)) => {
                loaded.warnings.push(Warning::run(
                    None,
                    format!("--against: {why}; analysed alone"),
                ));
                None
            }
        };
        let comparison = picked
            .as_ref()
            .map(|p| crate::analysis::compare::compare(p.run, &loaded.run));
        let opts = AnalyzeOptions {
            reference: reference.clone(),
            embedder: embedder.as_ref(),
            confidence: settings.confidence,
            judge: judge.as_ref().map(|j| j as &dyn Judge),
            against: picked
                .as_ref()
                .zip(comparison.as_ref())
                .map(|(p, c)| Against {
                    run: p.run,
                    comparison: c,
                }),
            prices: &settings.prices,
        };
        let bar_now = bar.take().unwrap_or_else(|| Bar::start(progress.clone()));
        let report = analyze_with_progress(&loaded, &opts, &progress);
        bar_now.finish();
        let written = match format {
            // JSON is one line per run, streamed.
            ReportFormat::Json => write_json_stdout(&report)?,
            ReportFormat::Text | ReportFormat::Markdown => {
                // A big run's analysis tables are freed: their pages go back before the page's
                // text is made whole (for a small run, as in a file of many, it would only
                // cost time). The JSON line needs no room: it is made a few pieces at a time.
                if loaded.run.steps.len() >= TRIM_AFTER_STEPS {
                    super::heap::give_back_free_memory();
                }
                let text = if matches!(format, ReportFormat::Markdown) {
                    let (verdicts, from) = ledger_verdicts(&settings, args, runs_in_file, &loaded);
                    render_markdown(
                        &report,
                        &MarkdownExtras {
                            final_answer: loaded.run.final_answer.clone(),
                            reference_answer: loaded.run.reference_answer.clone(),
                            verdicts_from: from,
                            verdicts,
                        },
                    )
                } else {
                    render_text(&report)
                };
                // Pages for people are separated by a blank line.
                let text = if k > 0 { format!("\n{text}") } else { text };
                write_stdout(&text)?
            }
        };
        if !written {
            break;
        }
        if k == last {
            // The command ends here: freeing a 100,000-step run and its report piece by piece
            // only adds time before the process exits (issue 11).
            std::mem::forget(report);
            std::mem::forget(loaded);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the report as JSON to stdout through a buffer, never holding its whole text (issue 11:
/// 25 MB for a 100,000-step run). As [`write_stdout`]: false when the reader went away (a broken
/// pipe), an error for any other failed write.
fn write_json_stdout(report: &Report) -> anyhow::Result<bool> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write_json(report, &mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) => {
            // What is still buffered is dropped, not written again on the way out.
            let _ = out.into_parts();
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Ok(false)
            } else {
                Err(e).context("cannot write to stdout")
            }
        }
    }
}

/// The judge the settings name, unless it came from a `tdn.toml` in the current folder and the
/// user did not pass `--yes` (then a warning says how to allow it).
fn judge_from(settings: &Settings, notes: &mut Vec<Warning>) -> Option<CommandJudge> {
    let cmd = settings.judge.as_ref()?;
    if cmd.needs_consent() && !settings.yes {
        notes.push(Warning::run(
            None,
            format!(
                "the judge command '{}' from {} was not run; pass --yes to allow commands from a tdn.toml in the current folder",
                crate::analysis::model::inert_line(&cmd.text),
                cmd.origin_text()
            ),
        ));
        return None;
    }
    Some(CommandJudge::new(
        cmd.text.clone(),
        settings.judge_timeout_s,
    ))
}

/// The latest verified record of each unit in the run's attribution ledger, as verdict rows, and
/// where they were read; none when the ledger does not exist or cannot be read (then a row says
/// why).
fn ledger_verdicts(
    settings: &Settings,
    args: &AnalyzeArgs,
    runs_in_file: usize,
    loaded: &load::Loaded,
) -> (Vec<VerdictRow>, Option<String>) {
    use crate::experiments::engine::{file_holds_several, locate_ledger};
    use crate::experiments::ledger::evidence;
    let several = file_holds_several(
        runs_in_file,
        args.analysis.input.index,
        loaded.source_format,
    );
    let location = locate_ledger(
        settings.ledger.path.as_deref(),
        &args.run,
        several,
        &loaded.run.id,
    );
    let from = format!("the attribution ledger '{}'", location.path.display());
    let e = match evidence(&location.path, &loaded.run.id) {
        Ok(Some(e)) => e,
        Ok(None) => return (Vec::new(), None),
        Err(e) => {
            return (
                vec![VerdictRow {
                    target: "the ledger".to_owned(),
                    experiment: "ledger".to_owned(),
                    verdict: "unreadable".to_owned(),
                    detail: e.to_string(),
                }],
                Some(from),
            );
        }
    };
    // The latest attribution of each unit, as the ledger's one read gives them.
    let rows = e.latest.iter().map(crate::tui::share::ledger_row).collect();
    (rows, Some(from))
}
