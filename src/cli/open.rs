//! `tdn-tui RUN`: open the debugger (or, with `--render WxH`, print its screen as text). Loading
//! problems are reported on stderr with exit 2 before the terminal is touched; the screen itself
//! is started by `tui::start`, and while it is up logs go to a file and nothing is printed.

mod reports;

use super::args::{Color as ColorArg, OpenArgs};
use super::common::{load_options, reference_choice, write_stdout};
use crate::analysis::load;
use crate::analysis::report::{AnalyzeOptions, analyze};
use crate::config::{ColorChoice, Overrides, Settings};
use crate::tui::app::Document;
use crate::tui::effects::Opener;
use crate::tui::headless::{parse_keys, parse_size};
use crate::tui::start::{Start, choice, start};
use anyhow::bail;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the subcommand.
pub fn run(args: &OpenArgs) -> anyhow::Result<ExitCode> {
    let Some(path) = &args.run else {
        bail!(
            "no run given: write 'tdn-tui RUN' with a recorded run (tdn-tui --help lists the commands)"
        );
    };
    let mut settings = Settings::resolve(&Overrides {
        config: args.config.config.clone(),
        yes: args.config.yes,
        runner: args.runner.clone(),
        theme: args.theme.clone(),
        color: args.color.map(|c| match c {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        }),
        ..Overrides::default()
    })?;
    let render = args
        .render
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let keys = parse_keys(args.keys.as_deref().unwrap_or("")).map_err(anyhow::Error::msg)?;
    if render.is_none() && !std::io::stdout().is_terminal() {
        bail!("the debugger needs a terminal; to print its screen as text, add --render 120x40");
    }
    let runs = Arc::new(load::load_path(path, &load_options(&args.input))?);
    if runs.is_empty() {
        bail!("{}: the file holds no run", path.display());
    }
    let reports = match &args.report {
        Some(p) => Some(Arc::new(reports::read_reports(p, &runs)?)),
        None => None,
    };
    let reference = reference_choice(&args.reference)?;
    // The screen analyses the run as it opens: a command embedder from the current folder's
    // tdn.toml is not the user's word yet, so it is left out unless --yes was given.
    let mut messages: Vec<String> = super::common::embedder_consent(&mut settings)
        .into_iter()
        .collect();
    if settings.judge.is_some() {
        messages.push(
            "a judge is configured: the screen shows the rules' verdict; for the judge's, run 'tdn-tui analyze RUN --json > report.json' and open with '--report report.json'"
                .to_owned(),
        );
    }
    let embedder: Arc<dyn crate::analysis::influence::Embedder> = Arc::from(
        crate::experiments::embedder::from_settings(&settings).map_err(anyhow::Error::msg)?,
    );
    let confidence = settings.confidence;
    let source = std::path::absolute(path).unwrap_or_else(|_| path.clone());
    let opener: Arc<Opener> = {
        let runs = runs.clone();
        Arc::new(move |i: usize| {
            let loaded = runs
                .get(i)
                .ok_or_else(|| format!("the file has no run at position {i}"))?;
            let report = match reports.as_ref().and_then(|r| r.get(i)) {
                Some(r) => r.clone(),
                None => analyze(
                    loaded,
                    &AnalyzeOptions {
                        reference: reference.clone(),
                        embedder: embedder.as_ref(),
                        confidence,
                        // The screen opens on the rules' verdict; the judge runs in `analyze`.
                        judge: None,
                    },
                ),
            };
            Ok(Document::new(
                loaded.run.clone(),
                report,
                Some(source.clone()),
            ))
        })
    };
    let screen = start(Start {
        settings,
        runs: runs.iter().map(choice).collect(),
        opener,
        messages,
        render,
        keys,
    })?;
    if let Some(text) = screen {
        write_stdout(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
