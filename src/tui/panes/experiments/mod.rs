//! The experiments pane: jobs started from the screen (ablation of the selected suspect or unit,
//! restoration of a dropped unit, replay from a step, the whole shortlist, localize) with live
//! progress per sample, outputs, stderr tails, verdicts and classes, what each saved sample formed
//! in the attribution ledger, and the ledger's rows. The state is in [`state`], a job's lines in
//! [`jobs`], the ledger's rows in [`ledger`]; this file lays them out: the rows (one line each,
//! cut with `…`, the selected one in full below) over the selected row's detail, which wraps and
//! scrolls (page keys), with a line saying what is above and below. The verdicts and
//! dispositions shown are the engine's and the ledger's, never computed here.

mod jobs;
pub mod ledger;
mod state;
#[cfg(test)]
mod state_tests;
pub mod words;

pub use jobs::{HELD, LEGEND, verdict_line, verdict_mark};
pub use state::{
    Counts, ExperimentsState, Job, JobState, ProbeRun, RunnerReach, SampleState, plan_label,
};

use crate::tui::action::Action;
use crate::tui::app::{App, Pane};
use crate::tui::keymap::Scope;
use crate::tui::render::pane_block;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, width_of, wrap_spans};
use crate::tui::widgets::scroll_list::item_window;
use crate::tui::widgets::selection::selected_row;
use jobs::{job_lines, job_row, job_status};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the experiments pane.
pub fn render(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let ex = &app.experiments;
    let running = ex.running().count();
    let n = ex.jobs.len();
    let title = match (n, running) {
        (0, _) => "no jobs".to_owned(),
        (_, 0) => format!("{n} job{}", if n == 1 { "" } else { "s" }),
        _ => format!("{running} of {n} running"),
    };
    let block = pane_block(app, Pane::Experiments, focused, &title, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let cursor = ex.cursor.min(ex.row_count().saturating_sub(1));
    // The selected row is shown whole, wrapped (issue 26: a finished job's verdict and what it
    // spent in the pane's first lines); the others take one line each, cut with `…`.
    let selected = row_pieces(app, cursor);
    let selected_lines = if ex.row_count() == 0 {
        0
    } else {
        wrap_spans(selected.clone(), width, ROW_INDENT)
            .len()
            .min(MAX_ROW_LINES)
    };
    // The runner's line, the rows and a blank line, at most half the pane.
    let list_h = (ex.row_count() + selected_lines.saturating_sub(1) + 2)
        .min(usize::from(inner.height) / 2)
        .max(3 + selected_lines.saturating_sub(1));
    let [top, bottom] = Layout::vertical([
        Constraint::Length(u16::try_from(list_h).unwrap_or(u16::MAX)),
        Constraint::Min(0),
    ])
    .areas(inner);

    let mut lines = vec![Line::styled(
        clipped(&ex.runner_note, width).into_owned(),
        t.style(Role::TextDim),
    )];
    if ex.row_count() == 0 {
        let k = |a: Action| {
            app.keymap
                .first_key(&[Scope::Global], &a)
                .unwrap_or_else(|| a.name().to_owned())
        };
        lines.extend(wrap_spans(
            vec![(
                format!(
                    "No experiments yet. Select a suspect and press {} to re-run your agent without it; {} restores a dropped unit (Dropped pane), {} replays from the selected step, {} runs the whole pipeline.",
                    k(Action::Ablate),
                    k(Action::Restore),
                    k(Action::Replay),
                    k(Action::Localize)
                ),
                t.style(Role::Text),
            )],
            width,
            "",
        ));
        if !ex.ledger.path.as_os_str().is_empty() {
            lines.extend(wrap_spans(
                vec![(
                    format!(
                        "Each re-run is saved to the attribution ledger '{}' before it is shown.",
                        clipped(&ex.ledger.path.display().to_string(), 300)
                    ),
                    t.style(Role::TextDim),
                )],
                width,
                "",
            ));
        }
        if let Some(e) = &ex.ledger_note {
            lines.extend(wrap_spans(
                vec![(
                    format!("ledger: {}", clipped(e, 300)),
                    t.style(Role::Warning),
                )],
                width,
                "  ",
            ));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    if let Some(e) = &ex.ledger_note {
        lines[0] = Line::styled(
            clipped(&format!("{} · ledger: {e}", ex.runner_note), width).into_owned(),
            t.style(Role::TextDim),
        );
    }
    let rows_h = usize::from(top.height).saturating_sub(1);
    let first = item_window(&ex.offset, cursor, rows_h, |r| {
        if r == cursor { selected_lines } else { 1 }
    });
    let mut r = first;
    while r < ex.row_count() && lines.len() <= rows_h {
        if r == cursor {
            let mut wrapped = wrap_spans(selected.clone(), width, ROW_INDENT);
            wrapped.truncate(MAX_ROW_LINES);
            for l in wrapped {
                lines.push(selected_row(l, width, focused, t));
            }
        } else {
            let spans = row_pieces(app, r)
                .into_iter()
                .map(|(text, style)| Span::styled(text, style))
                .collect();
            lines.push(fit(spans, width).0);
        }
        r += 1;
    }
    lines.truncate(rows_h + 1);
    frame.render_widget(Paragraph::new(lines), top);
    // The selected row's detail; it scrolls with the page keys.
    let detail: Vec<Line<'static>> = match ex.job_at(cursor) {
        Some(job) => {
            let (status, role) = job_status(app, job);
            let mut d = wrap_spans(
                vec![
                    (format!("#{} ", job.id.0), t.style(Role::TextDim)),
                    (job.label.clone(), t.style(Role::Heading)),
                    (format!(" · {status}"), t.style(role)),
                ],
                width,
                "  ",
            );
            d.extend(job_lines(app, job, width));
            d
        }
        None => ex
            .ledger_row_at(cursor)
            .map(|row| ledger::detail_lines(app, &ex.ledger, &ex.history, row, width))
            .unwrap_or_default(),
    };
    let room = usize::from(bottom.height);
    let total = detail.len();
    // One line at the bottom says what is below (and above) when the detail does not fit.
    let shown = if total > room {
        room.saturating_sub(1)
    } else {
        room
    };
    let first = ex.detail_scroll.min(total.saturating_sub(shown));
    ex.detail_extent.set((total, shown));
    let mut visible: Vec<Line<'static>> = detail.into_iter().skip(first).take(shown).collect();
    if total > room {
        let below = total.saturating_sub(first + shown);
        let k = |a: Action| {
            app.keymap
                .first_key(&[Scope::Panes], &a)
                .unwrap_or_else(|| a.name().to_owned())
        };
        visible.push(Line::styled(
            clipped(
                &match (first, below) {
                    (0, b) => format!(
                        "── {} below: {} scrolls ──",
                        crate::analysis::count::counted(b, "line", "lines"),
                        k(Action::PageDown)
                    ),
                    (a, 0) => format!(
                        "── {} above: {} scrolls back ──",
                        crate::analysis::count::counted(a, "line", "lines"),
                        k(Action::PageUp)
                    ),
                    (a, b) => format!(
                        "── {a} above, {b} below: {} / {} scroll ──",
                        k(Action::PageDown),
                        k(Action::PageUp)
                    ),
                },
                width,
            )
            .into_owned(),
            t.style(Role::TextDim),
        ));
    }
    frame.render_widget(Paragraph::new(visible), bottom);
}

/// Columns a wrapped row's continuation lines are indented by, and the most lines it takes.
const ROW_INDENT: &str = "      ";
const MAX_ROW_LINES: usize = 4;

/// The pieces of row `r`: a job (`▶#1` and what it found or where it is) or a ledger row.
fn row_pieces(app: &App, r: usize) -> Vec<(String, ratatui::style::Style)> {
    let t = &app.theme;
    let ex = &app.experiments;
    let cursor = ex.cursor.min(ex.row_count().saturating_sub(1));
    let spans = if let Some(job) = ex.job_at(r) {
        let mark = if r == cursor { "▶" } else { " " };
        let mut spans = vec![Span::styled(
            format!("{mark}#{:<3}", job.id.0),
            t.style(Role::TextDim),
        )];
        spans.extend(job_row(app, job));
        spans
    } else if let Some(row) = ex.ledger_row_at(r) {
        ledger::row_spans(app, &ex.ledger, &ex.history, row)
    } else {
        Vec::new()
    };
    spans
        .into_iter()
        .map(|s| (s.content.into_owned(), s.style))
        .collect()
}

/// One row of a list as one line of at most `width` columns: cut with `…` when it is longer
/// (then the selected row is shown in full below the list), and whether it was cut.
fn fit(spans: Vec<Span<'static>>, width: usize) -> (Line<'static>, bool) {
    let mut out = Vec::new();
    let mut used = 0usize;
    for s in spans {
        let w = width_of(&s.content);
        if used + w <= width {
            used += w;
            out.push(s);
            continue;
        }
        let room = width.saturating_sub(used);
        if room > 0 {
            out.push(Span::styled(
                clipped(&s.content, room).into_owned(),
                s.style,
            ));
        }
        return (Line::from(out), true);
    }
    (Line::from(out), false)
}
