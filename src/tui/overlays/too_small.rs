//! The screen shown when the terminal is smaller than the debugger can use: what size it is,
//! what it needs, and how to leave (the only key that works then, see `update::dispatch`).
//! Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::theme::Role;
use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

/// The smallest terminal the panes are drawn in.
pub const MIN_WIDTH: u16 = 60;
/// The smallest terminal height the panes are drawn in.
pub const MIN_HEIGHT: u16 = 15;

/// True when `area` is too small for the panes.
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_WIDTH || area.height < MIN_HEIGHT
}

/// The key that leaves while the notice is up (the only one that works then).
fn quit_key(app: &App) -> String {
    app.keymap
        .first_key(&[Scope::Global, Scope::Always], &Action::Quit)
        .unwrap_or_else(|| Action::Quit.name().to_owned())
}

/// Draws the notice.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let lines = vec![
        Line::styled("Terminal too small", t.style(Role::Heading)),
        Line::styled(
            format!(
                "{}x{} here; tdn-tui needs at least {MIN_WIDTH}x{MIN_HEIGHT}.",
                area.width, area.height
            ),
            t.style(Role::Text),
        ),
        Line::styled(
            format!("Enlarge the window, or press {} to quit.", quit_key(app)),
            t.style(Role::TextDim),
        ),
    ];
    let top = area.height.saturating_sub(3) / 2;
    let body = Rect {
        y: area.y + top,
        height: area.height - top,
        ..area
    };
    frame.render_widget(
        Paragraph::new(lines)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        body,
    );
}
