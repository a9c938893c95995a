//! Starting the screen: the theme, the keymap and the start-up messages from the resolved
//! settings, the first state (the run, or the list of a file's runs), the experiment engine (the
//! user's runner, or none), then either one headless frame returned as text (`--render`, once
//! the command line has loaded the runs) or the live terminal (logs to a file), which
//! [`start_loading`] takes at once and fills in while the run loads. Reads the keymap and theme
//! files; prints nothing.

use super::app::{App, AppOptions, Document};
use super::effects::{Clipboard, EffectContext, Opener};
use super::experiment_port::{ExperimentPort, Unavailable};
use super::headless::Headless;
use super::keymap::{Chord, Keymap};
use super::live_port::LivePort;
use super::loading::View;
use super::picker::RunChoice;
use super::theme::Theme;
use super::{Screen, run, run_loading};
use crate::analysis::load::Loaded;
use crate::analysis::progress::Progress;
use crate::config::{ColorChoice, Settings};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Instant;

/// How the screen is started.
pub struct Start {
    /// The resolved settings (runner, theme, colour, keymap file, log file).
    pub settings: Settings,
    /// The runs of the file, for the list (one entry: opened at once).
    pub runs: Vec<RunChoice>,
    /// Opens (analyses) the run at a position of the file.
    pub opener: Arc<Opener>,
    /// Analyses the run at a position again asking the judge (`None` without a judge).
    pub judged: Option<Arc<Opener>>,
    /// Messages for the status bar besides the config's own warnings.
    pub messages: Vec<String>,
    /// `--render WxH`: draw once without a terminal, after pressing `keys`.
    pub render: Option<(u16, u16)>,
    /// `--keys`.
    pub keys: Vec<Chord>,
}

/// Runs the screen. With `render`, returns the final screen as text; else runs the live screen
/// until the user quits and returns `None`.
pub fn start(s: Start) -> anyhow::Result<Option<String>> {
    let Start {
        settings,
        runs,
        opener,
        judged,
        messages: extra,
        render,
        keys,
    } = s;
    let opts = app_options(&settings, extra, render);
    let runs_in_file = runs.len();
    let first = if runs_in_file == 1 {
        Some(opener(0).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let (mut app, port) = first_state(&settings, runs, first, judged.is_some(), opts);
    if let Some(size) = render {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let ctx = EffectContext {
            theme: app.theme.clone(),
            port,
            opener,
            judged,
            events: tx,
            clipboard: Clipboard::None,
        };
        app.size = size;
        let mut h = Headless::new(app, ctx, rx);
        h.press_all(&keys);
        return Ok(Some(h.screen()));
    }
    let state_dir = state_dir();
    start_log(&settings, &state_dir);
    run(Screen {
        app,
        port,
        opener,
        judged,
        copy_dir: state_dir,
    })?;
    Ok(None)
}

/// What the work behind the loading screen hands over: the file's runs, the first run opened
/// when the file holds one, and how to open (and judge) runs.
pub struct Ready {
    /// The runs of the file, for the list.
    pub runs: Vec<RunChoice>,
    /// The run opened, for a file of one run.
    pub first: Option<Document>,
    /// Opens (analyses) the run at a position of the file.
    pub opener: Arc<Opener>,
    /// Analyses the run at a position again asking the judge (`None` without a judge).
    pub judged: Option<Arc<Opener>>,
}

/// How the live screen is started while the run still loads (issue 11: the terminal is taken at
/// once and shows progress; the work runs on its own thread).
pub struct StartLoading {
    /// The resolved settings.
    pub settings: Settings,
    /// The file being opened, as the user gave it.
    pub file: String,
    /// The work's counters.
    pub progress: Arc<Progress>,
    /// Where the work hands over (or says why it cannot).
    pub done: Receiver<Result<Ready, String>>,
    /// Messages for the status bar besides the config's own warnings.
    pub messages: Vec<String>,
}

/// Runs the live screen from the loading screen on, until the user quits.
pub fn start_loading(s: StartLoading) -> anyhow::Result<()> {
    let StartLoading {
        settings,
        file,
        progress,
        done,
        messages,
    } = s;
    let opts = app_options(&settings, messages, None);
    let theme = opts.theme.clone();
    let keymap = opts.keymap.clone();
    let state_dir = state_dir();
    start_log(&settings, &state_dir);
    let view = View {
        file,
        progress,
        started: Instant::now(),
    };
    run_loading(&view, &theme, &keymap, &done, |ready: Ready| {
        let judged = ready.judged;
        let (app, port) = first_state(&settings, ready.runs, ready.first, judged.is_some(), opts);
        Ok(Screen {
            app,
            port,
            opener: ready.opener,
            judged,
            copy_dir: state_dir,
        })
    })
}

/// The theme, the keymap and the start-up messages from the resolved settings.
fn app_options(settings: &Settings, extra: Vec<String>, render: Option<(u16, u16)>) -> AppOptions {
    let color = match settings.ui.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => !settings.ui.no_color,
    };
    let (theme, theme_msg) = Theme::select(settings.ui.theme.as_deref(), color);
    let (keymap, mut messages) = Keymap::load(settings.ui.keymap_path.as_deref());
    messages.extend(settings.warnings.iter().cloned());
    messages.extend(extra);
    messages.extend(theme_msg);
    AppOptions {
        keymap,
        theme: Arc::new(theme),
        messages,
        headless: render.is_some(),
        size: render.unwrap_or((80, 24)),
    }
}

/// The first state (the run opened, or the list of the file's runs) and the experiment engine,
/// told about the open run.
fn first_state(
    settings: &Settings,
    runs: Vec<RunChoice>,
    first: Option<Document>,
    judged: bool,
    opts: AppOptions,
) -> (App, Arc<dyn ExperimentPort>) {
    let runs_in_file = runs.len();
    let mut app = match first {
        Some(doc) if runs_in_file == 1 => App::new(doc, opts),
        _ => App::picker(runs, opts),
    };
    app.experiments.runner_note = runner_note(settings);
    if judged {
        app.judge.command = settings.judge.as_ref().map(|c| {
            format!(
                "'{}' (from {})",
                crate::analysis::model::inert_line(&c.text),
                c.origin_text()
            )
        });
    }
    let port = experiment_port(settings, runs_in_file);
    if let Some(doc) = &app.doc {
        port.open(doc.run.clone(), doc.report.clone(), doc.source.clone());
    }
    (app, port)
}

fn state_dir() -> PathBuf {
    directories::BaseDirs::new()
        .map(|d| d.cache_dir().join("tdn-tui"))
        .unwrap_or_else(std::env::temp_dir)
}

/// A run of a file as the run list shows it.
pub fn choice(l: &Loaded) -> RunChoice {
    RunChoice::new(&l.run)
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

/// Sends logs to a file while the screen is up (the configured one, else one in `state_dir`);
/// without a writable file, logs are dropped.
fn start_log(settings: &Settings, state_dir: &std::path::Path) {
    let path = settings
        .ui
        .log_path
        .clone()
        .unwrap_or_else(|| state_dir.join("screen.log"));
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
