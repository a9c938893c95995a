//! The run list's part of `update`: opening the selected run, coming back to the list from an
//! open run, moving, and the fuzzy filter typed after `/` (the search keys drive it while the
//! list is on screen). Pure: opening a run leaves as an [`Effect`].

use super::super::action::Action;
use super::super::app::{App, Overlay};
use super::super::effects::Effect;
use super::super::picker;
use super::super::widgets::scroll_list::{Motion, moved};
use ratatui::layout::Rect;

/// Opens the selected run, or goes back to it when it is the one already open.
pub(super) fn pick(app: &mut App, fx: &mut Vec<Effect>) {
    let has_doc = app.doc.is_some();
    let Some(p) = app.picker.as_mut().filter(|p| p.visible || !has_doc) else {
        return;
    };
    if p.opening.is_some() {
        return;
    }
    let Some(i) = p.selected() else {
        app.problem("no run is selected: the filter matches none");
        return;
    };
    if has_doc && p.opened == Some(i) {
        p.visible = false;
        p.filtering = false;
        return;
    }
    p.opening = Some(i);
    p.filtering = false;
    fx.push(Effect::OpenRun(i));
}

/// Shows the list again over the open run.
pub(super) fn show(app: &mut App) {
    match app.picker.as_mut() {
        Some(p) => {
            p.visible = true;
            if let Some(o) = p.opened {
                p.select_run(o);
            }
        }
        None => app.message("this file holds one run: there is no list to go back to"),
    }
}

/// Handles an action while the list is on screen; false when it is not the list's.
pub(super) fn handle(app: &mut App, action: &Action) -> bool {
    // The help drawn over the list takes its own keys.
    if matches!(app.overlay, Some(Overlay::Help { .. })) {
        return false;
    }
    let has_doc = app.doc.is_some();
    let mouse = app.mouse;
    let page = picker::page(Rect::new(0, 0, app.size.0, app.size.1));
    let Some(p) = app.picker.as_mut().filter(|p| p.visible || !has_doc) else {
        return false;
    };
    match action {
        Action::Search => {
            p.filtering = true;
        }
        Action::SearchInput(c) => {
            if !p.push(*c) {
                app.problem("the filter is full");
            }
        }
        Action::SearchBackspace => p.pop(),
        Action::SearchAccept => p.filtering = false,
        Action::SearchNext => p.cursor = moved(p.cursor, Motion::Down, p.shown.len(), page),
        Action::SearchPrev => p.cursor = moved(p.cursor, Motion::Up, p.shown.len(), page),
        Action::Back => {
            if p.filtering || !p.filter.is_empty() {
                p.clear_filter();
            } else if has_doc {
                p.visible = false;
            }
        }
        Action::MoveDown => p.cursor = moved(p.cursor, Motion::Down, p.shown.len(), page),
        Action::MoveUp => p.cursor = moved(p.cursor, Motion::Up, p.shown.len(), page),
        Action::PageDown => p.cursor = moved(p.cursor, Motion::PageDown, p.shown.len(), page),
        Action::PageUp => p.cursor = moved(p.cursor, Motion::PageUp, p.shown.len(), page),
        Action::Top => p.cursor = 0,
        Action::Bottom => p.cursor = moved(p.cursor, Motion::Bottom, p.shown.len(), page),
        // The wheel moves the list, not the panes hidden under it; a click changes nothing.
        Action::Scroll(delta, ..) => {
            if mouse {
                let m = if *delta > 0 { Motion::Down } else { Motion::Up };
                p.cursor = moved(p.cursor, m, p.shown.len(), page);
            }
        }
        Action::Click(..) => {}
        _ => return false,
    }
    true
}
