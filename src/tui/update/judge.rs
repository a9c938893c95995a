//! The judge's part of `update` (docs/screen.md, "Asking the judge"): the first press of the
//! key shows the exact command and what it is sent; the second sends it (once agreed, later
//! presses send at once); any other command in between cancels. Whether the judge is asked at
//! all is the analysis's rule (`analysis::judge::should_ask`): the screen only reads it to say so
//! before anything runs. Pure: the judging leaves as an [`Effect`].

use super::super::action::Action;
use super::super::app::{App, Document};
use super::super::effects::Effect;
use super::super::keymap::Scope;
use crate::analysis::judge::should_ask;
use crate::analysis::params::JUDGE_BELOW;
use std::sync::Arc;

/// The key was pressed.
pub(super) fn ask(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(command) = app.judge.command.clone() else {
        app.problem(
            "no judge is configured: set TDN_JUDGE or [judge] command in tdn.toml (docs/how-it-decides.md, \"Judge\")",
        );
        return;
    };
    let Some(doc) = app.doc.clone() else {
        return;
    };
    if app.judge.asking {
        if app.judge.about == app.run_index() {
            app.message("the judge is being asked: its answer shows when it comes");
        } else {
            app.message(format!(
                "the judge is still answering about run {} of the file; ask again once it has",
                app.judge.about
            ));
        }
        return;
    }
    if doc.report.judge.is_some() {
        app.message("the judge has answered for this run: its finding is among the suspects");
        return;
    }
    let best = doc.report.suspects.first().map(|s| s.score);
    if !should_ask(doc.run.status, best) {
        app.message(format!(
            "the judge is asked only about a run that failed or errored where no suspect scored above {JUDGE_BELOW}: the rules' verdict stands"
        ));
        return;
    }
    if !app.judge.consented && !app.judge.armed {
        app.judge.armed = true;
        let key = app
            .keymap
            .first_key(&[Scope::Global], &Action::AskJudge)
            .unwrap_or_else(|| Action::AskJudge.name().to_owned());
        app.message(format!(
            "press {key} again to send a transcript of this run and the rule findings to the judge {command}; any other key cancels"
        ));
        return;
    }
    app.judge.armed = false;
    app.judge.consented = true;
    app.judge.asking = true;
    app.judge.about = app.run_index();
    fx.push(Effect::Judge(app.judge.about));
    app.message("asking the judge; the rules' verdict stays on screen until it answers");
}

/// The run at position `run` could not be analysed again.
pub(super) fn failed(app: &mut App, run: usize, why: &str) {
    app.judge.asking = false;
    if left(app, run) {
        app.problem(format!(
            "the judge was not asked about run {run} of the file: {why}"
        ));
    } else {
        app.problem(format!("the judge was not asked: {why}"));
    }
}

/// The user has opened another run since asking about the run at `run`.
fn left(app: &App, run: usize) -> bool {
    app.doc.is_none() || app.run_index() != run
}

/// Any other command cancels a first press.
pub(super) fn disarm(app: &mut App, action: &Action) {
    if app.judge.armed && action.is_bindable() && !matches!(action, Action::AskJudge) {
        app.judge.armed = false;
        app.message("the judge was not asked");
    }
}

/// The run at position `run` analysed again with the judge. When another run is open by now,
/// the answer is set aside: it must replace neither the open run's report nor the report its
/// experiments are planned from.
pub(super) fn answered(app: &mut App, run: usize, doc: Arc<Document>, fx: &mut Vec<Effect>) {
    app.judge.asking = false;
    if left(app, run) {
        let key = app
            .keymap
            .first_key(&[Scope::Global], &Action::AskJudge)
            .unwrap_or_else(|| Action::AskJudge.name().to_owned());
        app.message(format!(
            "the judge answered about run {run} of the file, which is no longer open: its answer is not shown; open that run and press {key} to ask again"
        ));
        return;
    }
    let note = match &doc.report.judge {
        Some(j) => match (&j.step, &j.error) {
            (Some(step), _) => match (&j.named, &j.moved_because) {
                (Some(named), Some(why)) => format!(
                    "the judge named step '{}'; the rules moved its finding to step '{}' because {}: it is ranked with the rules' findings (a judge's pick is a suspect, not proof)",
                    crate::analysis::model::inert_line(named),
                    crate::analysis::model::inert_line(step),
                    crate::analysis::model::inert_line(why)
                ),
                _ => format!(
                    "the judge blames step '{}': its finding is ranked with the rules' (a judge's pick is a suspect, not proof)",
                    crate::analysis::model::inert_line(step)
                ),
            },
            (None, Some(e)) => format!(
                "the judge gave nothing usable ({}); the rules' verdict stands",
                crate::analysis::model::inert_line(e)
            ),
            (None, None) => "the judge gave nothing usable; the rules' verdict stands".to_owned(),
        },
        None => "the judge was not asked; the rules' verdict stands".to_owned(),
    };
    app.replace_report(doc.clone());
    fx.push(Effect::Reopen(doc));
    app.message(note);
}
