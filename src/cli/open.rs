//! `tdn-tui RUN`: open the debugger (or, with `--render WxH`, print its screen as text). Loading
//! problems are reported on stderr with exit 2 before the terminal is touched; while the screen is
//! up, logs go to a file and nothing is printed.

use super::args::{Color as ColorArg, OpenArgs};
use super::common::{load_options, reference_choice, write_stdout};
use crate::analysis::load::{self, Loaded};
use crate::analysis::report::{AnalyzeOptions, Report, analyze};
use crate::config::{ColorChoice, Overrides, Settings};
use crate::tui::app::{App, AppOptions, Document, RunChoice};
use crate::tui::effects::{Clipboard, EffectContext, Opener};
use crate::tui::experiment_port::{ExperimentPort, Unavailable};
use crate::tui::headless::{Headless, parse_keys, parse_size};
use crate::tui::live_port::LivePort;
use crate::tui::{Screen, keymap::Keymap, theme::Theme};
use anyhow::{Context, bail};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
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
    let size = args
        .render
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let keys = parse_keys(args.keys.as_deref().unwrap_or("")).map_err(anyhow::Error::msg)?;
    if size.is_none() && !std::io::stdout().is_terminal() {
        bail!("the debugger needs a terminal; to print its screen as text, add --render 120x40");
    }
    let runs = Arc::new(load::load_path(path, &load_options(&args.input))?);
    if runs.is_empty() {
        bail!("{}: the file holds no run", path.display());
    }
    let reports = match &args.report {
        Some(p) => Some(Arc::new(read_reports(p, &runs)?)),
        None => None,
    };
    let reference = reference_choice(&args.reference)?;
    // The screen analyses the run as it opens: a command embedder from the current folder's
    // tdn.toml is not the user's word yet, so it is left out unless --yes was given.
    let consent_note = super::common::embedder_consent(&mut settings);
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
    let color = match settings.ui.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => !settings.ui.no_color,
    };
    let (theme, theme_msg) = Theme::select(settings.ui.theme.as_deref(), color);
    let (keymap, mut messages) = Keymap::load(settings.ui.keymap_path.as_deref());
    messages.extend(settings.warnings.iter().cloned());
    messages.extend(consent_note);
    if settings.judge.is_some() {
        messages.push(
            "a judge is configured: the screen shows the rules' verdict; `tdn-tui analyze` asks the judge"
                .to_owned(),
        );
    }
    messages.extend(theme_msg);
    let opts = AppOptions {
        keymap,
        theme: Arc::new(theme),
        messages,
        headless: size.is_some(),
        size: size.unwrap_or((80, 24)),
    };
    let mut app = if runs.len() == 1 {
        App::new(opener(0).map_err(anyhow::Error::msg)?, opts)
    } else {
        App::picker(runs.iter().map(choice).collect(), opts)
    };
    app.experiments.runner_note = runner_note(&settings);
    let port = experiment_port(&settings, runs.len());
    if let Some(doc) = &app.doc {
        port.open(doc.run.clone(), doc.report.clone(), doc.source.clone());
    }
    if let Some(size) = size {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let ctx = EffectContext {
            theme: app.theme.clone(),
            port,
            opener,
            events: tx,
            clipboard: Clipboard::None,
        };
        app.size = size;
        let mut h = Headless::new(app, ctx, rx);
        h.press_all(&keys);
        write_stdout(&h.screen())?;
        return Ok(ExitCode::SUCCESS);
    }
    let dirs = directories::BaseDirs::new();
    let state_dir = dirs
        .map(|d| d.cache_dir().join("tdn-tui"))
        .unwrap_or_else(std::env::temp_dir);
    start_log(
        settings
            .ui
            .log_path
            .clone()
            .unwrap_or_else(|| state_dir.join("screen.log")),
    );
    crate::tui::run(Screen {
        app,
        port,
        opener,
        copy_dir: state_dir,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The experiment engine the screen talks to (the seam: `tui::experiment_port`). Without a
/// runner every request is refused with how to configure one.
fn experiment_port(settings: &Settings, runs_in_file: usize) -> Arc<dyn ExperimentPort> {
    match &settings.runner {
        Some(_) => Arc::new(LivePort::new(settings).with_runs_in_file(runs_in_file)),
        None => Arc::new(Unavailable {
            reason: "no runner is configured: start with --runner 'CMD' or set [runner] command in tdn.toml (docs/experiments.md)".to_owned(),
        }),
    }
}

fn runner_note(settings: &Settings) -> String {
    match &settings.runner {
        Some(c) => format!("runner: {} (from {})", c.text, c.origin_text()),
        None => "no runner configured: start with --runner 'CMD' to re-run your agent from here"
            .to_owned(),
    }
}

fn choice(l: &Loaded) -> RunChoice {
    RunChoice {
        id: l.run.id.clone(),
        title: l.run.title.clone(),
        status: l.run.status,
        steps: l.run.steps.len(),
    }
}

/// Reads `--report`: one report, or one per line (as `analyze --json` prints for several runs),
/// each checked against its run.
fn read_reports(p: &Path, runs: &[Loaded]) -> anyhow::Result<Vec<Report>> {
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("{}: cannot read the report", p.display()))?;
    let reports: Vec<Report> = match serde_json::from_str::<Report>(&text) {
        Ok(r) => vec![r],
        Err(whole) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(n, l)| {
                serde_json::from_str(l).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: line {}: not a tdn.report/1 report ({e}; as one document: {whole})",
                        p.display(),
                        n + 1
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if reports.len() != runs.len() {
        bail!(
            "{}: holds {} reports for {} runs; give the report 'tdn-tui analyze --json' printed for this file",
            p.display(),
            reports.len(),
            runs.len()
        );
    }
    for (r, l) in reports.iter().zip(runs) {
        if r.run.id != l.run.id || r.run.steps != l.run.steps.len() {
            bail!(
                "{}: the report is for run '{}' with {} steps, but the file holds run '{}' with {}; give the matching report",
                p.display(),
                r.run.id,
                r.run.steps,
                l.run.id,
                l.run.steps.len()
            );
        }
    }
    Ok(reports)
}

/// Sends logs to a file while the screen is up; without a writable file, logs are dropped.
fn start_log(path: PathBuf) {
    let file = path
        .parent()
        .map(std::fs::create_dir_all)
        .transpose()
        .ok()
        .and_then(|_| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .ok()
        });
    if let Some(f) = file {
        let _ = tracing_subscriber::fmt()
            .with_writer(std::sync::Mutex::new(f))
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .try_init();
    }
}
