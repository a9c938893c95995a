//! The step detail pane: the selected step's marks, timing, warnings, error, tool call, input,
//! output, documents, memory, decision, context, links, suspect evidence and other fields. JSON
//! is pretty-printed and highlighted, everything wrapped. The document is built off the render
//! path (an effect calls [`build`]) and cached per (step, width); `render` only slices it.

use super::super::app::{App, Document, Pane};
use super::super::document::names::is_opaque_id;
use super::super::header::step_words;
use super::super::render::pane_block;
use super::super::theme::{Role, Theme};
use super::super::widgets::inert_text::{clipped, wrap_spans, wrapped};
use super::super::widgets::json_view::json_lines;
use crate::analysis::cost::CostSource;
use crate::analysis::count::{short_count, step_duration};
use crate::analysis::model::{Step, embedded_json, value_text};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Characters of one text section kept in the pane; the rest is left to copying.
pub const MAX_SECTION_CHARS: usize = 200_000;
/// Prepared details kept at once.
const MAX_CACHED: usize = 64;

/// A step's detail, laid out for one width.
#[derive(Debug, PartialEq)]
pub struct DetailDoc {
    /// The step.
    pub step: usize,
    /// The width it was wrapped to.
    pub width: u16,
    /// Nothing in it is folded (the zoomed pane, the full step view).
    pub full: bool,
    /// The lines.
    pub lines: Vec<Line<'static>>,
}

/// What a prepared detail is for: the step, the width and whether it is laid out in full.
pub type DetailKey = (usize, u16, bool);

/// Prepared details per (step, width, full).
#[derive(Debug, Default)]
pub struct DetailCache {
    map: HashMap<DetailKey, Arc<DetailDoc>>,
}

impl DetailCache {
    /// The prepared detail, if any.
    pub fn get(&self, key: DetailKey) -> Option<&Arc<DetailDoc>> {
        self.map.get(&key)
    }

    /// Keeps a prepared detail (forgetting all others when full).
    pub fn put(&mut self, d: Arc<DetailDoc>) {
        if self.map.len() >= MAX_CACHED {
            self.map.clear();
        }
        self.map.insert((d.step, d.width, d.full), d);
    }
}

/// What the detail pane remembers.
#[derive(Debug, Default)]
pub struct DetailState {
    /// First line shown.
    pub scroll: usize,
    /// The step the scroll belongs to.
    pub step: Option<usize>,
    /// Details asked for and not yet back.
    pub pending: Vec<DetailKey>,
}

/// Lays out step `i` of `doc` for `width` columns; `full` (the zoomed pane, the full step view,
/// a file) folds nothing.
pub fn build(doc: &Document, i: usize, width: u16, full: bool, theme: &Theme) -> DetailDoc {
    let w = usize::from(width).max(20);
    let mut b = Builder {
        t: theme,
        w,
        full,
        lines: Vec::new(),
    };
    if let Some(step) = doc.run.steps.get(i) {
        b.step(doc, i, step);
    }
    DetailDoc {
        step: i,
        width,
        full,
        lines: b.lines,
    }
}

struct Builder<'a> {
    t: &'a Theme,
    w: usize,
    /// Laid out for the zoomed pane or the full step view: nothing is folded.
    full: bool,
    lines: Vec<Line<'static>>,
}

impl Builder<'_> {
    fn style(&self, r: Role) -> Style {
        self.t.style(r)
    }

    fn section(&mut self, title: &str) {
        self.lines.push(Line::default());
        let rule = "─".repeat(self.w.saturating_sub(title.chars().count() + 4));
        self.lines.push(Line::from(vec![
            Span::styled(format!("── {title} "), self.style(Role::Heading)),
            Span::styled(rule, self.style(Role::Border)),
        ]));
    }

    fn text(&mut self, s: &str, role: Role) {
        let (cut, more) = cut(s);
        self.lines.extend(wrapped(cut, self.style(role), self.w));
        if more > 0 {
            self.note(&format!(
                "… {more} more characters (Y copies the whole step)"
            ));
        }
    }

    fn note(&mut self, s: &str) {
        self.lines.extend(wrap_spans(
            vec![(s.to_owned(), self.style(Role::TextDim))],
            self.w,
            "  ",
        ));
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::String(s) => match embedded_json(s) {
                Some(j) if s.len() <= MAX_SECTION_CHARS => {
                    self.lines.extend(json_lines(&j, self.t, self.w))
                }
                _ => self.text(s, Role::Text),
            },
            Value::Null => self.note("null"),
            other => {
                let size = other.to_string().len();
                if size > MAX_SECTION_CHARS {
                    self.text(&value_text(other), Role::Code);
                } else {
                    self.lines.extend(json_lines(other, self.t, self.w));
                }
            }
        }
    }

    fn step(&mut self, doc: &Document, i: usize, step: &Step) {
        let mut head = vec![Span::styled(step_words(doc, i), self.style(Role::Heading))];
        head.push(Span::styled(
            format!(" · {}", step.kind_label()),
            self.style(Role::StepKind),
        ));
        // A step named in the title by its name (its id is opaque) does not repeat it.
        if let Some(n) = step
            .name
            .as_ref()
            .filter(|_| !is_opaque_id(step.id.as_str()))
        {
            head.push(Span::styled(
                format!(" · {}", clipped(n, 80)),
                self.style(Role::Text),
            ));
        }
        if let Some(a) = &step.agent {
            head.push(Span::styled(
                format!(" · agent {}", clipped(a, 40)),
                self.style(Role::TextDim),
            ));
        }
        self.lines.extend(wrap_spans(
            head.into_iter()
                .map(|s| (s.content.into_owned(), s.style))
                .collect(),
            self.w,
            "  ",
        ));
        let mut marks: Vec<(String, Style)> = Vec::new();
        if step.failed() {
            marks.push((
                format!("{} failed  ", super::super::widgets::marks::FAILED),
                self.style(Role::StepError),
            ));
        }
        if let Some(s) = doc.suspect_at(i) {
            let role = if s.rank == 1 {
                Role::SuspectTop
            } else {
                Role::Suspect
            };
            marks.push((
                format!("#{} suspect: {}  ", s.rank, clipped(&s.title, 120)),
                self.style(role),
            ));
        }
        if doc.shortlisted.contains(&i) {
            marks.push(("★ shortlisted  ".to_owned(), self.style(Role::Shortlist)));
        }
        if !marks.is_empty() {
            self.lines.extend(wrap_spans(marks, self.w, "  "));
        }
        let mut facts = Vec::new();
        // The detail is where an opaque id is shown: the title names the step by its name.
        if is_opaque_id(step.id.as_str()) {
            facts.push(format!("id {}", clipped(step.id.as_str(), 80)));
        }
        if let Some(p) = step.parent.as_ref() {
            facts.push(match doc.index_of(p.as_str()) {
                Some(pi) if is_opaque_id(p.as_str()) => format!("inside {}", step_words(doc, pi)),
                _ => format!("inside step '{}'", clipped(p.as_str(), 30)),
            });
        }
        if let Some(d) = step.duration_ms() {
            facts.push(step_duration(d));
        }
        if let Some(u) = step.usage() {
            let f = |x: Option<u64>| x.map(short_count).unwrap_or_else(|| "?".to_owned());
            facts.push(format!(
                "tokens in {} / out {}",
                f(u.input_tokens),
                f(u.output_tokens)
            ));
        }
        if let Some(c) = doc.report.cost.as_ref().and_then(|c| {
            c.steps
                .get(c.steps.partition_point(|s| s.index < i))
                .filter(|s| s.index == i)
        }) {
            let usd = crate::analysis::cost::format_usd(c.usd, c.source == CostSource::Estimated);
            let mut words = match &c.priced_as {
                Some(m) => format!("{usd} estimated from tokens at {} prices", clipped(m, 40)),
                None => format!("{usd} as recorded"),
            };
            if !c.in_total {
                words.push_str(" (its nested steps' costs count in the run's total instead)");
            }
            facts.push(words);
        }
        // Only a model reads a context window.
        if step.kind.is_model()
            && let Some(cw) = doc.run.context_window_at(step)
        {
            facts.push(format!("context window {}", short_count(cw)));
        }
        if !facts.is_empty() {
            self.note(&facts.join(" · "));
        }
        for wi in doc.warnings_of.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(w) = doc.report.run.warnings.get(*wi) {
                let text = format!("⚠ {}", clipped(&w.message, 400));
                self.lines.extend(wrap_spans(
                    vec![(text, self.style(Role::Warning))],
                    self.w,
                    "  ",
                ));
            }
        }
        if let Some(e) = &step.error {
            self.section("Error");
            self.text(e, Role::StepError);
        }
        if let Some(tc) = &step.tool {
            self.section(&format!("Tool call: {}", clipped(&tc.name, 40)));
            if crate::analysis::state_change::changes_state(&doc.run, &tc.name) {
                self.note("this tool changes things (marked so, or an action verb names it)");
            }
            self.value(&tc.arguments.to_value());
        }
        if let Some(v) = &step.input {
            self.section("Input");
            self.value(&v.to_value());
        }
        self.conversation(step);
        if !self.reply(doc, i, step)
            && let Some(v) = &step.output
        {
            self.section("Output");
            self.value(&v.to_value());
        }
        if let Some(docs) = &step.documents {
            self.section(&format!("Documents ({})", docs.len()));
            if docs.is_empty() {
                self.note("nothing was found");
            }
            for (n, d) in docs.iter().enumerate() {
                let mut h = format!("#{n}");
                if let Some(id) = &d.id {
                    h.push_str(&format!(" {}", clipped(id, 40)));
                }
                if let Some(s) = &d.source {
                    h.push_str(&format!(" · {}", clipped(s, 60)));
                }
                if d.outdated {
                    h.push_str(" · ⌁ outdated");
                }
                self.lines.push(Line::styled(h, self.style(Role::TextDim)));
                self.text(&d.text, Role::Text);
            }
        }
        if let Some(m) = &step.memory {
            self.section(&format!("Memory: {}", clipped(&m.key, 60)));
            self.value(&m.value.to_value());
        }
        if let Some(d) = &step.decision {
            self.section("Decision");
            self.lines.push(Line::styled(
                format!("chose '{}'", clipped(&d.chosen, 60)),
                self.style(Role::Text),
            ));
            for o in &d.options {
                let req: Vec<String> = o
                    .requires
                    .iter()
                    .map(|r| clipped(r.as_str(), 20).into_owned())
                    .collect();
                let tail = if req.is_empty() {
                    String::new()
                } else {
                    format!(" (requires {})", req.join(", "))
                };
                self.note(&format!("option '{}'{tail}", clipped(&o.id, 40)));
            }
        }
        if let Some(c) = &step.context {
            self.section("Context");
            let ids = |v: &[crate::analysis::model::UnitId]| {
                v.iter()
                    .map(|u| clipped(u.as_str(), 30).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            self.note(&format!("sent ({}): {}", c.sent.len(), ids(&c.sent)));
            if let Some(a) = &c.available {
                self.note(&format!("available ({}): {}", a.len(), ids(a)));
            }
        }
        self.links(doc, step);
        if let Some(s) = doc.suspect_at(i) {
            self.section("Why it is a suspect");
            for e in &s.evidence {
                self.lines.extend(wrap_spans(
                    vec![(format!("• {}", clipped(e, 2000)), self.style(Role::Text))],
                    self.w,
                    "  ",
                ));
            }
        }
        if !step.attributes().is_empty() {
            self.section("Attributes");
            self.value(&Value::Object(step.attributes().clone()));
        }
        if !step.extra().is_empty() {
            self.section("Other fields");
            self.value(&Value::Object(step.extra().clone()));
        }
    }

    fn links(&mut self, doc: &Document, step: &Step) {
        // Looked up by step (built at open), not searched among every link of the run.
        let Some(i) = doc.index_of(step.id.as_str()) else {
            return;
        };
        let of = |positions: &[usize]| -> Vec<&crate::analysis::report::Link> {
            positions
                .iter()
                .filter_map(|&k| doc.report.links.get(k))
                .collect()
        };
        let ins = of(doc.links_of.into_step(i));
        let outs = of(doc.links_of.out_of_step(i));
        if ins.is_empty() && outs.is_empty() {
            return;
        }
        self.section("Links");
        let name = |s: &str| match doc.index_of(s) {
            Some(i) => step_words(doc, i),
            None => format!("'{}'", clipped(s, 30)),
        };
        let ins = ins
            .into_iter()
            .map(|l| ("▲ input from", &l.from, &l.value, Role::LinkIn));
        let outs = outs
            .into_iter()
            .map(|l| ("▼ output used by", &l.to, &l.value, Role::LinkOut));
        for (arrow, other, value, role) in ins.chain(outs) {
            let text = format!("{arrow} {}: '{}'", name(other), clipped(value, 80));
            self.lines
                .extend(wrap_spans(vec![(text, self.style(role))], self.w, "  "));
        }
    }
}

mod conversation;

fn cut(s: &str) -> (&str, usize) {
    match s.char_indices().nth(MAX_SECTION_CHARS) {
        Some((b, _)) => (
            s.get(..b).unwrap_or(s),
            s.get(b..).map(|r| r.chars().count()).unwrap_or(0),
        ),
        None => (s, 0),
    }
}

/// Draws the prepared detail of the selected step, or a note while it is being prepared.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let sel = app.selected_step();
    let title = sel.map(|i| step_words(doc, i)).unwrap_or_default();
    let block = pane_block(app, Pane::Detail, focused, &title, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(i) = sel else {
        frame.render_widget(
            Paragraph::new(Line::styled("No step selected.", t.style(Role::TextDim))),
            inner,
        );
        return;
    };
    render_doc(app, frame, inner, i, app.detail.scroll);
}

/// Draws the prepared detail of step `i` in `area` from line `scroll` (the viewer uses it too).
pub fn render_doc(app: &App, frame: &mut Frame, area: Rect, i: usize, scroll: usize) {
    let full = super::super::render::detail_full(app);
    match app.detail_cache.get((i, area.width, full)) {
        Some(d) => {
            let h = usize::from(area.height);
            let start = scroll.min(d.lines.len().saturating_sub(1));
            let end = (start + h).min(d.lines.len());
            let lines: Vec<Line<'_>> = d.lines.get(start..end).unwrap_or(&[]).to_vec();
            frame.render_widget(Paragraph::new(lines), area);
        }
        None => frame.render_widget(
            Paragraph::new(Line::styled("preparing…", app.theme.style(Role::TextDim))),
            area,
        ),
    }
}
