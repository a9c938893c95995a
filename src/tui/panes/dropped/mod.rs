//! The dropped-context pane: for each model step that records `context.available`, how many
//! units were available and how many sent, then the units dropped there; under the list, the
//! selected step's available-against-sent as a readable diff (`-` dropped, with its text; `+`
//! sent without being listed as available; unchanged units in one dim line each). A dropped
//! unit is only a candidate; the restore key re-runs with it put back.

use super::super::app::{App, Document, Pane, RowHit, group};
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::widgets::marks;
use super::super::widgets::scroll_list::window;
use super::experiments::verdict_line;
use crate::analysis::model::UnitId;
use crate::experiments::engine::Target;
use crate::tui::widgets::selection::selected_row;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;

mod index;

pub use index::{ContextLine, DroppedIndex, DroppedRow};

/// Characters of a sent unit's text shown on its comparison line.
const CONTEXT_PREVIEW: usize = 60;

/// What the dropped pane remembers.
#[derive(Debug, Default)]
pub struct DroppedState {
    /// The selected row.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
}

impl DroppedState {
    /// The pane for a document: the first dropped unit selected, so that the restore key acts
    /// on a unit at once.
    pub fn for_document(doc: &Document) -> DroppedState {
        DroppedState {
            cursor: first_unit_row(doc).unwrap_or(0),
            ..DroppedState::default()
        }
    }
}

/// The row of the first dropped unit, if any step dropped one.
pub fn first_unit_row(doc: &Document) -> Option<usize> {
    doc.dropped
        .rows
        .iter()
        .position(|r| matches!(r, DroppedRow::Unit(..)))
}

/// The step index of the selected row.
pub fn selected_step(app: &App, doc: &Document) -> Option<usize> {
    let row = doc.dropped.rows.get(app.dropped.cursor)?;
    let s = doc.report.dropped.as_ref()?.steps.get(row.step_pos())?;
    doc.index_of(&s.step)
}

/// The dropped unit of the selected row, if it is a unit row.
pub fn selected_unit(app: &App, doc: &Document) -> Option<UnitId> {
    let DroppedRow::Unit(si, ui) = *doc.dropped.rows.get(app.dropped.cursor)? else {
        return None;
    };
    let id = doc
        .report
        .dropped
        .as_ref()?
        .steps
        .get(si)?
        .dropped
        .get(ui)?;
    Some(UnitId::from(id.as_str()))
}

/// Draws the dropped pane.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let Some(d) = &doc.report.dropped else {
        let block = pane_block(app, Pane::Dropped, focused, "", area.width);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        frame.render_widget(
            Paragraph::new(Line::styled(
                "No step records which context was available, so nothing can be said about dropped context.",
                t.style(Role::TextDim),
            ))
            .wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    };
    // The whole run's count (units never sent at any step) and the steps' own drops (a unit left
    // out at one step may be sent at another) are both said, so the title and the rows agree.
    let (drops, steps_with) = (doc.dropped.drops, doc.dropped.steps_with);
    let rows = &doc.dropped.rows;
    let title = if drops == 0 {
        format!(
            "nothing left out of {} available units",
            group(d.available_count)
        )
    } else {
        format!(
            "{} left out at {} step{} · {} never sent of {}",
            group(drops),
            group(steps_with),
            if steps_with == 1 { "" } else { "s" },
            group(d.dropped.len()),
            group(d.available_count)
        )
    };
    let mut block = pane_block(app, Pane::Dropped, focused, &title, area.width);
    if !rows.is_empty() {
        block = block.title_bottom(
            Line::styled(
                format!(
                    " row {} of {} ",
                    group(app.dropped.cursor.min(rows.len() - 1) + 1),
                    group(rows.len())
                ),
                t.style(Role::TextDim),
            )
            .right_aligned(),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut head = Vec::new();
    let first = if d.dropped.is_empty() && drops > 0 {
        format!(
            "Every available unit reached the model at some step, but {} step{} left out units {} had available (below); {} is a candidate to restore there.",
            group(steps_with),
            if steps_with == 1 { "" } else { "s" },
            if steps_with == 1 { "it" } else { "they" },
            if drops == 1 { "it" } else { "each" }
        )
    } else {
        d.reason.clone()
    };
    if !first.is_empty() {
        head.extend(wrap_spans(
            vec![(clipped(&first, 400).into_owned(), t.style(Role::TextDim))],
            width,
            "  ",
        ));
    }
    let list_h = (rows.len() + head.len())
        .min(usize::from(inner.height) / 2)
        .max(head.len() + 1);
    let [top, bottom] = Layout::vertical([
        Constraint::Length(u16::try_from(list_h).unwrap_or(u16::MAX)),
        Constraint::Min(0),
    ])
    .areas(inner);
    let rows_h = usize::from(top.height).saturating_sub(head.len());
    let cursor = app.dropped.cursor.min(rows.len().saturating_sub(1));
    let range = window(&app.dropped.offset, cursor, rows_h, rows.len());
    let mut lines = head;
    let mut hits = app.hits.borrow_mut();
    for r in range {
        let Some(row) = rows.get(r) else { continue };
        if let Ok(y) = u16::try_from(lines.len()) {
            hits.push(RowHit {
                pane: Pane::Dropped,
                y: top.y.saturating_add(y),
                x: top.x,
                width: top.width,
                index: r,
            });
        }
        let mut spans = row_spans(app, doc, *row);
        spans.insert(0, Span::raw(if r == cursor { marks::CURSOR } else { " " }));
        let mut line = Line::from(spans);
        if r == cursor {
            line = selected_row(line, width, focused, t);
        }
        lines.push(line);
    }
    drop(hits);
    if rows.is_empty() {
        lines.push(Line::styled(
            format!(
                "No model step left out anything it had available ({} step{} record{} their context).",
                group(d.steps.len()),
                if d.steps.len() == 1 { "" } else { "s" },
                if d.steps.len() == 1 { "s" } else { "" }
            ),
            t.style(Role::Text),
        ));
    }
    frame.render_widget(Paragraph::new(lines), top);
    if let Some(row) = rows.get(cursor) {
        let diff = diff_lines(app, doc, row.step_pos(), width, usize::from(bottom.height));
        frame.render_widget(Paragraph::new(diff), bottom);
    }
}

fn row_spans(app: &App, doc: &Document, row: DroppedRow) -> Vec<Span<'static>> {
    let t = &app.theme;
    let Some(d) = &doc.report.dropped else {
        return Vec::new();
    };
    match row {
        DroppedRow::Step(si) => {
            let Some(s) = d.steps.get(si) else {
                return Vec::new();
            };
            let name = match doc.index_of(&s.step) {
                Some(i) => crate::tui::header::step_words(doc, i),
                None => format!("step '{}'", clipped(&s.step, 30)),
            };
            vec![
                Span::styled(name, t.style(Role::Heading)),
                Span::styled(
                    format!(
                        ": {} available, {} sent, {} dropped",
                        s.available_count,
                        s.sent_count,
                        s.dropped.len()
                    ),
                    t.style(Role::Text),
                ),
            ]
        }
        DroppedRow::Unit(si, ui) => {
            let Some(id) = d.steps.get(si).and_then(|s| s.dropped.get(ui)) else {
                return Vec::new();
            };
            let kind = doc.run.unit(id).map(|u| u.kind.as_str()).unwrap_or("unit");
            let mut spans = vec![
                Span::styled(" - ", t.style(Role::DiffDel)),
                Span::styled(format!("{} ", clipped(id, 30)), t.style(Role::DiffDel)),
                Span::styled(format!("({}) ", clipped(kind, 16)), t.style(Role::TextDim)),
            ];
            let key = Target::Unit(UnitId::from(id.as_str()));
            let probe = app.experiments.results.get(&key).or_else(|| {
                let e = doc.dropped.entry_of.get(id.as_str())?;
                d.dropped.get(*e)?.probe.as_ref()
            });
            if let Some(p) = probe {
                spans.extend(verdict_line(app, p, "restoring it").into_iter().take(1));
            } else if let Some(l) = app.experiments.ledger_for_unit(id).last() {
                // No re-run this session: what the ledger last recorded about the unit.
                let a = &l.attribution;
                let (glyph, role) =
                    super::experiments::ledger::disposition_mark(a.disposition.as_str());
                spans.push(Span::styled(
                    format!(
                        "{glyph} ledger: {} · {}",
                        a.disposition.as_str(),
                        a.evidence_level.as_str()
                    ),
                    t.style(role),
                ));
            }
            spans
        }
    }
}

fn unit_text<'a>(doc: &'a Document, id: &str) -> Option<&'a str> {
    doc.report
        .dropped
        .as_ref()
        .and_then(|d| d.dropped.get(*doc.dropped.entry_of.get(id)?))
        .and_then(|e| e.content.as_deref())
        .or_else(|| doc.run.unit(id).map(|u| u.text.as_str()))
}

/// The comparison of available against sent at the step of `si` (built once with the report), as
/// at most `height` lines.
fn diff_lines(
    app: &App,
    doc: &Document,
    si: usize,
    width: usize,
    height: usize,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(s) = doc.report.dropped.as_ref().and_then(|d| d.steps.get(si)) else {
        return Vec::new();
    };
    let mut out = wrap_spans(
        vec![(
            format!(
                "Available → sent at step '{}' (- dropped, + sent but not listed available)",
                clipped(&s.step, 30)
            ),
            t.style(Role::Heading),
        )],
        width,
        "  ",
    );
    let ctx = doc
        .index_of(&s.step)
        .and_then(|i| doc.run.steps.get(i))
        .and_then(|st| st.context.as_ref());
    let available = ctx.and_then(|c| c.available.as_deref()).unwrap_or(&[]);
    let sent = ctx.map(|c| c.sent.as_slice()).unwrap_or(&[]);
    let dropped_line = |out: &mut Vec<Line<'static>>, id: &str| {
        let kind = doc.run.unit(id).map(|u| u.kind.as_str()).unwrap_or("unit");
        out.push(Line::styled(
            format!("- {} ({})", clipped(id, 40), clipped(kind, 16)),
            t.style(Role::DiffDel),
        ));
        if let Some(text) = unit_text(doc, id) {
            out.extend(wrap_spans(
                vec![(format!("- {}", clipped(text, 4000)), t.style(Role::DiffDel))],
                width,
                "- ",
            ));
        }
    };
    for line in doc.dropped.lines.get(si).map(Vec::as_slice).unwrap_or(&[]) {
        if out.len() >= height {
            break;
        }
        match *line {
            ContextLine::Sent(i) => {
                let Some(id) = available.get(i).map(UnitId::as_str) else {
                    continue;
                };
                let preview = unit_text(doc, id)
                    .map(|x| clipped(x, CONTEXT_PREVIEW).into_owned())
                    .unwrap_or_default();
                out.push(Line::styled(
                    format!("  {}  {}", clipped(id, 40), preview),
                    t.style(Role::DiffContext),
                ));
            }
            ContextLine::Dropped(i) => {
                if let Some(id) = available.get(i).map(UnitId::as_str) {
                    dropped_line(&mut out, id);
                }
            }
            ContextLine::Listed(i) => {
                if let Some(id) = s.dropped.get(i) {
                    dropped_line(&mut out, id);
                }
            }
            ContextLine::Added(i) => {
                let Some(id) = sent.get(i).map(UnitId::as_str) else {
                    continue;
                };
                out.push(Line::styled(
                    format!("+ {}", clipped(id, 40)),
                    t.style(Role::DiffAdd),
                ));
            }
        }
    }
    out.truncate(height);
    out
}
