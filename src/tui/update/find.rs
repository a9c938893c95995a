//! The prompts' part of `update`: the step search, the timeline filter, go-to-step and the help's
//! filter, all typed in the status bar with the search keys. Pure: the matching runs off the
//! drawing path as an [`Effect`] and comes back as an action.

use super::super::action::Action;
use super::super::app::{App, LineEdit, LineKind, Overlay, Pane, group};
use super::super::effects::Effect;
use super::super::keymap::Scope;
use super::super::overlays::search::{hit_at_or_after, next_hit, push_char};
use super::super::widgets::inert_text::clipped;
use super::{focus, select};
use std::sync::Arc;

/// Which prompt the search keys edit now.
enum Editing {
    Search,
    Line,
    Help,
}

fn editing(app: &App) -> Editing {
    if app.line.is_some() {
        Editing::Line
    } else if matches!(app.overlay, Some(Overlay::Help { typing: true, .. })) {
        Editing::Help
    } else {
        Editing::Search
    }
}

/// `/`: the help's filter when the help is up, else the step search.
pub(super) fn start_search(app: &mut App) {
    if let Some(Overlay::Help {
        typing,
        filter,
        scroll,
        ..
    }) = &mut app.overlay
    {
        *typing = true;
        filter.clear();
        *scroll = 0;
        return;
    }
    app.search.active = true;
    app.search.input.clear();
    app.search.origin = app.selected_step();
    // A message about an earlier search must not stand for this one.
    app.status = None;
}

/// A character typed into whichever prompt is open.
pub(super) fn input(app: &mut App, c: char, fx: &mut Vec<Effect>) {
    match editing(app) {
        Editing::Line => {
            let Some(l) = app.line.as_mut() else { return };
            if push_char(&mut l.text, c) && l.kind == LineKind::Filter {
                filter_now(app, fx);
            }
        }
        Editing::Help => {
            if let Some(Overlay::Help { filter, scroll, .. }) = &mut app.overlay {
                push_char(filter, c);
                *scroll = 0;
            }
        }
        Editing::Search => {
            if app.search.push(c) {
                search(app, fx);
            }
        }
    }
}

/// Backspace in whichever prompt is open.
pub(super) fn backspace(app: &mut App, fx: &mut Vec<Effect>) {
    match editing(app) {
        Editing::Line => {
            let Some(l) = app.line.as_mut() else { return };
            l.text.pop();
            if l.kind == LineKind::Filter {
                filter_now(app, fx);
            }
        }
        Editing::Help => {
            if let Some(Overlay::Help { filter, scroll, .. }) = &mut app.overlay {
                filter.pop();
                *scroll = 0;
            }
        }
        Editing::Search => {
            app.search.input.pop();
            search(app, fx);
        }
    }
}

/// `Enter` in whichever prompt is open.
pub(super) fn accept(app: &mut App) {
    match editing(app) {
        Editing::Line => accept_line(app),
        Editing::Help => {
            if let Some(Overlay::Help { typing, .. }) = &mut app.overlay {
                *typing = false;
            }
        }
        Editing::Search => accept_search(app),
    }
}

/// `Esc` in a prompt: the search goes back to where it started, the filter to the one in force
/// before, go-to and the help's filter are dropped. False when no prompt is open.
pub(super) fn cancel(app: &mut App) -> bool {
    match editing(app) {
        Editing::Line => {
            if let Some(l) = app.line.take()
                && l.kind == LineKind::Filter
                && let Some(doc) = app.doc.clone()
            {
                app.timeline.set_filter(&doc, l.before);
            }
            true
        }
        Editing::Help => {
            if let Some(Overlay::Help { typing, filter, .. }) = &mut app.overlay {
                *typing = false;
                filter.clear();
            }
            true
        }
        Editing::Search if app.search.active => {
            app.search.active = false;
            if let Some(o) = app.search.origin {
                select(app, o);
            }
            app.search.hits = Arc::default();
            app.search.input.clear();
            true
        }
        Editing::Search => false,
    }
}

fn search(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(doc) = app.doc.clone() {
        fx.push(Effect::Search {
            doc,
            query: app.search.input.clone(),
            previous: app.search.hits.clone(),
        });
    }
}

/// Search results for a query: kept when they answer what is typed; the first match at or after
/// where the search started is selected as you type.
pub(super) fn results(app: &mut App, hits: Arc<super::super::overlays::search::SearchHits>) {
    if hits.query != app.search.input {
        return;
    }
    app.search.hits = hits;
    if app.search.active
        && let Some(i) = hit_at_or_after(&app.search.hits, app.search.origin.unwrap_or(0))
    {
        select(app, i);
    }
}

fn accept_search(app: &mut App) {
    app.search.active = false;
    let query = app.search.input.clone();
    if query.is_empty() {
        return;
    }
    if app.search.hits.query != query {
        app.message(format!(
            "still searching for '{}': the matches show when they are found",
            clipped(&query, 40)
        ));
        return;
    }
    let n = app.search.hits.steps.len();
    if n == 0 {
        app.problem(format!(
            "no step matches '{}' (labels fuzzily, content as typed, any case)",
            clipped(&query, 40)
        ));
        if let Some(o) = app.search.origin {
            select(app, o);
        }
        return;
    }
    let key = |a: Action| {
        app.keymap
            .first_key(&[Scope::Global], &a)
            .unwrap_or_else(|| a.name().to_owned())
    };
    let (next, prev) = (key(Action::SearchNext), key(Action::SearchPrev));
    app.message(format!(
        "{} step{} match '{}': {next} and {prev} go to the next and previous",
        group(n),
        if n == 1 { "" } else { "s" },
        clipped(&query, 40)
    ));
}

/// `n` / `N`.
pub(super) fn next(app: &mut App, forward: bool) {
    if !matches!(editing(app), Editing::Search) {
        return;
    }
    match next_hit(&app.search.hits, app.selected_step(), forward) {
        Some(i) => select(app, i),
        None => {
            let k = app.key(Action::Search);
            app.problem(format!("no search matches: press {k} to search steps"));
        }
    }
}

/// `f`: the filter prompt, over the timeline, starting from the filter in force.
pub(super) fn start_filter(app: &mut App) {
    if app.doc.is_none() {
        return;
    }
    focus(app, Pane::Timeline);
    let before = app.timeline.filter.clone();
    app.line = Some(LineEdit {
        kind: LineKind::Filter,
        text: before.as_ref().map(|f| f.query.clone()).unwrap_or_default(),
        before,
        error: None,
    });
    app.status = None;
}

/// `:`: the go-to prompt.
pub(super) fn start_goto(app: &mut App) {
    if app.doc.is_none() {
        return;
    }
    app.line = Some(LineEdit {
        kind: LineKind::GoTo,
        text: String::new(),
        before: None,
        error: None,
    });
    app.status = None;
}

fn filter_now(app: &mut App, fx: &mut Vec<Effect>) {
    let (Some(doc), Some(l)) = (app.doc.clone(), app.line.as_mut()) else {
        return;
    };
    l.error = None;
    if l.text.trim().is_empty() {
        app.timeline.set_filter(&doc, None);
        return;
    }
    fx.push(Effect::Filter {
        doc,
        query: l.text.clone(),
    });
}

/// The steps a filter keeps: put in force when they answer what is typed.
pub(super) fn filtered(
    app: &mut App,
    query: &str,
    result: Result<Arc<super::super::overlays::search::SearchHits>, String>,
) {
    let Some(doc) = app.doc.clone() else { return };
    let Some(l) = app.line.as_mut().filter(|l| l.kind == LineKind::Filter) else {
        return;
    };
    if l.text != query {
        return;
    }
    match result {
        Ok(hits) => {
            l.error = None;
            app.timeline.set_filter(&doc, Some(hits));
        }
        Err(e) => l.error = Some(e),
    }
}

fn accept_line(app: &mut App) {
    let Some(l) = app.line.take() else { return };
    let Some(doc) = app.doc.clone() else { return };
    match l.kind {
        LineKind::Filter => {
            if let Some(e) = l.error {
                app.problem(format!("the filter was not applied: {e}"));
                app.timeline.set_filter(&doc, l.before);
                return;
            }
            match &app.timeline.filter {
                Some(f) => {
                    let n = f.steps.len();
                    let back = app.key(Action::Back);
                    app.message(format!(
                        "filter '{}': {} of {} steps kept; {back} takes it away",
                        clipped(&f.query, 40),
                        group(n),
                        group(doc.run.steps.len())
                    ));
                }
                None => app.message("no filter: every step is shown"),
            }
        }
        // Accepted by the compare view's update, which starts the comparison.
        LineKind::AgainstPath => {}
        LineKind::GoTo => {
            let text = l.text.trim();
            let by_position = text
                .parse::<usize>()
                .ok()
                .filter(|&p| p >= 1 && p <= doc.run.steps.len())
                .map(|p| p - 1);
            match doc.index_of(text).or(by_position) {
                Some(i) => {
                    focus(app, Pane::Timeline);
                    select(app, i);
                }
                None if text.is_empty() => {}
                None => app.problem(format!(
                    "no step '{}': type a position from 1 to {} or a step id",
                    clipped(text, 40),
                    group(doc.run.steps.len())
                )),
            }
        }
    }
}
