//! One item of the suspects pane as lines: a suspect step's row (rank, shortlist mark, step,
//! role, category, title, score, and the glyph of any verdict) or an influence entry's row, and
//! under the selected one its evidence (`evidence.rs`: why it was chosen and what re-runs found,
//! the latest ledger attribution of each of its units and of replays from a step included).
//! Above the first item, the ranking's explanation and what its scores mean. Reads only.

use super::super::super::action::Action;
use super::super::super::app::{App, Document};
use super::super::super::keymap::Scope;
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::experiments::verdict_mark;
use super::header::{nothing_to_blame, reason_lines};
use super::{Item, View, is_lead, item};
use crate::analysis::model::{StepId, UnitId};
use crate::analysis::report::{InfluenceEntry, ProbeResult, Role as SuspectRole, Suspect};
use crate::experiments::engine::Target;
use crate::experiments::ledger::LatestAttribution;
use crate::tui::widgets::inert_text::width_of;
use crate::tui::widgets::marks;
use crate::tui::widgets::selection::selected_row;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// Which optional columns a suspect row shows.
struct StepColumns {
    pos: bool,
    role: bool,
    category: usize,
}

/// Columns the expanded evidence is indented by.
pub(super) const EVIDENCE_INDENT: usize = 6;
/// Columns of a context row besides its id (rank, mark, spaces, step, unit flag, verdict, score),
/// with a three-digit rank.
const CONTEXT_ROW_FIXED: usize = 43;

/// What drawing an item needs.
pub struct ItemLines<'a> {
    /// The app.
    pub app: &'a App,
    /// The document.
    pub doc: &'a Document,
    /// The inner width.
    pub width: usize,
    /// The pane has focus.
    pub focused: bool,
    /// The list shown.
    pub view: View,
    /// The ranking's explanation goes above the first item (left out when the first item,
    /// selected, would not fit with it).
    pub preamble: bool,
}

fn role_name(r: SuspectRole) -> &'static str {
    match r {
        SuspectRole::RootCause => "root cause",
        SuspectRole::Symptom => "symptom",
        SuspectRole::Suspect => "suspect",
    }
}

impl ItemLines<'_> {
    pub(super) fn key(&self, a: Action) -> String {
        self.app
            .keymap
            .first_key(&[Scope::Suspects, Scope::Global], &a)
            .unwrap_or_else(|| a.name().to_owned())
    }

    /// What the pane says when the view's list is empty.
    pub fn empty(&self) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let r = &self.doc.report;
        let mut out = Vec::new();
        let text = match self.view {
            View::Steps => {
                out.extend(wrap_spans(
                    vec![(
                        "No suspects: no detector found a step that looks wrong.".to_owned(),
                        t.style(Role::Text),
                    )],
                    self.width,
                    "",
                ));
                if !r.fault.why.is_empty() {
                    out.extend(wrap_spans(
                        vec![(
                            clipped(&r.fault.why, 400).into_owned(),
                            t.style(Role::TextDim),
                        )],
                        self.width,
                        "",
                    ));
                }
                let dropped = r.dropped.as_ref().map(|d| d.dropped.len()).unwrap_or(0);
                // Only a list that holds something is pointed at (issue 26).
                let influence = !super::influence_entries(self.doc).is_empty();
                let i = self.key(Action::ToggleInfluence);
                match (dropped > 0, influence) {
                    (true, _) => format!(
                        "Where to look next: the dropped context ({}) lists {dropped} unit{} available but never sent, which no ranking shows; {} re-runs with one put back.{}",
                        self.key(Action::FocusDropped),
                        if dropped == 1 { "" } else { "s" },
                        self.key(Action::Restore),
                        if influence {
                            format!(" The context influence ({i}) ranks what reached the model.")
                        } else {
                            String::new()
                        }
                    ),
                    (false, true) => format!(
                        "Where to look next: the context influence ({i}) ranks what reached the model."
                    ),
                    (false, false) => format!(
                        "Where to look next: the timeline ({}) and the step detail ({}); this run has no context-influence ranking to turn to.",
                        self.key(Action::FocusTimeline),
                        self.key(Action::FocusDetail)
                    ),
                }
            }
            View::Context => format!(
                "No context-influence ranking: no model step records the context it was sent. {} goes back to the suspect steps.",
                self.key(Action::ToggleInfluence)
            ),
        };
        out.extend(wrap_spans(
            vec![(text, t.style(Role::Text))],
            self.width,
            "",
        ));
        out
    }

    /// The lines of item `i`, with the ranking's explanation before the first and the evidence
    /// under the selected one.
    pub fn lines(&self, i: usize, selected: bool) -> Vec<Line<'static>> {
        self.lines_at(i, selected).0
    }

    /// As [`ItemLines::lines`], with the position of the item's own row among them.
    pub fn lines_at(&self, i: usize, selected: bool) -> (Vec<Line<'static>>, usize) {
        let t = &self.app.theme;
        let mut out = Vec::new();
        let Some(it) = item(self.doc, self.view, i) else {
            return (out, 0);
        };
        match it {
            Item::Step(0, _) => {
                if self.preamble {
                    out.extend(reason_lines(
                        self.app,
                        &self.doc.report.confidence,
                        self.width,
                    ));
                    out.extend(wrap_spans(
                        vec![(
                            "Steps, ranked by score (an order, not a probability)".to_owned(),
                            t.style(Role::TextDim),
                        )],
                        self.width,
                        "  ",
                    ));
                }
                out.push(self.column_header());
            }
            Item::Context(0, _) => {
                if let Some(inf) = &self.doc.report.influence {
                    // The ranking's reasoning speaks of suspects: not when nothing is blamed.
                    if self.preamble && nothing_to_blame(self.doc).is_none() {
                        out.extend(reason_lines(self.app, &inf.confidence, self.width));
                    }
                    let embedder = inf.embedder.as_deref().unwrap_or("no");
                    if self.preamble {
                        out.extend(wrap_spans(
                            vec![(
                                format!(
                                    "Ranked by resemblance to the answer ({}, {embedder}): correlation, not a cause",
                                    inf.ranked_by
                                ),
                                t.style(Role::TextDim),
                            )],
                            self.width,
                            "  ",
                        ));
                    }
                    out.push(self.column_header());
                }
            }
            _ => {}
        }
        if let Item::Step(k, _) = it
            && k == self.doc.report.suspects.len()
        {
            out.extend(wrap_spans(
                vec![(
                    "Leads: listed for where they sit or because they gave the answer; no rule found a fault in them".to_owned(),
                    t.style(Role::TextDim),
                )],
                self.width,
                "  ",
            ));
        }
        let mut row = match it {
            Item::Step(k, s) => self.step_row(s, is_lead(self.doc, k)),
            Item::Context(pos, e) => self.context_row(pos, e),
        };
        if selected && let Some(first) = row.first_mut() {
            // The cursor as a glyph too, for screens without colour.
            first.content = first.content.replacen(' ', marks::CURSOR, 1).into();
        }
        let mut row = Line::from(row);
        if selected {
            row = selected_row(row, self.width, self.focused, t);
        }
        let row_at = out.len();
        out.push(row);
        if selected {
            match it {
                Item::Step(k, s) => out.extend(self.step_evidence(s, is_lead(self.doc, k))),
                Item::Context(_, e) => out.extend(self.context_evidence(e)),
            }
        }
        (out, row_at)
    }

    /// This session's verdict for a target.
    pub(super) fn result(&self, t: &Target) -> Option<&ProbeResult> {
        self.app.experiments.results.get(t)
    }

    /// The glyph of what re-runs found: this session's verdict, else the ledger's latest record.
    pub(super) fn mark(
        &self,
        result: Option<&ProbeResult>,
        ledger: &[&LatestAttribution],
    ) -> Option<(&'static str, Role)> {
        if let Some(r) = result {
            return Some(verdict_mark(r.verdict));
        }
        ledger.last().map(|l| {
            super::super::experiments::ledger::disposition_mark(l.attribution.disposition.as_str())
        })
    }

    /// Digits of the last position of the influence ranking (at least 3): its rows' first column.
    fn position_digits(&self) -> usize {
        super::influence_entries(self.doc)
            .len()
            .to_string()
            .len()
            .max(3)
    }

    /// Columns a context row gives the entry's id.
    fn context_id_width(&self) -> usize {
        let fixed = CONTEXT_ROW_FIXED + self.position_digits() - 3;
        self.width.saturating_sub(fixed).clamp(8, 24)
    }

    /// The columns a step row has room for at this width.
    fn step_columns(&self) -> StepColumns {
        let w = self.width;
        StepColumns {
            pos: w >= 90,
            role: w >= 64,
            category: if w >= 80 { 22 } else { 14 },
        }
    }

    /// The list's column headers, aligned with its rows.
    pub fn column_header(&self) -> Line<'static> {
        let t = &self.app.theme;
        let text = match self.view {
            View::Steps => {
                let c = self.step_columns();
                let mut h = format!(" {:<w$} {:<16} ", "#", "step", w = self.doc.rank_digits + 2);
                if c.pos {
                    h.push_str(&format!("{:<10}", "(pos)"));
                }
                if c.role {
                    h.push_str(&format!("{:<11}", "role"));
                }
                h.push_str(&format!("{:<w$}  why", "category", w = c.category));
                h
            }
            View::Context => format!(
                " {:<p$} {:<w$} {:<16}",
                "#",
                "piece of context",
                "from step",
                w = self.context_id_width(),
                p = self.position_digits() + 1
            ),
        };
        let right = "score";
        let room = self.width.saturating_sub(right.len() + 1);
        let left = clipped(&text, room).into_owned();
        let pad = room.saturating_sub(width_of(&left)) + 1;
        Line::styled(
            format!("{left}{}{right}", " ".repeat(pad)),
            t.style(Role::TextDim).add_modifier(Modifier::UNDERLINED),
        )
    }

    fn step_row(&self, s: &Suspect, lead: bool) -> Vec<Span<'static>> {
        let t = &self.app.theme;
        let c = self.step_columns();
        let top = s.rank == 1 && !lead;
        let short = self
            .doc
            .index_of(&s.step)
            .is_some_and(|i| self.doc.shortlisted.contains(&i));
        let score = format!(" {:.2}", s.score);
        // A verdict's glyph follows the category; an untested suspect gives its room to the title.
        let ledger = self.app.experiments.ledger_for_step(&s.step);
        let target = Target::Step(StepId::from(s.step.as_str()));
        let (mark, mark_role) = match self.mark(self.result(&target), &ledger) {
            Some((m, role)) => (format!("{m} "), role),
            None => (String::new(), Role::TextDim),
        };
        // The step by its name (an opaque id stays in the detail); its position is a column of
        // its own when there is room, else part of the name when names repeat.
        let step = match self.doc.index_of(&s.step) {
            Some(i) => self.doc.step_ref_with(i, !c.pos, 16),
            None => s.step.clone(),
        };
        let mut spans = vec![
            Span::styled(
                format!(
                    " {}{:<w$}",
                    if lead { "L" } else { "#" },
                    s.rank,
                    w = self.doc.rank_digits
                ),
                t.style(if top {
                    Role::SuspectTop
                } else if lead {
                    Role::TextDim
                } else {
                    Role::Suspect
                }),
            ),
            Span::styled(
                if short { marks::SHORTLIST } else { " " },
                t.style(Role::Shortlist),
            ),
            Span::styled(format!(" {:<16} ", clipped(&step, 16)), t.style(Role::Text)),
        ];
        if c.pos {
            let pos = match self.doc.index_of(&s.step) {
                Some(i) => format!("(pos {})", i + 1),
                None => "(not in run)".to_owned(),
            };
            spans.push(Span::styled(format!("{pos:<10}"), t.style(Role::TextDim)));
        }
        if c.role {
            spans.push(Span::styled(
                format!("{:<11}", if lead { "lead" } else { role_name(s.role) }),
                t.style(Role::Text),
            ));
        }
        spans.push(Span::styled(
            format!("{:<w$}  ", clipped(&s.category, c.category), w = c.category),
            t.style(Role::StepKind),
        ));
        spans.push(Span::styled(mark, t.style(mark_role)));
        let used: usize = spans.iter().map(|x| width_of(&x.content)).sum();
        let room = self.width.saturating_sub(used + score.len());
        let title = clipped(&s.title, room).into_owned();
        let pad = room.saturating_sub(width_of(&title));
        spans.push(Span::styled(title, t.style(Role::Text)));
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(score, t.style(Role::TextDim)));
        spans
    }

    fn context_row(&self, pos: usize, e: &InfluenceEntry) -> Vec<Span<'static>> {
        let t = &self.app.theme;
        let short = self
            .doc
            .influence_shortlisted
            .get(pos)
            .copied()
            .unwrap_or(false);
        let from = e
            .step
            .as_deref()
            .map(|s| match self.doc.index_of(s) {
                Some(i) => format!("from {}", self.doc.step_ref_with(i, true, 11)),
                None => format!("from {}", clipped(s, 11)),
            })
            .unwrap_or_default();
        let score = format!(" {:.2}", e.score);
        let id_w = self.context_id_width();
        let unit = e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u)));
        let ledger = e
            .unit
            .as_deref()
            .map(|u| self.app.experiments.ledger_for_unit(u))
            .unwrap_or_default();
        let result = unit
            .as_ref()
            .and_then(|u| self.result(u))
            .or(e.probe.as_deref());
        let (mark, mark_role) = self.mark(result, &ledger).unwrap_or((" ", Role::TextDim));
        let mut spans = vec![
            Span::styled(
                format!(" {:<w$}", pos + 1, w = self.position_digits()),
                t.style(Role::TextDim),
            ),
            Span::styled(
                if short { marks::SHORTLIST } else { " " },
                t.style(Role::Shortlist),
            ),
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
            Span::styled(mark, t.style(mark_role)),
        ];
        let used: usize = spans.iter().map(|x| width_of(&x.content)).sum();
        spans.push(Span::raw(
            " ".repeat(self.width.saturating_sub(used + score.len())),
        ));
        spans.push(Span::styled(score, t.style(Role::TextDim)));
        spans
    }
}
