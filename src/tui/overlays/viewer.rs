//! The full-screen viewer: the selected step's detail at the whole terminal's width, scrolled
//! with the usual motions, copied with the copy keys. Reads only the app.

use super::super::action::Action;
use super::super::app::{App, Document};
use super::super::keymap::Scope;
use super::super::panes::detail::render_doc;
use super::super::theme::Role;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear};

/// The text area the viewer lays the detail out for.
pub fn inner_area(area: Rect) -> Rect {
    Block::default().borders(Borders::ALL).inner(area)
}

/// Draws the viewer over the body.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, scroll: usize) {
    let t = &app.theme;
    frame.render_widget(Clear, area);
    let Some(i) = app.selected_step() else { return };
    let k = |a: Action| app.keymap.keys_for(Scope::Viewer, &a);
    let title = format!(
        " {} · {} closes · {} copies the output · {} the step ",
        super::super::header::step_words(doc, i),
        k(Action::Back),
        k(Action::CopyOutput),
        k(Action::CopyStep)
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, t.style(Role::TitleFocus)))
        .border_style(t.style(Role::BorderFocus));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    render_doc(app, frame, inner, i, scroll);
}
