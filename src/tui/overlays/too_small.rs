//! The screen shown when the terminal is smaller than the debugger can use: what size it is,
//! what it needs, and how to leave. Reads only the app.

use super::super::app::App;
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
            "Enlarge the window, or press q to quit.",
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
