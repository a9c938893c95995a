//! The suspects pane: the report's ranked suspects (rank, role, category, evidence) under a
//! header that says whether there is a clear winner or it is too close to call, with the margin,
//! the shortlist and the strategy; then the context-influence ranking with its own confidence,
//! labelled as correlation, not a cause. Scores order the lists and are printed as plain
//! numbers, never as percentages or probabilities. Only visible items are built.

use super::super::app::{App, Document, Pane};
use super::super::experiment_port::Target;
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::widgets::scroll_list::item_window;
use super::experiments::verdict_line;
use crate::analysis::influence::RankingConfidence;
use crate::analysis::model::{StepId, UnitId};
use crate::analysis::report::{InfluenceEntry, ProbeResult, Role as SuspectRole, Suspect};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;

/// Columns the expanded evidence is indented by.
const EVIDENCE_INDENT: usize = 6;
/// Columns of a context row besides its id (rank, mark, step, unit flag, score).
const CONTEXT_ROW_FIXED: usize = 42;

/// What the suspects pane remembers.
#[derive(Debug, Default)]
pub struct SuspectsState {
    /// The selected item: suspects first, then influence entries.
    pub cursor: usize,
    /// First item drawn.
    pub offset: Cell<usize>,
}

/// One selectable item.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Item<'a> {
    /// A ranked step.
    Step(usize, &'a Suspect),
    /// A scored piece of context.
    Context(usize, &'a InfluenceEntry),
}

/// How many items the pane lists.
pub fn item_count(doc: &Document) -> usize {
    doc.report.suspects.len() + influence_entries(doc).len()
}

fn influence_entries(doc: &Document) -> &[InfluenceEntry] {
    doc.report
        .influence
        .as_ref()
        .map(|i| i.scores.as_slice())
        .unwrap_or(&[])
}

/// The item at `i`.
pub fn item(doc: &Document, i: usize) -> Option<Item<'_>> {
    let s = &doc.report.suspects;
    match s.get(i) {
        Some(x) => Some(Item::Step(i, x)),
        None => influence_entries(doc)
            .get(i.checked_sub(s.len())?)
            .map(|e| Item::Context(i - s.len(), e)),
    }
}

/// The step an item points at.
pub fn item_step(doc: &Document, it: Item<'_>) -> Option<usize> {
    match it {
        Item::Step(_, s) => doc.index_of(&s.step),
        Item::Context(_, e) => e.step.as_deref().and_then(|id| doc.index_of(id)),
    }
}

/// What ablating an item removes (`None`: nothing can be removed).
pub fn item_target(it: Item<'_>) -> Option<Target> {
    match it {
        Item::Step(_, s) => Some(Target::Step(StepId::from(s.step.as_str()))),
        Item::Context(_, e) => e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u))),
    }
}

/// The shortlist the item belongs to, as ablation targets: the steps' shortlist for a step, the
/// influence shortlist (entries with a unit) for a piece of context.
pub fn shortlist_targets(doc: &Document, it: Item<'_>) -> Vec<Target> {
    match it {
        Item::Step(..) => doc
            .report
            .confidence
            .shortlist
            .iter()
            .map(|s| Target::Step(StepId::from(s.as_str())))
            .collect(),
        Item::Context(..) => {
            let Some(inf) = &doc.report.influence else {
                return Vec::new();
            };
            inf.confidence
                .shortlist
                .iter()
                .filter_map(|id| inf.scores.iter().find(|e| e.id == *id))
                .filter_map(|e| e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u))))
                .collect()
        }
    }
}

fn role_name(r: SuspectRole) -> &'static str {
    match r {
        SuspectRole::RootCause => "root cause",
        SuspectRole::Symptom => "symptom",
        SuspectRole::Suspect => "suspect",
    }
}

/// The header lines for a ranking's confidence: `what` is "suspect" or "context".
pub fn confidence_lines(
    app: &App,
    doc: &Document,
    c: &RankingConfidence,
    what: &str,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let name = |id: &str| match doc.index_of(id) {
        Some(i) => doc.describe(i),
        None => format!("'{}'", clipped(id, 40)),
    };
    let margin = c
        .margin
        .map(|m| format!("margin {m:.2}"))
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
        pieces.push((
            format!(": {lead}, {margin} over the next{strategy}"),
            t.style(Role::Text),
        ));
    } else {
        pieces.push(("≈ Too close to call".to_owned(), t.style(Role::Warning)));
        pieces.push((format!(" ({margin}{strategy})"), t.style(Role::Text)));
        if !c.shortlist.is_empty() {
            let list: Vec<String> = c
                .shortlist
                .iter()
                .map(|s| clipped(s, 24).into_owned())
                .collect();
            pieces.push((
                format!(
                    " · ★ shortlist: {}: re-run each {what} to decide",
                    list.join(", ")
                ),
                t.style(Role::Shortlist),
            ));
        }
    }
    let mut out = wrap_spans(pieces, width, "  ");
    if !c.reason.is_empty() {
        out.extend(wrap_spans(
            vec![(clipped(&c.reason, 400).into_owned(), t.style(Role::TextDim))],
            width,
            "  ",
        ));
    }
    out
}

/// Draws the suspects pane.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let r = &doc.report;
    let title = format!("{} ranked", r.suspects.len());
    let block = pane_block(app, Pane::Suspects, focused, &title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut header = Vec::new();
    if r.suspects.is_empty() {
        header.push(Line::styled(
            "No suspects: no detector found a step that looks wrong.",
            t.style(Role::TextDim),
        ));
        if !r.fault.why.is_empty() {
            header.extend(wrap_spans(
                vec![(clipped(&r.fault.why, 400).into_owned(), t.style(Role::Text))],
                width,
                "",
            ));
        }
    } else {
        header.extend(confidence_lines(app, doc, &r.confidence, "suspect", width));
    }
    let header_h = header.len().min(usize::from(inner.height));
    let list_h = usize::from(inner.height).saturating_sub(header_h);
    let count = item_count(doc);
    let cursor = app.suspects.cursor.min(count.saturating_sub(1));
    let ctx = ItemLines {
        app,
        doc,
        width,
        focused,
    };
    let start = item_window(&app.suspects.offset, cursor, list_h, |i| {
        ctx.lines(i, i == cursor).len()
    });
    let mut lines = header;
    lines.truncate(header_h);
    let mut i = start;
    while lines.len() < usize::from(inner.height) && i < count {
        lines.extend(ctx.lines(i, i == cursor));
        i += 1;
    }
    lines.truncate(usize::from(inner.height));
    frame.render_widget(Paragraph::new(lines), inner);
}

struct ItemLines<'a> {
    app: &'a App,
    doc: &'a Document,
    width: usize,
    focused: bool,
}

impl ItemLines<'_> {
    /// The lines of item `i`, with the section heading before the first of each list and the
    /// evidence under the selected one.
    fn lines(&self, i: usize, selected: bool) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let mut out = Vec::new();
        let Some(it) = item(self.doc, i) else {
            return out;
        };
        match it {
            Item::Step(0, _) => out.extend(wrap_spans(
                vec![(
                    "Steps, ranked by score (an order, not a probability)".to_owned(),
                    t.style(Role::Heading),
                )],
                self.width,
                "  ",
            )),
            Item::Context(0, _) => {
                if let Some(inf) = &self.doc.report.influence {
                    let embedder = inf.embedder.as_deref().unwrap_or("no");
                    out.extend(wrap_spans(
                        vec![(
                            format!(
                                "Context influence: correlation, not a cause ({}, {} embedder)",
                                inf.ranked_by, embedder
                            ),
                            t.style(Role::Heading),
                        )],
                        self.width,
                        "  ",
                    ));
                    out.extend(confidence_lines(
                        self.app,
                        self.doc,
                        &inf.confidence,
                        "unit",
                        self.width,
                    ));
                }
            }
            _ => {}
        }
        let mut row = match it {
            Item::Step(_, s) => self.step_row(s),
            Item::Context(pos, e) => self.context_row(pos, e),
        };
        if selected && let Some(first) = row.first_mut() {
            // The cursor as a glyph too, for screens without colour.
            first.content = first.content.replacen(' ', "▶", 1).into();
        }
        let mut row = Line::from(row);
        if selected {
            let role = if self.focused {
                Role::Selection
            } else {
                Role::SelectionInactive
            };
            let w = row.width();
            if w < self.width {
                row.spans.push(Span::raw(" ".repeat(self.width - w)));
            }
            row = row.patch_style(t.style(role));
        }
        out.push(row);
        if selected {
            match it {
                Item::Step(_, s) => out.extend(self.step_evidence(s)),
                Item::Context(_, e) => out.extend(self.context_evidence(e)),
            }
        }
        out
    }

    fn step_row(&self, s: &Suspect) -> Vec<Span<'static>> {
        let t = &self.app.theme;
        let top = s.rank == 1;
        let short = self.doc.report.confidence.shortlist.contains(&s.step);
        let pos = match self.doc.index_of(&s.step) {
            Some(i) => format!("pos {}", i + 1),
            None => "not in run".to_owned(),
        };
        let score = format!(" score {:.2}", s.score);
        let fixed = format!(
            " #{:<2}{} {} ({pos})  {:<10} {}  ",
            s.rank,
            if short { "★" } else { " " },
            clipped(&s.step, 16),
            role_name(s.role),
            clipped(&s.category, 22),
        );
        let room = self
            .width
            .saturating_sub(fixed.chars().count() + score.len());
        vec![
            Span::styled(
                format!(" #{:<2}", s.rank),
                t.style(if top { Role::SuspectTop } else { Role::Suspect }),
            ),
            Span::styled(if short { "★" } else { " " }, t.style(Role::Shortlist)),
            Span::styled(format!(" {} ", clipped(&s.step, 16)), t.style(Role::Text)),
            Span::styled(format!("({pos})  "), t.style(Role::TextDim)),
            Span::styled(format!("{:<10} ", role_name(s.role)), t.style(Role::Text)),
            Span::styled(
                format!("{}  ", clipped(&s.category, 22)),
                t.style(Role::StepKind),
            ),
            Span::styled(clipped(&s.title, room).into_owned(), t.style(Role::Text)),
            Span::styled(score, t.style(Role::TextDim)),
        ]
    }

    fn step_evidence(&self, s: &Suspect) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let ind = " ".repeat(EVIDENCE_INDENT);
        let mut out = Vec::new();
        let w = self.width;
        out.extend(wrap_spans(
            vec![(
                format!("{ind}{}", clipped(&s.title, 600)),
                t.style(Role::Heading),
            )],
            w,
            &ind,
        ));
        for e in &s.evidence {
            out.extend(wrap_spans(
                vec![(format!("{ind}• {}", clipped(e, 2000)), t.style(Role::Text))],
                w,
                &format!("{ind}  "),
            ));
        }
        if let Some(c) = &s.cause {
            let cause = match self.doc.index_of(c) {
                Some(i) => self.doc.describe(i),
                None => format!("'{}'", clipped(c, 40)),
            };
            out.push(Line::styled(
                format!("{ind}symptom of {cause}"),
                t.style(Role::TextDim),
            ));
        }
        out.push(Line::styled(
            format!(
                "{ind}found by {}, detector confidence {:.2}",
                clipped(&s.detector, 30),
                s.confidence
            ),
            t.style(Role::TextDim),
        ));
        let key = Target::Step(StepId::from(s.step.as_str())).key();
        out.extend(self.verdict(
            self.app.experiments.results.get(&key),
            "removing its units",
            &ind,
        ));
        out
    }

    fn context_row(&self, pos: usize, e: &InfluenceEntry) -> Vec<Span<'static>> {
        let t = &self.app.theme;
        let short = self
            .doc
            .report
            .influence
            .as_ref()
            .is_some_and(|i| i.confidence.shortlist.contains(&e.id));
        let from = e
            .step
            .as_deref()
            .map(|s| format!("from {}", clipped(s, 10)))
            .unwrap_or_default();
        let score = format!(" score {:.2}", e.score);
        let id_w = self.width.saturating_sub(CONTEXT_ROW_FIXED).clamp(8, 24);
        vec![
            Span::styled(format!(" {:<3}", pos + 1), t.style(Role::TextDim)),
            Span::styled(if short { "★" } else { " " }, t.style(Role::Shortlist)),
            Span::styled(
                format!(" {:<id_w$} ", clipped(&e.id, id_w)),
                t.style(Role::Text),
            ),
            Span::styled(format!("{from:<16}"), t.style(Role::TextDim)),
            Span::styled(
                if e.unit.is_none() {
                    "no unit "
                } else {
                    "        "
                },
                t.style(Role::TextDim),
            ),
            Span::styled(score, t.style(Role::TextDim)),
        ]
    }

    fn context_evidence(&self, e: &InfluenceEntry) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let ind = " ".repeat(EVIDENCE_INDENT);
        let mut out = Vec::new();
        let s = &e.signals;
        out.extend(wrap_spans(
            vec![(
                format!(
                    "{ind}resemblance to the answer {:.2} · to ancestors {:.2} · persistence {:.2} · depth {:.2}",
                    s.fa, s.avg, s.persist, s.depth
                ),
                t.style(Role::Text),
            )],
            self.width,
            &ind,
        ));
        if e.unit.is_none() {
            out.push(Line::styled(
                format!(
                    "{ind}not a context unit: nothing to remove; replaying from its step tests it"
                ),
                t.style(Role::TextDim),
            ));
        }
        if let Some(u) = e.unit.as_deref().and_then(|u| self.doc.run.unit(u)) {
            out.extend(wrap_spans(
                vec![(
                    format!("{ind}{} · {}", clipped(&u.kind, 20), clipped(&u.text, 300)),
                    t.style(Role::TextDim),
                )],
                self.width,
                &ind,
            ));
        }
        let key = e
            .unit
            .as_deref()
            .map(|u| Target::Unit(UnitId::from(u)).key());
        let result = key
            .and_then(|k| self.app.experiments.results.get(&k))
            .or(e.probe.as_ref());
        out.extend(self.verdict(result, "removing it", &ind));
        out
    }

    fn verdict(
        &self,
        result: Option<&ProbeResult>,
        intervention: &str,
        ind: &str,
    ) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        match result {
            Some(r) => {
                let mut pieces = vec![(ind.to_owned(), Style::default())];
                pieces.extend(
                    verdict_line(self.app, r, intervention)
                        .into_iter()
                        .map(|s| (s.content.into_owned(), s.style)),
                );
                wrap_spans(pieces, self.width, &format!("{ind}  "))
            }
            None => {
                let key = self
                    .app
                    .keymap
                    .first_key(
                        &[super::super::keymap::Scope::Global],
                        &super::super::action::Action::Ablate,
                    )
                    .unwrap_or_else(|| "ablate".to_owned());
                wrap_spans(
                    vec![(
                        format!(
                            "{ind}untested: a score narrows the search; only a re-run proves a cause (press {key} to ablate)"
                        ),
                        t.style(Role::TextDim),
                    )],
                    self.width,
                    ind,
                )
            }
        }
    }
}
