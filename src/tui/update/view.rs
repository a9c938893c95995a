//! How the screen is looked at, as `update` changes it: zooming a pane, the timeline's order and
//! waterfall, the warnings list, mouse clicks on rows, opening a step in a pager or editor,
//! writing the diagnosis to share, and reading the run's file again when it changes. Pure: all
//! I/O leaves as an [`Effect`].

use super::super::action::Action;
use super::super::app::{App, Document, Overlay, Pane};
use super::super::effects::{Effect, External};
use super::super::overlays::warnings;
use super::super::panes::timeline::SortKey;
use super::super::widgets::inert_text::clipped;
use super::{focus, select};
use std::sync::Arc;

/// `z`: the focused pane on the whole screen, or back.
pub(super) fn zoom(app: &mut App) {
    app.zoom = !app.zoom;
    if app.zoom {
        let k = app.key(Action::Zoom);
        app.message(format!(
            "{} fills the screen: {k} or {} brings the other panes back",
            app.focus.title(),
            app.key(Action::Back)
        ));
    } else {
        app.status = None;
    }
}

/// `s` in the timeline: the next order.
pub(super) fn sort(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    let next = app.timeline.sort.next();
    app.timeline.set_sort(&doc, next);
    let words = next.words();
    let k = app.key(Action::Sort);
    app.message(if next == SortKey::Position {
        format!("timeline {words}")
    } else {
        format!("timeline {words}; {k} again for the next order")
    });
}

/// `w`: the waterfall, or the columns back.
pub(super) fn waterfall(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    if doc.clock.is_none() {
        app.problem(
            "no step records when it started or ended: there is no clock to draw the steps on",
        );
        return;
    }
    focus(app, Pane::Timeline);
    app.timeline.waterfall = !app.timeline.waterfall;
    if app.timeline.waterfall {
        let k = app.key(Action::ToggleFold);
        app.message(format!(
            "each step is a bar on the run's clock; a folded step with nested steps is one ▓ bar for them all ({k} folds and unfolds)"
        ));
    }
}

/// `W`: the warnings list.
pub(super) fn warnings(app: &mut App) {
    app.overlay = Some(Overlay::Warnings {
        cursor: 0,
        offset: std::cell::Cell::new(0),
    });
}

/// `Enter` in the warnings list: the step the warning is about.
pub(super) fn warning_step(app: &mut App) {
    let (Some(doc), Some(Overlay::Warnings { cursor, .. })) = (app.doc.clone(), &app.overlay)
    else {
        return;
    };
    match warnings::row_at(app, *cursor).and_then(|r| warnings::row_step(&doc, r)) {
        Some(i) => {
            app.overlay = None;
            focus(app, Pane::Timeline);
            select(app, i);
        }
        None => app.problem("this warning is not about a step"),
    }
}

/// The pane under a point takes the focus.
pub(super) fn focus_at(app: &mut App, x: u16, y: u16) {
    let areas = super::super::render::layout(
        app,
        ratatui::layout::Rect::new(0, 0, app.size.0, app.size.1),
    );
    if let Some((pane, _)) = areas
        .panes
        .iter()
        .find(|(_, r)| r.contains(ratatui::layout::Position { x, y }))
    {
        focus(app, *pane);
    }
}

/// A click: the pane under it takes the focus, and the row under it (as last drawn) is selected.
pub(super) fn click(app: &mut App, x: u16, y: u16) {
    if app.overlay.is_some() {
        return;
    }
    let hit = app
        .hits
        .borrow()
        .iter()
        .find(|h| h.y == y && x >= h.x && x < h.x.saturating_add(h.width))
        .copied();
    focus_at(app, x, y);
    let Some(h) = hit else { return };
    let Some(doc) = app.doc.clone() else { return };
    focus(app, h.pane);
    match h.pane {
        Pane::Timeline => {
            if h.index < app.timeline.visible.len() {
                app.timeline.cursor = h.index;
            }
        }
        Pane::Suspects => {
            app.suspects.set_cursor(h.index);
            super::follow_suspect(app);
        }
        Pane::Dropped => {
            app.dropped.cursor = h.index;
            if let Some(i) = super::super::panes::dropped::selected_step(app, &doc) {
                select(app, i);
            }
        }
        Pane::Claims => app.claims.cursor = h.index,
        Pane::Detail | Pane::Experiments => {}
    }
}

/// `O` / `E`: the selected step in the user's pager or editor.
pub(super) fn external(app: &mut App, program: External, fx: &mut Vec<Effect>) {
    let (Some(doc), Some(step)) = (app.doc.clone(), app.selected_step()) else {
        app.problem("no step is selected");
        return;
    };
    if app.headless {
        app.problem("opening a pager or an editor needs a terminal; nothing was opened");
        return;
    }
    let command = match program {
        External::Pager => app.viewers.pager.clone(),
        External::Editor => app.viewers.editor.clone(),
    };
    fx.push(Effect::External {
        program,
        command,
        doc,
        step,
    });
}

/// `S`: the diagnosis as Markdown, written to a file.
pub(super) fn share(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let Some(dir) = app.share_dir.clone() else {
        app.problem("there is no folder to write the diagnosis to");
        return;
    };
    let verdicts = super::super::share::session_verdicts(app);
    fx.push(Effect::Share { doc, verdicts, dir });
}

/// The run's file changed (`changed`), or `C-r`: read it again. A saved report (`--report`) is
/// never analysed again: the status line says so, and nothing is read.
pub(super) fn reload(app: &mut App, changed: bool, fx: &mut Vec<Effect>) {
    if let Some(saved) = app.doc.as_ref().and_then(|d| d.saved_report.clone()) {
        let name = saved
            .file_name()
            .map(|n| clipped(&n.to_string_lossy(), 60).into_owned())
            .unwrap_or_default();
        if changed {
            app.message(format!(
                "the run's file changed; the saved report '{name}' (--report) on screen describes it as it was: open the run without --report to follow it"
            ));
        } else {
            app.problem(format!(
                "nothing was read again: the saved report '{name}' (--report) is never analysed again; open the run without --report to follow its file"
            ));
        }
        return;
    }
    if app.headless {
        app.problem("reading the run's file again needs the live screen");
    } else if app.doc.as_ref().is_some_and(|d| d.source.is_some()) {
        fx.push(Effect::Reload(app.run_index()));
    } else {
        app.problem("this run was not read from a file: there is nothing to read again");
    }
}

/// The run read and analysed again: it replaces the one on screen, the same step selected (by
/// id), the filter, order, folds and experiments kept.
pub(super) fn reloaded(app: &mut App, run: usize, doc: Arc<Document>, fx: &mut Vec<Effect>) {
    if app.doc.is_none() || app.run_index() != run {
        return;
    }
    let Some(old) = app.doc.clone() else { return };
    let selected = app
        .selected_step()
        .and_then(|i| old.run.steps.get(i))
        .map(|s| s.id.clone());
    let (before, after) = (old.run.steps.len(), doc.run.steps.len());
    let filter_query = app.timeline.filter.as_ref().map(|f| f.query.clone());
    let (sort, waterfall) = (app.timeline.sort, app.timeline.waterfall);
    let folded: Vec<_> = app
        .timeline
        .folded
        .iter()
        .filter_map(|&i| old.run.steps.get(i).map(|s| s.id.clone()))
        .collect();
    let (focus_was, zoom) = (app.focus, app.zoom);
    let view = app.suspects.view;
    let suspect = super::super::panes::suspects::ranked_step(&old, app.suspects.cursor)
        .map(|s| s.step.clone());
    let unit = super::super::panes::suspects::influence_entries(&old)
        .get(app.suspects.context)
        .map(|e| e.id.clone());
    app.replace_report(doc.clone());
    // The suspects pane keeps its list and its selected item when the new report still has it.
    app.suspects.view = view;
    if let Some(k) = suspect.and_then(|id| {
        doc.report
            .suspects
            .iter()
            .chain(&doc.report.leads)
            .position(|s| s.step == id)
    }) {
        app.suspects.cursor = k;
    }
    if let Some(k) = unit.and_then(|id| {
        super::super::panes::suspects::influence_entries(&doc)
            .iter()
            .position(|e| e.id == id)
    }) {
        app.suspects.context = k;
    }
    app.focus = focus_was;
    app.zoom = zoom;
    app.timeline.sort = sort;
    app.timeline.waterfall = waterfall;
    app.timeline.folded = folded
        .iter()
        .filter_map(|id| doc.index_of(id.as_str()))
        .collect();
    app.timeline.recompute(&doc);
    if let Some(i) = selected.as_ref().and_then(|id| doc.index_of(id.as_str())) {
        select(app, i);
    }
    if let Some(q) = filter_query {
        // Put back once the filter has been run over the new run.
        app.line = None;
        app.timeline.refilter = Some(q.clone());
        fx.push(Effect::Filter {
            doc: doc.clone(),
            query: q,
        });
    }
    fx.push(Effect::Reopen(doc));
    app.message(format!(
        "the run's file changed and was read again: {} step{} (was {})",
        after,
        if after == 1 { "" } else { "s" },
        before
    ));
}

/// A filter's results after a reload (no prompt open): kept when they answer the filter in force.
pub(super) fn refiltered(
    app: &mut App,
    query: &str,
    result: &Result<Arc<super::super::overlays::search::SearchHits>, String>,
) {
    let Some(doc) = app.doc.clone() else { return };
    if app.line.is_some() || app.timeline.refilter.as_deref() != Some(query) {
        return;
    }
    app.timeline.refilter = None;
    let keep = app.selected_step();
    match result {
        Ok(h) => app.timeline.set_filter(&doc, Some(h.clone())),
        Err(e) => {
            app.timeline.set_filter(&doc, None);
            app.problem(format!("the filter was taken away: {}", clipped(e, 200)));
        }
    }
    if let Some(i) = keep
        && app.timeline.row_of(i).is_some()
    {
        select(app, i);
    }
}
