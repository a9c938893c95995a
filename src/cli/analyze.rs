//! `analyze`: the diagnosis of each run in the file, as text for people or, with `--json`, the
//! report of docs/report.md (one compact object per line). Exit 0 when every run was analysed,
//! 2 for a file that cannot be loaded or bad usage.

use super::args::AnalyzeArgs;
use super::common::{embedder_consent, load_options, reference_choice, settings, write_stdout};
use crate::analysis::judge::Judge;
use crate::analysis::load::{self, Warning};
use crate::analysis::report::{AnalyzeOptions, analyze, render_json, render_text};
use crate::config::Settings;
use crate::experiments::command_judge::CommandJudge;
use crate::experiments::embedder;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let reference = reference_choice(&args.reference)?;
    let mut settings = settings(&args.config, |o| o.embedder.clone_from(&args.embedder))?;
    let mut notes: Vec<Warning> = Vec::new();
    if let Some(note) = embedder_consent(&mut settings) {
        notes.push(Warning::run(None, note));
    }
    let embedder = embedder::from_settings(&settings);
    let judge = judge_from(&settings, &mut notes);
    let runs = load::load_path(&args.run, &load_options(&args.input))?;
    for (k, loaded) in runs.into_iter().enumerate() {
        let mut loaded = loaded;
        loaded.warnings.extend(notes.iter().cloned());
        let opts = AnalyzeOptions {
            reference: reference.clone(),
            embedder: embedder.as_ref(),
            confidence: settings.confidence,
            judge: judge.as_ref().map(|j| j as &dyn Judge),
        };
        let report = analyze(&loaded, &opts);
        let text = match (args.json, k) {
            (true, _) => render_json(&report),
            (false, 0) => render_text(&report),
            (false, _) => format!("\n{}", render_text(&report)),
        };
        if !write_stdout(&text)? {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
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
