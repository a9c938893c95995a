//! The experiments pane: jobs started from the screen (ablation of the selected suspect or unit,
//! restoration of a dropped unit, replay from a step, the whole shortlist, localize) with live
//! progress per sample, outputs, stderr tails, verdicts and classes, what each saved sample formed
//! in the attribution ledger, and the ledger's rows. The state is in [`state`], a job's lines in
//! [`jobs`], the ledger's rows in [`ledger`]; this file lays them out. The verdicts and
//! dispositions shown are the runner's and the ledger's, never computed here.

mod jobs;
pub mod ledger;
mod state;

pub use jobs::{HELD, LEGEND, verdict_line, verdict_mark};
pub use state::{ExperimentsState, Job, JobState, ProbeRun, SampleState};

use crate::tui::action::Action;
use crate::tui::app::{App, Pane};
use crate::tui::keymap::Scope;
use crate::tui::render::pane_block;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
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
    let running = ex
        .jobs
        .iter()
        .filter(|j| !matches!(j.state, JobState::Ended(_)))
        .count();
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
        if let Some(p) = &ex.ledger.path {
            lines.extend(wrap_spans(
                vec![(
                    format!(
                        "Each re-run is saved to the attribution ledger '{}' before it is shown.",
                        clipped(p, 300)
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
    let cursor = ex.cursor.min(ex.row_count().saturating_sub(1));
    let range = window(&ex.offset, cursor, rows_h, ex.row_count());
    for r in range {
        let mut spans = Vec::new();
        if let Some(job) = ex.job_at(r) {
            let mark = if r == cursor { "▶" } else { " " };
            spans.push(Span::styled(
                format!("{mark}#{:<3}", job.id.0),
                t.style(Role::TextDim),
            ));
            spans.push(Span::styled(
                format!("{}  ", clipped(&job.request.label(), width / 2)),
                t.style(Role::Text),
            ));
            spans.push(job_status(app, job));
        } else if let Some(row) = ex.ledger_row_at(r) {
            spans = ledger::row_spans(app, &ex.ledger, row, width);
        }
        let mut line = Line::from(spans);
        if r == cursor {
            line = selected_row(line, width, focused, t);
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), top);
    let detail = match ex.job_at(cursor) {
        Some(job) => job_lines(app, job, width),
        None => ex
            .ledger_row_at(cursor)
            .map(|row| ledger::detail_lines(app, &ex.ledger, row, width))
            .unwrap_or_default(),
    };
    frame.render_widget(Paragraph::new(detail), bottom);
}
