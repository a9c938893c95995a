//! Starting the screen once the command line has loaded the runs: the theme, the keymap and the
//! start-up messages from the resolved settings, the first state (the run, or the list of a
//! file's runs), the experiment engine (the user's runner, or none), then either the live
//! terminal (logs to a file) or one headless frame returned as text (`--render`). Reads the
//! keymap and theme files; prints nothing.

use super::app::{App, AppOptions};
use super::effects::{Clipboard, EffectContext, Opener};
use super::experiment_port::{ExperimentPort, Unavailable};
use super::headless::Headless;
use super::keymap::{Chord, Keymap};
use super::live_port::LivePort;
use super::picker::RunChoice;
use super::theme::Theme;
use super::{Screen, run};
use crate::analysis::load::Loaded;
use crate::config::{ColorChoice, Settings};
use std::path::PathBuf;
use std::sync::Arc;

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
    /// Reads the file again and analyses the run at a position (when the file changes).
    pub reloader: Option<Arc<Opener>>,
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
        reloader,
        messages: extra,
        render,
        keys,
    } = s;
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
    let opts = AppOptions {
        keymap,
        theme: Arc::new(theme),
        messages,
        headless: render.is_some(),
        size: render.unwrap_or((80, 24)),
        share_dir: std::env::current_dir().ok(),
    };
    let runs_in_file = runs.len();
    let mut app = if runs_in_file == 1 {
        App::new(opener(0).map_err(anyhow::Error::msg)?, opts)
    } else {
        App::picker(runs, opts)
    };
    app.experiments.runner_note = runner_note(&settings);
    if judged.is_some() {
        app.judge.command = settings.judge.as_ref().map(|c| {
            format!(
                "'{}' (from {})",
                crate::analysis::model::inert_line(&c.text),
                c.origin_text()
            )
        });
    }
    let port = experiment_port(&settings, runs_in_file);
    if let Some(doc) = &app.doc {
        port.open(doc.run.clone(), doc.report.clone(), doc.source.clone());
    }
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
    let state_dir = directories::BaseDirs::new()
        .map(|d| d.cache_dir().join("tdn-tui"))
        .unwrap_or_else(std::env::temp_dir);
    start_log(
        settings
            .ui
            .log_path
            .clone()
            .unwrap_or_else(|| state_dir.join("screen.log")),
    );
    run(Screen {
        app,
        port,
        opener,
        judged,
        reloader,
        copy_dir: state_dir,
    })?;
    Ok(None)
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
