//! Fuzzy search over steps: the prompt in the status bar, the matches (computed off the UI path
//! by an effect over the labels built at open), and the next/previous match. Matched characters
//! are highlighted by the timeline for visible rows only.

use super::super::app::App;
use super::super::theme::Role;
use super::super::widgets::inert_text::clipped;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use rayon::prelude::*;
use std::sync::Arc;

/// Longest query kept.
const MAX_QUERY: usize = 200;
/// Labels each search thread takes at a time.
const PAR_CHUNK: usize = 4096;

/// The steps matching a query, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchHits {
    /// The query they answer.
    pub query: String,
    /// Matching step indices, ascending.
    pub steps: Vec<usize>,
}

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
        if self.input.chars().count() >= MAX_QUERY || c.is_control() {
            return false;
        }
        self.input.push(c);
        true
    }
}

/// The steps whose label fuzzy-matches `query` (an empty query matches nothing). When
/// `previous` answered a prefix of `query`, only its matches are looked at again: a label that
/// does not match a query cannot match a longer one.
pub fn compute(labels: &[String], query: &str, previous: Option<&SearchHits>) -> SearchHits {
    let steps = if query.is_empty() {
        Vec::new()
    } else {
        let is_match = |m: &mut SkimMatcherV2, i: usize| {
            labels
                .get(i)
                .is_some_and(|l| m.fuzzy_match(l, query).is_some())
        };
        match previous.filter(|p| !p.query.is_empty() && query.starts_with(p.query.as_str())) {
            Some(p) => {
                let mut m = SkimMatcherV2::default();
                p.steps
                    .iter()
                    .copied()
                    .filter(|&i| is_match(&mut m, i))
                    .collect()
            }
            None => (0..labels.len())
                .into_par_iter()
                .with_min_len(PAR_CHUNK)
                .map_init(SkimMatcherV2::default, |m, i| is_match(m, i).then_some(i))
                .flatten()
                .collect(),
        }
    };
    SearchHits {
        query: query.to_owned(),
        steps,
    }
}

/// The first match after `from` (or before it, going back), wrapping around.
pub fn next_hit(hits: &SearchHits, from: Option<usize>, forward: bool) -> Option<usize> {
    let s = &hits.steps;
    let first = *s.first()?;
    let last = *s.last()?;
    let Some(from) = from else {
        return Some(if forward { first } else { last });
    };
    if forward {
        let i = s.partition_point(|&x| x <= from);
        Some(s.get(i).copied().unwrap_or(first))
    } else {
        let i = s.partition_point(|&x| x < from);
        Some(
            i.checked_sub(1)
                .and_then(|j| s.get(j).copied())
                .unwrap_or(last),
        )
    }
}

/// The first match at or after `from`, wrapping around (live search as you type).
pub fn hit_at_or_after(hits: &SearchHits, from: usize) -> Option<usize> {
    let s = &hits.steps;
    let i = s.partition_point(|&x| x < from);
    s.get(i).or(s.first()).copied()
}

/// Draws the prompt over the status bar.
pub fn render_prompt(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let (input, count) = match app.shown_picker() {
        Some(p) if p.filter.is_empty() => (
            p.filter.as_str(),
            "type to filter runs by id, status, title and task".to_owned(),
        ),
        Some(p) => (
            p.filter.as_str(),
            format!("{} of {} runs", p.shown.len(), p.runs.len()),
        ),
        None => (app.search.input.as_str(), step_count(app)),
    };
    let keys = app.keymap.hints(&app.scopes());
    let hint: Vec<String> = keys.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let line = Line::from(vec![
        Span::styled("/", t.style(Role::SearchPrompt)),
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
        "type to search steps by id, kind, name and agent".to_owned()
    } else if hits.query != app.search.input {
        "searching…".to_owned()
    } else if hits.steps.is_empty() {
        "no match".to_owned()
    } else {
        let n = hits.steps.len();
        format!("{n} match{}", if n == 1 { "" } else { "es" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<String> {
        [
            "s1 user",
            "s2 llm planner",
            "s3 tool create_event",
            "s4 llm answer",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn fuzzy_matches_are_listed_in_step_order() {
        assert_eq!(compute(&labels(), "llm", None).steps, vec![1, 3]);
        assert_eq!(compute(&labels(), "crev", None).steps, vec![2]);
        assert!(compute(&labels(), "", None).steps.is_empty());
        assert!(compute(&labels(), "zzz", None).steps.is_empty());
        let first = compute(&labels(), "s", None);
        assert_eq!(compute(&labels(), "sllm", Some(&first)).steps, vec![1, 3]);
        let other = compute(&labels(), "tool", None);
        assert_eq!(
            compute(&labels(), "llm", Some(&other)).steps,
            vec![1, 3],
            "a previous answer to another query is not reused"
        );
    }

    #[test]
    fn next_and_previous_wrap_around() {
        let h = SearchHits {
            query: "x".into(),
            steps: vec![2, 5, 9],
        };
        assert_eq!(next_hit(&h, Some(5), true), Some(9));
        assert_eq!(next_hit(&h, Some(9), true), Some(2));
        assert_eq!(next_hit(&h, Some(5), false), Some(2));
        assert_eq!(next_hit(&h, Some(2), false), Some(9));
        assert_eq!(next_hit(&h, None, true), Some(2));
        assert_eq!(hit_at_or_after(&h, 5), Some(5));
        assert_eq!(hit_at_or_after(&h, 10), Some(2));
        assert_eq!(next_hit(&SearchHits::default(), Some(1), true), None);
    }
}
