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
use crate::tui::widgets::scroll_list::window;
use crate::tui::widgets::selection::selected_row;
use jobs::{job_lines, job_status};
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
    // The runner's line, the rows and a blank line, at most half the pane.
    let list_h = (ex.row_count() + 2)
        .min(usize::from(inner.height) / 2)
        .max(3);
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
    let pieces = |spans: Vec<Span<'static>>| -> Vec<(String, ratatui::style::Style)> {
        spans
            .into_iter()
            .map(|s| (s.content.into_owned(), s.style))
            .collect()
    };
    if let Some(e) = &ex.ledger_note {
        lines[0] = Line::styled(
            clipped(&format!("{} · ledger: {e}", ex.runner_note), width).into_owned(),
            t.style(Role::TextDim),
        );
    }
    let rows_h = usize::from(top.height).saturating_sub(1);
    let cursor = ex.cursor.min(ex.row_count().saturating_sub(1));
    let range = window(&ex.offset, cursor, rows_h, ex.row_count());
    let mut cursor_cut = false;
    for r in range {
        let mut spans = Vec::new();
        if let Some(job) = ex.job_at(r) {
            let mark = if r == cursor { "▶" } else { " " };
            spans.push(Span::styled(
                format!("{mark}#{:<3}", job.id.0),
                t.style(Role::TextDim),
            ));
            spans.push(Span::styled(
                format!("{}  ", job.label),
                t.style(Role::Text),
            ));
            let (status, role) = job_status(app, job);
            spans.push(Span::styled(status, t.style(role)));
        } else if let Some(row) = ex.ledger_row_at(r) {
            spans = ledger::row_spans(app, &ex.ledger, row);
        }
        let (mut line, cut) = fit(spans, width);
        if r == cursor {
            cursor_cut = cut;
            line = selected_row(line, width, focused, t);
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), top);
    // The selected row in full when the list cut it, then its detail; the detail scrolls with
    // the page keys.
    let mut detail: Vec<Line<'static>> = Vec::new();
    let head = match ex.job_at(cursor) {
        Some(job) => {
            let (status, role) = job_status(app, job);
            vec![
                (format!("#{} ", job.id.0), t.style(Role::TextDim)),
                (job.label.clone(), t.style(Role::Heading)),
                (format!(" · {status}"), t.style(role)),
            ]
        }
        None => ex
            .ledger_row_at(cursor)
            .map(|row| pieces(ledger::row_spans(app, &ex.ledger, row)))
            .unwrap_or_default(),
    };
    if cursor_cut {
        detail.extend(wrap_spans(head, width, "  "));
    }
    detail.extend(match ex.job_at(cursor) {
        Some(job) => job_lines(app, job, width),
        None => ex
            .ledger_row_at(cursor)
            .map(|row| ledger::detail_lines(app, &ex.ledger, row, width))
            .unwrap_or_default(),
    });
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
                &format!(
                    "── {first} line(s) above, {below} below: {} / {} scroll ──",
                    k(Action::PageDown),
                    k(Action::PageUp)
                ),
                width,
            )
            .into_owned(),
            t.style(Role::TextDim),
        ));
    }
    frame.render_widget(Paragraph::new(visible), bottom);
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
