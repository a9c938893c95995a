//! The claims pane: the final answer, then each of its claims with its support label as a glyph
//! and a colour (`✓` supported, `◐` partial, `?` unsupported, `✗` contradicted, `~` stale, `·`
//! not a claim), its evidence step and its origin step; both steps are one key away.

use super::super::app::{App, Document, Pane};
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, one_line, wrap_spans};
use super::super::widgets::scroll_list::item_window;
use crate::analysis::report::{Claim, SupportLabel};
use crate::tui::widgets::selection::selected_row;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;

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
        SupportLabel::Supported => ("✓", "supported", Role::ClaimSupported),
        SupportLabel::Partial => ("◐", "partial", Role::ClaimPartial),
        SupportLabel::Unsupported => ("?", "unsupported", Role::ClaimUnsupported),
        SupportLabel::Contradicted => ("✗", "contradicted", Role::ClaimContradicted),
        SupportLabel::Stale => ("~", "stale", Role::ClaimStale),
        SupportLabel::NoClaim => ("·", "no claim", Role::ClaimNone),
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
        &format!(
            "{} claim{}",
            claims.len(),
            if claims.len() == 1 { "" } else { "s" }
        ),
        area.width,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut lines = Vec::new();
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
    if claims.is_empty() {
        lines.push(Line::styled(
            "No claims were checked.",
            t.style(Role::TextDim),
        ));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let list_h = usize::from(inner.height).saturating_sub(lines.len());
    let cursor = app.claims.cursor.min(claims.len() - 1);
    let build = |i: usize| claim_lines(app, doc, i, i == cursor, width, focused);
    let start = item_window(&app.claims.offset, cursor, list_h, |i| build(i).len());
    let mut i = start;
    while lines.len() < usize::from(inner.height) && i < claims.len() {
        lines.extend(build(i));
        i += 1;
    }
    lines.truncate(usize::from(inner.height));
    frame.render_widget(Paragraph::new(lines), inner);
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
    let cursor = if selected { "▶" } else { " " };
    let head = format!("{cursor}{glyph} {name:<12} ");
    let room = width.saturating_sub(head.chars().count());
    let row = Line::from(vec![
        Span::styled(head, t.style(role)),
        Span::styled(clipped(&c.text, room).into_owned(), t.style(Role::Text)),
    ]);
    if !selected {
        return vec![row];
    }
    let mut out = vec![selected_row(row, width, focused, t)];
    let ind = "     ";
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
    let step = |id: &Option<String>| match id.as_deref() {
        Some(s) => match doc.index_of(s) {
            Some(ix) => doc.describe(ix),
            None => format!("'{}' (not in the run)", clipped(s, 30)),
        },
        None => "none".to_owned(),
    };
    let keys = |a: super::super::action::Action| {
        app.keymap
            .first_key(&[super::super::keymap::Scope::Claims], &a)
            .map(|k| format!(" [{k}]"))
            .unwrap_or_default()
    };
    out.push(Line::styled(
        format!(
            "{ind}evidence: {}{}",
            step(&c.evidence_step),
            keys(super::super::action::Action::JumpEvidence)
        ),
        t.style(Role::TextDim),
    ));
    out.push(Line::styled(
        format!(
            "{ind}origin:   {}{}",
            step(&c.origin_step),
            keys(super::super::action::Action::JumpOrigin)
        ),
        t.style(Role::TextDim),
    ));
    out
}
