//! `update(&mut App, Action) -> Vec<Effect>`: the only place the screen's state changes. Pure:
//! no I/O, no clock, no terminal; anything slow or outside (highlighting, search, copying,
//! experiments) is returned as an [`Effect`]. Key presses arrive already mapped to actions by
//! [`dispatch`] through the keymap.

mod compare;
mod experiments;
mod find;
mod judge;
mod jump;
mod moving;
mod outcome;
mod picker;
mod view;

use super::action::Action;
use super::app::{App, Overlay, Pane};
use super::effects::{CopyWhat, Effect, External};
use super::keymap::{Chord, Scope};
use super::overlays::confirm::ConfirmState;
use super::overlays::prompt::PromptState;
use super::overlays::too_small::too_small;
use super::render::detail_width;
use super::widgets::scroll_list::Motion;
use crate::experiments::engine::Request;
pub use experiments::experiments_running;
use experiments::{
    ablate, ablate_shortlist, aggregate, begin, cancel, key_of, launch, on_event, on_planned, quit,
    restore,
};
use jump::{
    jump_claim, jump_from_pane, open_viewer, replay_step, select, select_dropped_unit, step_id,
};
use moving::{fold, follow_suspect, motion, step_suspect, toggle_influence};
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
    if picker::handle(app, &action) || compare::handle(app, &action, fx) {
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
        Action::Replay => match replay_step(app) {
            Some(from) => begin(app, Request::Replay { from, patch: None }, fx),
            None => app.problem("select a step in the timeline to replay from"),
        },
        Action::ReplayPatched => match replay_step(app) {
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
        Action::SetOutcome => outcome::set(app, fx),
        Action::OutcomeSet(i, doc) => outcome::done(app, i, doc, fx),
        Action::OutcomeFailed(i, why) => outcome::failed(app, i, &why),
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
            app.detail
                .pending
                .retain(|k| *k != (d.step, d.width, d.full));
            app.detail_cache.put(d);
        }
        Action::Opened(doc) => {
            // A confirm box or patch prompt was about the run left behind.
            if matches!(app.overlay, Some(Overlay::Confirm(_) | Overlay::Prompt(_))) {
                app.overlay = None;
            }
            app.set_document(doc);
            app.show_comparison();
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
        // Taken by `compare::handle` before this match.
        Action::Compare
        | Action::CompareWith
        | Action::NextDifference
        | Action::PrevDifference
        | Action::Compared(..)
        | Action::CompareFailed(_) => {}
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
    let full = super::render::detail_full(app);
    let key = (i, width, full);
    if app.detail_cache.get(key).is_none() && !app.detail.pending.contains(&key) {
        app.detail.pending.push(key);
        fx.push(Effect::PrepareDetail {
            doc,
            step: i,
            width,
            full,
        });
    }
}
