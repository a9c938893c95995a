//! The screen while a run loads and is analysed (issue 11): drawn as soon as the terminal is
//! taken, then redrawn ten times a second from the load's `Progress` (stage, steps, context
//! ranked, time) until the work, on its own thread, hands over what the screen opens with
//! (`tui::run_loading` runs the loop). The quit key (`q`, Ctrl-C, or what the keymap binds to
//! quit) leaves at once, and so do a stop signal and the loss of the terminal; the work is left
//! to end with the process. Draws; reads nothing and computes nothing about the run.

use super::action::Action;
use super::keymap::{Chord, Keymap, Scope};
use super::theme::{Role, Theme};
use crate::analysis::model::inert_line;
use crate::analysis::progress::{Progress, Snapshot};
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the loading screen is redrawn.
pub const REDRAW: Duration = Duration::from_millis(100);
/// Cells of the progress bar.
const BAR_CELLS: usize = 30;

/// What the loading screen shows.
pub struct View {
    /// The file being opened, as given (made inert when drawn).
    pub file: String,
    /// The work's counters.
    pub progress: Arc<Progress>,
    /// When the work started.
    pub started: Instant,
}

/// How the loading ended.
pub enum Outcome<T> {
    /// The work handed this over.
    Ready(T),
    /// The work failed: why (shown after the terminal is given back).
    Failed(String),
    /// The user quit.
    Quit,
    /// A stop signal came (its number and name).
    Signal(i32, &'static str),
    /// The terminal was lost (why).
    Lost(String),
}

/// True for a chord that quits: the keymap's quit keys, Ctrl-C always.
pub fn quits(keymap: &Keymap, chord: &Chord) -> bool {
    matches!(
        keymap.lookup(&[Scope::Always, Scope::Global], chord),
        Some(Action::Quit)
    ) || chord.to_string() == "C-c"
}

/// Draws the loading screen: a box in the middle saying what is being opened and how far the
/// work has come.
pub fn render(view: &View, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    let s = view.progress.snapshot();
    let elapsed = view.started.elapsed();
    let lines = lines(&view.file, &s, elapsed, theme);
    let width = area.width.min(72);
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(row);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.style(Role::BorderFocus))
                .title(Span::styled(" tdn-tui ", theme.style(Role::TitleFocus))),
        ),
        rect,
    );
}

fn lines(file: &str, s: &Snapshot, elapsed: Duration, theme: &Theme) -> Vec<Line<'static>> {
    let text = theme.style(Role::Text);
    let dim = theme.style(Role::TextDim);
    let mut out = vec![Line::from(Span::styled(
        format!(" opening {}", inert_line(file)),
        text,
    ))];
    let mut stage = format!(" {}", s.stage.label());
    if let Some(bar) = s.bar(BAR_CELLS) {
        stage.push_str(&format!(
            "  {bar} {}%",
            s.done.min(s.total).saturating_mul(100) / s.total
        ));
    } else if s.done > 0 {
        stage.push_str(&format!("  {} {}", s.done, s.stage.unit()));
    }
    out.push(Line::from(Span::styled(stage, text)));
    if s.influence_total > 0 {
        out.push(Line::from(Span::styled(
            format!(
                " ranking context  {} of {}",
                s.influence_done.min(s.influence_total),
                s.influence_total
            ),
            text,
        )));
    }
    out.push(Line::from(Span::styled(
        format!(" {:.1} s   q quits", elapsed.as_secs_f64()),
        dim,
    )));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::progress::Stage;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(view: &View) -> String {
        let mut t = Terminal::new(TestBackend::new(60, 9)).unwrap();
        let theme = Theme::builtin("mono").unwrap();
        t.draw(|f| render(view, &theme, f)).unwrap();
        let b = t.backend().buffer();
        (0..b.area.height)
            .map(|y| {
                (0..b.area.width)
                    .map(|x| b[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn it_shows_the_file_the_stage_and_the_counts() {
        let p = Arc::new(Progress::new());
        p.stage(Stage::Linking, 200_000);
        p.add(50_000);
        p.influence_total(40_000);
        p.influence_add(10_000);
        let v = View {
            file: "big\u{1b}[2J.json".to_owned(),
            progress: p,
            started: Instant::now(),
        };
        let s = screen(&v);
        assert!(s.contains("opening big\\u{1b}[2J.json"), "{s}");
        assert!(
            s.contains("linking steps  [#######-----------------------] 25%"),
            "{s}"
        );
        assert!(s.contains("ranking context  10000 of 40000"), "{s}");
        assert!(s.contains("q quits"), "{s}");
    }

    #[test]
    fn the_quit_keys_quit_and_others_do_not() {
        let k = Keymap::defaults();
        let chord = |s: &str| crate::tui::headless::parse_keys(s).unwrap().remove(0);
        assert!(quits(&k, &chord("q")));
        assert!(quits(&k, &chord("C-c")));
        assert!(!quits(&k, &chord("j")));
    }
}
