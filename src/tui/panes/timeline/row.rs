//! One row of the timeline, and its column headers: the dependency gutter, the marks (`✗`
//! failed, `#rank`, `★` shortlisted), the position, nesting, the label (search matches
//! highlighted), what the step did (or, for a step whose content matched the search, the text
//! around the match), and on the right its duration and tokens or its bar on the run's clock.

use super::super::super::app::{App, Document};
use super::super::super::document::step_excerpt;
use super::super::super::find::{Snippet, snippet};
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, width_of};
use super::super::super::widgets::marks;
use super::waterfall::{Waterfall, bar_width};
use crate::analysis::count::{short_count, step_duration};
use crate::analysis::model::Step;
use crate::tui::widgets::selection::selected_row;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::text::{Line, Span};
use regex::Regex;
use unicode_width::UnicodeWidthChar;

/// Columns of indentation per nesting level, and the deepest level indented.
const INDENT: usize = 2;
const MAX_INDENT_LEVELS: usize = 8;
/// Below this inner width the duration and token columns are left out.
const WIDE_ROW: usize = 50;
/// Fewest columns worth showing of a step's text after its label.
const MIN_EXCERPT: usize = 12;
/// Columns of the marks between the gutter and the position: flow, failed, rank (3), shortlist.
const MARKS_WIDTH: usize = 6;
/// From this inner width a run with costs gets a dollar column (`~$0.00045` fits in 10).
const COST_ROW: usize = 80;
/// Columns of the dollar column.
const COST_WIDTH: usize = 10;

/// What drawing rows needs, built once per frame.
pub struct RowContext<'a> {
    app: &'a App,
    doc: &'a Document,
    selected: Option<usize>,
    width: usize,
    focused: bool,
    pos_width: usize,
    nested: bool,
    lanes: bool,
    matcher: Option<SkimMatcherV2>,
    content: Option<&'a Regex>,
    waterfall: Option<Waterfall>,
}

impl<'a> RowContext<'a> {
    /// The context for a frame of the timeline `width` columns wide.
    pub fn new(
        app: &'a App,
        doc: &'a Document,
        selected: Option<usize>,
        width: usize,
        focused: bool,
        rows: &[usize],
    ) -> Self {
        let q = &app.search.hits.query;
        let in_order = app.timeline.in_run_order();
        // The axis spans the rows on screen, so their bars can be told apart in a long run.
        // An unfolded container's span is its nested steps', shown under it: it does not count.
        let unfolded = |i: usize| {
            in_order
                && doc.has_children.get(i).copied().unwrap_or(false)
                && !app.timeline.folded.contains(&i)
        };
        let window = rows
            .iter()
            .filter(|&&i| !unfolded(i))
            .filter_map(|&i| doc.spans.get(i).copied().flatten())
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
        let waterfall = match (app.timeline.waterfall, window, doc.clock) {
            (true, Some(w), Some(c)) => Some(Waterfall::new(w, c.0, bar_width(width))),
            _ => None,
        };
        RowContext {
            app,
            doc,
            selected,
            width,
            focused,
            pos_width: doc.run.steps.len().to_string().len(),
            nested: doc.nested && in_order,
            lanes: in_order,
            matcher: (!q.is_empty()).then(SkimMatcherV2::default),
            content: app.search.hits.content.as_ref(),
            waterfall,
        }
    }

    /// Columns the gutter takes.
    fn gutter_width(&self) -> usize {
        if self.lanes {
            self.doc.graph.lane_count()
        } else {
            0
        }
    }

    /// The column headers, aligned with the rows.
    pub fn header(&self) -> Line<'a> {
        let t = &self.app.theme;
        let mut left = " ".repeat(self.gutter_width() + MARKS_WIDTH);
        left.push_str(&format!("{:>w$} ", "#", w = self.pos_width));
        if self.nested {
            left.push_str("  ");
        }
        left.push_str("name @agent kind · what it did");
        let cost = if self.cost_shown() {
            format!(" {:>w$}", "cost", w = COST_WIDTH)
        } else {
            String::new()
        };
        let right = match (&self.waterfall, self.right_columns_shown()) {
            (Some(w), _) if self.cost_shown() => {
                format!("{:>w$} {}", "cost", w.axis(), w = COST_WIDTH)
            }
            (Some(w), _) => w.axis(),
            // A column no step fills has no header.
            (None, true) => format!(
                "{:>6} {:>8}{cost}",
                if self.doc.has_durations { "time" } else { "" },
                if self.doc.has_tokens { "tokens" } else { "" }
            ),
            (None, false) => String::new(),
        };
        let room = self.width.saturating_sub(width_of(&right) + 1);
        let left = clipped(&left, room).into_owned();
        let pad = room.saturating_sub(width_of(&left)) + 1;
        let mut spans = vec![Span::styled(left, t.style(Role::TextDim))];
        if !right.is_empty() {
            spans.push(Span::raw(" ".repeat(pad)));
            spans.push(Span::styled(right, t.style(Role::TextDim)));
        }
        Line::from(spans).patch_style(
            ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::UNDERLINED),
        )
    }

    fn right_columns_shown(&self) -> bool {
        self.width >= WIDE_ROW && (self.doc.has_timing || self.cost_shown())
    }

    /// The run has costs and the timeline is wide enough for their column.
    fn cost_shown(&self) -> bool {
        self.width >= COST_ROW && self.doc.has_cost()
    }

    /// Step `i`'s dollar column, right-aligned (blank without a cost).
    fn cost_column(&self, i: usize) -> String {
        let c = self.doc.cost_text(i).unwrap_or_default();
        format!("{c:>w$}", w = COST_WIDTH)
    }

    /// The row of step `i`.
    pub fn row(&self, i: usize, is_cursor: bool) -> Line<'a> {
        let t = &self.app.theme;
        let Some(step) = self.doc.run.steps.get(i) else {
            return Line::default();
        };
        let mut spans: Vec<Span<'a>> = Vec::new();
        if self.lanes {
            for (g, role) in &self.doc.graph.row(i, self.selected) {
                spans.push(Span::styled(g.to_string(), t.style(*role)));
            }
        }
        let flow = self.selected.and_then(|sel| {
            if self.doc.graph.inputs_from(sel).binary_search(&i).is_ok() {
                Some((marks::FEEDS, Role::LinkIn))
            } else if self.doc.graph.outputs_to(sel).binary_search(&i).is_ok() {
                Some((marks::USES, Role::LinkOut))
            } else {
                None
            }
        });
        match flow {
            Some((g, r)) if !is_cursor => spans.push(Span::styled(g, t.style(r))),
            _ if is_cursor => spans.push(Span::styled(marks::CURSOR, t.style(Role::Text))),
            _ => spans.push(Span::raw(" ")),
        }
        spans.push(if step.failed() {
            Span::styled(marks::FAILED, t.style(Role::StepError))
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
            Span::styled(marks::SHORTLIST, t.style(Role::Shortlist))
        } else {
            Span::raw(" ")
        });
        spans.push(Span::styled(
            format!("{:>w$} ", i + 1, w = self.pos_width),
            t.style(Role::TextDim),
        ));
        // A step the importer marks as a container, or one that holds nested steps.
        let container =
            step.is_container() || self.doc.has_children.get(i).copied().unwrap_or(false);
        let folded = self.app.timeline.folded.contains(&i);
        if self.nested {
            let depth =
                usize::from(self.doc.depth.get(i).copied().unwrap_or(0)).min(MAX_INDENT_LEVELS);
            spans.push(Span::raw(" ".repeat(depth * INDENT)));
            spans.push(match (container, folded) {
                (true, true) => Span::styled(format!("{} ", marks::FOLDED), t.style(Role::Fold)),
                (true, false) => Span::styled(format!("{} ", marks::UNFOLDED), t.style(Role::Fold)),
                _ => Span::raw("  "),
            });
        }
        let used: usize = spans.iter().map(|s| width_of(&s.content)).sum();
        let right: Vec<Span<'a>> = match &self.waterfall {
            Some(w) => {
                let dur = step.duration_ms().map(step_duration).unwrap_or_default();
                let mut v = Vec::new();
                if self.cost_shown() {
                    v.push(Span::styled(
                        format!("{} ", self.cost_column(i)),
                        t.style(Role::TextDim),
                    ));
                }
                v.push(Span::styled(format!("{dur:>6} "), t.style(Role::TextDim)));
                v.extend(w.bar(
                    t,
                    self.doc.spans.get(i).copied().flatten(),
                    container && (folded || !self.nested),
                    container,
                    step.failed(),
                ));
                v
            }
            None if self.right_columns_shown() => {
                let mut r = right_columns(step);
                if self.cost_shown() {
                    r.push(' ');
                    r.push_str(&self.cost_column(i));
                }
                if r.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![Span::styled(r, t.style(Role::TextDim))]
                }
            }
            None => Vec::new(),
        };
        let right_w: usize = right.iter().map(|s| width_of(&s.content)).sum();
        let room = self.width.saturating_sub(used + right_w + 1);
        let label = self.doc.labels.get(i).map(String::as_str).unwrap_or("");
        let (mut label_w, label_matched) = self.push_label(&mut spans, i, label, room);
        let left = room.saturating_sub(label_w + 2);
        if left >= MIN_EXCERPT {
            label_w += self.push_excerpt(&mut spans, i, step, label_matched, left);
        }
        if !right.is_empty() {
            spans.push(Span::raw(" ".repeat(room.saturating_sub(label_w) + 1)));
            spans.extend(right);
        }
        let mut line = Line::from(spans);
        if is_cursor {
            line = selected_row(line, self.width, self.focused, t);
        }
        line
    }

    /// What the step did after its label, or, for a step the search found by its content (not
    /// by its label), the text around the match with the match highlighted; returns the columns
    /// used.
    fn push_excerpt(
        &self,
        spans: &mut Vec<Span<'a>>,
        i: usize,
        step: &Step,
        label_matched: bool,
        room: usize,
    ) -> usize {
        let t = &self.app.theme;
        let hit = self.app.search.hits.steps.binary_search(&i).is_ok();
        if hit
            && !label_matched
            && let Some(Snippet {
                before,
                matched,
                after,
            }) = self.content.and_then(|re| snippet(step, re))
        {
            let before = clipped(&before, room.saturating_sub(4) / 2).into_owned();
            let matched = clipped(&matched, room.saturating_sub(width_of(&before))).into_owned();
            let after = clipped(
                &after,
                room.saturating_sub(width_of(&before) + width_of(&matched)),
            )
            .into_owned();
            let w = width_of(&before) + width_of(&matched) + width_of(&after) + 2;
            spans.push(Span::raw("  "));
            spans.push(Span::styled(before, t.style(Role::TextDim)));
            spans.push(Span::styled(matched, t.style(Role::SearchMatch)));
            spans.push(Span::styled(after, t.style(Role::TextDim)));
            return w;
        }
        let excerpt = step_excerpt(step, room);
        if excerpt.is_empty() {
            return 0;
        }
        let w = width_of(&excerpt) + 2;
        spans.push(Span::raw("  "));
        spans.push(Span::styled(excerpt, t.style(Role::TextDim)));
        w
    }

    /// Pushes the label (name, `@agent` and id dim, kind in its role), matched characters
    /// highlighted, cut from the end so the name gives way last; returns its width and whether
    /// the search matched it (for a step the search found).
    fn push_label(
        &self,
        spans: &mut Vec<Span<'a>>,
        i: usize,
        label: &'a str,
        room: usize,
    ) -> (usize, bool) {
        let t = &self.app.theme;
        let found = match (
            &self.matcher,
            self.app.search.hits.steps.binary_search(&i).is_ok(),
        ) {
            (Some(m), true) => m
                .fuzzy_indices(label, &self.app.search.hits.query)
                .map(|(_, idx)| idx),
            _ => None,
        };
        let label_matched = found.is_some();
        let matched: Vec<usize> = found.unwrap_or_default();
        let mut w = 0;
        let [agent_at, kind_at, id_at] = self
            .doc
            .label_parts
            .get(i)
            .map(|p| p.map(usize::from))
            .unwrap_or([0; 3]);
        let mut buf = String::new();
        let mut buf_role: Option<Role> = None;
        let cut = width_of(label) > room;
        let limit = if cut { room.saturating_sub(1) } else { room };
        for (ci, c) in label.chars().enumerate() {
            let cw = c.width().unwrap_or(0);
            if w + cw > limit {
                break;
            }
            // The name in full text, the agent and the id dim, the kind in its role.
            let role = if matched.binary_search(&ci).is_ok() {
                Role::SearchMatch
            } else if ci < agent_at {
                Role::Text
            } else if ci < kind_at {
                Role::TextDim
            } else if ci < id_at {
                Role::StepKind
            } else {
                Role::TextDim
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
        (w, label_matched)
    }
}

/// Duration and cost, right-aligned: `  1.2s  1.8k tok`.
fn right_columns(step: &Step) -> String {
    let dur = step.duration_ms().map(step_duration).unwrap_or_default();
    format!("{dur:>6} {:>8}", cost_text(step))
}

/// A step's tokens (`1.8k tok`), or nothing; its dollars have a column of their own.
fn cost_text(step: &Step) -> String {
    super::tokens(step)
        .filter(|&n| n > 0)
        .map(|n| format!("{} tok", short_count(n)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts_read_naturally() {
        assert_eq!(step_duration(850), "850ms");
        assert_eq!(step_duration(1250), "1.2s");
        assert_eq!(step_duration(184_000), "3m04s");
        assert_eq!(step_duration(7_500_000), "2h05m");
        assert_eq!(step_duration(-20), "0ms");
        assert_eq!(short_count(950), "950");
        assert_eq!(short_count(1840), "1.8k");
        assert_eq!(short_count(12_345), "12k");
        assert_eq!(short_count(3_400_000), "3.4M");
    }
}
