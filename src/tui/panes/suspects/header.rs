//! The suspects pane's fixed lines: which of its two lists is shown (with the key that switches),
//! and that list's verdict, clear winner or too close to call, with the margin, the strategy and
//! the shortlist to re-run. The ranking's own explanation (`reason`) scrolls with the list, above
//! its first item. Reads the report only.

use super::super::super::action::Action;
use super::super::super::app::{App, Document};
use super::super::super::keymap::Scope;
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, wrap_spans};
use super::{View, influence_entries};
use crate::analysis::influence::RankingConfidence;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The tab line and the shown list's verdict.
pub fn fixed(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let view = app.suspects.view;
    let key = app
        .keymap
        .first_key(&[Scope::Suspects, Scope::Global], &Action::ToggleInfluence)
        .unwrap_or_else(|| Action::ToggleInfluence.name().to_owned());
    let tab = |label: String, on: bool| {
        if on {
            Span::styled(format!("▸{label} "), t.style(Role::TitleFocus))
        } else {
            Span::styled(format!(" {label} "), t.style(Role::TextDim))
        }
    };
    let mut tabs = vec![
        tab(
            format!("Suspect steps ({})", doc.report.suspects.len()),
            view == View::Steps,
        ),
        Span::styled("│", t.style(Role::TextDim)),
        tab(
            format!("Context influence ({})", influence_entries(doc).len()),
            view == View::Context,
        ),
    ];
    tabs.push(Span::styled(
        format!("· {key} switches"),
        t.style(Role::TextDim),
    ));
    let mut out = vec![Line::from(tabs)];
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
    if let Some((c, what)) = confidence {
        out.extend(confidence_lines(app, doc, c, what, width));
    }
    out
}

/// Shortlisted entries named in the header; a longer shortlist is counted.
const SHORTLIST_NAMED: usize = 10;

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
        Some(_) => format!("step '{}'", clipped(id, 24)),
        None => format!("'{}'", clipped(id, 40)),
    };
    let margin = c
        .margin
        .map(|m| format!("margin {m:.2} over the next"))
        .unwrap_or_else(|| "no runner-up".to_owned());
    let strategy = if c.strategy.is_empty() {
        String::new()
    } else {
        format!(" · strategy {}", c.strategy)
    };
    let mut pieces: Vec<(String, Style)> = Vec::new();
    if c.clear_winner {
        let lead = c.lead.as_deref().map(name).unwrap_or_default();
        pieces.push(("◆ Clear winner".to_owned(), t.style(Role::SuspectTop)));
        pieces.push((format!(": {lead}, {margin}{strategy}"), t.style(Role::Text)));
    } else {
        pieces.push(("≈ Too close to call".to_owned(), t.style(Role::Warning)));
        pieces.push((format!(" ({margin}{strategy})"), t.style(Role::Text)));
        if !c.shortlist.is_empty() {
            // A long shortlist is counted and its first entries named, so the header stays a
            // few lines (and a frame does not wrap 40,000 ids).
            let list: Vec<String> = c
                .shortlist
                .iter()
                .take(SHORTLIST_NAMED)
                .map(|s| clipped(s, 24).into_owned())
                .collect();
            let named = if c.shortlist.len() > SHORTLIST_NAMED {
                format!(
                    "{} within the band; the first {SHORTLIST_NAMED}: {}",
                    c.shortlist.len(),
                    list.join(", ")
                )
            } else {
                list.join(", ")
            };
            pieces.push((
                format!(" · ★ shortlist: {named}: re-run each {what} to decide"),
                t.style(Role::Shortlist),
            ));
        }
    }
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
