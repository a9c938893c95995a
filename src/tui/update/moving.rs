//! Moving the cursor: the motions of every pane and overlay (with the page the pane is drawn
//! at), the suspects' next and previous, the influence list's toggle and the timeline's folds.

use super::super::action::Action;
use super::super::app::{App, Overlay, Pane};
use super::super::overlays::help;
use super::super::overlays::viewer;
use super::super::panes::{dropped, suspects};
use super::super::render::{detail_width, layout, pane_height};
use super::super::widgets::scroll_list::{Motion, moved};
use super::jump::select;
use super::{experiments, focus};
use ratatui::layout::Rect;

pub(super) fn motion(app: &mut App, m: Motion) {
    match &app.overlay {
        Some(Overlay::Help { scroll, .. }) => {
            let (len, page) = help::extent(app);
            let s = moved(*scroll, m, len, page);
            if let Some(Overlay::Help { scroll, .. }) = &mut app.overlay {
                *scroll = s;
            }
            return;
        }
        Some(Overlay::Warnings { cursor, .. }) => {
            let n = super::super::overlays::warnings::row_count(app);
            let page = super::super::overlays::warnings::page(app);
            let c = moved(*cursor, m, n, page);
            if let Some(Overlay::Warnings { cursor, .. }) = &mut app.overlay {
                *cursor = c;
            }
            return;
        }
        Some(Overlay::Viewer { scroll }) => {
            let len = detail_len(app);
            // The rows the viewer is drawn with (the status line takes more when it speaks).
            let body = layout(app, Rect::new(0, 0, app.size.0, app.size.1)).body;
            let page = usize::from(viewer::inner_area(body).height).max(1);
            let s = moved(*scroll, m, last_page(len, page), page);
            app.overlay = Some(Overlay::Viewer { scroll: s });
            return;
        }
        Some(Overlay::Confirm(_) | Overlay::Prompt(_)) => return,
        Some(Overlay::Compare(_) | Overlay::CompareWith(_)) => {
            super::compare::motion(app, m);
            return;
        }
        None => {}
    }
    let Some(doc) = app.doc.clone() else { return };
    let page = pane_height(app, app.focus);
    match app.focus {
        Pane::Timeline => {
            app.timeline.cursor = moved(app.timeline.cursor, m, app.timeline.visible.len(), page);
        }
        Pane::Suspects => {
            let n = suspects::item_count(&doc, app.suspects.view);
            app.suspects
                .set_cursor(moved(app.suspects.cursor(), m, n, page));
            follow_suspect(app);
        }
        Pane::Detail => {
            let len = detail_len(app);
            app.detail.scroll = moved(app.detail.scroll, m, last_page(len, page), page);
        }
        Pane::Dropped => {
            app.dropped.cursor = moved(app.dropped.cursor, m, doc.dropped.rows.len(), page);
            if let Some(i) = dropped::selected_step(app, &doc) {
                select(app, i);
            }
        }
        Pane::Claims => {
            app.claims.cursor = moved(app.claims.cursor, m, doc.report.claims.len(), page)
        }
        Pane::Experiments => experiments::motion(app, m, page),
    }
}

/// The timeline follows the selected suspect.
pub(super) fn follow_suspect(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    if let Some(i) = suspects::selected(app, &doc).and_then(|it| suspects::item_step(&doc, it)) {
        select(app, i);
    }
}

/// Shows the other list of the suspects pane (focusing the pane first when it is not).
pub(super) fn toggle_influence(app: &mut App) {
    use suspects::View;
    let Some(doc) = app.doc.clone() else { return };
    // Focused: switch lists; from another pane: show the influence ranking.
    let view = match (app.focus, app.suspects.view) {
        (Pane::Suspects, View::Context) => View::Steps,
        _ => View::Context,
    };
    focus(app, Pane::Suspects);
    app.suspects.view = view;
    if view == View::Context && suspects::influence_entries(&doc).is_empty() {
        app.problem("this report has no context-influence ranking: no model step records the context it was sent");
    }
    follow_suspect(app);
}

pub(super) fn step_suspect(app: &mut App, forward: bool) {
    let Some(doc) = app.doc.clone() else { return };
    let n = doc.report.suspects.len() + doc.report.leads.len();
    if n == 0 {
        app.problem("this run has no suspects");
        return;
    }
    let cur = app.suspects.cursor.min(n - 1);
    let next = if forward {
        (cur + 1).min(n - 1)
    } else {
        cur.saturating_sub(1)
    };
    if next == cur && app.suspects.cursor < n {
        app.message(if forward {
            "that is the last suspect"
        } else {
            "that is the first suspect"
        });
    }
    app.suspects.cursor = next;
    app.suspects.view = suspects::View::Steps;
    app.secondary = Pane::Suspects;
    follow_suspect(app);
}

pub(super) fn fold(app: &mut App, action: &Action) {
    let Some(doc) = app.doc.clone() else { return };
    if app.focus != Pane::Timeline {
        return;
    }
    match action {
        Action::Collapse => app.timeline.collapse(&doc),
        Action::Expand => app.timeline.expand(&doc),
        _ => app.timeline.toggle_fold(&doc),
    }
}

/// The scroll positions of a text `len` lines long shown `page` at a time: the last one shows the
/// last page whole, so `G` never leaves a screen with one line on it (issue 26).
fn last_page(len: usize, page: usize) -> usize {
    len.saturating_sub(page) + 1
}

/// Lines of the selected step's prepared detail at the current width (0 until it is ready).
fn detail_len(app: &App) -> usize {
    app.selected_step()
        .and_then(|i| {
            app.detail_cache
                .get((i, detail_width(app)?, crate::tui::render::detail_full(app)))
                .map(|d| d.lines.len())
        })
        .unwrap_or(0)
}
