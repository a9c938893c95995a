//! The screen: a ratatui + crossterm app on a tokio event loop that renders the report and the
//! experiment state, and computes nothing of its own.
//!
//! State lives in [`app::App`]; [`update::update`] changes it (pure) and returns
//! [`effects::Effect`]s; [`render::render`] draws it from `&App`. This file owns the terminal:
//! raw mode and the alternate screen are entered here and always left again, on quit, on error
//! and on panic; the loop selects over terminal events, the experiment channel, effect results
//! and a tick, handles a burst of events, then draws once.

pub mod action;
pub mod app;
pub mod document;
pub mod effects;
pub mod external;
pub mod find;
pub mod headless;
pub mod judge;
pub mod keymap;
pub mod loading;
pub mod overlays;
pub mod panes;
pub mod picker;
pub mod render;
pub mod share;
pub mod start;
pub mod theme;
pub mod update;
pub mod widgets;

use crate::experiments::engine::drive::StopSignals;
use crate::experiments::engine::port::ExperimentPort;
use crate::experiments::event::Event as JobEvent;
use action::Action;
use app::App;
use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event, EventStream, KeyEventKind, MouseButton,
    MouseEventKind,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use effects::{Clipboard, Effect, EffectContext, Opener, run_effect};
use futures_util::{FutureExt, StreamExt};
use keymap::Chord;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::Stdout;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// How often the screen ticks (spinners, message expiry).
const TICK: Duration = Duration::from_millis(250);
/// Most terminal events handled before a redraw.
const MAX_BURST: usize = 256;
/// Ticks between two looks at the run's file (a run still being written is read again).
const WATCH_TICKS: u64 = 4;

/// Everything the live screen needs.
pub struct Screen {
    /// The state to start from.
    pub app: App,
    /// The experiment engine.
    pub port: Arc<dyn ExperimentPort>,
    /// Opens a run chosen in the picker.
    pub opener: Arc<Opener>,
    /// Analyses a run again asking the judge, when one is configured.
    pub judged: Option<Arc<Opener>>,
    /// Reads the run's file again and analyses the run at a position (when the file changes).
    pub reloader: Option<Arc<Opener>>,
    /// Analyses a run again with the outcome the user set.
    pub outcome: Option<Arc<effects::OutcomeSetter>>,
    /// Where copies are also saved.
    pub copy_dir: PathBuf,
}

type Term = Terminal<CrosstermBackend<Stdout>>;

/// Runs the screen on `rt` until the user quits, or a stop signal (SIGTERM, SIGHUP, SIGINT,
/// SIGQUIT) ends it: then the running experiments are cancelled and their batches closed first,
/// and the signal is returned so the process can exit as the shell expects. The terminal is
/// restored whatever happens.
pub fn run(
    rt: tokio::runtime::Runtime,
    signals: StopSignals,
    screen: Screen,
) -> anyhow::Result<Option<i32>> {
    install_panic_hook();
    let mut terminal = enter()?;
    let result = rt.block_on(async {
        let events = EventStream::new();
        event_loop(&mut terminal, screen, signals, events).await
    });
    leave();
    let _ = terminal.show_cursor();
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}

/// Takes the terminal at once and shows the loading screen until `done` hands over what the
/// screen opens with (or why it cannot); `open` then makes the screen, which runs on `rt` as
/// [`run`] does. While loading, the quit keys leave at once and a stop signal ends the screen
/// (returned, as from [`run`]). The terminal is restored whatever happens; a failure is returned
/// after it is.
pub fn run_loading<T>(
    rt: tokio::runtime::Runtime,
    mut signals: StopSignals,
    view: &loading::View,
    theme: &theme::Theme,
    keymap: &keymap::Keymap,
    done: tokio::sync::oneshot::Receiver<Result<T, String>>,
    open: impl FnOnce(T, &tokio::runtime::Runtime) -> anyhow::Result<Screen>,
) -> anyhow::Result<Option<i32>> {
    install_panic_hook();
    let mut terminal = enter()?;
    // One stream of terminal events for the loading screen and the screen after it: a second
    // stream would leave the first's reader behind to take keys meant for the screen.
    let mut events = rt.block_on(async { EventStream::new() });
    let waited = rt.block_on(loading_loop(
        &mut terminal,
        view,
        theme,
        keymap,
        done,
        &mut signals,
        &mut events,
    ));
    let screen = match waited {
        Ok(loading::Outcome::Ready(t)) => open(t, &rt),
        Ok(loading::Outcome::Quit) => {
            leave();
            let _ = terminal.show_cursor();
            return Ok(None);
        }
        Ok(loading::Outcome::Signal(n)) => {
            leave();
            let _ = terminal.show_cursor();
            return Ok(Some(n));
        }
        Ok(loading::Outcome::Failed(why)) => Err(anyhow::anyhow!(why)),
        Err(e) => Err(e),
    };
    let screen = match screen {
        Ok(s) => s,
        Err(e) => {
            leave();
            let _ = terminal.show_cursor();
            return Err(e);
        }
    };
    let result = rt.block_on(event_loop(&mut terminal, screen, signals, events));
    leave();
    let _ = terminal.show_cursor();
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}

/// The loading screen's loop: redraws every [`loading::REDRAW`], until the work hands over, the
/// user quits, or a stop signal comes.
async fn loading_loop<T>(
    terminal: &mut Term,
    view: &loading::View,
    theme: &theme::Theme,
    keymap: &keymap::Keymap,
    mut done: tokio::sync::oneshot::Receiver<Result<T, String>>,
    signals: &mut StopSignals,
    events: &mut EventStream,
) -> anyhow::Result<loading::Outcome<T>> {
    let mut tick = tokio::time::interval(loading::REDRAW);
    loop {
        terminal.draw(|f| loading::render(view, theme, f))?;
        tokio::select! {
            r = &mut done => {
                return Ok(match r {
                    Ok(Ok(t)) => loading::Outcome::Ready(t),
                    Ok(Err(why)) => loading::Outcome::Failed(why),
                    Err(_) => loading::Outcome::Failed(
                        "the run could not be opened (the loader stopped)".to_owned(),
                    ),
                });
            }
            ev = events.next() => match ev {
                Some(Ok(Event::Key(k)))
                    if k.kind != KeyEventKind::Release
                        && loading::quits(keymap, &Chord::from_event(&k)) =>
                {
                    return Ok(loading::Outcome::Quit);
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(loading::Outcome::Quit),
                _ => {}
            },
            (n, _) = signals.next() => return Ok(loading::Outcome::Signal(n)),
            _ = tick.tick() => {}
        }
    }
}

fn enter() -> anyhow::Result<Term> {
    enable_raw_mode()?;
    let mut out = std::io::stdout();
    if let Err(e) = execute!(out, EnterAlternateScreen) {
        leave();
        return Err(e.into());
    }
    let mut t = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    t.hide_cursor()?;
    full_redraw(&mut t)?;
    Ok(t)
}

/// Leaves raw mode and the alternate screen; safe to call more than once.
fn leave() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Restores the terminal before the panic message prints, so it is readable.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        previous(info);
    }));
}

/// Stops the process (Ctrl-Z) with the terminal restored, and takes it back on `fg`.
fn suspend(terminal: &mut Term, mouse: bool) -> anyhow::Result<()> {
    leave();
    // SAFETY: raising SIGTSTP on our own process has no memory-safety preconditions; the
    // process stops here and continues after SIGCONT.
    let rc = unsafe { libc::raise(libc::SIGTSTP) };
    if rc != 0 {
        tracing::warn!("could not suspend (raise returned {rc})");
    }
    tracing::info!("resumed after a suspend");
    enable_raw_mode()?;
    execute!(std::io::stdout(), EnterAlternateScreen)?;
    if mouse {
        execute!(std::io::stdout(), EnableMouseCapture)?;
    }
    terminal.hide_cursor()?;
    full_redraw(terminal)
}

/// Clears the screen and makes the next draw repaint everything. (`Terminal::clear` asks the
/// terminal for the cursor position, which the event stream's reader would swallow.)
fn full_redraw(terminal: &mut Term) -> anyhow::Result<()> {
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
    Ok(())
}

/// Cancels the running experiments and waits until their samples are recorded and their batches
/// closed in the ledger (runner.md: nothing they started outlives the debugger).
async fn stop_experiments(ctx: &Arc<EffectContext>, why: &str) {
    let port = ctx.port.clone();
    let why = why.to_owned();
    let _ = tokio::task::spawn_blocking(move || port.shutdown(&why)).await;
}

async fn event_loop(
    terminal: &mut Term,
    screen: Screen,
    mut signals: StopSignals,
    mut events: EventStream,
) -> anyhow::Result<Option<i32>> {
    let Screen {
        mut app,
        port,
        opener,
        judged,
        reloader,
        outcome,
        copy_dir,
    } = screen;
    let (exp_tx, mut exp_rx): (UnboundedSender<JobEvent>, UnboundedReceiver<JobEvent>) =
        mpsc::unbounded_channel();
    let (act_tx, mut act_rx) = mpsc::unbounded_channel::<Action>();
    let ctx = Arc::new(EffectContext {
        theme: app.theme.clone(),
        port,
        opener,
        judged,
        outcome,
        events: exp_tx,
        clipboard: Clipboard::Terminal(copy_dir),
    });
    app.headless = false;
    let size = terminal.size()?;
    let mut pending = update(&mut app, Action::Resize(size.width, size.height));
    if app.doc.is_some() {
        pending.push(Effect::LoadLedger);
    }
    let mut tick = tokio::time::interval(TICK);
    // The run's file as last read, to notice when it changes.
    let mut watched: Option<(PathBuf, Option<effects::FileStamp>)> = None;
    loop {
        let source = app.doc.as_ref().and_then(|d| d.source.clone());
        if watched.as_ref().map(|w| &w.0) != source.as_ref() {
            watched = source.map(|p| {
                let s = effects::stamp(&p);
                (p, s)
            });
        }
        for effect in pending.drain(..) {
            match effect {
                Effect::External {
                    program,
                    command,
                    doc,
                    step,
                } => {
                    // The program gets the terminal: stop reading keys, leave the screen, wait.
                    drop(events);
                    leave();
                    let result = external::run(program, &command, &doc, step, &app.theme);
                    enable_raw_mode()?;
                    execute!(std::io::stdout(), EnterAlternateScreen)?;
                    if app.mouse {
                        execute!(std::io::stdout(), EnableMouseCapture)?;
                    }
                    terminal.hide_cursor()?;
                    full_redraw(terminal)?;
                    events = EventStream::new();
                    let _ = act_tx.send(Action::ExternalDone(result));
                }
                Effect::Reload(i) => {
                    let (tx, reloader) = (act_tx.clone(), reloader.clone());
                    tokio::task::spawn_blocking(move || {
                        let a = match reloader.as_ref().map(|r| r(i)) {
                            Some(Ok(d)) => Action::Reloaded(i, Arc::new(d)),
                            Some(Err(e)) => Action::Problem(format!(
                                "the run's file could not be read again ({e}); the version on screen stays"
                            )),
                            None => Action::Problem(
                                "this run cannot be read again: it did not come from a file"
                                    .to_owned(),
                            ),
                        };
                        let _ = tx.send(a);
                    });
                }
                Effect::Quit => {
                    stop_experiments(&ctx, "the debugger was quit").await;
                    return Ok(None);
                }
                Effect::Suspend => suspend(terminal, app.mouse)?,
                Effect::SetMouse(on) => {
                    if on {
                        execute!(std::io::stdout(), EnableMouseCapture)?;
                    } else {
                        execute!(std::io::stdout(), DisableMouseCapture)?;
                    }
                }
                other => {
                    tokio::spawn(run_effect(other, ctx.clone(), act_tx.clone()));
                }
            }
        }
        if app.quit {
            stop_experiments(&ctx, "the debugger was quit").await;
            return Ok(None);
        }
        terminal.draw(|f| render::render(&app, f))?;
        let first = tokio::select! {
            ev = events.next() => match ev {
                Some(Ok(e)) => to_action(&app, e),
                Some(Err(e)) => {
                    stop_experiments(&ctx, "the terminal was lost").await;
                    return Err(e.into());
                }
                None => {
                    stop_experiments(&ctx, "the terminal was lost").await;
                    return Ok(None);
                }
            },
            (n, name) = signals.next() => {
                stop_experiments(&ctx, &format!("tdn-tui received {name}")).await;
                return Ok(Some(n));
            }
            Some(a) = act_rx.recv() => Some(a),
            Some(ev) = exp_rx.recv() => Some(Action::Experiment(Arc::new(ev))),
            _ = tick.tick() => {
                if app.tick % WATCH_TICKS == 0
                    && let Some((path, seen)) = watched.as_mut()
                {
                    let now = effects::stamp(path);
                    if now.is_some() && now != *seen {
                        *seen = now;
                        pending.extend(update(&mut app, Action::FileChanged));
                    }
                }
                Some(Action::Tick)
            }
        };
        if let Some(a) = first {
            pending.extend(update(&mut app, a));
        }
        // Handle whatever else is already waiting before drawing again.
        for _ in 0..MAX_BURST {
            let next = match events.next().now_or_never() {
                Some(Some(Ok(e))) => to_action(&app, e),
                Some(Some(Err(e))) => {
                    stop_experiments(&ctx, "the terminal was lost").await;
                    return Err(e.into());
                }
                _ => match act_rx.try_recv() {
                    Ok(a) => Some(a),
                    Err(_) => match exp_rx.try_recv() {
                        Ok(ev) => Some(Action::Experiment(Arc::new(ev))),
                        Err(_) => break,
                    },
                },
            };
            if let Some(a) = next {
                pending.extend(update(&mut app, a));
            }
            if app.quit {
                break;
            }
        }
    }
}

use update::update;

/// The action a terminal event stands for, if any.
fn to_action(app: &App, e: Event) -> Option<Action> {
    match e {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            update::dispatch(app, &Chord::from_event(&k))
        }
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => Some(Action::Scroll(1, m.column, m.row)),
            MouseEventKind::ScrollUp => Some(Action::Scroll(-1, m.column, m.row)),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
            _ => None,
        },
        _ => None,
    }
}
