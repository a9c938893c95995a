//! The screen without a terminal: feed key names through the same dispatch, update and effects
//! as the live loop (effects run in line), draw once on ratatui's `TestBackend`, and return the
//! screen as text. Used by `tdn-tui RUN --render WxH --keys "..."`, by tests and by the
//! keypress benchmark. Prints nothing itself.

use super::action::Action;
use super::app::App;
use super::effects::{EffectContext, run_now};
use super::keymap::Chord;
use super::render::render;
use super::update::{dispatch, update};
use crate::experiments::engine::drive::StopSignals;
use crate::experiments::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use unicode_width::UnicodeWidthStr;

/// Most follow-up actions one key may cause (a guard against a loop of effects).
const MAX_FOLLOW_UPS: usize = 10_000;

/// Parses `--render` sizes such as `120x40`.
pub fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let bad = || format!("--render '{s}' is not a size; write it as WIDTHxHEIGHT, e.g. 120x40");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u16 = w.trim().parse().map_err(|_| bad())?;
    let h: u16 = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 || w > 1000 || h > 1000 {
        return Err(format!(
            "--render '{s}': width and height must be between 1 and 1000"
        ));
    }
    Ok((w, h))
}

/// Parses `--keys` ("j j Enter ? q"): key names as the help overlay writes them, separated by
/// spaces.
pub fn parse_keys(s: &str) -> Result<Vec<Chord>, String> {
    s.split_whitespace()
        .map(|k| {
            Chord::parse(k).ok_or_else(|| {
                format!("--keys: '{k}' is not a key; write keys as in the help overlay: j, G, C-d, S-Tab, Enter, Esc, Space")
            })
        })
        .collect()
}

/// A headless screen: the app, its effect context and the experiment events it receives.
pub struct Headless {
    /// The state.
    pub app: App,
    ctx: EffectContext,
    events: UnboundedReceiver<Event>,
}

impl Headless {
    /// Wraps an app; `ctx.events` must send to `events`. The open run (if any) is given to the
    /// experiment port, as the live screen does when it starts.
    pub fn new(app: App, ctx: EffectContext, events: UnboundedReceiver<Event>) -> Headless {
        if let Some(doc) = &app.doc {
            ctx.port
                .open(doc.run.clone(), doc.report.clone(), doc.source.clone());
        }
        let mut h = Headless { app, ctx, events };
        let (w, hgt) = h.app.size;
        h.act(Action::Resize(w, hgt));
        if h.app.doc.is_some() {
            h.act_effects(vec![super::effects::Effect::LoadLedger]);
        }
        h
    }

    /// Applies an action and everything that follows from it.
    pub fn act(&mut self, action: Action) {
        let fx = update(&mut self.app, action);
        self.act_effects(fx);
    }

    fn act_effects(&mut self, fx: Vec<super::effects::Effect>) {
        let mut queue: Vec<Action> = Vec::new();
        for e in fx {
            queue.extend(run_now(e, &self.ctx));
        }
        let mut n = 0;
        loop {
            while let Ok(ev) = self.events.try_recv() {
                queue.push(Action::Experiment(Arc::new(ev)));
            }
            if queue.is_empty() || n > MAX_FOLLOW_UPS {
                break;
            }
            let a = queue.remove(0);
            n += 1;
            for e in update(&mut self.app, a) {
                queue.extend(run_now(e, &self.ctx));
            }
        }
    }

    /// Presses one key.
    pub fn press(&mut self, chord: &Chord) {
        if let Some(a) = dispatch(&self.app, chord) {
            self.act(a);
        }
    }

    /// Presses keys in order, stopping after a quit.
    pub fn press_all(&mut self, keys: &[Chord]) {
        for k in keys {
            if self.app.quit {
                break;
            }
            self.press(k);
        }
    }

    /// Waits (on `rt`, whose engine runs the jobs) until every job this screen started has
    /// ended, applying its events as they come; a stop signal (`signals`) cancels them all
    /// first, and is returned. This is how `--render` shows experiments: to their end.
    pub fn wait_for_jobs(
        &mut self,
        rt: &tokio::runtime::Runtime,
        signals: &mut StopSignals,
    ) -> Option<i32> {
        loop {
            if !super::update::experiments_running(&self.app) {
                return None;
            }
            let next = rt.block_on(async {
                tokio::select! {
                    ev = self.events.recv() => Ok(ev),
                    s = signals.next() => Err(s),
                }
            });
            match next {
                Ok(Some(ev)) => self.act(Action::Experiment(Arc::new(ev))),
                Ok(None) => return None,
                Err((n, name)) => {
                    self.ctx.port.shutdown(&format!("tdn-tui received {name}"));
                    while let Ok(ev) = self.events.try_recv() {
                        self.act(Action::Experiment(Arc::new(ev)));
                    }
                    return Some(n);
                }
            }
        }
    }

    /// Draws the screen on a test backend of the app's size.
    pub fn draw(&self) -> Terminal<TestBackend> {
        let (w, h) = self.app.size;
        let backend = TestBackend::new(w, h);
        let mut term = match Terminal::new(backend) {
            Ok(t) => t,
            Err(never) => match never {},
        };
        let _ = term.draw(|f| render(&self.app, f));
        term
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        buffer_text(self.draw().backend().buffer())
    }
}

/// A buffer as lines of text (trailing spaces removed), wide characters counted once.
pub fn buffer_text(buf: &Buffer) -> String {
    let width = usize::from(buf.area.width).max(1);
    let mut out = String::new();
    for row in buf.content.chunks(width) {
        let mut line = String::new();
        let mut skip = 0usize;
        for cell in row {
            let sym = cell.symbol();
            if skip == 0 {
                line.push_str(sym);
            }
            skip = skip.max(sym.width()).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_keys_parse_with_clear_errors() {
        assert_eq!(parse_size("120x40"), Ok((120, 40)));
        assert!(parse_size("120").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_size("0x5").is_err());
        assert_eq!(parse_keys("j  G C-d").map(|k| k.len()), Ok(3));
        assert!(
            parse_keys("j Foo")
                .unwrap_err()
                .contains("'Foo' is not a key")
        );
    }
}
