//! The warnings list: every problem found when the screen started (config, keymap, theme) and
//! every loader warning of the open run, one row each with the step it is about; the selected
//! one in full underneath, and `Enter` shows its step. Reads only; run text is shown inert.

use super::super::action::Action;
use super::super::app::{App, Document, group};
use super::super::keymap::Scope;
use super::super::render::layout;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::widgets::marks;
use super::super::widgets::scroll_list::window;
use super::super::widgets::selection::selected_row;
use super::centered;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use std::cell::Cell;

/// One row of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningRow {
    /// A start-up problem (position in `app.problems`).
    Startup(usize),
    /// A loader warning of the run (position in the report's warnings).
    Run(usize),
}

/// How many rows the list has.
pub fn row_count(app: &App) -> usize {
    app.problems.len()
        + app
            .doc
            .as_ref()
            .map(|d| d.report.run.warnings.len())
            .unwrap_or(0)
}

/// The row at `i`.
pub fn row_at(app: &App, i: usize) -> Option<WarningRow> {
    let p = app.problems.len();
    if i < p {
        Some(WarningRow::Startup(i))
    } else if i - p < app.doc.as_ref()?.report.run.warnings.len() {
        Some(WarningRow::Run(i - p))
    } else {
        None
    }
}

/// The step a row is about.
pub fn row_step(doc: &Document, row: WarningRow) -> Option<usize> {
    match row {
        WarningRow::Startup(_) => None,
        WarningRow::Run(w) => {
            let w = doc.report.run.warnings.get(w)?;
            w.step
                .as_deref()
                .and_then(|id| doc.index_of(id))
                .or(w.index)
        }
    }
}

fn text_of(app: &App, doc: &Document, row: WarningRow) -> (String, String) {
    match row {
        WarningRow::Startup(i) => (
            "start-up".to_owned(),
            app.problems.get(i).cloned().unwrap_or_default(),
        ),
        WarningRow::Run(i) => match doc.report.run.warnings.get(i) {
            Some(w) => (
                match (&w.step, w.index) {
                    (Some(s), _) => format!("step '{}'", clipped(s, 20)),
                    (None, Some(ix)) => format!("position {}", ix + 1),
                    (None, None) => "the run".to_owned(),
                },
                w.message.clone(),
            ),
            None => (String::new(), String::new()),
        },
    }
}

/// The box drawn over `body`, its inside, the list's rows and the selected warning's text below.
fn areas(body: Rect) -> (Rect, Rect, Rect, Rect) {
    let box_area = centered(body, 90, 90);
    let inner = Block::default().borders(Borders::ALL).inner(box_area);
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(65), Constraint::Min(0)]).areas(inner);
    (box_area, inner, top, bottom)
}

/// How many rows the list shows at the screen's size: the page `PageDown` moves by.
pub fn page(app: &App) -> usize {
    let a = layout(app, Rect::new(0, 0, app.size.0, app.size.1));
    let (_, _, top, _) = areas(a.body);
    usize::from(top.height).max(1)
}

/// Draws the list over the body.
pub fn render(
    app: &App,
    doc: &Document,
    frame: &mut Frame,
    area: Rect,
    cursor: usize,
    offset: &Cell<usize>,
) {
    let t = &app.theme;
    let (box_area, _, top, bottom) = areas(area);
    frame.render_widget(Clear, box_area);
    let n = row_count(app);
    let k = |a: Action| {
        app.keymap
            .first_key(&[Scope::Warnings], &a)
            .unwrap_or_else(|| a.name().to_owned())
    };
    let title = format!(
        " {} Warnings · {} · {} shows the step · {} closes ",
        marks::WARNING,
        group(n),
        k(Action::JumpToStep),
        k(Action::Back)
    );
    let block = super::overlay_block(t, title).border_type(BorderType::Thick);
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let width = usize::from(inner.width);
    if n == 0 {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "No warnings: the run loaded cleanly and the settings, keymap and theme were read without a problem.",
                t.style(Role::TextDim),
            ))
            .wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    let cursor = cursor.min(n - 1);
    let range = window(offset, cursor, usize::from(top.height), n);
    let mut lines = Vec::new();
    for r in range {
        let Some(row) = row_at(app, r) else { continue };
        let (about, text) = text_of(app, doc, row);
        let head = format!(
            "{}{} {:<20} ",
            if r == cursor { marks::CURSOR } else { " " },
            marks::WARNING,
            about
        );
        let room = width.saturating_sub(head.chars().count());
        let mut line = Line::from(vec![
            Span::styled(head, t.style(Role::Warning)),
            Span::styled(clipped(&text, room).into_owned(), t.style(Role::Text)),
        ]);
        if r == cursor {
            line = selected_row(line, width, true, t);
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), top);
    if let Some(row) = row_at(app, cursor) {
        let (about, text) = text_of(app, doc, row);
        let mut detail = vec![Line::styled("─".repeat(width), t.style(Role::Border))];
        detail.extend(wrap_spans(
            vec![(
                format!("{about}: {}", clipped(&text, 4000)),
                t.style(Role::Text),
            )],
            width,
            "  ",
        ));
        frame.render_widget(Paragraph::new(detail), bottom);
    }
}
