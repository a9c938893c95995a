//! Selecting a step from where the user is: `Enter` opens it full-screen, the jumps go from a
//! suspect, a dropped unit, a claim or an experiment to its step, and every selection goes
//! through [`select`], which unfolds or unfilters what hides the step.

use super::super::app::{App, Overlay, Pane};
use super::super::panes::{claims, dropped, suspects};
use super::focus;
use crate::analysis::model::StepId;
use crate::experiments::engine::Target;

/// `Enter` on a step, a suspect or a dropped unit: its step, full-screen; `Esc` comes back to
/// the pane it was opened from.
pub(super) fn open_viewer(app: &mut App) {
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
pub(super) fn select(app: &mut App, i: usize) {
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
pub(super) fn select_dropped_unit(app: &mut App) -> bool {
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

/// The step a replay starts from: in the suspects pane, the selected item's step (the one its
/// "Prove it" hint names); elsewhere the timeline's selected step.
pub(super) fn replay_step(app: &App) -> Option<StepId> {
    let doc = app.doc.as_ref()?;
    if app.focus == Pane::Suspects {
        let i = suspects::selected(app, doc).and_then(|it| suspects::item_step(doc, it))?;
        return doc.run.steps.get(i).map(|s| s.id.clone());
    }
    step_id(app)
}

pub(super) fn step_id(app: &App) -> Option<StepId> {
    let doc = app.doc.as_ref()?;
    let i = app.selected_step()?;
    doc.run.steps.get(i).map(|s| s.id.clone())
}

pub(super) fn jump_from_pane(app: &mut App) {
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

pub(super) fn jump_claim(app: &mut App, origin: bool) {
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
