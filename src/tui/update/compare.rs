//! The compare view's part of `update`: opening it (on the first divergence), moving between
//! rows and between differences, showing the selected row's step in the panes, picking the run to
//! compare with (a trial of the same task that succeeded, or a file typed in a prompt) and
//! taking the comparison when it arrives. Pure: the comparison leaves as an [`Effect`].

use super::super::action::Action;
use super::super::app::{App, LineEdit, LineKind, Overlay, Pane};
use super::super::compare::render::page;
use super::super::compare::{AgainstChoice, AgainstPick, ChooserState, CompareState};
use super::super::effects::Effect;
use super::super::render::layout;
use super::super::widgets::scroll_list::{Motion, moved};
use super::jump::select;
use super::{focus, motion as pane_motion};
use crate::analysis::model::RunStatus;
use ratatui::layout::Rect;
use std::sync::Arc;

/// Handles the actions that are the compare view's; false for any other.
pub(super) fn handle(app: &mut App, action: &Action, fx: &mut Vec<Effect>) -> bool {
    match action {
        Action::Compare => open(app),
        Action::CompareWith => choose(app),
        Action::NextDifference | Action::PrevDifference => {
            step_difference(app, matches!(action, Action::NextDifference))
        }
        Action::Compared(i, doc) => compared(app, *i, doc.clone()),
        Action::CompareFailed(why) => app.problem(format!("no comparison: {why}")),
        Action::JumpToStep if matches!(app.overlay, Some(Overlay::Compare(_))) => show_step(app),
        Action::PickRun if matches!(app.overlay, Some(Overlay::CompareWith(_))) => pick(app, fx),
        Action::SearchAccept
            if app
                .line
                .as_ref()
                .is_some_and(|l| l.kind == LineKind::AgainstPath) =>
        {
            accept_path(app, fx)
        }
        _ => return false,
    }
    true
}

/// `D`: the compare view when the run was compared, else the list of runs to compare with.
fn open(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    match &doc.against {
        Some(view) => app.overlay = Some(Overlay::Compare(CompareState::at(view.start_row()))),
        None => choose(app),
    }
}

/// The list of runs to compare with: the file's other runs of the same task that succeeded,
/// then a file.
fn choose(app: &mut App) {
    if app.doc.is_none() {
        return;
    }
    let open = app.run_index();
    let mut items = Vec::new();
    let mut about = "the run to compare with: one that went right".to_owned();
    if let Some(p) = &app.picker {
        let task = p.runs.get(open).and_then(|r| r.task_id.clone());
        if let Some(task) = &task {
            about = format!(
                "the run to compare with: trials of task '{}' that succeeded, or a file",
                super::super::widgets::inert_text::clipped(task, 40)
            );
            for (index, r) in p.runs.iter().enumerate() {
                if index != open
                    && r.status == RunStatus::Succeeded
                    && r.task_id.as_deref() == Some(task.as_str())
                {
                    let title = r.title.as_deref().unwrap_or(r.id.as_str());
                    items.push(AgainstChoice::Run {
                        index,
                        label: format!("run {index}: {title} (succeeded, {} steps)", r.steps),
                    });
                }
            }
            if items.is_empty() {
                about = format!(
                    "no other trial of task '{}' succeeded in this file: compare with a file",
                    super::super::widgets::inert_text::clipped(task, 40)
                );
            }
        }
    }
    items.push(AgainstChoice::File);
    app.overlay = Some(Overlay::CompareWith(ChooserState {
        items,
        cursor: 0,
        about,
    }));
}

/// `Enter` in the list: compare with the chosen trial, or ask for the file's path.
fn pick(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(Overlay::CompareWith(c)) = app.overlay.take() else {
        return;
    };
    match c.items.get(c.cursor) {
        Some(AgainstChoice::Run { index, .. }) => {
            let i = app.run_index();
            app.message(format!("comparing with run {index} of the file…"));
            fx.push(Effect::Compare(i, AgainstPick::Run(*index)));
        }
        Some(AgainstChoice::File) => {
            app.line = Some(LineEdit {
                kind: LineKind::AgainstPath,
                text: String::new(),
                before: None,
                error: None,
            });
            app.status = None;
        }
        None => {}
    }
}

fn accept_path(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(l) = app.line.take() else { return };
    let path = l.text.trim();
    if path.is_empty() {
        app.message("no file given: nothing was compared");
        return;
    }
    let i = app.run_index();
    app.message("comparing…");
    fx.push(Effect::Compare(i, AgainstPick::File(path.to_owned())));
}

/// The run analysed against the good one: shown, with the compare view open on the first
/// divergence (unless another run was opened meanwhile).
fn compared(app: &mut App, i: usize, doc: Arc<super::super::app::Document>) {
    if i != app.run_index() {
        return;
    }
    let Some(view) = doc.against.clone() else {
        return;
    };
    app.replace_report(doc);
    app.overlay = Some(Overlay::Compare(CompareState::at(view.start_row())));
    let cmp = &view.comparison;
    app.message(match cmp.first_divergence.as_ref() {
        Some(d) => format!(
            "compared with {}: the runs part first at row {}; the suspects count it",
            view.label,
            d.row + 1
        ),
        None => format!("compared with {}: the runs do the same thing", view.label),
    });
}

/// Moves in the compare view, or in the list of runs to compare with.
pub(super) fn motion(app: &mut App, m: Motion) {
    let body = layout(app, Rect::new(0, 0, app.size.0, app.size.1)).body;
    let rows = app
        .doc
        .as_ref()
        .and_then(|d| d.against.as_ref())
        .map_or(0, |v| v.comparison.rows.len());
    match &mut app.overlay {
        Some(Overlay::Compare(s)) => s.row = moved(s.row, m, rows, page(body, rows)),
        Some(Overlay::CompareWith(c)) => {
            c.cursor = moved(c.cursor, m, c.items.len(), c.items.len().max(1))
        }
        _ => pane_motion(app, m),
    }
}

/// `n` / `N`: the next or previous row where the runs differ.
fn step_difference(app: &mut App, forward: bool) {
    let Some(view) = app.doc.as_ref().and_then(|d| d.against.clone()) else {
        return;
    };
    let Some(Overlay::Compare(s)) = &mut app.overlay else {
        return;
    };
    match view.step_difference(s.row, forward) {
        Some(r) => s.row = r,
        None => app.message(if forward {
            "no further row where the runs differ"
        } else {
            "no earlier row where the runs differ"
        }),
    }
}

/// `Enter`: the view closes on this run's step of the selected row (or, where only the good run
/// took a step, this run's next one) in the timeline.
fn show_step(app: &mut App) {
    let Some(view) = app.doc.as_ref().and_then(|d| d.against.clone()) else {
        return;
    };
    let Some(Overlay::Compare(s)) = &app.overlay else {
        return;
    };
    let rows = view.comparison.rows.get(s.row..).unwrap_or_default();
    match rows.iter().find_map(|r| r.bad) {
        Some(i) => {
            app.overlay = None;
            focus(app, Pane::Timeline);
            select(app, i);
        }
        None => app.message("this run had ended here: no step of it to show"),
    }
}
