//! The ledger's history in the experiments pane, under this session's jobs (issue 26: dated and
//! folded): one row per earlier batch, newest first, with its date, what was tried, how many
//! trials it formed and what its attribution concluded, every ledger term with its meaning
//! beside it; the batches left open (marked by whether their session is gone, with the key that
//! aggregates the ready ones); and for the selected row its trials and attributions in full. All
//! of it comes from the engine's [`RunEvidence`]; the words that explain a disposition, an
//! evidence level or a status are the ledger's, not conclusions drawn here.

use super::words::{date, disposition_words, level_words, status_words};
use crate::analysis::js_number::js_number;
use crate::experiments::engine::{BatchState, OpenBatch, RunEvidence};
use crate::experiments::ledger::{HistoryTrial, LatestAttribution};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::keymap::Scope;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
use crate::tui::widgets::marks;
use ratatui::text::{Line, Span};
use std::collections::{HashMap, HashSet};

/// One earlier batch of the run's ledger: its trials and its latest attributions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// The batch (`cohort`).
    pub cohort: String,
    /// Positions of its trials in the evidence's `trials`, in file order.
    pub trials: Vec<usize>,
    /// Positions of its attributions in the evidence's `latest`.
    pub attributions: Vec<usize>,
    /// When it last tested something (`tested_at`).
    pub last: String,
}

/// The ledger's earlier batches, newest first, leaving out the open ones (listed as such) and
/// those of `ours` (this session's jobs, listed as jobs). One pass over the trials and
/// attributions.
pub fn batches(h: &RunEvidence, ours: &HashSet<&str>) -> Vec<Batch> {
    let open: HashSet<&str> = h.open.iter().map(|b| b.cohort.cohort.as_str()).collect();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<Batch> = Vec::new();
    let entries = trials(h)
        .iter()
        .enumerate()
        .map(|(i, tr)| {
            (
                tr.trial.cohort.as_str(),
                tr.trial.tested_at.as_str(),
                Some(i),
                None,
            )
        })
        .chain(latest(h).iter().enumerate().map(|(i, l)| {
            let a = &l.attribution;
            (a.cohort.as_str(), a.tested_at.as_str(), None, Some(i))
        }));
    for (cohort, at, trial, attribution) in entries {
        if open.contains(cohort) || ours.contains(cohort) {
            continue;
        }
        let i = match index.get(cohort) {
            Some(&i) => i,
            None => {
                out.push(Batch {
                    cohort: cohort.to_owned(),
                    ..Batch::default()
                });
                index.insert(cohort, out.len() - 1);
                out.len() - 1
            }
        };
        if let Some(b) = out.get_mut(i) {
            b.trials.extend(trial);
            b.attributions.extend(attribution);
            if at > b.last.as_str() {
                b.last = at.to_owned();
            }
        }
    }
    out.sort_by(|a, b| b.last.cmp(&a.last));
    out
}

/// One ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerRow {
    /// `open[i]`: a batch left open.
    OpenCohort(usize),
    /// `batches[i]`: an earlier batch.
    Batch(usize),
}

fn latest(h: &RunEvidence) -> &[LatestAttribution] {
    h.ledger.as_ref().map_or(&[], |e| e.latest.as_slice())
}

fn trials(h: &RunEvidence) -> &[HistoryTrial] {
    h.ledger.as_ref().map_or(&[], |e| e.trials.as_slice())
}

/// What was tried, in a few words (`ablate 'u1'`), or the recorded experiment's name.
pub fn tried(t: Option<&crate::experiments::intervention::Intervention>, fallback: &str) -> String {
    t.map_or_else(|| clipped(fallback, 20).into_owned(), |i| i.label())
}

/// The role a disposition is drawn in (a glyph goes with it, so colour is never alone).
pub fn disposition_mark(d: &str) -> (&'static str, Role) {
    match d {
        "harmful" => (marks::HARMFUL, Role::VerdictConfirmed),
        "retained" => (marks::RETAINED, Role::VerdictConfirmed),
        "demotion_candidate" => (marks::DEMOTION, Role::Warning),
        _ => (" ", Role::TextDim),
    }
}

/// The key bound to `a` in the experiments pane (or its name).
fn key(app: &App, a: Action) -> String {
    app.keymap
        .first_key(&[Scope::Experiments, Scope::Global], &a)
        .unwrap_or_else(|| a.name().to_owned())
}

/// The spans of one ledger row in the list (the caller fits them to the width): the date, what
/// was tried, how many trials, and what its attribution concluded, with the meaning beside it.
pub fn row_spans(
    app: &App,
    h: &RunEvidence,
    history: &[Batch],
    row: LedgerRow,
) -> Vec<Span<'static>> {
    let t = &app.theme;
    match row {
        LedgerRow::Batch(i) => {
            let Some(b) = history.get(i) else {
                return Vec::new();
            };
            let mut spans = vec![Span::styled(
                format!(" {} ", date(&b.last)),
                t.style(Role::TextDim),
            )];
            spans.push(Span::styled(
                format!("{} · ", batch_tried(h, b)),
                t.style(Role::Text),
            ));
            spans.push(Span::styled(
                crate::analysis::count::counted(b.trials.len(), "trial", "trials"),
                t.style(Role::TextDim),
            ));
            match b.attributions.first().and_then(|&a| latest(h).get(a)) {
                Some(l) => {
                    let a = &l.attribution;
                    let (glyph, role) = disposition_mark(a.disposition.as_str());
                    spans.push(Span::styled(
                        format!(" → '{}' ", clipped(&a.component_id, 40)),
                        t.style(Role::Text),
                    ));
                    spans.push(Span::styled(
                        format!(
                            "{glyph} {}",
                            disposition_words(a.disposition, l.tried.as_ref(), failed_run(app))
                        ),
                        t.style(role),
                    ));
                    if b.attributions.len() > 1 {
                        spans.push(Span::styled(
                            format!(" and {} more", b.attributions.len() - 1),
                            t.style(Role::TextDim),
                        ));
                    }
                }
                None => spans.push(Span::styled(
                    format!(" · {}", batch_state(h, b)),
                    t.style(Role::TextDim),
                )),
            }
            spans
        }
        LedgerRow::OpenCohort(i) => {
            let Some(b) = h.open.get(i) else {
                return Vec::new();
            };
            let what = match b.state {
                BatchState::LeftByDeadSession => format!(
                    "left open by a tdn-tui that stopped without closing it: {} to aggregate",
                    key(app, Action::Aggregate)
                ),
                BatchState::Stale => format!(
                    "left open by a session that ended: {} to aggregate",
                    key(app, Action::Aggregate)
                ),
                BatchState::Running => "open: a job of this screen is running it".to_owned(),
                BatchState::Elsewhere => "open: another tdn-tui is running it".to_owned(),
                BatchState::MaybeRunning => "open: its session may still be running".to_owned(),
            };
            vec![
                Span::styled(
                    format!(" {} ", date(&b.cohort.last_finished_at)),
                    t.style(Role::TextDim),
                ),
                Span::styled(
                    format!(
                        "batch left open, {}: ",
                        crate::analysis::count::counted(b.cohort.trials, "trial", "trials")
                    ),
                    t.style(Role::Text),
                ),
                Span::styled(
                    what,
                    t.style(if b.state.ready() {
                        Role::Warning
                    } else {
                        Role::TextDim
                    }),
                ),
            ]
        }
    }
}

/// The open run failed (its ledger scores read "departed from the recorded failure").
pub(super) fn failed_run(app: &App) -> bool {
    app.doc.as_ref().is_some_and(|d| d.run.went_wrong())
}

/// What a batch tried: its first trial's experiment, or its attribution's.
fn batch_tried(h: &RunEvidence, b: &Batch) -> String {
    let from_trial = b
        .trials
        .first()
        .and_then(|&i| trials(h).get(i))
        .map(|tr| tried(tr.tried.as_ref(), tr.trial.experiment.as_str()));
    let from_attribution = || {
        b.attributions
            .first()
            .and_then(|&i| latest(h).get(i))
            .map(|l| tried(l.tried.as_ref(), ""))
    };
    from_trial
        .or_else(from_attribution)
        .unwrap_or_else(|| "an earlier batch".to_owned())
}

/// Why a batch with trials has no attribution in view: cancelled, or superseded later.
fn batch_state(h: &RunEvidence, b: &Batch) -> String {
    let status = b
        .trials
        .first()
        .and_then(|&i| trials(h).get(i))
        .map(|tr| tr.status);
    match status {
        Some(crate::experiments::ledger::Status::Verified) | None => {
            "its conclusion was replaced by a later batch's".to_owned()
        }
        Some(s) => status_words(s),
    }
}

/// The detail of one ledger row.
pub fn detail_lines(
    app: &App,
    h: &RunEvidence,
    history: &[Batch],
    row: LedgerRow,
    width: usize,
) -> Vec<Line<'static>> {
    match row {
        LedgerRow::Batch(i) => history
            .get(i)
            .map(|b| batch_lines(app, h, b, width))
            .unwrap_or_default(),
        LedgerRow::OpenCohort(i) => h
            .open
            .get(i)
            .map(|c| cohort_lines(app, c, width))
            .unwrap_or_default(),
    }
}

fn para(app: &App, text: String, role: Role, width: usize) -> Vec<Line<'static>> {
    wrap_spans(vec![(text, app.theme.style(role))], width, "    ")
}

/// An earlier batch in full: when, what was tried, its attributions with their meaning, then
/// each trial.
fn batch_lines(app: &App, h: &RunEvidence, b: &Batch, width: usize) -> Vec<Line<'static>> {
    let mut out = para(
        app,
        format!(
            "{} · {} · batch {}",
            date(&b.last),
            batch_tried(h, b),
            clipped(&b.cohort, 60)
        ),
        Role::Heading,
        width,
    );
    for l in b.attributions.iter().filter_map(|&i| latest(h).get(i)) {
        out.extend(attribution_lines(app, l, width));
    }
    if b.attributions.is_empty() && !b.trials.is_empty() {
        out.extend(para(
            app,
            format!("no attribution of it in view: {}", batch_state(h, b)),
            Role::TextDim,
            width,
        ));
    }
    for tr in b.trials.iter().filter_map(|&i| trials(h).get(i)) {
        out.extend(trial_lines(app, tr, width));
    }
    out
}

fn attribution_lines(app: &App, l: &LatestAttribution, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let a = &l.attribution;
    let (glyph, role) = disposition_mark(a.disposition.as_str());
    let mut out = wrap_spans(
        vec![
            (
                format!(
                    "'{}' ({}): ",
                    clipped(&a.component_id, 400),
                    clipped(&a.component_kind, 40)
                ),
                t.style(Role::Heading),
            ),
            (
                format!(
                    "{glyph} {}",
                    disposition_words(a.disposition, l.tried.as_ref(), failed_run(app))
                ),
                t.style(role),
            ),
        ],
        width,
        "    ",
    );
    out.extend(para(
        app,
        format!("evidence: {}", level_words(a.evidence_level)),
        Role::Text,
        width,
    ));
    let status = status_words(l.status);
    out.extend(para(
        app,
        format!(
            "effect {} (the mean over {} of the score with the unit minus the score without it), confidence {}; tested {}; ledger line {}{}{}",
            js_number(a.effect),
            crate::analysis::count::counted(a.trial_ids.len(), "trial", "trials"),
            js_number(a.confidence),
            date(&a.tested_at),
            l.line,
            if l.earlier > 0 {
                format!(
                    "; it follows {} of this unit",
                    crate::analysis::count::counted(
                        l.earlier,
                        "earlier attribution",
                        "earlier attributions"
                    )
                )
            } else {
                String::new()
            },
            if status.is_empty() {
                String::new()
            } else {
                format!("; {status}")
            }
        ),
        Role::TextDim,
        width,
    ));
    out
}

fn cohort_lines(app: &App, b: &OpenBatch, width: usize) -> Vec<Line<'static>> {
    let c = &b.cohort;
    let mut out = para(
        app,
        format!(
            "{} · batch {} left open",
            date(&c.last_finished_at),
            clipped(&c.cohort, 200)
        ),
        Role::Heading,
        width,
    );
    out.extend(para(
        app,
        format!(
            "{} and no attribution: the session that ran it has not closed it. Its last sample finished at {}.",
            crate::analysis::count::counted(c.trials, "verified trial", "verified trials"),
            date(&c.last_finished_at)
        ),
        Role::Text,
        width,
    ));
    let next = match b.state {
        BatchState::LeftByDeadSession => format!(
            "The tdn-tui that ran it is gone (killed, or crashed: its lease is no longer held): press {} to aggregate it (its trials become attributions, as if its session had closed it).",
            key(app, Action::Aggregate)
        ),
        BatchState::Stale => format!(
            "It is older than the runner's time-out, so no session can still be adding to it: press {} to aggregate it (its trials become attributions, as if its session had closed it).",
            key(app, Action::Aggregate)
        ),
        BatchState::Running => "A job of this screen is running it.".to_owned(),
        BatchState::Elsewhere => {
            "Another tdn-tui holds its lease: it is running it, so it is not offered for aggregation.".to_owned()
        }
        BatchState::MaybeRunning => {
            "It is younger than the runner's time-out and nothing says its session ended: it is not offered for aggregation yet.".to_owned()
        }
    };
    out.extend(para(app, next, Role::TextDim, width));
    out
}

fn trial_lines(app: &App, tr: &HistoryTrial, width: usize) -> Vec<Line<'static>> {
    let status = status_words(tr.status);
    para(
        app,
        format!(
            "  trial, seed {}: {} · '{}' · score with minus score without = {} · {}{}",
            tr.trial.seed,
            tried(tr.tried.as_ref(), tr.trial.experiment.as_str()),
            clipped(&tr.trial.component_id, 200),
            js_number(tr.effect),
            level_words(tr.trial.evidence_level),
            if status.is_empty() {
                String::new()
            } else {
                format!(" · {status}")
            }
        ),
        Role::Text,
        width,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::OpenCohort;

    #[test]
    fn open_batches_are_not_listed_again_as_history() {
        let h = RunEvidence {
            open: vec![OpenBatch {
                cohort: OpenCohort {
                    cohort: "b-1".to_owned(),
                    trials: 1,
                    last_finished_at: String::new(),
                },
                state: BatchState::Stale,
            }],
            ..RunEvidence::default()
        };
        assert!(batches(&h, &HashSet::new()).is_empty());
    }
}
