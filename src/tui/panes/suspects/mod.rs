//! The suspects pane, in two views switched by a key: the report's ranked suspect steps (rank,
//! role, category, evidence), followed by its leads under a line of their own (steps listed for
//! where they sit or because they gave the answer, not for a fault), and the context-influence ranking (every piece of context that
//! reached the model, ranked by resemblance to the answer, labelled as correlation, not a
//! cause). Each view has its own cursor and a header that says whether there is a clear winner
//! or it is too close to call, with the margin, the shortlist and the strategy. Scores order the
//! lists and are printed as plain numbers, never as percentages or probabilities. Only visible
//! items are built. The state and item look-ups are here; [`header`] draws the fixed lines,
//! [`items`] each item.

mod evidence;
mod header;
mod items;

pub use header::confidence_lines;

use super::super::app::{App, Document, Pane, RowHit, group};
use super::super::render::{pane_block, title_room};
use super::super::widgets::scroll_list::item_window;
use crate::analysis::model::{StepId, UnitId};
use crate::analysis::report::{InfluenceEntry, Suspect};
use crate::experiments::engine::Target;
use items::ItemLines;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use std::cell::Cell;

/// The influence view's title, the longest that fits first: the ranking is a correlation.
const CONTEXT_TITLES: [&str; 3] = [
    "context influence: correlation, not a cause",
    "correlation, not a cause",
    "correlation only",
];

/// Which list the pane shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// The ranked suspect steps.
    #[default]
    Steps,
    /// The context-influence ranking.
    Context,
}

/// What the suspects pane remembers.
#[derive(Debug, Default)]
pub struct SuspectsState {
    /// The list shown.
    pub view: View,
    /// The selected suspect (steps view).
    pub cursor: usize,
    /// First suspect drawn.
    pub offset: Cell<usize>,
    /// The selected influence entry (context view).
    pub context: usize,
    /// First influence entry drawn.
    pub context_offset: Cell<usize>,
}

impl SuspectsState {
    /// The pane for a document: the steps when there are suspects, else the influence ranking
    /// when there is one.
    pub fn for_document(doc: &Document) -> SuspectsState {
        let view = if doc.report.suspects.is_empty()
            && doc.report.leads.is_empty()
            && !influence_entries(doc).is_empty()
        {
            View::Context
        } else {
            View::Steps
        };
        SuspectsState {
            view,
            ..SuspectsState::default()
        }
    }

    /// The cursor of the view shown.
    pub fn cursor(&self) -> usize {
        match self.view {
            View::Steps => self.cursor,
            View::Context => self.context,
        }
    }

    /// Sets the cursor of the view shown.
    pub fn set_cursor(&mut self, c: usize) {
        match self.view {
            View::Steps => self.cursor = c,
            View::Context => self.context = c,
        }
    }
}

/// One selectable item.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Item<'a> {
    /// A ranked step (its position in the steps view: the suspects, then the leads).
    Step(usize, &'a Suspect),
    /// A scored piece of context (its position in the ranking).
    Context(usize, &'a InfluenceEntry),
}

/// How many items a view lists.
pub fn item_count(doc: &Document, view: View) -> usize {
    match view {
        View::Steps => doc.report.suspects.len() + doc.report.leads.len(),
        View::Context => influence_entries(doc).len(),
    }
}

/// The step at `i` of the steps view: the suspects in rank order, then the leads.
pub fn ranked_step(doc: &Document, i: usize) -> Option<&Suspect> {
    let r = &doc.report;
    match i.checked_sub(r.suspects.len()) {
        None => r.suspects.get(i),
        Some(k) => r.leads.get(k),
    }
}

/// True when position `i` of the steps view is a lead, not a suspect.
pub fn is_lead(doc: &Document, i: usize) -> bool {
    i >= doc.report.suspects.len()
}

/// The influence ranking's entries (none without a ranking).
pub fn influence_entries(doc: &Document) -> &[InfluenceEntry] {
    doc.report
        .influence
        .as_ref()
        .map(|i| i.scores.as_slice())
        .unwrap_or(&[])
}

/// The item at `i` of a view.
pub fn item(doc: &Document, view: View, i: usize) -> Option<Item<'_>> {
    match view {
        View::Steps => ranked_step(doc, i).map(|s| Item::Step(i, s)),
        View::Context => influence_entries(doc).get(i).map(|e| Item::Context(i, e)),
    }
}

/// The selected item of the view shown.
pub fn selected<'a>(app: &App, doc: &'a Document) -> Option<Item<'a>> {
    item(doc, app.suspects.view, app.suspects.cursor())
}

/// The step an item points at.
pub fn item_step(doc: &Document, it: Item<'_>) -> Option<usize> {
    match it {
        Item::Step(_, s) => doc.index_of(&s.step),
        Item::Context(_, e) => e.step.as_deref().and_then(|id| doc.index_of(id)),
    }
}

/// What ablating an item removes (`None`: nothing can be removed).
pub fn item_target(it: Item<'_>) -> Option<Target> {
    match it {
        Item::Step(_, s) => Some(Target::Step(StepId::from(s.step.as_str()))),
        Item::Context(_, e) => e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u))),
    }
}

/// A view's shortlist as ablation targets: the steps' shortlist, or the influence shortlist
/// (entries with a unit).
pub fn shortlist_targets(doc: &Document, view: View) -> Vec<Target> {
    match view {
        View::Steps => doc
            .report
            .confidence
            .shortlist
            .iter()
            .map(|s| Target::Step(StepId::from(s.as_str())))
            .collect(),
        View::Context => {
            let Some(inf) = &doc.report.influence else {
                return Vec::new();
            };
            doc.influence_shortlist
                .iter()
                .filter_map(|&i| inf.scores.get(i))
                .filter_map(|e| e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u))))
                .collect()
        }
    }
}

/// Draws the suspects pane.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let view = app.suspects.view;
    let title = match view {
        // Like findings are grouped under one row (`similar`): both counts are said, so the
        // listed ranks that skip numbers read right.
        View::Steps if doc.ranked > doc.report.suspects.len() => format!(
            "{} ranked, like ones grouped into {}",
            group(doc.ranked),
            group(doc.report.suspects.len())
        ),
        View::Steps => format!("{} ranked", group(doc.report.suspects.len())),
        View::Context => {
            let room = title_room(app, Pane::Suspects, area.width);
            CONTEXT_TITLES
                .iter()
                .find(|t| t.len() <= room)
                .copied()
                .unwrap_or("")
                .to_owned()
        }
    };
    let block = pane_block(app, Pane::Suspects, focused, &title, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    let mut lines = header::fixed(app, doc, width);
    lines.truncate(height);
    let list_h = height.saturating_sub(lines.len());
    let count = item_count(doc, view);
    let mut ctx = ItemLines {
        app,
        doc,
        width,
        focused,
        view,
        preamble: true,
    };
    if count == 0 {
        lines.extend(ctx.empty());
    } else {
        let cursor = app.suspects.cursor().min(count - 1);
        if cursor == 0 && ctx.lines(0, true).len() > list_h {
            ctx.preamble = false;
        }
        let offset = match view {
            View::Steps => &app.suspects.offset,
            View::Context => &app.suspects.context_offset,
        };
        let start = item_window(offset, cursor, list_h, |i| ctx.lines(i, i == cursor).len());
        let mut i = start;
        let mut hits = app.hits.borrow_mut();
        while lines.len() < height && i < count {
            let (item, row) = ctx.lines_at(i, i == cursor);
            if let Ok(y) = u16::try_from(lines.len() + row)
                && lines.len() + row < height
            {
                hits.push(RowHit {
                    pane: Pane::Suspects,
                    y: inner.y.saturating_add(y),
                    x: inner.x,
                    width: inner.width,
                    index: i,
                });
            }
            lines.extend(item);
            i += 1;
        }
        drop(hits);
        let bottom = ratatui::text::Line::styled(
            format!(" {} of {} ", group(cursor + 1), group(count)),
            app.theme.style(super::super::theme::Role::TextDim),
        )
        .right_aligned();
        frame.render_widget(
            Paragraph::new(bottom),
            Rect {
                y: area.y + area.height.saturating_sub(1),
                height: 1.min(area.height),
                x: area.x + 1,
                width: area.width.saturating_sub(2),
            },
        );
    }
    lines.truncate(height);
    frame.render_widget(Paragraph::new(lines), inner);
}
