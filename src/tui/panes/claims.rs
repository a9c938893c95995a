//! The claims pane: the task, the final answer and the reference answer the run records, then each claim of
//! the answer with its support label as a glyph and a colour (`✓` supported, `◐` partial, `?`
//! unsupported, `≠` contradicted, `~` stale, `·` not a claim) and what the label rests on (the
//! report's reason, one line each; the selected claim in full with the evidence passage, its
//! evidence step and its origin step, each one key away when there is one).

use super::super::app::{App, Document, Pane, RowHit};
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, one_line, wrap_spans};
use super::super::widgets::marks;
use super::super::widgets::scroll_list::item_window;
use crate::analysis::report::{Claim, SupportLabel};
use crate::tui::widgets::selection::selected_row;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;

/// Lines of the task shown above the final answer.
const TASK_LINES: usize = 2;
/// Lines of the final answer shown above the claims.
const ANSWER_LINES: usize = 3;
/// At most this much of the final answer is read for its preview.
const ANSWER_BYTES: usize = 4096;

/// What the claims pane remembers.
#[derive(Debug, Default)]
pub struct ClaimsState {
    /// The selected claim.
    pub cursor: usize,
    /// First claim drawn.
    pub offset: Cell<usize>,
}

/// The glyph, name and role of a label.
pub fn label_mark(l: SupportLabel) -> (&'static str, &'static str, Role) {
    match l {
        SupportLabel::Supported => (marks::CLAIM_SUPPORTED, "supported", Role::ClaimSupported),
        SupportLabel::Partial => (marks::CLAIM_PARTIAL, "partial", Role::ClaimPartial),
        SupportLabel::Unsupported => (
            marks::CLAIM_UNSUPPORTED,
            "unsupported",
            Role::ClaimUnsupported,
        ),
        SupportLabel::Contradicted => (
            marks::CLAIM_CONTRADICTED,
            "contradicted",
            Role::ClaimContradicted,
        ),
        SupportLabel::Stale => (marks::CLAIM_STALE, "stale", Role::ClaimStale),
        SupportLabel::NoClaim => (marks::CLAIM_NONE, "no claim", Role::ClaimNone),
    }
}

/// What a label means, in a few words (the legend under the claims).
fn label_meaning(l: SupportLabel) -> &'static str {
    match l {
        SupportLabel::Supported => "a source says it",
        SupportLabel::Partial => "a source says part of it",
        SupportLabel::Unsupported => "no source says it",
        SupportLabel::Contradicted => "a close source says otherwise",
        SupportLabel::Stale => "only an outdated source says it",
        SupportLabel::NoClaim => "a pleasantry",
    }
}

/// The selected claim.
pub fn selected<'a>(app: &App, doc: &'a Document) -> Option<&'a Claim> {
    doc.report.claims.get(app.claims.cursor)
}

/// Draws the claims pane.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let claims = &doc.report.claims;
    let block = pane_block(
        app,
        Pane::Claims,
        focused,
        &crate::analysis::count::counted(claims.len(), "claim", "claims"),
        area.width,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut lines = Vec::new();
    // What the agent was asked, above what it answered (issue 26).
    if let Some(task) = &doc.report.run.task {
        let mut asked = wrap_spans(
            vec![
                ("Task: ".to_owned(), t.style(Role::Heading)),
                (one_line(task, ANSWER_BYTES, 2000), t.style(Role::Text)),
            ],
            width,
            "  ",
        );
        if asked.len() > TASK_LINES {
            asked.truncate(TASK_LINES);
            asked.push(Line::styled("  … (cut here)", t.style(Role::TextDim)));
        }
        lines.extend(asked);
    }
    match &doc.run.final_answer {
        Some(a) => {
            let mut ans = wrap_spans(
                vec![(
                    format!("Final answer: {}", one_line(a, ANSWER_BYTES, 2000)),
                    t.style(Role::Text),
                )],
                width,
                "  ",
            );
            if ans.len() > ANSWER_LINES {
                ans.truncate(ANSWER_LINES);
                ans.push(Line::styled(
                    "  … (the whole answer is in the last step's detail)",
                    t.style(Role::TextDim),
                ));
            }
            lines.extend(ans);
        }
        None => lines.push(Line::styled(
            "The run records no final answer.",
            t.style(Role::TextDim),
        )),
    }
    if let Some(r) = &doc.run.reference_answer {
        let mut reference = wrap_spans(
            vec![
                ("Reference answer: ".to_owned(), t.style(Role::Heading)),
                (one_line(r, ANSWER_BYTES, 2000), t.style(Role::Text)),
            ],
            width,
            "  ",
        );
        reference.truncate(ANSWER_LINES);
        lines.extend(reference);
    }
    if claims.is_empty() {
        lines.push(Line::styled(
            "No claims were checked.",
            t.style(Role::TextDim),
        ));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let legend = legend(app, doc, width);
    let height = usize::from(inner.height);
    // The legend stays under the list when the list leaves room for it.
    let list_h = height.saturating_sub(lines.len());
    let cursor = app.claims.cursor.min(claims.len() - 1);
    let build = |i: usize| claim_lines(app, doc, i, i == cursor, width, focused);
    let start = item_window(&app.claims.offset, cursor, list_h, |i| build(i).len());
    let mut i = start;
    let mut hits = app.hits.borrow_mut();
    while lines.len() < height && i < claims.len() {
        if let Ok(y) = u16::try_from(lines.len()) {
            hits.push(RowHit {
                pane: Pane::Claims,
                y: inner.y.saturating_add(y),
                x: inner.x,
                width: inner.width,
                index: i,
            });
        }
        lines.extend(build(i));
        i += 1;
    }
    if i == claims.len() && lines.len() + 1 + legend.len() <= height {
        lines.push(Line::default());
        lines.extend(legend);
    }
    lines.truncate(height);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The labels the run's claims use, each with what it means.
fn legend(app: &App, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut pieces: Vec<(String, ratatui::style::Style)> = Vec::new();
    for l in [
        SupportLabel::Supported,
        SupportLabel::Partial,
        SupportLabel::Unsupported,
        SupportLabel::Contradicted,
        SupportLabel::Stale,
        SupportLabel::NoClaim,
    ] {
        if !doc.report.claims.iter().any(|c| c.label == l) {
            continue;
        }
        let (glyph, name, role) = label_mark(l);
        pieces.push((format!("{glyph} {name}"), t.style(role)));
        pieces.push((format!(": {}   ", label_meaning(l)), t.style(Role::TextDim)));
    }
    wrap_spans(pieces, width, "")
}

fn claim_lines(
    app: &App,
    doc: &Document,
    i: usize,
    selected: bool,
    width: usize,
    focused: bool,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(c) = doc.report.claims.get(i) else {
        return Vec::new();
    };
    let (glyph, name, role) = label_mark(c.label);
    let cursor = if selected { marks::CURSOR } else { " " };
    let head = format!("{cursor}{glyph} {name:<12} ");
    let room = width.saturating_sub(head.chars().count());
    let row = Line::from(vec![
        Span::styled(head, t.style(role)),
        Span::styled(clipped(&c.text, room).into_owned(), t.style(Role::Text)),
    ]);
    let ind = "     ";
    if !selected {
        // What the label rests on, one line.
        let mut out = vec![row];
        if !c.why.is_empty() {
            out.push(Line::styled(
                format!("{ind}{}", clipped(&c.why, width.saturating_sub(ind.len()))),
                t.style(Role::TextDim),
            ));
        }
        return out;
    }
    let mut out = vec![selected_row(row, width, focused, t)];
    if c.text.chars().count() > room {
        out.extend(wrap_spans(
            vec![(
                format!("{ind}{}", clipped(&c.text, 2000)),
                t.style(Role::Text),
            )],
            width,
            ind,
        ));
    }
    if !c.why.is_empty() {
        out.extend(wrap_spans(
            vec![
                (format!("{ind}why {name}: "), t.style(Role::Heading)),
                (clipped(&c.why, 1000).into_owned(), t.style(Role::Text)),
            ],
            width,
            &format!("{ind}  "),
        ));
    }
    if let Some(e) = &c.evidence_text {
        out.extend(wrap_spans(
            vec![(
                format!("{ind}passage: '{}'", clipped(e, 600)),
                t.style(Role::TextDim),
            )],
            width,
            &format!("{ind}  "),
        ));
    }
    let step = |id: &Option<String>| match id.as_deref() {
        Some(s) => match doc.index_of(s) {
            Some(ix) => (crate::tui::header::step_words(doc, ix), true),
            None => (format!("'{}' (not in the run)", clipped(s, 30)), false),
        },
        None => ("none".to_owned(), false),
    };
    let keys = |a: super::super::action::Action, found: bool| {
        if !found {
            return String::new();
        }
        app.keymap
            .first_key(&[super::super::keymap::Scope::Claims], &a)
            .map(|k| format!(" [{k}]"))
            .unwrap_or_default()
    };
    let (evidence, has_evidence) = step(&c.evidence_step);
    let (origin, has_origin) = step(&c.origin_step);
    out.push(Line::styled(
        format!(
            "{ind}evidence: {evidence}{}",
            keys(super::super::action::Action::JumpEvidence, has_evidence)
        ),
        t.style(Role::TextDim),
    ));
    out.push(Line::styled(
        format!(
            "{ind}origin:   {origin}{}",
            keys(super::super::action::Action::JumpOrigin, has_origin)
        ),
        t.style(Role::TextDim),
    ));
    out
}
