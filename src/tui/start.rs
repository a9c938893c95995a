//! Starting the screen: the theme, the keymap and the start-up messages from the resolved
//! settings, the first state (the run, or the list of a file's runs), the experiment engine (the
//! user's runner, or none), then either one headless frame returned as text (`--render`, once
//! the command line has loaded the runs) or the live terminal (logs to a file), which
//! [`start_loading`] takes at once and fills in while the run loads on a thread of its own (issue
//! 11). Reads the keymap and theme files; prints nothing.

use super::app::{App, AppOptions, Document};
use super::effects::{Clipboard, Comparer, EffectContext, Handles, Opener, OutcomeSetter};
use super::headless::Headless;
use super::keymap::{Chord, Keymap};
use super::loading::View;
use super::panes::experiments::RunnerReach;
use super::picker::RunChoice;
use super::theme::Theme;
use super::{Screen, run, run_loading};
use crate::analysis::import::SourceFormat;
use crate::analysis::load::Loaded;
use crate::analysis::progress::Progress;
use crate::config::{ColorChoice, Settings};
use crate::experiments::engine::drive::StopSignals;
use crate::experiments::engine::jobs::Jobs;
use crate::experiments::engine::port::ExperimentPort;
use crate::experiments::engine::{Consent, Engine};
use std::path::PathBuf;
use std::sync::Arc;
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
    /// Reads the file again and analyses the run at a position (when the file changes).
    pub reloader: Option<Arc<Opener>>,
    /// Analyses the run at a position again with the outcome the user set.
    pub outcome: Option<Arc<OutcomeSetter>>,
    /// Analyses the run at a position against a good run picked in the screen.
    pub comparer: Option<Arc<Comparer>>,
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
        outcome,
        comparer,
        messages: extra,
        render,
        keys,
        index,
    } = s;
    // Experiments run on this runtime; stop signals are listened for from the start, so none
    // ends the process while a job runs.
    let (rt, mut signals) = runtime()?;
    let opts = app_options(&settings, extra, render);
    let first = if runs.len() == 1 {
        Some(opener(0).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let (mut app, port) = first_state(&settings, runs, first, judged.is_some(), opts, &rt, index);
    let handles = Handles {
        port,
        opener,
        judged,
        outcome,
        comparer,
    };
    if let Some(size) = render {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let ctx = EffectContext::new(app.theme.clone(), handles, tx, Clipboard::None);
        app.size = size;
        let mut h = Headless::new(app, ctx, rx);
        h.press_all(&keys);
        let signal = h.wait_for_jobs(&rt, &mut signals);
        let screen = h.screen();
        drop(h);
        rt.shutdown_timeout(std::time::Duration::from_millis(500));
        return Ok(Ended::Rendered(screen, signal));
    }
    let state_dir = state_dir();
    start_log(&settings, &state_dir);
    if let Some(doc) = &app.doc {
        handles
            .port
            .open(doc.run.clone(), doc.report.clone(), doc.source.clone());
    }
    let signal = run(
        rt,
        signals,
        Screen {
            app,
            handles,
            reloader,
            copy_dir: state_dir,
        },
    )?;
    Ok(Ended::Left(signal))
}

/// What the work behind the loading screen hands over: the file's runs, the first run opened
/// when the file holds one, and how to open, judge and reload runs.
pub struct Ready {
    /// The runs of the file, for the list.
    pub runs: Vec<RunChoice>,
    /// The run opened, for a file of one run.
    pub first: Option<Document>,
    /// Opens (analyses) the run at a position of the file.
    pub opener: Arc<Opener>,
    /// Analyses the run at a position again asking the judge (`None` without a judge).
    pub judged: Option<Arc<Opener>>,
    /// Reads the file again and analyses the run at a position (when the file changes).
    pub reloader: Option<Arc<Opener>>,
    /// Analyses the run at a position again with the outcome the user set.
    pub outcome: Option<Arc<OutcomeSetter>>,
    /// Analyses the run at a position against a good run picked in the screen.
    pub comparer: Option<Arc<Comparer>>,
    /// `--index`, and the format of the file, when one run was picked out of a file.
    pub index: Option<(usize, SourceFormat)>,
}

/// How the live screen is started while the run still loads.
pub struct StartLoading {
    /// The resolved settings.
    pub settings: Settings,
    /// The file being opened, as the user gave it.
    pub file: String,
    /// The work's counters.
    pub progress: Arc<Progress>,
    /// Where the work hands over (or says why it cannot).
    pub done: tokio::sync::oneshot::Receiver<Result<Ready, String>>,
    /// Messages for the status bar besides the config's own warnings.
    pub messages: Vec<String>,
}

/// Runs the live screen from the loading screen on, until the user quits (or a stop signal, as
/// [`start`]).
pub fn start_loading(s: StartLoading) -> anyhow::Result<Ended> {
    let StartLoading {
        settings,
        file,
        progress,
        done,
        messages,
    } = s;
    let (rt, signals) = runtime()?;
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
    let signal = run_loading(
        rt,
        signals,
        &view,
        &theme,
        &keymap,
        done,
        |ready: Ready, rt| {
            let judged = ready.judged;
            let (app, port) = first_state(
                &settings,
                ready.runs,
                ready.first,
                judged.is_some(),
                opts,
                rt,
                ready.index,
            );
            if let Some(doc) = &app.doc {
                port.open(doc.run.clone(), doc.report.clone(), doc.source.clone());
            }
            Ok(Screen {
                app,
                handles: Handles {
                    port,
                    opener: ready.opener,
                    judged,
                    outcome: ready.outcome,
                    comparer: ready.comparer,
                },
                reloader: ready.reloader,
                copy_dir: state_dir,
            })
        },
    )?;
    Ok(Ended::Left(signal))
}

/// The runtime experiments run on, and the stop signals listened for from the start, so none
/// ends the process while a job runs.
fn runtime() -> anyhow::Result<(tokio::runtime::Runtime, StopSignals)> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let signals = rt.block_on(async { StopSignals::listen() });
    Ok((rt, signals))
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
        share_dir: std::env::current_dir().ok(),
        viewers: settings.ui.viewers.clone(),
        max_suspects: settings.experiments.max_suspects,
    }
}

/// The first state (the run opened, or the list of the file's runs) and the experiment engine.
fn first_state(
    settings: &Settings,
    runs: Vec<RunChoice>,
    first: Option<Document>,
    judged: bool,
    opts: AppOptions,
    rt: &tokio::runtime::Runtime,
    index: Option<(usize, SourceFormat)>,
) -> (App, Arc<Jobs>) {
    let runs_in_file = runs.len();
    let mut app = match first {
        Some(doc) if runs_in_file == 1 => App::new(doc, opts),
        _ => App::picker(runs, opts),
    };
    app.experiments.runner_note = runner_note(settings);
    app.experiments.runner = match (&settings.runner, &settings.runner_runs) {
        (None, _) => RunnerReach::None,
        (Some(_), None) => RunnerReach::Any,
        (Some(_), Some(runs)) => RunnerReach::Only(runs.clone()),
    };
    if judged {
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
        Engine::new(settings, Consent::Given),
        rt.handle().clone(),
        runs_in_file,
        index.map(|(i, _)| i),
        index.map(|(_, f)| f),
    ));
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

fn runner_note(settings: &Settings) -> String {
    match &settings.runner {
        Some(c) => format!(
            "runner: {} (from {}){}",
            c.text,
            c.origin_text(),
            settings
                .runner_runs
                .as_deref()
                .map(|r| format!(", re-runs only {}", crate::experiments::engine::covered(r)))
                .unwrap_or_default()
        ),
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
