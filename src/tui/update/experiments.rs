//! The experiment keys and messages of `update`: what `a`, `A`, `r`, `p`, `L`, `x` and `c` ask
//! for on what is selected, the refusals that say why nothing can run, the confirm step before
//! the first runner use of a session, and the experiment events as they arrive. Pure: every
//! request leaves as an [`Effect`].

use super::super::action::Action;
use super::super::app::{App, Overlay, Pane};
use super::super::effects::Effect;
use super::super::experiment_port::{ExperimentEvent, JobEnd, Plan, Request, Target};
use super::super::overlays::confirm::ConfirmState;
use super::super::panes::experiments::JobState;
use super::super::panes::{dropped, suspects};
use super::super::widgets::inert_text::clipped;
use super::{select_dropped_unit, step_id};

pub(super) fn ablate(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else { return };
    let target = match app.focus {
        Pane::Suspects => match suspects::selected(app, &doc) {
            Some(it) => match suspects::item_target(it) {
                Some(t) => Some(t),
                None => {
                    let p = key(app, Action::Replay);
                    app.problem(format!("this piece of context is not a unit, so nothing can be removed; {p} replays from its step"));
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
    begin(app, Request::Ablate(targets), fx);
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

pub(super) fn has_answer(app: &App) -> bool {
    app.doc
        .as_ref()
        .is_some_and(|d| d.run.final_answer.is_some())
}

pub(super) fn no_answer(app: &mut App) {
    app.problem("this run records no final answer, so a re-run has nothing to be compared with; experiments need one");
}

/// First step of any experiment: refuse what cannot be compared, else ask the port for a plan.
pub(super) fn begin(app: &mut App, request: Request, fx: &mut Vec<Effect>) {
    if app.doc.is_none() {
        return;
    }
    if !has_answer(app) {
        no_answer(app);
        return;
    }
    app.experiments.planning = true;
    fx.push(Effect::Plan(request));
}

pub(super) fn launch(app: &mut App, request: Request, fx: &mut Vec<Effect>) {
    let label = request.label();
    let job = app.experiments.start(request.clone());
    app.secondary = Pane::Experiments;
    if app.size.0 < super::super::render::WIDE_MIN_WIDTH {
        app.focus = Pane::Experiments;
    }
    app.message(format!("job #{} started: {label}", job.0));
    fx.push(Effect::Launch { job, request });
}

pub(super) fn cancel(app: &mut App, fx: &mut Vec<Effect>) {
    let running = app
        .experiments
        .job_at(app.experiments.cursor)
        .filter(|j| !matches!(j.state, JobState::Ended(_)))
        .map(|j| j.id);
    match running {
        Some(id) => fx.push(Effect::Cancel(id)),
        None => app.problem("the selected job is not running"),
    }
}

pub(super) fn aggregate(app: &mut App, fx: &mut Vec<Effect>) {
    let ready = app.experiments.ready_cohorts();
    if ready.is_empty() {
        app.problem("no batch of the ledger is waiting to be aggregated (only batches left open longer than the runner's time-out are)");
    } else {
        fx.push(Effect::Aggregate(ready));
    }
}

pub(super) fn on_event(app: &mut App, ev: &ExperimentEvent, fx: &mut Vec<Effect>) {
    if !app.experiments.jobs.iter().any(|j| j.id == ev.job()) {
        on_parked_event(app, ev);
        return;
    }
    app.experiments.apply(ev);
    match ev {
        ExperimentEvent::JobFinished { job, end, .. } => {
            // The samples it saved may have formed new trials.
            fx.push(Effect::LoadLedger);
            match end {
                JobEnd::Finished => app.message(format!(
                    "job #{} finished: the verdicts are in Experiments",
                    job.0
                )),
                JobEnd::Cancelled => app.message(format!("job #{} cancelled", job.0)),
                JobEnd::Failed(e) => app.problem(format!("job #{} could not run: {e}", job.0)),
            }
        }
        ExperimentEvent::SampleHeld { job, why, .. } => app.problem(format!(
            "job #{}: waiting for ledger lock: a sample is held back until it is written ({why})",
            job.0
        )),
        _ => {}
    }
}

pub(super) fn on_planned(app: &mut App, p: &(Request, Result<Plan, String>), fx: &mut Vec<Effect>) {
    let (request, plan) = p;
    // A plan for a run that was left (or one already answered) would start on the run now open.
    if !std::mem::take(&mut app.experiments.planning) || app.shown_picker().is_some() {
        return;
    }
    match plan {
        Err(e) => app.problem(e.clone()),
        Ok(plan) if !app.experiments.consented => {
            app.overlay = Some(Overlay::Confirm(ConfirmState {
                request: request.clone(),
                plan: plan.clone(),
            }));
        }
        Ok(_) => launch(app, request.clone(), fx),
    }
}

/// An event of a job started on another run of the file, open before this one: it goes to that
/// run's parked job list, and the status bar says whose job it is.
fn on_parked_event(app: &mut App, ev: &ExperimentEvent) {
    let Some((&run, parked)) = app
        .parked
        .iter_mut()
        .find(|(_, s)| s.jobs.iter().any(|j| j.id == ev.job()))
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
    match ev {
        ExperimentEvent::JobFinished { job, end, .. } => {
            let how = match end {
                JobEnd::Finished => "finished".to_owned(),
                JobEnd::Cancelled => "was cancelled".to_owned(),
                JobEnd::Failed(e) => format!("could not run: {e}"),
            };
            app.message(format!(
                "job #{} of {name} {how}; its verdicts show when that run is open again ({back})",
                job.0
            ));
        }
        ExperimentEvent::SampleHeld { job, why, .. } => app.problem(format!(
            "job #{} of {name}: waiting for ledger lock: a sample is held back until it is written ({why})",
            job.0
        )),
        _ => {}
    }
}
