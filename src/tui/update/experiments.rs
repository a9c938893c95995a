//! The experiment keys and messages of `update`: what `a`, `A`, `r`, `p`, `L`, `x` and `c` ask
//! for on what is selected, the confirm step before the first runner use of a session, the
//! question before quitting with jobs running, and the experiment events as they arrive. What
//! can be tested is the engine's rule: every request goes to it as an [`Effect`] and its refusal
//! comes back typed; only the hint of which key to press instead is added here. Pure.

use super::super::action::Action;
use super::super::app::{App, Overlay, Pane};
use super::super::effects::Effect;
use super::super::keymap::Scope;
use super::super::overlays::confirm::ConfirmState;
use super::super::panes::experiments::plan_label;
use super::super::panes::{dropped, suspects};
use super::super::widgets::inert_text::clipped;
use super::super::widgets::scroll_list::{Motion, moved};
use super::{select_dropped_unit, step_id};
use crate::experiments::engine::{EngineError, Plan, PlanError, Request, Target};
use crate::experiments::event::{Event, EventKind, JobEnd};

pub(super) fn ablate(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let target = match app.focus {
        Pane::Suspects => match suspects::selected(app, &doc) {
            Some(it) => match suspects::item_target(it) {
                Some(t) => Some(t),
                None => {
                    let p = key(app, Action::Replay);
                    app.problem(format!(
                        "this piece of context is not a unit, so nothing can be removed; {p} replays from its step"
                    ));
                    return;
                }
            },
            None => None,
        },
        Pane::Timeline | Pane::Detail => step_id(app).map(Target::Step),
        Pane::Dropped => {
            let r = key(app, Action::Restore);
            app.problem(format!("dropped units were never sent, so removing them changes nothing; {r} re-runs with the selected one put back"));
            return;
        }
        _ => None,
    };
    match target {
        Some(t) => begin(app, Request::Ablate(vec![t]), fx),
        None => app.problem(format!(
            "select a suspect or a piece of context ({} Suspects, {} switches to the context) or a step ({} Timeline) to ablate",
            key(app, Action::FocusSuspects),
            key(app, Action::ToggleInfluence),
            key(app, Action::FocusTimeline)
        )),
    }
}

pub(super) fn ablate_shortlist(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let view = if app.focus == Pane::Suspects {
        app.suspects.view
    } else {
        suspects::View::Steps
    };
    let targets = suspects::shortlist_targets(&doc, view);
    if targets.is_empty() {
        app.problem("the shortlist is empty: there is nothing to ablate");
        return;
    }
    begin(app, Request::AblateEach(targets), fx);
}

pub(super) fn restore(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let r = key(app, Action::Restore);
    if app.focus != Pane::Dropped {
        // Never restore a unit the user has not seen selected: show the pane first.
        if select_dropped_unit(app) {
            app.message(format!(
                "Dropped context: select the unit to put back (the - lines) and press {r}"
            ));
        } else {
            app.problem(
                "no model step dropped any context it had available: there is nothing to restore",
            );
        }
        return;
    }
    match dropped::selected_unit(app, &doc) {
        Some(u) => begin(app, Request::Restore(vec![u]), fx),
        None => app.problem(format!(
            "select one of the dropped units (the - lines) and press {r} to restore it"
        )),
    }
}

/// The first key of an action, for messages.
fn key(app: &App, a: Action) -> String {
    app.keymap
        .first_key(&app.scopes(), &a)
        .or_else(|| {
            app.keymap
                .first_key(&[super::super::keymap::Scope::Global], &a)
        })
        .unwrap_or_else(|| a.name().to_owned())
}

/// First step of any experiment: ask the engine for a plan (off the UI task: a plan reads the
/// whole run); it refuses what cannot be tested, with why.
pub(super) fn begin(app: &mut App, request: Request, fx: &mut Vec<Effect>) {
    if app.doc.is_none() {
        return;
    }
    app.experiments.planning = true;
    fx.push(Effect::Plan(request));
}

/// The engine's refusal, with the key that does what it suggests instead.
fn explain(app: &App, e: &EngineError) -> String {
    match e {
        EngineError::NoRunner => "no runner is configured: start with --runner 'CMD' or set [runner] command in tdn.toml (docs/experiments.md)".to_owned(),
        EngineError::NotCovered { .. } => format!(
            "{e} ([runner] runs in tdn.toml): nothing was run; start with --runner 'CMD' to use an agent that can re-run it"
        ),
        EngineError::NoFinalAnswer { .. } => "this run records no final answer, so a re-run has nothing to be compared with; experiments need one".to_owned(),
        EngineError::Plan(PlanError::NothingProduced(_)) => {
            format!("{e} ({} replays from the selected step)", key(app, Action::Replay))
        }
        other => other.to_string(),
    }
}

/// Starts a plan as a new job; the Experiments pane is shown and focused, so `j`, `k` and `x`
/// act on what is on screen.
pub(super) fn launch(app: &mut App, plan: Plan, fx: &mut Vec<Effect>) {
    let label = plan_label(&plan);
    let job = app.experiments.start(&plan);
    app.secondary = Pane::Experiments;
    app.focus = Pane::Experiments;
    app.message(format!(
        "job #{} started: {label} ({} runner calls); {} cancels it",
        job.0,
        plan.runner_calls(),
        key(app, Action::Cancel)
    ));
    fx.push(Effect::Launch {
        job,
        plan: Box::new(plan),
    });
}

pub(super) fn cancel(app: &mut App, fx: &mut Vec<Effect>) {
    let selected = app.experiments.job_at(app.experiments.cursor);
    match selected {
        Some(j) if j.is_running() => {
            fx.push(Effect::Cancel(j.id, "x pressed in the screen".to_owned()));
        }
        Some(j) => {
            let id = j.id.0;
            app.problem(format!("job #{id} is not running"));
        }
        None => app.problem(
            "select a running job in the Experiments pane (the rows at the top) to cancel it",
        ),
    }
}

/// The jobs that would be stopped by quitting, in words; empty when none runs.
pub(super) fn running_jobs(app: &App) -> Vec<String> {
    let here = app.experiments.running().map(|j| (j, None));
    let parked = app
        .parked
        .iter()
        .flat_map(|(run, s)| s.running().map(move |j| (j, Some(*run))));
    here.chain(parked)
        .map(|(j, run)| {
            let (done, total) = j.progress();
            format!(
                "#{} {}: {done} of {total} samples done{}",
                j.id.0,
                j.label,
                run.map(|r| format!(" (run {r} of the file)"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

pub(super) fn aggregate(app: &mut App, fx: &mut Vec<Effect>) {
    let ready = app.experiments.ready_cohorts();
    if ready.is_empty() {
        app.problem("no batch of the ledger is waiting to be aggregated (only batches left open longer than the runner's time-out are)");
    } else {
        fx.push(Effect::Aggregate(ready));
    }
}

pub(super) fn on_event(app: &mut App, ev: &Event, fx: &mut Vec<Effect>) {
    if !app.experiments.jobs.iter().any(|j| j.id == ev.job) {
        on_parked_event(app, ev);
        return;
    }
    app.experiments.apply(ev);
    match &ev.kind {
        EventKind::Done(outcome) => {
            // The samples it saved may have formed new trials.
            fx.push(Effect::LoadLedger);
            let job = ev.job.0;
            match &outcome.end {
                JobEnd::Finished => app.message(format!(
                    "job #{job} finished: the verdicts are in Experiments"
                )),
                JobEnd::Cancelled(why) => app.message(format!(
                    "job #{job} cancelled ({why}): its running samples were stopped and recorded as cancelled"
                )),
                JobEnd::Failed(e) => {
                    let e = explain(app, e);
                    app.problem(format!("job #{job} could not run: {e}"));
                }
            }
        }
        EventKind::SampleHeld { why, .. } => app.problem(format!(
            "job #{}: waiting for ledger lock: a sample is held back until it is written ({why})",
            ev.job.0
        )),
        _ => {}
    }
}

pub(super) fn on_planned(
    app: &mut App,
    p: &(Request, Result<Plan, EngineError>),
    fx: &mut Vec<Effect>,
) {
    let (_, plan) = p;
    // A plan for a run that was left (or one already answered) would start on the run now open.
    if !std::mem::take(&mut app.experiments.planning) || app.shown_picker().is_some() {
        return;
    }
    match plan {
        Err(e) => {
            let e = explain(app, e);
            app.problem(e);
        }
        Ok(plan) if !app.experiments.consented => {
            app.overlay = Some(Overlay::Confirm(ConfirmState::Run(Box::new(plan.clone()))));
        }
        Ok(plan) => launch(app, plan.clone(), fx),
    }
}

/// An event of a job started on another run of the file, open before this one: it goes to that
/// run's parked job list, and the status bar says whose job it is.
fn on_parked_event(app: &mut App, ev: &Event) {
    let Some((&run, parked)) = app
        .parked
        .iter_mut()
        .find(|(_, s)| s.jobs.iter().any(|j| j.id == ev.job))
    else {
        return;
    };
    parked.apply(ev);
    let name = app
        .picker
        .as_ref()
        .and_then(|p| p.runs.get(run))
        .map(|r| format!("run '{}'", clipped(&r.id, 40)))
        .unwrap_or_else(|| format!("run {run}"));
    let back = key(app, Action::RunList);
    let job = ev.job.0;
    match &ev.kind {
        EventKind::Done(outcome) => {
            let how = match &outcome.end {
                JobEnd::Finished => "finished".to_owned(),
                JobEnd::Cancelled(_) => "was cancelled".to_owned(),
                JobEnd::Failed(e) => format!("could not run: {e}"),
            };
            app.message(format!(
                "job #{job} of {name} {how}; its verdicts show when that run is open again ({back})"
            ));
        }
        EventKind::SampleHeld { why, .. } => app.problem(format!(
            "job #{job} of {name}: waiting for ledger lock: a sample is held back until it is written ({why})"
        )),
        _ => {}
    }
}

/// True while a job this screen started (on the open run or another of the file) is running.
pub fn experiments_running(app: &App) -> bool {
    !running_jobs(app).is_empty()
}

/// Quits, unless experiments are running: then asks first, saying which will be stopped. Asked
/// again while the question is up (`C-c` twice), it quits.
pub(super) fn quit(app: &mut App, fx: &mut Vec<Effect>) {
    let jobs = running_jobs(app);
    let asking = matches!(app.overlay, Some(Overlay::Confirm(ConfirmState::Quit(_))));
    if jobs.is_empty() || asking {
        app.quit = true;
        fx.push(Effect::Quit);
        return;
    }
    app.overlay = Some(Overlay::Confirm(ConfirmState::Quit(jobs)));
}

/// The first key of an action in any scope, for messages.
pub(super) fn key_of(app: &App, a: Action) -> String {
    app.keymap
        .first_key(&[Scope::Global, Scope::Experiments], &a)
        .unwrap_or_else(|| a.name().to_owned())
}

/// Moves in the Experiments pane: the page keys scroll the selected row's detail; the others
/// move among the rows (a new row's detail starts at its top).
pub(super) fn motion(app: &mut App, m: Motion, page: usize) {
    match m {
        Motion::PageDown | Motion::PageUp => {
            let (total, shown) = app.experiments.detail_extent.get();
            let last = total.saturating_sub(shown.max(1));
            let step = shown.saturating_sub(1).max(1);
            let s = app.experiments.detail_scroll.min(last);
            app.experiments.detail_scroll = if m == Motion::PageDown {
                (s + step).min(last)
            } else {
                s.saturating_sub(step)
            };
        }
        _ => {
            let before = app.experiments.cursor;
            app.experiments.cursor =
                moved(app.experiments.cursor, m, app.experiments.row_count(), page);
            if app.experiments.cursor != before {
                app.experiments.detail_scroll = 0;
            }
        }
    }
}
