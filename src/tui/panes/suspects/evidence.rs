//! Under the selected item of the suspects pane: a suspect step's evidence (why it was chosen,
//! what it is blamed for) or an influence entry's (how it moved the answer), then what re-runs
//! found: a job re-running it now, this session's verdict (or the report's probe), what the run's
//! ledger records about it, else the key that tests it. Reads only.

use super::super::super::action::Action;
use super::super::super::app::group;
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::experiments::{verdict_line, verdict_mark};
use super::items::{EVIDENCE_INDENT, ItemLines};
use crate::analysis::js_number::js_number;
use crate::analysis::model::{StepId, UnitId};
use crate::analysis::report::{InfluenceEntry, ProbeResult, Role as SuspectRole, Suspect};
use crate::experiments::engine::Target;
use crate::experiments::event::JobId;
use crate::experiments::ledger::LatestAttribution;
use ratatui::style::Style;
use ratatui::text::Line;

/// Like steps named under a grouped suspect.
const SIMILAR_SHOWN: usize = 5;

impl ItemLines<'_> {
    pub(super) fn step_evidence(&self, s: &Suspect, lead: bool) -> Vec<Line<'static>> {
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
        if let (Some(first), Some(last)) = (s.similar.first(), s.similar.last()) {
            // The like findings grouped under this one: how many, their ranks, the first few.
            let n = s.similar.len();
            let ids: Vec<String> = s
                .similar
                .iter()
                .take(SIMILAR_SHOWN)
                .map(|x| format!("'{}'", clipped(&self.doc.step_ref_of(&x.step), 24)))
                .collect();
            out.extend(wrap_spans(
                vec![(
                    format!(
                        "{ind}and {} similar step{} with the same finding, ranked #{} to #{}: {}{}",
                        group(n),
                        if n == 1 { "" } else { "s" },
                        first.rank,
                        last.rank,
                        ids.join(", "),
                        if n > SIMILAR_SHOWN { ", …" } else { "" }
                    ),
                    t.style(Role::TextDim),
                )],
                w,
                &format!("{ind}  "),
            ));
        }
        let how = match s.role {
            _ if lead => "a lead: listed for where it sits, no fault found in it",
            SuspectRole::RootCause => "walking back from where the failure showed",
            SuspectRole::Symptom => "where the failure showed",
            SuspectRole::Suspect => "it looks wrong on its own",
        };
        out.extend(wrap_spans(
            vec![
                (format!("{ind}why: "), t.style(Role::Heading)),
                (
                    format!(
                        "found by {} ({how}; detector confidence {:.2}), because:",
                        clipped(&s.detector, 30),
                        s.confidence
                    ),
                    t.style(Role::Text),
                ),
            ],
            w,
            &format!("{ind}  "),
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
                Some(i) => crate::tui::header::step_words(self.doc, i),
                None => format!("'{}'", clipped(c, 40)),
            };
            out.push(Line::styled(
                format!("{ind}symptom of {cause}"),
                t.style(Role::TextDim),
            ));
        }
        let target = Target::Step(StepId::from(s.step.as_str()));
        // Ablating a step removes the units it produced: without any, only a replay tests it.
        let produced = self
            .doc
            .run
            .context_units
            .iter()
            .any(|u| u.produced_by.as_ref().is_some_and(|p| p.as_str() == s.step));
        let test = self.how_to_test(if produced {
            format!("press {} to ablate", self.key(Action::Ablate))
        } else {
            format!("press {} to replay from it", self.key(Action::Replay))
        });
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

    pub(super) fn context_evidence(&self, e: &InfluenceEntry) -> Vec<Line<'static>> {
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
            let result = self.result(&target).or(e.probe.as_deref());
            let claim = self.app.experiments.claims.get(&target).map(String::as_str);
            let ledger = self.app.experiments.ledger_for_unit(u);
            let running = self.app.experiments.running_on(&target);
            let test = self.how_to_test(format!("press {} to ablate", self.key(Action::Ablate)));
            out.extend(self.verdict(result, claim, &ledger, running, "removing it", &test, &ind));
        }
        out
    }

    /// The key that tests an item, or, when no re-run can work from here, where the pane's
    /// "Prove it" line says why (issue 26: no hint promises what cannot work).
    fn how_to_test(&self, key_hint: String) -> String {
        match self.app.experiments.cannot_run(&self.doc.run.id) {
            Some(_) => "no re-run can start from here yet: see 'Prove it' above".to_owned(),
            None => key_hint,
        }
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
