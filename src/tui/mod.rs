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
pub mod compare;
pub mod document;
pub mod effects;
pub mod external;
pub mod find;
pub mod header;
pub mod headless;
pub mod input;
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
use crate::experiments::event::Event as JobEvent;
use action::Action;
use app::App;
use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseButton, MouseEventKind,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use effects::{Clipboard, Effect, EffectContext, Opener, run_effect};
use input::{Input, InputThread};
use keymap::Chord;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::Stdout;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// How often the screen ticks (spinners, message expiry, a look at the terminal).
const TICK: Duration = Duration::from_millis(250);
/// Most terminal events handled before a redraw.
const MAX_BURST: usize = 256;
/// Ticks between two looks at the run's file (a run still being written is read again).
const WATCH_TICKS: u64 = 4;

/// Everything the live screen needs.
pub struct Screen {
    /// The state to start from.
    pub app: App,
    /// The experiments and the openers of runs.
    pub handles: effects::Handles,
    /// Reads the run's file again and analyses the run at a position (when the file changes).
    pub reloader: Option<Arc<Opener>>,
    /// Where copies are also saved.
    pub copy_dir: PathBuf,
}

type Term = Terminal<CrosstermBackend<Stdout>>;

/// How the screen ended.
#[derive(Debug)]
enum End {
    /// The user quit.
    Quit,
    /// A stop signal came: its number and name.
    Signal(i32, &'static str),
    /// The terminal is gone (hung up, or reading or writing it failed): why, a sentence naming
    /// the terminal. Ends as SIGHUP.
    Lost(String),
}

impl End {
    /// Why the running experiments are cancelled, as recorded with them.
    fn why(&self) -> String {
        match self {
            End::Quit => "the debugger was quit".to_owned(),
            End::Signal(_, name) => format!("tdn-tui received {name}"),
            End::Lost(why) => why.clone(),
        }
    }
}

/// The terminal failed under the screen: it ends as [`End::Lost`]. Any error reading or writing
/// the terminal once the screen is up is taken as its loss, named as [`input::loss`] names it
/// (a closed terminal "hung up", whichever of a redraw or `poll(2)` noticed it first).
#[derive(Debug)]
struct Lost(String);

impl From<std::io::Error> for Lost {
    fn from(e: std::io::Error) -> Lost {
        Lost(input::loss(&e))
    }
}

/// Runs the screen on `rt` until the user quits, or a stop signal (SIGTERM, SIGHUP, SIGINT,
/// SIGQUIT) or the loss of the terminal ends it: then the running experiments are cancelled and
/// their batches closed first, and the signal (SIGHUP for a lost terminal) is returned so the
/// process can exit as the shell expects. The terminal is restored whatever happens, unless it
/// is gone: then it is not touched again.
pub fn run(
    rt: tokio::runtime::Runtime,
    signals: StopSignals,
    screen: Screen,
) -> anyhow::Result<Option<i32>> {
    let (mut terminal, mut input) = take_terminal()?;
    let end = rt.block_on(event_loop(&mut terminal, screen, signals, &mut input));
    Ok(finish(rt, terminal, end))
}

/// Takes the terminal at once and shows the loading screen until `done` hands over what the
/// screen opens with (or why it cannot); `open` then makes the screen, which runs on `rt` as
/// [`run`] does. While loading, the quit keys leave at once and a stop signal or the loss of
/// the terminal ends the screen (returned, as from [`run`]). The terminal is restored whatever
/// happens (unless it is gone); a failure is returned after it is.
pub fn run_loading<T>(
    rt: tokio::runtime::Runtime,
    mut signals: StopSignals,
    view: &loading::View,
    theme: &theme::Theme,
    keymap: &keymap::Keymap,
    done: tokio::sync::oneshot::Receiver<Result<T, String>>,
    open: impl FnOnce(T, &tokio::runtime::Runtime) -> anyhow::Result<Screen>,
) -> anyhow::Result<Option<i32>> {
    // One reader of terminal events for the loading screen and the screen after it.
    let (mut terminal, mut input) = take_terminal()?;
    let waited = rt.block_on(loading_loop(
        &mut terminal,
        view,
        theme,
        keymap,
        done,
        &mut signals,
        &mut input,
    ));
    let ready = match waited {
        loading::Outcome::Ready(t) => t,
        loading::Outcome::Quit => return Ok(finish(rt, terminal, End::Quit)),
        loading::Outcome::Signal(n, name) => {
            return Ok(finish(rt, terminal, End::Signal(n, name)));
        }
        loading::Outcome::Lost(why) => return Ok(finish(rt, terminal, End::Lost(why))),
        loading::Outcome::Failed(why) => {
            finish(rt, terminal, End::Quit);
            return Err(anyhow::anyhow!(why));
        }
    };
    let screen = match open(ready, &rt) {
        Ok(s) => s,
        Err(e) => {
            finish(rt, terminal, End::Quit);
            return Err(e);
        }
    };
    let end = rt.block_on(event_loop(&mut terminal, screen, signals, &mut input));
    Ok(finish(rt, terminal, end))
}

/// Gives the terminal back (unless it is gone), stops the runtime, and says which signal the
/// process ends as: none for a quit, SIGHUP for a lost terminal.
fn finish(rt: tokio::runtime::Runtime, terminal: Term, end: End) -> Option<i32> {
    let signal = match &end {
        End::Quit => None,
        End::Signal(n, _) => Some(*n),
        End::Lost(why) => {
            tracing::warn!("{why}: the screen ends as for SIGHUP");
            Some(libc::SIGHUP)
        }
    };
    match end {
        End::Lost(_) => forget(terminal),
        _ => restore(terminal),
    }
    // A spawned task still waiting (a second signal gave up waiting for the experiments) is
    // dropped; a thread caught in crossterm's reader ends with the process.
    rt.shutdown_timeout(Duration::from_millis(500));
    signal
}

/// Leaves the screen and shows the cursor, unless the terminal is gone.
fn restore(mut terminal: Term) {
    if let Some(why) = input::lost() {
        tracing::warn!("the terminal is gone ({why}): not restoring it");
        forget(terminal);
        return;
    }
    leave();
    if terminal.show_cursor().is_err() {
        forget(terminal);
    }
}

/// Drops the screen without a last write: ratatui's drop would show the cursor again, and say
/// on stderr (panicking when stderr is the lost terminal) that it could not.
fn forget(terminal: Term) {
    std::mem::forget(terminal);
}

/// The loading screen's loop: redraws every [`loading::REDRAW`], until the work hands over, the
/// user quits, a stop signal comes or the terminal is lost.
async fn loading_loop<T>(
    terminal: &mut Term,
    view: &loading::View,
    theme: &theme::Theme,
    keymap: &keymap::Keymap,
    mut done: tokio::sync::oneshot::Receiver<Result<T, String>>,
    signals: &mut StopSignals,
    input: &mut InputThread,
) -> loading::Outcome<T> {
    let mut tick = tokio::time::interval(loading::REDRAW);
    loop {
        if let Err(e) = terminal.draw(|f| loading::render(view, theme, f)) {
            return loading::Outcome::Lost(Lost::from(e).0);
        }
        tokio::select! {
            r = &mut done => {
                return match r {
                    Ok(Ok(t)) => loading::Outcome::Ready(t),
                    Ok(Err(why)) => loading::Outcome::Failed(why),
                    Err(_) => loading::Outcome::Failed(
                        "the run could not be opened (the loader stopped)".to_owned(),
                    ),
                };
            }
            ev = input.recv() => match ev {
                Some(Input::Event(Event::Key(k)))
                    if k.kind != KeyEventKind::Release
                        && loading::quits(keymap, &Chord::from_event(&k)) =>
                {
                    return loading::Outcome::Quit;
                }
                Some(Input::Event(_)) => {}
                Some(Input::Lost(why)) => return loading::Outcome::Lost(why),
                None => return loading::Outcome::Lost("the terminal's reader stopped".to_owned()),
            },
            (n, name) = signals.next() => return loading::Outcome::Signal(n, name),
            _ = tick.tick() => {
                if let Some(why) = input::lost() {
                    return loading::Outcome::Lost(why);
                }
            }
        }
    }
}

/// Takes the terminal (the panic hook gives it back) and starts the one reader of its events.
fn take_terminal() -> anyhow::Result<(Term, InputThread)> {
    install_panic_hook();
    let terminal = enter()?;
    match InputThread::start() {
        Ok(input) => Ok((terminal, input)),
        Err(e) => {
            restore(terminal);
            Err(e.into())
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

/// Takes the terminal again after another program had it: raw mode, the alternate screen, the
/// mouse if it was on, and a full redraw.
fn reenter(terminal: &mut Term, mouse: bool) -> std::io::Result<()> {
    enable_raw_mode()?;
    execute!(std::io::stdout(), EnterAlternateScreen)?;
    if mouse {
        execute!(std::io::stdout(), EnableMouseCapture)?;
    }
    terminal.hide_cursor()?;
    full_redraw(terminal)
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
fn suspend(terminal: &mut Term, mouse: bool) -> std::io::Result<()> {
    leave();
    // SAFETY: raising SIGTSTP on our own process has no memory-safety preconditions; the
    // process stops here and continues after SIGCONT.
    let rc = unsafe { libc::raise(libc::SIGTSTP) };
    if rc != 0 {
        tracing::warn!("could not suspend (raise returned {rc})");
    }
    tracing::info!("resumed after a suspend");
    reenter(terminal, mouse)
}

/// Clears the screen and makes the next draw repaint everything. (`Terminal::clear` asks the
/// terminal for the cursor position, which would mean reading the terminal here.)
fn full_redraw(terminal: &mut Term) -> std::io::Result<()> {
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

/// Cancels the running experiments and waits until their samples are recorded and their batches
/// closed in the ledger (runner.md: nothing they started outlives the debugger). The engine
/// waits a bounded time; a further SIGINT, SIGTERM or SIGQUIT gives up waiting at once (a
/// further SIGHUP does not: a closed terminal sends it more than once).
async fn stop_experiments(ctx: &Arc<EffectContext>, why: &str, signals: &mut StopSignals) {
    let port = ctx.port.clone();
    let why = why.to_owned();
    let stopping = tokio::task::spawn_blocking(move || port.shutdown(&why));
    tokio::select! {
        _ = stopping => {}
        name = forcing(signals) => {
            tracing::warn!("{name} while stopping the experiments: not waiting for them");
        }
    }
}

/// The next stop signal other than SIGHUP: its name.
async fn forcing(signals: &mut StopSignals) -> &'static str {
    loop {
        let (n, name) = signals.next().await;
        if n != libc::SIGHUP {
            return name;
        }
    }
}

async fn event_loop(
    terminal: &mut Term,
    screen: Screen,
    mut signals: StopSignals,
    input: &mut InputThread,
) -> End {
    let Screen {
        mut app,
        handles,
        reloader,
        copy_dir,
    } = screen;
    let (exp_tx, mut exp_rx): (UnboundedSender<JobEvent>, UnboundedReceiver<JobEvent>) =
        mpsc::unbounded_channel();
    let (act_tx, mut act_rx) = mpsc::unbounded_channel::<Action>();
    let ctx = Arc::new(EffectContext::new(
        app.theme.clone(),
        handles,
        exp_tx,
        Clipboard::Terminal(copy_dir),
    ));
    app.headless = false;
    let ended: Result<End, Lost> = async {
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
            for effect in std::mem::take(&mut pending) {
                match effect {
                    Effect::External {
                        program,
                        command,
                        doc,
                        step,
                    } => {
                        let shown = external::hand_over(
                            terminal,
                            input,
                            &mut signals,
                            &app,
                            program,
                            &command,
                            &doc,
                            step,
                        )
                        .await;
                        match shown {
                            Ok(said) => {
                                let _ = act_tx.send(Action::ExternalDone(said));
                            }
                            Err(end) => return Ok(end),
                        }
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
                    Effect::Quit => return Ok(End::Quit),
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
                return Ok(End::Quit);
            }
            terminal.draw(|f| render::render(&app, f))?;
            let first = tokio::select! {
                ev = input.recv() => match ev {
                    Some(Input::Event(e)) => to_action(&app, e),
                    Some(Input::Lost(why)) => return Err(Lost(why)),
                    None => return Err(Lost("the terminal's reader stopped".to_owned())),
                },
                (n, name) = signals.next() => return Ok(End::Signal(n, name)),
                Some(a) = act_rx.recv() => Some(a),
                Some(ev) = exp_rx.recv() => Some(Action::Experiment(Arc::new(ev))),
                _ = tick.tick() => {
                    if let Some(why) = input::lost() {
                        return Err(Lost(why));
                    }
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
                let next = match input.try_recv() {
                    Some(Input::Event(e)) => to_action(&app, e),
                    Some(Input::Lost(why)) => return Err(Lost(why)),
                    None => match act_rx.try_recv() {
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
    .await;
    let end = ended.unwrap_or_else(|Lost(why)| End::Lost(why));
    stop_experiments(&ctx, &end.why(), &mut signals).await;
    end
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
