//! The suspects pane's fixed lines: which of its two lists is shown (with the key that switches),
//! that list's verdict (clear winner, too close to call, or nothing to blame when the run did not
//! fail through the agent), the experiment that would prove it (restoring dropped context first
//! when there is some), and what the claims of the answer are labelled. The ranking's own
//! explanation (`reason`) scrolls with the list, above its first item. Reads the report only.

use super::super::super::action::Action;
use super::super::super::app::{App, Document, group};
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::super::widgets::marks;
use super::super::claims::label_mark;
use super::{Item, View, influence_entries, item_target, selected};
use crate::analysis::influence::RankingConfidence;
use crate::analysis::model::{RunStatus, StatusFrom};
use crate::analysis::report::{Party, SupportLabel};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Shortlisted ids named in the header; the rest are counted.
const SHORTLIST_SHOWN: usize = 5;

/// Why nothing is blamed on the agent, when the run did not fail through it: succeeded, still
/// waiting, or the user's doing. `None` when there is a failure to explain.
pub fn nothing_to_blame(doc: &Document) -> Option<String> {
    let r = &doc.report;
    match (r.run.status, r.fault.party) {
        (RunStatus::Succeeded, _) | (_, Party::None) => {
            Some("the run succeeded, so there is no failure to explain".to_owned())
        }
        (RunStatus::Unfinished, _) | (_, Party::Unfinished) => Some(
            "the run has not finished (it is waiting for the user), so nothing has failed yet"
                .to_owned(),
        ),
        (_, Party::User) => Some(format!(
            "the fault is the user's: {}",
            clipped(&r.fault.why, 160)
        )),
        _ => None,
    }
}

/// The tab line, the shown list's verdict, the experiment that would prove it, and the claims.
pub fn fixed(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let view = app.suspects.view;
    let key = app.key(Action::ToggleInfluence);
    let tab = |label: String, on: bool| {
        if on {
            Span::styled(format!("[{label}]"), t.style(Role::TitleFocus))
        } else {
            Span::styled(format!(" {label} "), t.style(Role::TextDim))
        }
    };
    let tabs = vec![
        tab(
            match doc.report.leads.len() {
                0 => format!("Suspect steps ({})", group(doc.report.suspects.len())),
                n => format!(
                    "Suspect steps ({}, {} lead{})",
                    group(doc.report.suspects.len()),
                    group(n),
                    if n == 1 { "" } else { "s" }
                ),
            },
            view == View::Steps,
        ),
        Span::styled("│", t.style(Role::TextDim)),
        tab(
            format!(
                "Context influence ({})",
                group(influence_entries(doc).len())
            ),
            view == View::Context,
        ),
        Span::styled(format!(" · {key} switches"), t.style(Role::TextDim)),
    ];
    let mut out = vec![Line::from(tabs)];
    out.extend(outcome_lines(app, doc, width));
    let confidence = match view {
        View::Steps if !doc.report.suspects.is_empty() => Some((&doc.report.confidence, "suspect")),
        View::Context => doc
            .report
            .influence
            .as_ref()
            .filter(|i| !i.scores.is_empty())
            .map(|i| (&i.confidence, "unit")),
        View::Steps => None,
    };
    match (view, nothing_to_blame(doc), confidence) {
        (View::Context, Some(why), Some(_)) => out.extend(wrap_spans(
            vec![
                ("Nothing to blame".to_owned(), t.style(Role::Heading)),
                (
                    format!(": {why}. This ranking only shows what resembles the answer."),
                    t.style(Role::Text),
                ),
            ],
            width,
            "  ",
        )),
        (_, _, Some((c, what))) => out.extend(confidence_lines(app, doc, c, what, width)),
        _ => {}
    }
    out.extend(prove_lines(app, doc, width));
    out.extend(claims_line(app, doc, width));
    out
}

/// Where the run's outcome came from, when it is not simply what the run records: assumed (the
/// diagnosis takes it as failed), or set by the user or by the reference answer; with the key
/// that sets it.
fn outcome_lines(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let r = &doc.report.run;
    let key = app.key(Action::SetOutcome);
    let (head, rest) = match r.status_from {
        StatusFrom::Assumed => (
            "Outcome assumed",
            format!(
                ": nothing in the recording says whether the answer was right, so it is diagnosed as {}; {key} marks it succeeded",
                r.status.as_str()
            ),
        ),
        StatusFrom::Given => (
            "Outcome",
            format!(": {}, as you said; {key} changes it", r.status.as_str()),
        ),
        StatusFrom::Reference => (
            "Outcome",
            format!(
                ": {}, the final answer equals the reference answer; {key} changes it",
                r.status.as_str()
            ),
        ),
        StatusFrom::Recorded => return Vec::new(),
    };
    wrap_spans(
        vec![
            (head.to_owned(), t.style(Role::Heading)),
            (rest, t.style(Role::Text)),
        ],
        width,
        "  ",
    )
}

/// The verdict of a ranking: `what` is "suspect" or "unit".
pub fn confidence_lines(
    app: &App,
    doc: &Document,
    c: &RankingConfidence,
    what: &str,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    // A step of the run is named as one; a piece of context by its id.
    let name = |id: &str| match doc.index_of(id) {
        Some(_) => format!("step '{}'", clipped(&doc.step_ref_of(id), 24)),
        None => format!("'{}'", clipped(id, 40)),
    };
    let strategy = if c.strategy.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.strategy)
    };
    let mut pieces: Vec<(String, Style)> = Vec::new();
    match (c.clear_winner, c.margin) {
        (true, None) => {
            let lead = c.lead.as_deref().map(name).unwrap_or_default();
            pieces.push((
                format!("{} Only one {what}", marks::CLEAR_WINNER),
                t.style(Role::SuspectTop),
            ));
            pieces.push((
                format!(", {lead}: nothing to compare it with"),
                t.style(Role::Text),
            ));
        }
        (true, Some(m)) => {
            let lead = c.lead.as_deref().map(name).unwrap_or_default();
            pieces.push((
                format!("{} Clear winner", marks::CLEAR_WINNER),
                t.style(Role::SuspectTop),
            ));
            pieces.push((
                format!(": {lead}, ahead by {m:.2}{strategy}"),
                t.style(Role::Text),
            ));
        }
        (false, margin) => {
            let margin = margin
                .map(|m| format!(": the top is ahead by {m:.2}"))
                .unwrap_or_default();
            pieces.push((
                format!("{} Too close to call", marks::TOO_CLOSE),
                t.style(Role::Warning),
            ));
            pieces.push((format!("{margin}{strategy}"), t.style(Role::Text)));
            if !c.shortlist.is_empty() {
                let n = c.shortlist.len();
                let list: Vec<String> = c
                    .shortlist
                    .iter()
                    .take(SHORTLIST_SHOWN)
                    .map(|s| clipped(&doc.step_ref_of(s), 24).into_owned())
                    .collect();
                let text = if n > SHORTLIST_SHOWN {
                    format!(
                        " · {} {} within the band; the first {SHORTLIST_SHOWN}: {}",
                        marks::SHORTLIST,
                        group(n),
                        list.join(", ")
                    )
                } else {
                    format!(" · {} shortlist: {}", marks::SHORTLIST, list.join(", "))
                };
                pieces.push((text, t.style(Role::Shortlist)));
            }
        }
    }
    wrap_spans(pieces, width, "  ")
}

/// The experiment that would prove what the pane shows: restoring dropped context first when
/// there is some (it is in no ranking), then the selected item's own test, or the shortlist's.
fn prove_lines(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut tests: Vec<(String, String)> = Vec::new();
    let dropped = doc
        .report
        .dropped
        .as_ref()
        .map(|d| d.dropped.as_slice())
        .unwrap_or(&[]);
    match dropped {
        [] => {}
        // Outside the dropped pane the key first shows the unit (nothing runs unseen).
        [one] => tests.push((
            app.key(Action::Restore),
            format!(
                "shows '{}' (never sent), {} again re-runs with it put back",
                clipped(&one.id, 30),
                app.key(Action::Restore)
            ),
        )),
        many => tests.push((
            app.key(Action::Restore),
            format!(
                "shows the {} units never sent, {} again re-runs with the selected one put back",
                group(many.len()),
                app.key(Action::Restore)
            ),
        )),
    }
    let confidence = match app.suspects.view {
        View::Steps => Some(&doc.report.confidence),
        View::Context => doc.report.influence.as_ref().map(|i| &i.confidence),
    };
    let shortlist = confidence.map_or(0, |c| c.shortlist.len());
    let close = confidence.is_some_and(|c| !c.clear_winner);
    let blame = nothing_to_blame(doc).is_none();
    match selected(app, doc) {
        Some(_) if close && shortlist > 1 && blame => tests.push((
            app.key(Action::AblateShortlist),
            if shortlist > app.max_suspects {
                format!(
                    "re-runs without each of the first {} of the {} shortlisted, in turn ([experiments] max_suspects)",
                    group(app.max_suspects),
                    group(shortlist)
                )
            } else {
                format!(
                    "re-runs without each of the {} shortlisted, in turn",
                    group(shortlist)
                )
            },
        )),
        Some(it) if blame => match (it, item_target(it)) {
            (Item::Step(_, s), _) => {
                let produced = doc
                    .run
                    .context_units
                    .iter()
                    .any(|u| u.produced_by.as_ref().is_some_and(|p| p.as_str() == s.step));
                tests.push(if produced {
                    (
                        app.key(Action::Ablate),
                        format!(
                            "re-runs without what '{}' produced",
                            clipped(&doc.step_ref_of(&s.step), 24)
                        ),
                    )
                } else {
                    (
                        app.key(Action::Replay),
                        format!("replays from '{}'", clipped(&doc.step_ref_of(&s.step), 24)),
                    )
                });
            }
            (Item::Context(_, e), Some(_)) => tests.push((
                app.key(Action::Ablate),
                format!("re-runs without '{}'", clipped(&e.id, 30)),
            )),
            (Item::Context(_, e), None) => tests.push((
                app.key(Action::Replay),
                format!(
                    "replays from '{}'",
                    match e.step.as_deref() {
                        Some(step) => clipped(&doc.step_ref_of(step), 24).into_owned(),
                        None => clipped(&e.id, 20).into_owned(),
                    }
                ),
            )),
        },
        _ => {}
    }
    if tests.is_empty() {
        return Vec::new();
    }
    let mut pieces = vec![("Prove it: ".to_owned(), t.style(Role::Heading))];
    // A hint never promises what cannot work (issue 26): without a runner that can re-run
    // this run, it says what is missing first.
    let gap = app.experiments.cannot_run(&doc.run.id);
    if let Some(why) = &gap {
        pieces.push((format!("{why}; then "), t.style(Role::Warning)));
    }
    for (k, (key, what)) in tests.into_iter().enumerate() {
        if k > 0 {
            pieces.push((", then ".to_owned(), t.style(Role::Text)));
        }
        pieces.push((key, t.style(Role::Key)));
        pieces.push((format!(" {what}"), t.style(Role::Text)));
    }
    wrap_spans(pieces, width, "  ")
}

/// The claims of the answer by label, and the key that shows what each rests on.
fn claims_line(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let claims = &doc.report.claims;
    if claims.is_empty() {
        return Vec::new();
    }
    let order = [
        SupportLabel::Contradicted,
        SupportLabel::Stale,
        SupportLabel::Unsupported,
        SupportLabel::Partial,
        SupportLabel::Supported,
    ];
    let mut pieces = vec![("Claims: ".to_owned(), t.style(Role::Heading))];
    let mut first = true;
    for l in order {
        let n = claims.iter().filter(|c| c.label == l).count();
        if n == 0 {
            continue;
        }
        let (glyph, name, role) = label_mark(l);
        if !first {
            pieces.push((", ".to_owned(), t.style(Role::Text)));
        }
        first = false;
        pieces.push((format!("{n} {glyph} {name}"), t.style(role)));
    }
    if first {
        pieces.push(("none checked".to_owned(), t.style(Role::TextDim)));
    }
    pieces.push((
        format!(" ({} says why)", app.key(Action::FocusClaims)),
        t.style(Role::TextDim),
    ));
    wrap_spans(pieces, width, "  ")
}

/// The ranking's explanation, dim, for the top of the list.
pub fn reason_lines(app: &App, c: &RankingConfidence, width: usize) -> Vec<Line<'static>> {
    if c.reason.is_empty() {
        return Vec::new();
    }
    wrap_spans(
        vec![(
            clipped(&c.reason, 400).into_owned(),
            app.theme.style(Role::TextDim),
        )],
        width,
        "  ",
    )
}
