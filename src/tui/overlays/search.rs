//! The prompts typed in the status bar: the step search (`/`, its matches computed off the
//! drawing path by `tui::find`), the timeline filter, go-to-step, the help's filter and the run
//! list's filter. Each shows what was typed, what it found so far and the keys in force.

use super::super::app::{App, LineKind, Overlay, group};
use super::super::find::MIN_CONTENT_QUERY;
use super::super::theme::Role;
use super::super::widgets::inert_text::clipped;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::sync::Arc;

pub use super::super::find::{SearchHits, hit_at_or_after, next_hit};

/// Longest query kept.
const MAX_QUERY: usize = 200;

/// The search's state.
#[derive(Debug, Default)]
pub struct SearchState {
    /// The prompt is open.
    pub active: bool,
    /// What has been typed.
    pub input: String,
    /// The matches of the latest query answered.
    pub hits: Arc<SearchHits>,
    /// The step selected when the prompt opened (Esc goes back to it).
    pub origin: Option<usize>,
}

impl SearchState {
    /// Adds a typed character; false when the query is full.
    pub fn push(&mut self, c: char) -> bool {
        push_char(&mut self.input, c)
    }
}

/// Adds a typed character to a prompt's text; false when it is full or `c` is a control.
pub fn push_char(text: &mut String, c: char) -> bool {
    if text.chars().count() >= MAX_QUERY || c.is_control() {
        return false;
    }
    text.push(c);
    true
}

/// Draws the prompt in force over the status bar.
pub fn render_prompt(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let (lead, input, count) = match (app.shown_picker(), &app.line, &app.overlay) {
        (Some(p), _, _) if p.filter.is_empty() => (
            "/",
            p.filter.as_str(),
            "type to filter runs by id, status, title and task".to_owned(),
        ),
        (Some(p), _, _) => (
            "/",
            p.filter.as_str(),
            format!("{} of {} runs", p.shown.len(), p.runs.len()),
        ),
        (None, Some(l), _) => match l.kind {
            LineKind::Filter => ("filter: ", l.text.as_str(), filter_count(app)),
            LineKind::GoTo => ("go to step: ", l.text.as_str(), goto_hint(app)),
            LineKind::AgainstPath => (
                "compare with the run in: ",
                l.text.as_str(),
                "the path of a file holding the run that went right".to_owned(),
            ),
        },
        (None, None, Some(Overlay::Help { filter, .. })) => (
            "/",
            filter.as_str(),
            "type to show only the help lines holding it".to_owned(),
        ),
        _ => ("/", app.search.input.as_str(), step_count(app)),
    };
    // The next/previous keys move between search matches; other prompts have none.
    let searching =
        app.line.is_none() && !matches!(app.overlay, Some(Overlay::Help { typing: true, .. }));
    let keys = app.keymap.hints(&app.scopes());
    let hint: Vec<String> = keys
        .iter()
        .filter(|(_, n)| {
            searching
                || (*n != super::super::action::Action::SearchNext.label()
                    && *n != super::super::action::Action::SearchPrev.label())
        })
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let line = Line::from(vec![
        Span::styled(lead, t.style(Role::SearchPrompt)),
        Span::styled(clipped(input, 60).into_owned(), t.style(Role::Status)),
        Span::styled("▏", t.style(Role::SearchPrompt)),
        Span::styled(
            format!("  {count}  ·  {}", hint.join("  ")),
            t.style(Role::Status),
        ),
    ]);
    frame.render_widget(Paragraph::new(line).style(t.style(Role::Status)), area);
}

fn step_count(app: &App) -> String {
    let hits = &app.search.hits;
    if app.search.input.is_empty() {
        "type to search step labels (fuzzy) and content".to_owned()
    } else if hits.query != app.search.input {
        "searching…".to_owned()
    } else if hits.steps.is_empty() {
        "no match".to_owned()
    } else {
        let n = hits.steps.len();
        let content = if app.search.input.chars().count() < MIN_CONTENT_QUERY {
            " (labels only: type more to search content)"
        } else {
            ""
        };
        format!(
            "{} match{}{content}",
            group(n),
            if n == 1 { "" } else { "es" }
        )
    }
}

fn filter_count(app: &App) -> String {
    let typed = app.line.as_ref().map(|l| l.text.as_str()).unwrap_or("");
    if typed.trim().is_empty() {
        return "is:failed  is:suspect  is:shortlist  is:container  kind:KIND  agent:NAME  -TERM excludes  words in the steps".to_owned();
    }
    if let Some(e) = app.line.as_ref().and_then(|l| l.error.as_deref()) {
        return e.to_owned();
    }
    match &app.timeline.filter {
        Some(f) if f.query == typed => format!(
            "{} of {} steps kept",
            group(f.steps.len()),
            app.doc
                .as_ref()
                .map(|d| group(d.run.steps.len()))
                .unwrap_or_default()
        ),
        _ => "filtering…".to_owned(),
    }
}

fn goto_hint(app: &App) -> String {
    let n = app.doc.as_ref().map(|d| d.run.steps.len()).unwrap_or(0);
    format!("a position from 1 to {} or a step id", group(n))
}
