//! One item of the suspects pane as lines: a suspect step's row (rank, shortlist mark, step,
//! role, category, title, score, and the glyph of any verdict) or an influence entry's row, and
//! under the selected one its evidence and what re-runs found: a job re-running it now, this
//! session's verdict (or the report's probe), and what the run's ledger records about it (the
//! latest attribution of each of its units, and of replays from a step, with what was tried);
//! else the key that tests it. Above the first item, the ranking's explanation and what its
//! scores mean. Reads only.

use super::super::super::action::Action;
use super::super::super::app::{App, Document};
use super::super::super::keymap::Scope;
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::experiments::{verdict_line, verdict_mark};
use super::header::reason_lines;
use super::{Item, View, item};
use crate::analysis::influence::js_number;
use crate::analysis::model::{StepId, UnitId};
use crate::analysis::report::{InfluenceEntry, ProbeResult, Role as SuspectRole, Suspect};
use crate::experiments::engine::Target;
use crate::experiments::event::JobId;
use crate::experiments::ledger::LatestAttribution;
use crate::tui::widgets::selection::selected_row;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Columns the expanded evidence is indented by.
const EVIDENCE_INDENT: usize = 6;
/// Columns of a context row besides its id (rank, mark, spaces, step, unit flag, verdict, score).
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
    fn key(&self, a: Action) -> String {
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
                format!(
                    "Where to look next: the context influence ({}) ranks what reached the model; the dropped context ({}) lists {dropped} unit{} available but never sent, each a candidate to restore.",
                    self.key(Action::ToggleInfluence),
                    self.key(Action::FocusDropped),
                    if dropped == 1 { "" } else { "s" }
                )
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

    /// Under the last item: the units available but never sent, which no ranking here can show.
    pub fn dropped_hint(&self) -> Vec<Line<'static>> {
        let n = self
            .doc
            .report
            .dropped
            .as_ref()
            .map(|d| d.dropped.len())
            .unwrap_or(0);
        if n == 0 {
            return Vec::new();
        }
        wrap_spans(
            vec![(
                format!(
                    "{n} unit{} {} available but never sent, so no ranking here shows {}: Dropped context ({}); {} re-runs with the selected one put back.",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "was" } else { "were" },
                    if n == 1 { "it" } else { "them" },
                    self.key(Action::FocusDropped),
                    self.key(Action::Restore)
                ),
                self.app.theme.style(Role::TextDim),
            )],
            self.width,
            "",
        )
    }

    /// The lines of item `i`, with the ranking's explanation before the first and the evidence
    /// under the selected one.
    pub fn lines(&self, i: usize, selected: bool) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let mut out = Vec::new();
        let Some(it) = item(self.doc, self.view, i) else {
            return out;
        };
        match it {
            Item::Step(0, _) => {
                if self.preamble {
                    out.extend(reason_lines(
                        self.app,
                        &self.doc.report.confidence,
                        self.width,
                    ));
                }
                out.extend(wrap_spans(
                    vec![(
                        "Steps, ranked by score (an order, not a probability)".to_owned(),
                        t.style(Role::Heading),
                    )],
                    self.width,
                    "  ",
                ));
            }
            Item::Context(0, _) => {
                if let Some(inf) = &self.doc.report.influence {
                    if self.preamble {
                        out.extend(reason_lines(self.app, &inf.confidence, self.width));
                    }
                    let embedder = inf.embedder.as_deref().unwrap_or("no");
                    out.extend(wrap_spans(
                        vec![(
                            format!(
                                "Ranked by resemblance to the answer ({}, {embedder}): correlation, not a cause",
                                inf.ranked_by
                            ),
                            t.style(Role::Heading),
                        )],
                        self.width,
                        "  ",
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
            row = selected_row(row, self.width, self.focused, t);
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

    /// This session's verdict for a target.
    fn result(&self, t: &Target) -> Option<&ProbeResult> {
        self.app.experiments.results.get(t)
    }

    /// The glyph of what re-runs found: this session's verdict, else the ledger's latest record.
    fn mark(
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

    fn step_row(&self, s: &Suspect) -> Vec<Span<'static>> {
        let t = &self.app.theme;
        let top = s.rank == 1;
        let short = self.doc.report.confidence.shortlist.contains(&s.step);
        let pos = match self.doc.index_of(&s.step) {
            Some(i) => format!("pos {}", i + 1),
            None => "not in run".to_owned(),
        };
        let score = format!(" score {:.2}", s.score);
        // A verdict's glyph follows the category; an untested suspect gives its room to the title.
        let ledger = self.app.experiments.ledger_for_step(&s.step);
        let target = Target::Step(StepId::from(s.step.as_str()));
        let (mark, mark_role) = match self.mark(self.result(&target), &ledger) {
            Some((m, role)) => (format!("{m} "), role),
            None => (String::new(), Role::TextDim),
        };
        let fixed = format!(
            " #{:<2}{} {} ({pos})  {:<10} {}  {mark}",
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
            Span::styled(mark, t.style(mark_role)),
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
        let target = Target::Step(StepId::from(s.step.as_str()));
        // Ablating a step removes the units it produced: without any, only a replay tests it.
        let produced = self
            .doc
            .run
            .context_units
            .iter()
            .any(|u| u.produced_by.as_ref().is_some_and(|p| p.as_str() == s.step));
        let test = if produced {
            format!("press {} to ablate", self.key(Action::Ablate))
        } else {
            format!("press {} to replay from it", self.key(Action::Replay))
        };
        out.extend(self.verdict(
            self.result(&target),
            self.app.experiments.claims.get(&target).map(String::as_str),
            &self.app.experiments.ledger_for_step(&s.step),
            self.app.experiments.running_on(&target),
            "removing its units",
            &test,
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
        let unit = e.unit.as_deref().map(|u| Target::Unit(UnitId::from(u)));
        let ledger = e
            .unit
            .as_deref()
            .map(|u| self.app.experiments.ledger_for_unit(u))
            .unwrap_or_default();
        let result = unit
            .as_ref()
            .and_then(|u| self.result(u))
            .or(e.probe.as_ref());
        let (mark, mark_role) = self.mark(result, &ledger).unwrap_or((" ", Role::TextDim));
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
            Span::styled(mark, t.style(mark_role)),
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
            out.extend(wrap_spans(
                vec![(
                    format!(
                        "{ind}not a context unit: nothing to remove; replaying from its step ({}) tests it",
                        self.key(Action::Replay)
                    ),
                    t.style(Role::TextDim),
                )],
                self.width,
                &ind,
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
        if let Some(u) = e.unit.as_deref() {
            let target = Target::Unit(UnitId::from(u));
            let result = self.result(&target).or(e.probe.as_ref());
            let claim = self.app.experiments.claims.get(&target).map(String::as_str);
            let ledger = self.app.experiments.ledger_for_unit(u);
            let running = self.app.experiments.running_on(&target);
            let test = format!("press {} to ablate", self.key(Action::Ablate));
            out.extend(self.verdict(result, claim, &ledger, running, "removing it", &test, &ind));
        }
        out
    }

    /// What re-runs found: a job running now, this session's verdict, what the ledger records
    /// (each latest attribution with what was tried), or how to test it (`test`).
    #[expect(
        clippy::too_many_arguments,
        reason = "each piece of what re-runs found is its own source"
    )]
    fn verdict(
        &self,
        result: Option<&ProbeResult>,
        claim: Option<&str>,
        ledger: &[&LatestAttribution],
        running: Option<JobId>,
        intervention: &str,
        test: &str,
        ind: &str,
    ) -> Vec<Line<'static>> {
        let t = &self.app.theme;
        let more = format!("{ind}  ");
        let mut out = Vec::new();
        if let Some(j) = running {
            out.extend(wrap_spans(
                vec![(
                    format!(
                        "{ind}job #{} is re-running it now: its verdict comes to Experiments ({})",
                        j.0,
                        self.key(Action::FocusExperiments)
                    ),
                    t.style(Role::Running),
                )],
                self.width,
                &more,
            ));
        }
        if let Some(r) = result {
            let mut pieces = vec![(ind.to_owned(), Style::default())];
            let line = verdict_line(self.app, r, intervention);
            match claim {
                // The engine's own sentence after the glyph, then the class and cost.
                Some(c) => {
                    let (glyph, role) = verdict_mark(r.verdict);
                    pieces.push((glyph.to_owned(), t.style(role)));
                    pieces.push((format!(" {}", clipped(c, 2000)), t.style(Role::Text)));
                    pieces.extend(
                        line.into_iter()
                            .skip(2)
                            .map(|s| (s.content.into_owned(), s.style)),
                    );
                }
                None => pieces.extend(line.into_iter().map(|s| (s.content.into_owned(), s.style))),
            }
            out.extend(wrap_spans(pieces, self.width, &more));
        }
        // Newest first, at most a few: the Experiments pane lists them all.
        for l in ledger.iter().rev().take(4) {
            let a = &l.attribution;
            let (glyph, role) =
                super::super::experiments::ledger::disposition_mark(a.disposition.as_str());
            let tried = l
                .tried
                .as_ref()
                .map_or_else(|| "a re-run".to_owned(), |i| i.label());
            let n = a.trial_ids.len();
            out.extend(wrap_spans(
                vec![
                    (format!("{ind}ledger: {tried} → "), t.style(Role::TextDim)),
                    (
                        format!(
                            "{glyph} {} · {}",
                            a.disposition.as_str(),
                            a.evidence_level.as_str()
                        ),
                        t.style(role),
                    ),
                    (
                        format!(
                            " · effect {} · confidence {} ({n} trial{}, {}{})",
                            js_number(a.effect),
                            js_number(a.confidence),
                            if n == 1 { "" } else { "s" },
                            clipped(&a.tested_at, 30),
                            match l.status.as_str() {
                                "verified" => String::new(),
                                other => format!(", {other}"),
                            }
                        ),
                        t.style(Role::Text),
                    ),
                ],
                self.width,
                &more,
            ));
        }
        if out.is_empty() {
            out.extend(wrap_spans(
                vec![(
                    format!(
                        "{ind}untested: a score narrows the search; only a re-run proves a cause ({test})"
                    ),
                    t.style(Role::TextDim),
                )],
                self.width,
                ind,
            ));
        }
        out
    }
}
