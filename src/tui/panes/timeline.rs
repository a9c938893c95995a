//! The timeline pane: the steps in order with kind, agent, name, duration and tokens; glyph
//! marks for errors (`✗`), suspects (`#rank`) and the shortlist (`★`); nesting folded and
//! unfolded via `parent`; the dependency gutter from the report's links, with the selected step's
//! inputs (`▲`) and outputs (`▼`) highlighted along them. Only visible rows are built.

use super::super::app::{App, Document};
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, width_of};
use super::super::widgets::scroll_list::window;
use crate::analysis::model::Step;
use crate::tui::widgets::selection::selected_row;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;
use std::collections::HashSet;
use unicode_width::UnicodeWidthChar;

/// Columns of indentation per nesting level, and the deepest level indented.
const INDENT: usize = 2;
const MAX_INDENT_LEVELS: usize = 8;
/// Below this inner width the duration and token columns are left out.
const WIDE_ROW: usize = 50;
/// Fewest columns worth showing of a step's text after its label.
const MIN_EXCERPT: usize = 12;

/// What the timeline remembers.
#[derive(Debug, Default)]
pub struct TimelineState {
    /// Steps whose children are hidden.
    pub folded: HashSet<usize>,
    /// The shown steps, ascending.
    pub visible: Vec<usize>,
    /// The selected row of `visible`.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
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

    /// Selects step `i`, unfolding whatever hides it.
    pub fn select_step(&mut self, doc: &Document, i: usize) {
        if i >= doc.run.steps.len() {
            return;
        }
        let mut changed = false;
        let mut at = i;
        while let Some(p) = parent_of(doc, at) {
            changed |= self.folded.remove(&p);
            at = p;
        }
        if changed {
            self.recompute(doc);
        }
        if let Ok(row) = self.visible.binary_search(&i) {
            self.cursor = row;
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

    /// Rebuilds `visible` after a fold change, keeping the selection on its step or on the
    /// folded ancestor that now hides it. One pass: parents always come first.
    fn recompute(&mut self, doc: &Document) {
        let keep = self.selected();
        let n = doc.run.steps.len();
        let mut hidden = vec![false; n];
        let mut folded = vec![false; n];
        for &f in &self.folded {
            if let Some(slot) = folded.get_mut(f) {
                *slot = true;
            }
        }
        let mut visible = Vec::with_capacity(n);
        for i in 0..n {
            let h = parent_of(doc, i).is_some_and(|p| {
                hidden.get(p).copied().unwrap_or(false) || folded.get(p).copied().unwrap_or(false)
            });
            if let Some(slot) = hidden.get_mut(i) {
                *slot = h;
            }
            if !h {
                visible.push(i);
            }
        }
        self.visible = visible;
        if let Some(mut k) = keep {
            while hidden.get(k).copied().unwrap_or(false) {
                match parent_of(doc, k) {
                    Some(p) => k = p,
                    None => break,
                }
            }
            self.cursor = self
                .visible
                .binary_search(&k)
                .unwrap_or_else(|r| r.min(self.visible.len().saturating_sub(1)));
        }
    }
}

fn parent_of(doc: &Document, i: usize) -> Option<usize> {
    doc.parent.get(i).copied().flatten()
}

/// Draws the timeline.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let n = doc.run.steps.len();
    let mut title = format!("{} steps", n);
    if app.timeline.visible.len() < n {
        title.push_str(&format!(", {} shown", app.timeline.visible.len()));
    }
    if doc.graph.undrawn > 0 {
        title.push_str(&format!(", {} link sources not drawn", doc.graph.undrawn));
    }
    let block = pane_block(
        app,
        super::super::app::Pane::Timeline,
        focused,
        &title,
        area.width,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if n == 0 {
        let msg = Paragraph::new(Line::styled(
            "This run has no steps (the loader warned about it).",
            t.style(Role::TextDim),
        ));
        frame.render_widget(msg, inner);
        return;
    }
    let height = usize::from(inner.height);
    let rows = window(
        &app.timeline.offset,
        app.timeline.cursor,
        height,
        app.timeline.visible.len(),
    );
    let selected = app.selected_step();
    let ctx = RowContext::new(app, doc, selected, usize::from(inner.width), focused);
    let lines: Vec<Line<'_>> = app
        .timeline
        .visible
        .get(rows.clone())
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .map(|(k, &i)| ctx.row(i, rows.start + k == app.timeline.cursor))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

struct RowContext<'a> {
    app: &'a App,
    doc: &'a Document,
    selected: Option<usize>,
    width: usize,
    focused: bool,
    pos_width: usize,
    nested: bool,
    matcher: Option<SkimMatcherV2>,
}

impl<'a> RowContext<'a> {
    fn new(
        app: &'a App,
        doc: &'a Document,
        selected: Option<usize>,
        width: usize,
        focused: bool,
    ) -> Self {
        let q = &app.search.hits.query;
        RowContext {
            app,
            doc,
            selected,
            width,
            focused,
            pos_width: doc.run.steps.len().to_string().len(),
            nested: doc.nested,
            matcher: (!q.is_empty()).then(SkimMatcherV2::default),
        }
    }

    fn row(&self, i: usize, is_cursor: bool) -> Line<'a> {
        let t = &self.app.theme;
        let Some(step) = self.doc.run.steps.get(i) else {
            return Line::default();
        };
        let mut spans: Vec<Span<'a>> = Vec::new();
        // Gutter.
        let lanes = self.doc.graph.row(i, self.selected);
        for (g, role) in &lanes {
            spans.push(Span::styled(g.to_string(), t.style(*role)));
        }
        let flow = self.selected.and_then(|sel| {
            if self.doc.graph.inputs_from(sel).binary_search(&i).is_ok() {
                Some(("▲", Role::LinkIn))
            } else if self.doc.graph.outputs_to(sel).binary_search(&i).is_ok() {
                Some(("▼", Role::LinkOut))
            } else {
                None
            }
        });
        match flow {
            Some((g, r)) => spans.push(Span::styled(g, t.style(r))),
            None if is_cursor => spans.push(Span::styled("▶", t.style(Role::Text))),
            None => spans.push(Span::raw(" ")),
        }
        // Marks.
        spans.push(if step.failed() {
            Span::styled("✗", t.style(Role::StepError))
        } else {
            Span::raw(" ")
        });
        match self.doc.suspect_of.get(i).copied().flatten() {
            Some(pos) => {
                let rank = self
                    .doc
                    .report
                    .suspects
                    .get(pos)
                    .map(|s| s.rank)
                    .unwrap_or(pos + 1);
                let text = if rank <= 99 {
                    format!("#{rank:<2}")
                } else {
                    "#++".to_owned()
                };
                let role = if pos == 0 {
                    Role::SuspectTop
                } else {
                    Role::Suspect
                };
                spans.push(Span::styled(text, t.style(role)));
            }
            None => spans.push(Span::raw("   ")),
        }
        spans.push(if self.doc.shortlisted.contains(&i) {
            Span::styled("★", t.style(Role::Shortlist))
        } else {
            Span::raw(" ")
        });
        spans.push(Span::styled(
            format!("{:>w$} ", i + 1, w = self.pos_width),
            t.style(Role::TextDim),
        ));
        if self.nested {
            let depth =
                usize::from(self.doc.depth.get(i).copied().unwrap_or(0)).min(MAX_INDENT_LEVELS);
            spans.push(Span::raw(" ".repeat(depth * INDENT)));
            let has = self.doc.has_children.get(i).copied().unwrap_or(false);
            spans.push(match (has, self.app.timeline.folded.contains(&i)) {
                (true, true) => Span::styled("▸ ", t.style(Role::Fold)),
                (true, false) => Span::styled("▾ ", t.style(Role::Fold)),
                _ => Span::raw("  "),
            });
        }
        let used: usize = spans.iter().map(|s| width_of(&s.content)).sum();
        let right = if self.width >= WIDE_ROW && self.doc.has_timing {
            right_columns(step)
        } else {
            String::new()
        };
        // A step without timing lends its columns to its text.
        let right = if right.trim().is_empty() {
            String::new()
        } else {
            right
        };
        let room = self.width.saturating_sub(used + width_of(&right) + 1);
        let label = self.doc.labels.get(i).map(String::as_str).unwrap_or("");
        let mut label_w = self.push_label(&mut spans, i, label, room);
        // What the step said, where there is room: multi-agent logs name no steps.
        let excerpt = self.doc.excerpts.get(i).map(String::as_str).unwrap_or("");
        let left = room.saturating_sub(label_w + 2);
        if !excerpt.is_empty() && left >= MIN_EXCERPT {
            let shown = clipped(excerpt, left);
            label_w += width_of(&shown) + 2;
            spans.push(Span::raw("  "));
            spans.push(Span::styled(shown, t.style(Role::TextDim)));
        }
        if !right.is_empty() {
            spans.push(Span::raw(" ".repeat(room.saturating_sub(label_w) + 1)));
            spans.push(Span::styled(right, t.style(Role::TextDim)));
        }
        let mut line = Line::from(spans);
        if is_cursor {
            line = selected_row(line, self.width, self.focused, t);
        }
        line
    }

    /// Pushes the label, id dim, kind in its role, matched characters highlighted; returns its
    /// width.
    fn push_label(
        &self,
        spans: &mut Vec<Span<'a>>,
        i: usize,
        label: &'a str,
        room: usize,
    ) -> usize {
        let t = &self.app.theme;
        let matched: Vec<usize> = match (
            &self.matcher,
            self.app.search.hits.steps.binary_search(&i).is_ok(),
        ) {
            (Some(m), true) => m
                .fuzzy_indices(label, &self.app.search.hits.query)
                .map(|(_, idx)| idx)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut w = 0;
        let mut part = 0usize;
        let mut buf = String::new();
        let mut buf_role: Option<Role> = None;
        let cut = width_of(label) > room;
        let limit = if cut { room.saturating_sub(1) } else { room };
        for (ci, c) in label.chars().enumerate() {
            let cw = c.width().unwrap_or(0);
            if w + cw > limit {
                break;
            }
            if c == ' ' && part < 2 {
                part += 1;
            }
            let role = if matched.binary_search(&ci).is_ok() {
                Role::SearchMatch
            } else {
                match part {
                    0 => Role::TextDim,
                    1 => Role::StepKind,
                    _ => Role::Text,
                }
            };
            if buf_role != Some(role) && !buf.is_empty() {
                spans.push(Span::styled(
                    std::mem::take(&mut buf),
                    t.style(buf_role.unwrap_or(Role::Text)),
                ));
            }
            buf_role = Some(role);
            buf.push(c);
            w += cw;
        }
        if !buf.is_empty() {
            spans.push(Span::styled(buf, t.style(buf_role.unwrap_or(Role::Text))));
        }
        if cut && room > 0 {
            spans.push(Span::styled("…", t.style(Role::TextDim)));
            w += 1;
        }
        w
    }
}

/// Duration and tokens, right-aligned: `  1.2s  1.8k tok`.
fn right_columns(step: &Step) -> String {
    let dur = step.duration_ms().map(format_duration).unwrap_or_default();
    let tokens = step
        .usage
        .as_ref()
        .map(|u| {
            u.input_tokens
                .unwrap_or(0)
                .saturating_add(u.output_tokens.unwrap_or(0))
        })
        .filter(|&n| n > 0)
        .map(|n| format!("{} tok", format_count(n)))
        .unwrap_or_default();
    format!("{dur:>6} {tokens:>8}")
}

/// `850ms`, `1.2s`, `3m04s`, `2h05m`.
pub fn format_duration(ms: i64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms % 3_600_000) / 60_000)
    }
}

/// `950`, `1.8k`, `12k`, `3.4M`.
pub fn format_count(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{}.{}k", n / 1000, (n % 1000) / 100)
    } else if n < 1_000_000 {
        format!("{}k", n / 1000)
    } else {
        format!("{}.{}M", n / 1_000_000, (n % 1_000_000) / 100_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts_read_naturally() {
        assert_eq!(format_duration(850), "850ms");
        assert_eq!(format_duration(1250), "1.2s");
        assert_eq!(format_duration(184_000), "3m04s");
        assert_eq!(format_duration(7_500_000), "2h05m");
        assert_eq!(format_count(950), "950");
        assert_eq!(format_count(1840), "1.8k");
        assert_eq!(format_count(12_345), "12k");
        assert_eq!(format_count(3_400_000), "3.4M");
    }
}
