//! `update(&mut App, Action) -> Vec<Effect>`: the only place the screen's state changes. Pure:
//! no I/O, no clock, no terminal; anything slow or outside (highlighting, search, copying,
//! experiments) is returned as an [`Effect`]. Key presses arrive already mapped to actions by
//! [`dispatch`] through the keymap.

mod experiments;
mod find;
mod judge;
mod picker;
mod view;

use super::action::Action;
use super::app::{App, Overlay, Pane};
use super::effects::{CopyWhat, Effect, External};
use super::keymap::{Chord, Scope};
use super::overlays::confirm::ConfirmState;
use super::overlays::help;
use super::overlays::prompt::PromptState;
use super::overlays::too_small::too_small;
use super::panes::{claims, dropped, suspects};
use super::render::{detail_width, pane_height};
use super::widgets::scroll_list::{Motion, moved};
use crate::analysis::model::StepId;
use crate::experiments::engine::{Request, Target};
pub use experiments::experiments_running;
use experiments::{
    ablate, ablate_shortlist, aggregate, begin, cancel, key_of, launch, on_event, on_planned, quit,
    restore,
};
use ratatui::layout::Rect;
use std::sync::Arc;

/// The action a key stands for in the app's current scopes (typed text in the search prompt).
pub fn dispatch(app: &App, chord: &Chord) -> Option<Action> {
    if too_small(Rect::new(0, 0, app.size.0, app.size.1)) {
        // Only the notice is drawn: leaving is all a key may do, so that nothing changes unseen
        // (a `y` confirming a command, a `q` typed into a search).
        return app
            .keymap
            .lookup(&[Scope::Global, Scope::Always], chord)
            .filter(|a| matches!(a, Action::Quit | Action::Suspend));
    }
    let scopes = app.scopes();
    if let Some(a) = app.keymap.lookup(&scopes, chord) {
        return Some(a);
    }
    let help_typing = matches!(app.overlay, Some(Overlay::Help { typing: true, .. }));
    if app.search.active
        || app.line.is_some()
        || help_typing
        || app.shown_picker().is_some_and(|p| p.filtering)
    {
        return chord.typed_char().map(Action::SearchInput);
    }
    if matches!(app.overlay, Some(Overlay::Prompt(_))) {
        return chord.typed_char().map(Action::PromptInput);
    }
    None
}

/// Applies one action.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let mut fx = Vec::new();
    apply(app, action, &mut fx);
    request_detail(app, &mut fx);
    fx
}

fn apply(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    judge::disarm(app, &action);
    if picker::handle(app, &action) {
        return;
    }
    match action {
        Action::Quit => quit(app, fx),
        Action::Suspend => fx.push(Effect::Suspend),
        Action::Help => {
            app.overlay = match app.overlay {
                Some(Overlay::Help { .. }) => None,
                _ => Some(Overlay::Help {
                    scroll: 0,
                    filter: String::new(),
                    typing: false,
                }),
            }
        }
        Action::Back => back(app),
        Action::FocusNext => focus(app, app.focus.cycle(true)),
        Action::FocusPrev => focus(app, app.focus.cycle(false)),
        Action::FocusTimeline => focus(app, Pane::Timeline),
        Action::FocusSuspects => focus(app, Pane::Suspects),
        Action::FocusDetail => focus(app, Pane::Detail),
        Action::FocusDropped => focus(app, Pane::Dropped),
        Action::FocusClaims => focus(app, Pane::Claims),
        Action::FocusExperiments => focus(app, Pane::Experiments),
        Action::MoveDown => motion(app, Motion::Down),
        Action::MoveUp => motion(app, Motion::Up),
        Action::PageDown => motion(app, Motion::PageDown),
        Action::PageUp => motion(app, Motion::PageUp),
        Action::Top => motion(app, Motion::Top),
        Action::Bottom => motion(app, Motion::Bottom),
        Action::NextSuspect => step_suspect(app, true),
        Action::PrevSuspect => step_suspect(app, false),
        Action::Collapse | Action::Expand | Action::ToggleFold => fold(app, &action),
        Action::JumpToStep if matches!(app.overlay, Some(Overlay::Warnings { .. })) => {
            view::warning_step(app)
        }
        Action::JumpToStep => jump_from_pane(app),
        Action::JumpEvidence | Action::JumpOrigin => {
            jump_claim(app, matches!(action, Action::JumpOrigin))
        }
        Action::OpenViewer => open_viewer(app),
        Action::CopyOutput => copy(app, CopyWhat::Output, fx),
        Action::CopyStep => copy(app, CopyWhat::Step, fx),
        Action::Search => find::start_search(app),
        Action::SearchInput(c) => find::input(app, c, fx),
        Action::SearchBackspace => find::backspace(app, fx),
        Action::SearchResults(hits) => find::results(app, hits),
        Action::SearchAccept => find::accept(app),
        Action::SearchNext | Action::SearchPrev => {
            find::next(app, matches!(action, Action::SearchNext))
        }
        Action::Filter => find::start_filter(app),
        Action::FilterResults(q, r) => {
            if app.line.is_some() {
                find::filtered(app, &q, r);
            } else {
                view::refiltered(app, &q, &r);
            }
        }
        Action::GoTo => find::start_goto(app),
        Action::Sort => view::sort(app),
        Action::Waterfall => view::waterfall(app),
        Action::Zoom => view::zoom(app),
        Action::Warnings => view::warnings(app),
        Action::OpenPager => view::external(app, External::Pager, fx),
        Action::OpenEditor => view::external(app, External::Editor, fx),
        Action::Reload => view::reload(app, false, fx),
        Action::FileChanged => view::reload(app, true, fx),
        Action::Reloaded(i, doc) => view::reloaded(app, i, doc, fx),
        Action::ExternalDone(r) => match r {
            Ok(m) => app.message(m),
            Err(e) => app.problem(e),
        },
        Action::Share => view::share(app, fx),
        Action::Ablate => ablate(app, fx),
        Action::AblateShortlist => ablate_shortlist(app, fx),
        Action::Restore => restore(app, fx),
        Action::Replay => match step_id(app) {
            Some(from) => begin(app, Request::Replay { from, patch: None }, fx),
            None => app.problem("select a step in the timeline to replay from"),
        },
        Action::ReplayPatched => match step_id(app) {
            Some(from) => app.overlay = Some(Overlay::Prompt(PromptState::new(from))),
            None => app.problem("select a step in the timeline to replay from"),
        },
        Action::PromptInput(c) => {
            if let Some(Overlay::Prompt(p)) = &mut app.overlay
                && !p.push(c)
            {
                app.problem("the patch is full");
            }
        }
        Action::PromptBackspace => {
            if let Some(Overlay::Prompt(p)) = &mut app.overlay {
                p.input.pop();
            }
        }
        Action::PromptAccept => {
            if let Some(Overlay::Prompt(p)) = app.overlay.take() {
                if p.input.trim().is_empty() {
                    app.overlay = Some(Overlay::Prompt(p));
                    app.problem("type the output the step should have produced, or press Esc and replay without a patch");
                } else {
                    let patch = Some(p.input);
                    begin(
                        app,
                        Request::Replay {
                            from: p.from,
                            patch,
                        },
                        fx,
                    );
                }
            }
        }
        Action::Aggregate => aggregate(app, fx),
        Action::Localize => begin(app, Request::Localize, fx),
        Action::AskJudge => judge::ask(app, fx),
        Action::Judged(i, doc) => judge::answered(app, i, doc, fx),
        Action::JudgeFailed(i, why) => judge::failed(app, i, &why),
        Action::Cancel => cancel(app, fx),
        Action::ConfirmYes => match app.overlay.take() {
            Some(Overlay::Confirm(ConfirmState::Run(plan))) => {
                app.experiments.consented = true;
                launch(app, *plan, fx);
            }
            Some(Overlay::Confirm(ConfirmState::Quit(_))) => {
                app.quit = true;
                fx.push(Effect::Quit);
            }
            other => app.overlay = other,
        },
        Action::ConfirmNo => match app.overlay.take() {
            Some(Overlay::Confirm(ConfirmState::Run(_))) => app.message("nothing was run"),
            Some(Overlay::Confirm(ConfirmState::Quit(jobs))) => {
                app.message(format!("not quitting: {} job(s) keep running", jobs.len()))
            }
            other => app.overlay = other,
        },
        Action::PickRun => picker::pick(app, fx),
        Action::RunList => picker::show(app),
        Action::ToggleInfluence => toggle_influence(app),
        Action::ToggleMouse => {
            app.mouse = !app.mouse;
            fx.push(Effect::SetMouse(app.mouse));
            app.message(if app.mouse {
                "mouse on: click a pane to focus it, wheel to scroll (the terminal's own selection needs Shift)"
            } else {
                "mouse off"
            });
        }
        Action::JumpTo(id) => {
            if let Some(i) = app.doc.as_ref().and_then(|d| d.index_of(id.as_str())) {
                select(app, i);
            }
        }
        Action::Resize(w, h) => app.size = (w, h),
        Action::Tick => {
            app.tick += 1;
            if app.status.as_ref().is_some_and(|s| s.until <= app.tick) {
                app.status = if app.queued.is_empty() {
                    None
                } else {
                    let mut next = app.queued.remove(0);
                    next.until = app.tick + super::app::MESSAGE_TICKS;
                    Some(next)
                };
            }
        }
        Action::DetailReady(d) => {
            app.detail.pending.retain(|k| *k != (d.step, d.width));
            app.detail_cache.put(d);
        }
        Action::Opened(doc) => {
            // A confirm box or patch prompt was about the run left behind.
            if matches!(app.overlay, Some(Overlay::Confirm(_) | Overlay::Prompt(_))) {
                app.overlay = None;
            }
            app.set_document(doc);
            fx.push(Effect::LoadLedger);
        }
        Action::OpenFailed(m) => {
            if let Some(p) = &mut app.picker {
                p.opening = None;
            }
            app.problem(m);
        }
        Action::Message(m) => app.message(m),
        Action::Problem(m) => app.problem(m),
        Action::Experiment(ev) => on_event(app, &ev, fx),
        Action::LedgerLoaded(r) => match r.as_ref() {
            Ok(h) => {
                let first = app.experiments.ledger.path.as_os_str().is_empty();
                let dead = h.left_by_dead_sessions().count();
                let run = app.doc.clone();
                app.experiments
                    .set_evidence(h.clone(), run.as_deref().map(|d| d.run.as_ref()));
                if first && dead > 0 {
                    // The next start reports what a dead debugger left (runner.md).
                    app.problem(format!(
                        "the ledger holds {dead} batch(es) of this run left open by a tdn-tui that stopped without closing them: {} shows them, {} there aggregates them",
                        key_of(app, Action::FocusExperiments),
                        key_of(app, Action::Aggregate)
                    ));
                }
            }
            Err(e) => app.experiments.ledger_note = Some(e.to_string()),
        },
        Action::Planned(p) => on_planned(app, &p, fx),
        Action::Scroll(delta, x, y) => {
            if app.mouse {
                view::focus_at(app, x, y);
                motion(app, if delta > 0 { Motion::Down } else { Motion::Up });
            }
        }
        Action::Click(x, y) => {
            if app.mouse {
                view::click(app, x, y);
            }
        }
    }
}

fn focus(app: &mut App, pane: Pane) {
    app.focus = pane;
    if pane.is_secondary() {
        app.secondary = pane;
    }
}

/// `Esc`: the innermost thing open goes: a prompt, an overlay, the zoom, the search's
/// highlights, the timeline filter, else the message.
fn back(app: &mut App) {
    if find::cancel(app) {
        return;
    }
    if app.overlay.is_some() {
        app.overlay = None;
    } else if app.zoom {
        app.zoom = false;
    } else if !app.search.hits.query.is_empty() {
        app.search.hits = Arc::default();
    } else if app.timeline.filter.is_some() {
        if let Some(doc) = app.doc.clone() {
            app.timeline.set_filter(&doc, None);
            app.message("filter taken away: every step is shown");
        }
    } else {
        app.status = None;
    }
}

/// `Enter` on a step, a suspect or a dropped unit: its step, full-screen; `Esc` comes back to
/// the pane it was opened from.
fn open_viewer(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    let step = match app.focus {
        Pane::Suspects => {
            suspects::selected(app, &doc).and_then(|it| suspects::item_step(&doc, it))
        }
        Pane::Dropped => dropped::selected_step(app, &doc),
        _ => app.selected_step(),
    };
    match step {
        Some(i) => {
            select(app, i);
            app.overlay = Some(Overlay::Viewer { scroll: 0 });
        }
        None => app.problem("the selected item names no step of this run"),
    }
}

/// Selects step `i` in the timeline (unfolding what hides it, taking away a filter that hides
/// it).
fn select(app: &mut App, i: usize) {
    if let Some(doc) = app.doc.clone()
        && app.timeline.select_step(&doc, i)
    {
        app.message(format!(
            "the timeline filter hid {}: it was taken away",
            doc.describe(i)
        ));
    }
}

/// Focuses the dropped pane with a dropped unit selected (the first, unless one already is).
fn select_dropped_unit(app: &mut App) -> bool {
    let Some(doc) = app.doc.clone() else {
        return false;
    };
    focus(app, Pane::Dropped);
    if dropped::selected_unit(app, &doc).is_none() {
        match dropped::first_unit_row(&doc) {
            Some(r) => app.dropped.cursor = r,
            None => return false,
        }
    }
    if let Some(i) = dropped::selected_step(app, &doc) {
        select(app, i);
    }
    true
}

fn step_id(app: &App) -> Option<StepId> {
    let doc = app.doc.as_ref()?;
    let i = app.selected_step()?;
    doc.run.steps.get(i).map(|s| s.id.clone())
}

fn motion(app: &mut App, m: Motion) {
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
            let n = super::overlays::warnings::row_count(app);
            let page = usize::from(app.size.1.saturating_sub(4)) / 2;
            let c = moved(*cursor, m, n, page);
            if let Some(Overlay::Warnings { cursor, .. }) = &mut app.overlay {
                *cursor = c;
            }
            return;
        }
        Some(Overlay::Viewer { scroll }) => {
            let len = detail_len(app);
            let page = usize::from(app.size.1.saturating_sub(4));
            let s = moved(*scroll, m, len, page);
            app.overlay = Some(Overlay::Viewer { scroll: s });
            return;
        }
        Some(Overlay::Confirm(_) | Overlay::Prompt(_)) => return,
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
            app.detail.scroll = moved(app.detail.scroll, m, len, page);
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
fn follow_suspect(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    if let Some(i) = suspects::selected(app, &doc).and_then(|it| suspects::item_step(&doc, it)) {
        select(app, i);
    }
}

/// Shows the other list of the suspects pane (focusing the pane first when it is not).
fn toggle_influence(app: &mut App) {
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

fn step_suspect(app: &mut App, forward: bool) {
    let Some(doc) = app.doc.clone() else { return };
    let n = doc.report.suspects.len();
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

fn fold(app: &mut App, action: &Action) {
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

fn jump_from_pane(app: &mut App) {
    let Some(doc) = app.doc.clone() else { return };
    let target = match app.focus {
        Pane::Suspects => {
            suspects::selected(app, &doc).and_then(|it| suspects::item_step(&doc, it))
        }
        Pane::Dropped => dropped::selected_step(app, &doc),
        Pane::Claims => claims::selected(app, &doc)
            .and_then(|c| c.evidence_step.as_deref())
            .and_then(|s| doc.index_of(s)),
        Pane::Experiments => app
            .experiments
            .job_at(app.experiments.cursor)
            .and_then(|j| {
                j.probes.iter().find_map(|p| {
                    p.info.asked.clone().or_else(|| {
                        p.info
                            .intervention
                            .units()
                            .first()
                            .cloned()
                            .map(Target::Unit)
                    })
                })
            })
            .and_then(|t| match t {
                Target::Step(s) => doc.index_of(s.as_str()),
                Target::Unit(u) => doc
                    .run
                    .unit(u.as_str())
                    .and_then(|u| u.produced_by.as_ref())
                    .and_then(|s| doc.index_of(s.as_str())),
                Target::Id(i) => doc.index_of(&i).or_else(|| {
                    doc.run
                        .unit(&i)
                        .and_then(|u| u.produced_by.as_ref())
                        .and_then(|s| doc.index_of(s.as_str()))
                }),
            }),
        _ => app.selected_step(),
    };
    match target {
        Some(i) => {
            select(app, i);
            app.focus = Pane::Detail;
        }
        None => app.problem("the selected item names no step of this run"),
    }
}

fn jump_claim(app: &mut App, origin: bool) {
    let Some(doc) = app.doc.clone() else { return };
    let Some(c) = claims::selected(app, &doc) else {
        app.problem("select a claim first (Claims pane)");
        return;
    };
    let (id, what) = if origin {
        (&c.origin_step, "origin")
    } else {
        (&c.evidence_step, "evidence")
    };
    match id.as_deref().and_then(|s| doc.index_of(s)) {
        Some(i) => {
            select(app, i);
            app.focus = Pane::Detail;
        }
        None => app.problem(format!("this claim has no {what} step")),
    }
}

fn copy(app: &mut App, what: CopyWhat, fx: &mut Vec<Effect>) {
    match (app.doc.clone(), app.selected_step()) {
        (Some(doc), Some(step)) => fx.push(Effect::Copy { doc, step, what }),
        _ => app.problem("no step selected to copy"),
    }
}

/// Asks for the selected step's detail at the width it is shown, when not prepared yet, and
/// starts the detail at its top when the step changes.
fn request_detail(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let Some(i) = app.selected_step() else { return };
    if app.detail.step != Some(i) {
        app.detail.step = Some(i);
        app.detail.scroll = 0;
        if let Some(Overlay::Viewer { scroll }) = &mut app.overlay {
            *scroll = 0;
        }
    }
    let Some(width) = detail_width(app) else {
        return;
    };
    if app.detail_cache.get(i, width).is_none() && !app.detail.pending.contains(&(i, width)) {
        app.detail.pending.push((i, width));
        fx.push(Effect::PrepareDetail {
            doc,
            step: i,
            width,
        });
    }
}

/// Lines of the selected step's prepared detail at the current width (0 until it is ready).
fn detail_len(app: &App) -> usize {
    app.selected_step()
        .and_then(|i| {
            app.detail_cache
                .get(i, detail_width(app)?)
                .map(|d| d.lines.len())
        })
        .unwrap_or(0)
}
