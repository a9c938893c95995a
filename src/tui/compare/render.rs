//! Drawing the compare view and the list of runs to compare with. Reads the comparison the
//! analysis made; builds only the visible rows; every run text is made inert. The word-level
//! diff of the selected row's two steps comes from [`word_diff`], on at most
//! [`DIFF_TEXT_BYTES`] of each side.

use super::{AgainstChoice, AgainstView, ChooserState, CompareState};
use crate::analysis::compare::{Match, WordChange, word_diff};
use crate::analysis::model::{Json, Step, inert_block, value_text};
use crate::tui::app::{App, Document};
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, one_line, wrap_spans};
use crate::tui::widgets::scroll_list::window;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

/// Bytes of each step's text that are diffed and shown.
pub const DIFF_TEXT_BYTES: usize = 8 * 1024;
/// Share of the view's height given to the aligned rows, in percent.
const ROWS_PERCENT: u16 = 40;

/// The rows of the alignment shown at once in a view of `body` with `rows` rows (for paging).
pub fn page(body: Rect, rows: usize) -> usize {
    usize::from(split(body, rows).0.height).max(1)
}

/// The rows' area and the detail's, inside the view's frame (its first line is the summary):
/// the rows take at most [`ROWS_PERCENT`] of the height, less when there are fewer.
fn split(body: Rect, rows: usize) -> (Rect, Rect) {
    let inner = Block::default().borders(Borders::ALL).inner(body);
    let most = inner.height.saturating_sub(1) * ROWS_PERCENT / 100;
    let height = u16::try_from(rows).unwrap_or(u16::MAX).min(most);
    let [_, rows, detail] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(height),
        Constraint::Min(0),
    ])
    .areas(inner);
    (rows, detail)
}

/// How a step reads in a row: its kind, then its tool (or the tools it asks for), name or
/// agent, then the start of what it said.
fn label(step: &Step) -> String {
    let kind = step.kind_label();
    if let Some(t) = &step.tool {
        return format!("{kind} {}", t.name);
    }
    let asked: Vec<String> = match &step.output {
        Some(Json::Object(m)) => m
            .get("tool_calls")
            .and_then(|c| match c {
                Json::Array(a) => Some(&a[..]),
                _ => None,
            })
            .unwrap_or_default()
            .iter()
            .filter_map(|c| match c {
                Json::Object(c) => c
                    .get("name")
                    .or_else(|| match c.get("function") {
                        Some(Json::Object(f)) => f.get("name"),
                        _ => None,
                    })
                    .map(value_text),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    if !asked.is_empty() {
        return format!("{kind} → {}", asked.join(", "));
    }
    let who = step
        .name
        .as_deref()
        .or(step.agent.as_deref())
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    match &step.output {
        Some(Json::String(s)) if !s.trim().is_empty() => {
            format!("{kind}{who}: {}", one_line(s, 400, 120))
        }
        _ => format!("{kind}{who}"),
    }
}

/// What is compared of a step, as text for the word diff: its tool and arguments (JSON laid
/// out one member a line, so that a changed value is a changed word), its error, its output.
pub fn step_text(step: &Step) -> String {
    let mut out = String::new();
    // The provider's ids of the calls a model step asks for differ between any two runs and
    // are never compared: they are left out here too.
    let json = |v: &Json| match v {
        Json::String(s) => s.to_string(),
        other => {
            let mut v = serde_json::to_value(other).unwrap_or_default();
            if let Some(calls) = v
                .get_mut("tool_calls")
                .and_then(serde_json::Value::as_array_mut)
            {
                for c in calls
                    .iter_mut()
                    .filter_map(serde_json::Value::as_object_mut)
                {
                    c.remove("id");
                }
            }
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| value_text(other))
        }
    };
    if let Some(t) = &step.tool {
        out.push_str(&format!("{}\n{}\n", t.name, json(&t.arguments)));
    }
    if let Some(e) = &step.error {
        out.push_str(&format!("error: {e}\n"));
    }
    if let Some(o) = &step.output {
        out.push_str(&json(o));
    }
    let mut end = out.len().min(DIFF_TEXT_BYTES);
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// Draws the compare view over `body`.
pub fn render(
    app: &App,
    doc: &Document,
    view: &AgainstView,
    state: &CompareState,
    frame: &mut Frame,
    body: Rect,
) {
    let t = &app.theme;
    frame.render_widget(Clear, body);
    let cmp = &view.comparison;
    let [same, changed, only_good, only_bad] = cmp.counts();
    let title = format!(
        " Compare · good: {} · this run: '{}' · {} rows: {same} same, {changed} changed, {only_good} only good, {only_bad} only this run ",
        clipped(&view.label, 50),
        clipped(&doc.run.id, 30),
        cmp.rows.len()
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(t.style(Role::BorderFocus))
        .title(Line::from(Span::styled(
            clipped(&title, usize::from(body.width.saturating_sub(2))).into_owned(),
            t.style(Role::TitleFocus),
        )));
    let inner = block.inner(body);
    frame.render_widget(block, body);
    let (rows_area, detail_area) = split(body, cmp.rows.len());
    let summary = match (cmp.first_divergence.as_ref(), cmp.divergence_difference()) {
        (Some(d), Some(what)) => {
            format!("» first divergence, row {}: {}", d.row + 1, what.sentence())
        }
        _ => "no divergence: the runs do the same thing (ids, times and wording aside)".to_owned(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            clipped(&summary, usize::from(inner.width)).into_owned(),
            t.style(Role::Heading),
        ))),
        Rect { height: 1, ..inner },
    );
    let on = Compared {
        app,
        doc,
        view,
        state,
    };
    render_rows(on, frame, rows_area);
    render_detail(on, frame, detail_area);
}

/// What the compare view draws from: the screen, this run, the good run and the comparison, and
/// the view's cursor.
#[derive(Clone, Copy)]
struct Compared<'a> {
    app: &'a App,
    doc: &'a Document,
    view: &'a AgainstView,
    state: &'a CompareState,
}

fn render_rows(on: Compared<'_>, frame: &mut Frame, area: Rect) {
    let t = &on.app.theme;
    let cmp = &on.view.comparison;
    let height = usize::from(area.height);
    let range = window(&on.state.offset, on.state.row, height, cmp.rows.len());
    let width = usize::from(area.width);
    // `» ` then two sides of `1234 label` around ` ~ `.
    let side = width.saturating_sub(2 + 3) / 2;
    let text_w = side.saturating_sub(5);
    let divergence = cmp.first_divergence.as_ref().map(|d| d.row);
    let cell = |step: Option<&Step>| match step {
        Some(s) => format!(
            "{:>4} {:<text_w$}",
            s.index + 1,
            clipped(&label(s), text_w),
            text_w = text_w
        ),
        None => format!("{:>4} {:<text_w$}", "", "·", text_w = text_w),
    };
    let mut lines = Vec::with_capacity(range.len());
    for r in range {
        let Some(row) = cmp.rows.get(r) else { break };
        let g = row.good.and_then(|i| on.view.good.steps.get(i));
        let b = row.bad.and_then(|i| on.doc.run.steps.get(i));
        let mark = match row.matched {
            Match::Same => " = ",
            Match::Changed => " ~ ",
            Match::OnlyGood => " - ",
            Match::OnlyBad => " + ",
        };
        // The selected row is marked `▶` (it reads without colour too), the first divergence `»`.
        let lead = match (r == on.state.row, Some(r) == divergence) {
            (true, true) => "▶»",
            (true, false) => "▶ ",
            (false, true) => " »",
            (false, false) => "  ",
        };
        let base = if r == on.state.row {
            t.style(Role::Selection)
        } else if Some(r) == divergence {
            t.style(Role::Warning)
        } else if row.matched == Match::Same {
            t.style(Role::TextDim)
        } else {
            t.style(Role::Text)
        };
        lines.push(Line::from(vec![
            Span::styled(lead.to_owned(), base),
            Span::styled(cell(g), base),
            Span::styled(mark.to_owned(), base),
            Span::styled(cell(b), base),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// The word diff as styled pieces for one side: the stretches both share, and this side's own
/// (the good run's removed ones, or this run's added ones) marked `[-…-]` / `{+…+}` and coloured.
fn side_pieces(changes: &[WordChange], good: bool, app: &App) -> Vec<(String, Style, bool)> {
    let t = &app.theme;
    let mut out = Vec::new();
    for c in changes {
        match (c, good) {
            (WordChange::Same(s), _) => out.push((s.clone(), t.style(Role::Text), false)),
            (WordChange::Removed(s), true) => {
                out.push((format!("[-{s}-]"), t.style(Role::DiffDel), true))
            }
            (WordChange::Added(s), false) => {
                out.push((format!("{{+{s}+}}"), t.style(Role::DiffAdd), true))
            }
            _ => {}
        }
    }
    out
}

fn render_detail(on: Compared<'_>, frame: &mut Frame, area: Rect) {
    let t = &on.app.theme;
    let width = usize::from(area.width);
    let cmp = &on.view.comparison;
    let Some(row) = cmp.rows.get(on.state.row) else {
        return;
    };
    let mut head: Vec<Line<'static>> = vec![Line::from(Span::styled(
        "─".repeat(width),
        t.style(Role::Border),
    ))];
    let diffs = cmp.differences_at(on.state.row);
    if diffs.is_empty() {
        head.push(Line::from(Span::styled(
            "the same in both runs (ids, times and wording aside)",
            t.style(Role::TextDim),
        )));
    }
    for d in diffs.iter().take(4) {
        head.extend(wrap_spans(
            vec![
                ("• ".to_owned(), t.style(Role::Warning)),
                (
                    clipped(&d.sentence(), 300).into_owned(),
                    t.style(Role::Text),
                ),
            ],
            width,
            "  ",
        ));
    }
    if diffs.len() > 4 {
        head.push(Line::from(Span::styled(
            format!("  and {} more here", diffs.len() - 4),
            t.style(Role::TextDim),
        )));
    }
    head.truncate(usize::from(area.height) / 2);
    let head_h = u16::try_from(head.len()).unwrap_or(0);
    frame.render_widget(
        Paragraph::new(head),
        Rect {
            height: head_h,
            ..area
        },
    );
    let rest = Rect {
        y: area.y + head_h,
        height: area.height.saturating_sub(head_h),
        ..area
    };
    let g = row.good.and_then(|i| on.view.good.steps.get(i));
    let b = row.bad.and_then(|i| on.doc.run.steps.get(i));
    let changes = on.state.diff(|| {
        word_diff(
            &g.map(step_text).unwrap_or_default(),
            &b.map(step_text).unwrap_or_default(),
        )
    });
    // Side by side when there is room, else one above the other.
    let wide = rest.width >= SIDE_BY_SIDE_MIN_WIDTH;
    let (left, right) = if wide {
        let [l, r] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(rest);
        (l, r)
    } else {
        (rest, rest)
    };
    let side_w = usize::from(left.width.saturating_sub(u16::from(wide)));
    let good_lines = side_lines(on.app, "good run", g, &changes, true, side_w);
    let bad_lines = side_lines(on.app, "this run", b, &changes, false, side_w);
    let height = usize::from(rest.height);
    if wide {
        frame.render_widget(Paragraph::new(take(good_lines, height)), left);
        frame.render_widget(Paragraph::new(take(bad_lines, height)), right);
    } else {
        // Each side gets half the room, or what the other leaves.
        let half = height / 2;
        let g_h = good_lines
            .len()
            .min(height.saturating_sub(bad_lines.len().min(half)));
        let mut lines = take(good_lines, g_h);
        let b_h = height.saturating_sub(lines.len());
        lines.extend(take(bad_lines, b_h));
        frame.render_widget(Paragraph::new(lines), rest);
    }
}

/// From this width the two steps of the selected row are shown side by side.
const SIDE_BY_SIDE_MIN_WIDTH: u16 = 100;

fn take(lines: Vec<Line<'static>>, n: usize) -> Vec<Line<'static>> {
    lines.into_iter().take(n).collect()
}

/// One side of the selected row: a heading naming the step, then its text with this side's part
/// of the word diff marked, each line of the text wrapped to `width` and indented.
fn side_lines(
    app: &App,
    name: &str,
    step: Option<&Step>,
    changes: &[WordChange],
    good: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let head = match step {
        Some(s) => format!("{name}: {} · {}", s.describe(), label(s)),
        None => format!("{name}: no step here"),
    };
    let mut lines = vec![Line::from(Span::styled(
        clipped(&head, width).into_owned(),
        t.style(Role::Heading),
    ))];
    if step.is_none() {
        return lines;
    }
    let indent = || ("  ".to_owned(), t.style(Role::Text));
    let mut current: Vec<(String, Style)> = vec![indent()];
    // The first line holding this side's part of the diff: the text is shown from a little
    // before it, so a change deep in a long text is in sight.
    let mut first_change: Option<usize> = None;
    let mut changed_here = false;
    let mut flush =
        |current: &mut Vec<(String, Style)>, lines: &mut Vec<Line<'static>>, changed: bool| {
            if changed && first_change.is_none() {
                first_change = Some(lines.len());
            }
            lines.extend(wrap_spans(std::mem::take(current), width, "  "));
        };
    for (text, style, changed) in side_pieces(changes, good, app) {
        let safe = inert_block(&text);
        for (k, p) in safe.split('\n').enumerate() {
            if k > 0 {
                flush(&mut current, &mut lines, changed_here);
                changed_here = false;
                current.push(indent());
            }
            if !p.is_empty() {
                changed_here |= changed;
                current.push((p.replace('\t', "    "), style));
            }
        }
    }
    if current.len() > 1 {
        flush(&mut current, &mut lines, changed_here);
    }
    match first_change {
        Some(at) if at > CONTEXT_LINES + 2 => {
            let mut out = vec![lines.swap_remove(0)];
            out.push(Line::from(Span::styled("  …", t.style(Role::TextDim))));
            out.extend(lines.into_iter().skip(at - CONTEXT_LINES));
            out
        }
        _ => lines,
    }
}

/// Lines of a step's text shown before its first change.
const CONTEXT_LINES: usize = 1;

/// Draws the list of runs to compare the open run with, over `body`.
pub fn render_chooser(app: &App, state: &ChooserState, frame: &mut Frame, body: Rect) {
    let t = &app.theme;
    let w = body.width.saturating_sub(4).min(90);
    let h = u16::try_from(state.items.len() + 4)
        .unwrap_or(u16::MAX)
        .min(body.height);
    let area = Rect {
        x: body.x + (body.width.saturating_sub(w)) / 2,
        y: body.y + (body.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(t.style(Role::BorderFocus))
        .title(Span::styled(
            " Compare with a good run ",
            t.style(Role::TitleFocus),
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut lines = vec![Line::from(Span::styled(
        clipped(&state.about, width).into_owned(),
        t.style(Role::TextDim),
    ))];
    for (k, item) in state.items.iter().enumerate() {
        let text = match item {
            AgainstChoice::Run { label, .. } => label.clone(),
            AgainstChoice::File => "a file: type its path".to_owned(),
        };
        let style = if k == state.cursor {
            t.style(Role::Selection)
        } else {
            t.style(Role::Text)
        };
        lines.push(Line::from(Span::styled(
            format!(
                "{:<width$}",
                clipped(&format!(" {text}"), width),
                width = width
            ),
            style,
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
