//! The outcome key (docs/screen.md, "The outcome"): the user says whether the open run's answer
//! was right, in turn succeeded and failed; the run is analysed again with it (a run that
//! succeeded has no verdict and no fault). Pure: the analysis leaves as an [`Effect`].

use super::super::app::{App, Document};
use super::super::effects::Effect;
use crate::analysis::model::RunStatus;
use std::sync::Arc;

/// The key was pressed.
pub(super) fn set(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(doc) = app.doc.clone() else {
        return;
    };
    let to = if doc.run.status == RunStatus::Succeeded {
        RunStatus::Failed
    } else {
        RunStatus::Succeeded
    };
    fx.push(Effect::Outcome(app.run_index(), to));
    app.message(format!(
        "analysing the run again as {}; the screen changes when it is done",
        to.as_str()
    ));
}

/// The run at position `run`, analysed again with the outcome set. When another run is open by
/// now, it is set aside (the outcome is kept for that run when it is opened again).
pub(super) fn done(app: &mut App, run: usize, doc: Arc<Document>, fx: &mut Vec<Effect>) {
    if app.doc.is_none() || app.run_index() != run {
        app.message(format!(
            "the outcome of run {run} of the file is set; it shows when that run is opened"
        ));
        return;
    }
    let note = match doc.run.status {
        RunStatus::Succeeded => {
            "the run is marked succeeded: no verdict and no fault; the timeline, claims and context influence stay"
        }
        _ => "the run is marked failed: it is diagnosed again",
    };
    app.replace_report(doc.clone());
    fx.push(Effect::Reopen(doc));
    app.message(note);
}

/// The run could not be analysed again.
pub(super) fn failed(app: &mut App, run: usize, why: &str) {
    app.problem(format!(
        "the outcome of run {run} of the file was not set: {why}"
    ));
}
