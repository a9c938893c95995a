//! Starting the screen once the command line has loaded the runs: the theme, the keymap and the
//! start-up messages from the resolved settings, the first state (the run, or the list of a
//! file's runs), the experiment engine (the user's runner, or none), then either the live
//! terminal (logs to a file) or one headless frame returned as text (`--render`). Reads the
//! keymap and theme files; prints nothing.

use super::app::{App, AppOptions};
use super::effects::{Clipboard, EffectContext, Opener};
use super::headless::Headless;
use super::keymap::{Chord, Keymap};
use super::picker::RunChoice;
use super::theme::Theme;
use super::{Screen, run};
use crate::analysis::import::SourceFormat;
use crate::analysis::load::Loaded;
use crate::config::{ColorChoice, Settings};
use crate::experiments::engine::drive::StopSignals;
use crate::experiments::engine::jobs::Jobs;
use crate::experiments::engine::port::ExperimentPort;
use crate::experiments::engine::{Consent, Engine};
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
    /// `--index`, and the format of the file, when one run was picked out of a file.
    pub index: Option<(usize, SourceFormat)>,
}

/// What the screen ended with.
pub enum Ended {
    /// `--render`: the final screen as text, and the stop signal that cut the wait for its jobs
    /// short, if one did.
    Rendered(String, Option<i32>),
    /// The live screen was left: by the user (`None`) or by a stop signal.
    Left(Option<i32>),
}

/// Runs the screen. With `render`, returns the final screen as text once the jobs started by
/// the keys have ended; else runs the live screen until the user quits.
pub fn start(s: Start) -> anyhow::Result<Ended> {
    let Start {
        settings,
        runs,
        opener,
        judged,
        reloader,
        messages: extra,
        render,
        keys,
        index,
    } = s;
    // Experiments run on this runtime; stop signals are listened for from the start, so none
    // ends the process while a job runs.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut signals = rt.block_on(async { StopSignals::listen() });
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
    // The screen shows the exact command and asks before the first experiment of a session,
    // which is the user's consent for a command from the current folder's tdn.toml too.
    let port = Arc::new(Jobs::new(
        Engine::new(&settings, Consent::Given),
        rt.handle().clone(),
        runs_in_file,
        index.map(|(i, _)| i),
        index.map(|(_, f)| f),
    ));
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
        let signal = h.wait_for_jobs(&rt, &mut signals);
        let screen = h.screen();
        drop(h);
        rt.shutdown_timeout(std::time::Duration::from_millis(500));
        return Ok(Ended::Rendered(screen, signal));
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
    if let Some(doc) = &app.doc {
        port.open(doc.run.clone(), doc.report.clone(), doc.source.clone());
    }
    let signal = run(
        rt,
        signals,
        Screen {
            app,
            port,
            opener,
            judged,
            reloader,
            copy_dir: state_dir,
        },
    )?;
    Ok(Ended::Left(signal))
}

/// A run of a file as the run list shows it.
pub fn choice(l: &Loaded) -> RunChoice {
    RunChoice::new(&l.run)
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
