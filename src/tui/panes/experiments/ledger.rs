//! The ledger's rows of the experiments pane, under the jobs: each unit's latest attribution
//! (disposition and evidence level, as the ledger records them), the batches a crash left open
//! (with the key that aggregates the ready ones), and the run's earlier trials; and the detail
//! shown for the selected one. Everything comes from the port's [`LedgerHistory`]; the words that
//! explain a disposition or an evidence level are the spec's, not conclusions drawn here.

use crate::analysis::influence::js_number;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::experiment_port::{LedgerAttribution, LedgerCohort, LedgerHistory, LedgerTrial};
use crate::tui::keymap::Scope;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
use crate::tui::widgets::marks;
use ratatui::text::{Line, Span};

/// One ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerRow {
    /// `attributions[i]`.
    Attribution(usize),
    /// `open_cohorts[i]`.
    OpenCohort(usize),
    /// `trials[i]`.
    Trial(usize),
}

/// How many rows the ledger adds to the pane.
pub fn row_count(h: &LedgerHistory) -> usize {
    h.attributions.len() + h.open_cohorts.len() + h.trials.len()
}

/// The ledger row at position `i` (0 = the first row after the jobs).
pub fn row_at(h: &LedgerHistory, i: usize) -> Option<LedgerRow> {
    let a = h.attributions.len();
    let o = h.open_cohorts.len();
    if i < a {
        Some(LedgerRow::Attribution(i))
    } else if i < a + o {
        Some(LedgerRow::OpenCohort(i - a))
    } else if i - a - o < h.trials.len() {
        Some(LedgerRow::Trial(i - a - o))
    } else {
        None
    }
}

/// The role a disposition is drawn in (a glyph goes with it, so colour is never alone).
fn disposition_mark(d: &str) -> (&'static str, Role) {
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

/// The spans of one ledger row in the list.
pub fn row_spans(app: &App, h: &LedgerHistory, row: LedgerRow, width: usize) -> Vec<Span<'static>> {
    let t = &app.theme;
    match row {
        LedgerRow::Attribution(i) => {
            let Some(a) = h.attributions.get(i) else {
                return Vec::new();
            };
            let (glyph, role) = disposition_mark(&a.disposition);
            vec![
                Span::styled(" ledger ", t.style(Role::TextDim)),
                Span::styled(
                    format!("'{}' ", clipped(&a.unit, width / 3)),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!("{glyph} {}", clipped(&a.disposition, 20)),
                    t.style(role),
                ),
                Span::styled(
                    format!(
                        " · {} · effect {} · confidence {}{}",
                        clipped(&a.evidence_level, 20),
                        js_number(a.effect),
                        js_number(a.confidence),
                        status_note(&a.status)
                    ),
                    t.style(Role::TextDim),
                ),
            ]
        }
        LedgerRow::OpenCohort(i) => {
            let Some(c) = h.open_cohorts.get(i) else {
                return Vec::new();
            };
            let what = if c.ready {
                format!(
                    "left open (a session ended before closing it): {} to aggregate",
                    key(app, Action::Aggregate)
                )
            } else {
                "open: its session may still be running".to_owned()
            };
            vec![
                Span::styled(" ledger ", t.style(Role::TextDim)),
                Span::styled(
                    format!("batch {} ", clipped(&c.cohort, 40)),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!("{} trial(s), {what}", c.trials),
                    t.style(if c.ready {
                        Role::Warning
                    } else {
                        Role::TextDim
                    }),
                ),
            ]
        }
        LedgerRow::Trial(i) => {
            let Some(tr) = h.trials.get(i) else {
                return Vec::new();
            };
            vec![
                Span::styled(
                    format!(" trial {} ", clipped(tr.when.as_deref().unwrap_or(""), 20)),
                    t.style(Role::TextDim),
                ),
                Span::styled(
                    format!(
                        "{} {}  ",
                        clipped(&tr.experiment, 10),
                        clipped(&tr.units.join(", "), width / 3)
                    ),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!("effect {:+.2} ({})", tr.effect, clipped(&tr.status, 20)),
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
    h: &LedgerHistory,
    row: LedgerRow,
    width: usize,
) -> Vec<Line<'static>> {
    match row {
        LedgerRow::Attribution(i) => h
            .attributions
            .get(i)
            .map(|a| attribution_lines(app, a, width))
            .unwrap_or_default(),
        LedgerRow::OpenCohort(i) => h
            .open_cohorts
            .get(i)
            .map(|c| cohort_lines(app, c, width))
            .unwrap_or_default(),
        LedgerRow::Trial(i) => h
            .trials
            .get(i)
            .map(|tr| trial_lines(app, tr, width))
            .unwrap_or_default(),
    }
}

fn para(app: &App, text: String, role: Role, width: usize) -> Vec<Line<'static>> {
    wrap_spans(vec![(text, app.theme.style(role))], width, "    ")
}

fn attribution_lines(app: &App, a: &LedgerAttribution, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let (glyph, role) = disposition_mark(&a.disposition);
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!("'{}' ({}): ", clipped(&a.unit, width), clipped(&a.kind, 20)),
            t.style(Role::Heading),
        ),
        Span::styled(
            format!("{glyph} {}", clipped(&a.disposition, 20)),
            t.style(role),
        ),
        Span::styled(
            format!(" · {}", clipped(&a.evidence_level, 20)),
            t.style(Role::Text),
        ),
    ])];
    out.extend(para(
        app,
        format!(
            "effect {} (mean over {} trial(s) of the score with the unit minus the score without it), confidence {}; tested {}; {}; ledger line {}{}",
            js_number(a.effect),
            a.trials,
            js_number(a.confidence),
            clipped(&a.tested_at, 40),
            clipped(&a.status, 20),
            a.line,
            if a.earlier > 0 {
                format!("; supersedes {} earlier attribution(s) of this unit", a.earlier)
            } else {
                String::new()
            }
        ),
        Role::Text,
        width,
    ));
    out.extend(para(
        app,
        disposition_meaning(&a.disposition).to_owned(),
        Role::TextDim,
        width,
    ));
    out.extend(para(
        app,
        level_meaning(&a.evidence_level).to_owned(),
        Role::TextDim,
        width,
    ));
    out
}

fn cohort_lines(app: &App, c: &LedgerCohort, width: usize) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!("open batch {}", clipped(&c.cohort, width)),
        app.theme.style(Role::Heading),
    )];
    out.extend(para(
        app,
        format!(
            "{} verified trial(s) and no attribution: the session that ran it ended before closing it (a crash, or it is still running). Its last sample finished at {}.",
            c.trials,
            clipped(&c.last_finished_at, 40)
        ),
        Role::Text,
        width,
    ));
    let next = if c.ready {
        format!(
            "It is older than the runner's time-out, so no session can still be adding to it: press {} to aggregate it (its trials become attributions, as if its session had closed it).",
            key(app, Action::Aggregate)
        )
    } else {
        "It is younger than the runner's time-out, or a job of this screen is running it: it is not offered for aggregation yet.".to_owned()
    };
    out.extend(para(app, next, Role::TextDim, width));
    out
}

fn trial_lines(app: &App, tr: &LedgerTrial, width: usize) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!(
            "earlier trial: {} {}",
            clipped(&tr.experiment, 20),
            clipped(&tr.units.join(", "), width)
        ),
        app.theme.style(Role::Heading),
    )];
    out.extend(para(
        app,
        format!(
            "one matched pair of samples, with and without it: score with minus score without = {:+.3}; {}{}",
            tr.effect,
            clipped(&tr.status, 20),
            tr.when
                .as_deref()
                .map(|w| format!(", tested {}", clipped(w, 40)))
                .unwrap_or_default()
        ),
        Role::Text,
        width,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> LedgerHistory {
        let trial = LedgerTrial {
            when: None,
            experiment: "ablate".to_owned(),
            units: vec!["u".to_owned()],
            effect: -1.0,
            status: "verified".to_owned(),
            result: None,
        };
        LedgerHistory {
            trials: vec![trial.clone(), trial],
            open_cohorts: vec![LedgerCohort {
                cohort: "b-1".to_owned(),
                trials: 1,
                last_finished_at: String::new(),
                ready: true,
            }],
            ..LedgerHistory::default()
        }
    }

    #[test]
    fn rows_run_through_attributions_open_batches_then_trials() {
        let h = history();
        assert_eq!(row_count(&h), 3);
        assert_eq!(row_at(&h, 0), Some(LedgerRow::OpenCohort(0)));
        assert_eq!(row_at(&h, 2), Some(LedgerRow::Trial(1)));
        assert_eq!(row_at(&h, 3), None);
    }
}
