//! The ledger's rows of the experiments pane, under the jobs: each unit's latest attribution
//! (disposition and evidence level, as the ledger records them, with what was tried), the
//! batches left open (marked by whether their session is gone, with the key that aggregates the
//! ready ones), and the run's earlier trials; and the detail shown for the selected one. All of
//! it comes from the engine's [`RunEvidence`]; the words that explain a disposition or an
//! evidence level are the spec's, not conclusions drawn here.

use crate::analysis::influence::js_number;
use crate::experiments::engine::{BatchState, OpenBatch, RunEvidence};
use crate::experiments::ledger::{HistoryTrial, LatestAttribution};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::keymap::Scope;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
use crate::tui::widgets::marks;
use ratatui::text::{Line, Span};

/// One ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerRow {
    /// `latest[i]`.
    Attribution(usize),
    /// `open[i]`.
    OpenCohort(usize),
    /// `trials[i]`.
    Trial(usize),
}

fn latest(h: &RunEvidence) -> &[LatestAttribution] {
    h.ledger.as_ref().map_or(&[], |e| e.latest.as_slice())
}

fn trials(h: &RunEvidence) -> &[HistoryTrial] {
    h.ledger.as_ref().map_or(&[], |e| e.trials.as_slice())
}

/// How many rows the ledger adds to the pane.
pub fn row_count(h: &RunEvidence) -> usize {
    latest(h).len() + h.open.len() + trials(h).len()
}

/// The ledger row at position `i` (0 = the first row after the jobs).
pub fn row_at(h: &RunEvidence, i: usize) -> Option<LedgerRow> {
    let a = latest(h).len();
    let o = h.open.len();
    if i < a {
        Some(LedgerRow::Attribution(i))
    } else if i < a + o {
        Some(LedgerRow::OpenCohort(i - a))
    } else if i - a - o < trials(h).len() {
        Some(LedgerRow::Trial(i - a - o))
    } else {
        None
    }
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

/// The spans of one ledger row in the list (the caller fits them to the width).
pub fn row_spans(app: &App, h: &RunEvidence, row: LedgerRow) -> Vec<Span<'static>> {
    let t = &app.theme;
    match row {
        LedgerRow::Attribution(i) => {
            let Some(l) = latest(h).get(i) else {
                return Vec::new();
            };
            let a = &l.attribution;
            let (glyph, role) = disposition_mark(a.disposition.as_str());
            vec![
                Span::styled(" ledger ", t.style(Role::TextDim)),
                Span::styled(
                    format!("'{}' ", clipped(&a.component_id, 60)),
                    t.style(Role::Text),
                ),
                Span::styled(format!("{glyph} {}", a.disposition.as_str()), t.style(role)),
                Span::styled(
                    format!(
                        " · {} · effect {} · confidence {}{} · {}",
                        a.evidence_level.as_str(),
                        js_number(a.effect),
                        js_number(a.confidence),
                        status_note(l.status.as_str()),
                        tried(l.tried.as_ref(), "")
                    ),
                    t.style(Role::TextDim),
                ),
            ]
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
                Span::styled(" ledger ", t.style(Role::TextDim)),
                Span::styled(
                    format!("batch {} ", clipped(&b.cohort.cohort, 40)),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!("{} trial(s), {what}", b.cohort.trials),
                    t.style(if b.state.ready() {
                        Role::Warning
                    } else {
                        Role::TextDim
                    }),
                ),
            ]
        }
        LedgerRow::Trial(i) => {
            let Some(tr) = trials(h).get(i) else {
                return Vec::new();
            };
            vec![
                Span::styled(" trial  ", t.style(Role::TextDim)),
                Span::styled(
                    format!("'{}' ", clipped(&tr.trial.component_id, 60)),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!(
                        "effect {} · seed {} · {} · {} · {}",
                        js_number(tr.effect),
                        tr.trial.seed,
                        tr.trial.evidence_level.as_str(),
                        tr.status.as_str(),
                        tried(tr.tried.as_ref(), tr.trial.experiment.as_str())
                    ),
                    t.style(Role::TextDim),
                ),
            ]
        }
    }
}

fn status_note(status: &str) -> String {
    match status {
        "verified" => String::new(),
        other => format!(" ({})", clipped(other, 20)),
    }
}

/// What a disposition means (attribution-ledger.md §5).
fn disposition_meaning(d: &str) -> &'static str {
    match d {
        "harmful" => {
            "harmful: the outcome was good less often with the unit than without it. In a failed run, \"good\" means the answer departed from the recorded failure: with the unit, the run stays on it"
        }
        "retained" => {
            "retained: the outcome was good more often with the unit than without it (in a failed run: with it, the answer departed from the recorded failure)"
        }
        "demotion_candidate" => {
            "demotion candidate: nothing measured changed with or without it, and it costs many tokens"
        }
        _ => "uncertain: nothing measured changed with or without it, and it is cheap",
    }
}

/// What an evidence level proves (attribution-ledger.md §1).
fn level_meaning(level: &str) -> &'static str {
    match level {
        "causal_ablation" => {
            "causal_ablation: each re-run pair differed in exactly this unit, present with it, absent without"
        }
        "paired_shadow" => {
            "paired_shadow: matched re-runs, but not only this unit differed (units changed together, or a replay), so it is not isolated"
        }
        _ => "a score, not a re-run: correlation, not a cause",
    }
}

/// The detail of one ledger row.
pub fn detail_lines(
    app: &App,
    h: &RunEvidence,
    row: LedgerRow,
    width: usize,
) -> Vec<Line<'static>> {
    match row {
        LedgerRow::Attribution(i) => latest(h)
            .get(i)
            .map(|a| attribution_lines(app, a, width))
            .unwrap_or_default(),
        LedgerRow::OpenCohort(i) => h
            .open
            .get(i)
            .map(|c| cohort_lines(app, c, width))
            .unwrap_or_default(),
        LedgerRow::Trial(i) => trials(h)
            .get(i)
            .map(|tr| trial_lines(app, tr, width))
            .unwrap_or_default(),
    }
}

fn para(app: &App, text: String, role: Role, width: usize) -> Vec<Line<'static>> {
    wrap_spans(vec![(text, app.theme.style(role))], width, "    ")
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
            (format!("{glyph} {}", a.disposition.as_str()), t.style(role)),
            (
                format!(" · {}", a.evidence_level.as_str()),
                t.style(Role::Text),
            ),
        ],
        width,
        "    ",
    );
    if let Some(i) = &l.tried {
        out.extend(para(
            app,
            format!("tried: {}", i.label()),
            Role::Text,
            width,
        ));
    }
    out.extend(para(
        app,
        format!(
            "effect {} (mean over {} trial(s) of the score with the unit minus the score without it), confidence {}; tested {}; {}; ledger line {}{}",
            js_number(a.effect),
            a.trial_ids.len(),
            js_number(a.confidence),
            clipped(&a.tested_at, 40),
            l.status.as_str(),
            l.line,
            if l.earlier > 0 {
                format!("; supersedes {} earlier attribution(s) of this unit", l.earlier)
            } else {
                String::new()
            }
        ),
        Role::Text,
        width,
    ));
    out.extend(para(
        app,
        disposition_meaning(a.disposition.as_str()).to_owned(),
        Role::TextDim,
        width,
    ));
    out.extend(para(
        app,
        level_meaning(a.evidence_level.as_str()).to_owned(),
        Role::TextDim,
        width,
    ));
    out
}

fn cohort_lines(app: &App, b: &OpenBatch, width: usize) -> Vec<Line<'static>> {
    let c = &b.cohort;
    let mut out = para(
        app,
        format!("open batch {}", clipped(&c.cohort, 200)),
        Role::Heading,
        width,
    );
    out.extend(para(
        app,
        format!(
            "{} verified trial(s) and no attribution: the session that ran it has not closed it. Its last sample finished at {}.",
            c.trials,
            clipped(&c.last_finished_at, 40)
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
    let mut out = para(
        app,
        format!(
            "earlier trial: {} · '{}'",
            tried(tr.tried.as_ref(), tr.trial.experiment.as_str()),
            clipped(&tr.trial.component_id, 400)
        ),
        Role::Heading,
        width,
    );
    out.extend(para(
        app,
        format!(
            "one matched pair of samples, with and without it: score with minus score without = {}; {} ({}), tested {}",
            js_number(tr.effect),
            tr.status.as_str(),
            tr.trial.evidence_level.as_str(),
            clipped(&tr.trial.tested_at, 40)
        ),
        Role::Text,
        width,
    ));
    if tr.status == crate::experiments::ledger::Status::Cancelled {
        out.extend(para(
            app,
            "its batch was cancelled before every sample ran, so it concludes nothing: no attribution comes from it".to_owned(),
            Role::TextDim,
            width,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::OpenCohort;

    fn history() -> RunEvidence {
        RunEvidence {
            open: vec![OpenBatch {
                cohort: OpenCohort {
                    cohort: "b-1".to_owned(),
                    trials: 1,
                    last_finished_at: String::new(),
                },
                state: BatchState::Stale,
            }],
            ..RunEvidence::default()
        }
    }

    #[test]
    fn rows_run_through_attributions_open_batches_then_trials() {
        let h = history();
        assert_eq!(row_count(&h), 1);
        assert_eq!(row_at(&h, 0), Some(LedgerRow::OpenCohort(0)));
        assert_eq!(row_at(&h, 1), None);
    }
}
