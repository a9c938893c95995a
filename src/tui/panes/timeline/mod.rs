//! The timeline pane: the steps with column headers, marks, nesting folded and unfolded via
//! `parent`, the dependency gutter from the report's links; filtered (failed steps, suspects, a
//! kind, an agent, text), sorted by duration or tokens, or drawn on the run's clock as a
//! waterfall. The state and the order of the rows are here; [`row`] draws a row, [`waterfall`]
//! the time axis and bars. Only visible rows are built.

mod row;
pub mod waterfall;

use super::super::app::{App, Document, Pane, RowHit, group};
use super::super::overlays::search::SearchHits;
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::scroll_list::window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use row::RowContext;
use std::cell::Cell;
use std::collections::HashSet;
use std::sync::Arc;

/// The order of the timeline's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// The run's order, nested steps under their parent.
    #[default]
    Position,
    /// Longest first; steps without a duration last.
    Duration,
    /// Most tokens first; steps without tokens last.
    Tokens,
}

impl SortKey {
    /// The next order (`s` cycles through them).
    pub fn next(self) -> SortKey {
        match self {
            SortKey::Position => SortKey::Duration,
            SortKey::Duration => SortKey::Tokens,
            SortKey::Tokens => SortKey::Position,
        }
    }

    /// The order in words.
    pub fn words(self) -> &'static str {
        match self {
            SortKey::Position => "in run order",
            SortKey::Duration => "sorted by duration, longest first",
            SortKey::Tokens => "sorted by tokens, most first",
        }
    }
}

/// What the timeline remembers.
#[derive(Debug, Default)]
pub struct TimelineState {
    /// Steps whose children are hidden.
    pub folded: HashSet<usize>,
    /// The shown steps, in the order drawn.
    pub visible: Vec<usize>,
    /// The selected row of `visible`.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
    /// The steps a filter keeps (ascending), when one is in force.
    pub filter: Option<Arc<SearchHits>>,
    /// The order of the rows.
    pub sort: SortKey,
    /// The rows show bars on the run's clock.
    pub waterfall: bool,
    /// A filter to put back once it has been run again (the run was read again).
    pub refilter: Option<String>,
}

impl TimelineState {
    /// Every step shown, the first selected.
    pub fn for_document(doc: &Document) -> TimelineState {
        TimelineState {
            visible: (0..doc.run.steps.len()).collect(),
            ..TimelineState::default()
        }
    }

    /// The selected step.
    pub fn selected(&self) -> Option<usize> {
        self.visible.get(self.cursor).copied()
    }

    /// The rows are the run's order with folding (no filter, no sort): lanes and nesting can
    /// be drawn.
    pub fn in_run_order(&self) -> bool {
        self.filter.is_none() && self.sort == SortKey::Position
    }

    /// Selects step `i`, unfolding whatever hides it. A filter that hides it is taken away
    /// (returns true then), so the step is always shown.
    pub fn select_step(&mut self, doc: &Document, i: usize) -> bool {
        if i >= doc.run.steps.len() {
            return false;
        }
        let mut dropped_filter = false;
        if self
            .filter
            .as_ref()
            .is_some_and(|f| f.steps.binary_search(&i).is_err())
        {
            self.filter = None;
            dropped_filter = true;
        }
        let mut changed = dropped_filter;
        let mut at = i;
        while let Some(p) = parent_of(doc, at) {
            changed |= self.folded.remove(&p);
            at = p;
        }
        if changed {
            self.recompute(doc);
        }
        if let Some(row) = self.row_of(i) {
            self.cursor = row;
        }
        dropped_filter
    }

    /// The row showing step `i`, if shown.
    pub fn row_of(&self, i: usize) -> Option<usize> {
        if self.sort == SortKey::Position {
            self.visible.binary_search(&i).ok()
        } else {
            self.visible.iter().position(|&v| v == i)
        }
    }

    /// Folds or unfolds the selected step.
    pub fn toggle_fold(&mut self, doc: &Document) {
        let Some(i) = self.selected() else { return };
        if !doc.has_children.get(i).copied().unwrap_or(false) {
            return;
        }
        if !self.folded.remove(&i) {
            self.folded.insert(i);
        }
        self.recompute(doc);
    }

    /// Folds the selected step, or goes to its parent when it is folded or has no children.
    pub fn collapse(&mut self, doc: &Document) {
        let Some(i) = self.selected() else { return };
        let has = doc.has_children.get(i).copied().unwrap_or(false);
        if has && !self.folded.contains(&i) {
            self.folded.insert(i);
            self.recompute(doc);
        } else if let Some(p) = parent_of(doc, i) {
            self.select_step(doc, p);
        }
    }

    /// Unfolds the selected step.
    pub fn expand(&mut self, doc: &Document) {
        let Some(i) = self.selected() else { return };
        if self.folded.remove(&i) {
            self.recompute(doc);
        }
    }

    /// Puts a filter in force (`None` takes it away), keeping the selected step when it stays.
    pub fn set_filter(&mut self, doc: &Document, filter: Option<Arc<SearchHits>>) {
        self.filter = filter.filter(|f| !f.query.is_empty());
        self.recompute(doc);
    }

    /// Orders the rows by `key`, keeping the selected step.
    pub fn set_sort(&mut self, doc: &Document, key: SortKey) {
        self.sort = key;
        self.recompute(doc);
    }

    /// Rebuilds `visible` after a change of folds, filter or order, keeping the selection on its
    /// step (or on the folded ancestor that now hides it, or the nearest row). One pass for the
    /// folds: parents always come first.
    pub fn recompute(&mut self, doc: &Document) {
        let keep = self.selected();
        let n = doc.run.steps.len();
        let mut hidden = vec![false; n];
        let mut visible = match &self.filter {
            // A filter lists every step it keeps, folded or not.
            Some(f) => f.steps.iter().copied().filter(|&i| i < n).collect(),
            None if self.sort != SortKey::Position => (0..n).collect(),
            None => {
                let mut folded = vec![false; n];
                for &f in &self.folded {
                    if let Some(slot) = folded.get_mut(f) {
                        *slot = true;
                    }
                }
                let mut visible = Vec::with_capacity(n);
                for i in 0..n {
                    let h = parent_of(doc, i).is_some_and(|p| {
                        hidden.get(p).copied().unwrap_or(false)
                            || folded.get(p).copied().unwrap_or(false)
                    });
                    if let Some(slot) = hidden.get_mut(i) {
                        *slot = h;
                    }
                    if !h {
                        visible.push(i);
                    }
                }
                visible
            }
        };
        match self.sort {
            SortKey::Position => {}
            SortKey::Duration => visible.sort_by_key(|&i| {
                std::cmp::Reverse(doc.run.steps.get(i).and_then(|s| s.duration_ms()))
            }),
            SortKey::Tokens => {
                visible.sort_by_key(|&i| std::cmp::Reverse(doc.run.steps.get(i).and_then(tokens)))
            }
        }
        self.visible = visible;
        let Some(mut k) = keep else {
            self.cursor = 0;
            return;
        };
        while hidden.get(k).copied().unwrap_or(false) {
            match parent_of(doc, k) {
                Some(p) => k = p,
                None => break,
            }
        }
        self.cursor = match self.row_of(k) {
            Some(r) => r,
            None if self.sort == SortKey::Position => self
                .visible
                .partition_point(|&v| v < k)
                .min(self.visible.len().saturating_sub(1)),
            None => 0,
        };
    }
}

/// A step's tokens in and out, when it records any.
pub fn tokens(s: &crate::analysis::model::Step) -> Option<u64> {
    let u = s.usage()?;
    if u.input_tokens.is_none() && u.output_tokens.is_none() {
        return None;
    }
    Some(
        u.input_tokens
            .unwrap_or(0)
            .saturating_add(u.output_tokens.unwrap_or(0)),
    )
}

fn parent_of(doc: &Document, i: usize) -> Option<usize> {
    doc.parent.get(i).copied().flatten()
}

/// The title's extra text: the steps, how many are shown, the filter and the order.
fn title(app: &App, doc: &Document) -> String {
    let tl = &app.timeline;
    let n = doc.run.steps.len();
    let mut title = format!("{} step{}", group(n), if n == 1 { "" } else { "s" });
    if let Some(f) = &tl.filter {
        title.push_str(&format!(
            ", filter '{}': {} kept",
            super::super::widgets::inert_text::clipped(&f.query, 24),
            group(tl.visible.len())
        ));
    } else if tl.visible.len() < n {
        title.push_str(&format!(", {} shown", group(tl.visible.len())));
    }
    if tl.sort != SortKey::Position {
        title.push_str(&format!(", {}", tl.sort.words()));
    }
    if tl.in_run_order() && doc.graph.undrawn > 0 && !tl.waterfall {
        title.push_str(&format!(
            ", {} link sources not drawn",
            group(doc.graph.undrawn)
        ));
    }
    title
}

/// Draws the timeline.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let tl = &app.timeline;
    let n = doc.run.steps.len();
    let mut block = pane_block(app, Pane::Timeline, focused, &title(app, doc), area.width);
    if !tl.visible.is_empty() {
        block = block.title_bottom(
            Line::styled(
                format!(
                    " row {} of {} ",
                    group(tl.cursor.min(tl.visible.len() - 1) + 1),
                    group(tl.visible.len())
                ),
                t.style(Role::TextDim),
            )
            .right_aligned(),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if n == 0 || tl.visible.is_empty() {
        let text = if n == 0 {
            "This run has no steps (the loader warned about it).".to_owned()
        } else {
            format!(
                "No step matches the filter. {} changes it; {} takes it away.",
                app.key(super::super::action::Action::Filter),
                app.key(super::super::action::Action::Back)
            )
        };
        frame.render_widget(
            Paragraph::new(Line::styled(text, t.style(Role::TextDim)))
                .wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    let selected = app.selected_step();
    // The column headers, when there is room for rows under them.
    let header = inner.height >= 4;
    let height = usize::from(inner.height) - usize::from(header);
    let rows = window(&tl.offset, tl.cursor, height, tl.visible.len());
    let shown = tl.visible.get(rows.clone()).unwrap_or(&[]);
    let ctx = RowContext::new(app, doc, selected, usize::from(inner.width), focused, shown);
    let mut lines = Vec::new();
    if header {
        lines.push(ctx.header());
    }
    let mut hits = app.hits.borrow_mut();
    for (k, &i) in shown.iter().enumerate() {
        let row = rows.start + k;
        hits.push(RowHit {
            pane: Pane::Timeline,
            y: inner.y + u16::from(header) + u16::try_from(k).unwrap_or(u16::MAX),
            x: inner.x,
            width: inner.width,
            index: row,
        });
        lines.push(ctx.row(i, row == tl.cursor));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
