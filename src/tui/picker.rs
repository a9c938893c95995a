//! The run list of a file holding several runs (a τ-bench results file, an OTLP file with several
//! traces): each run with its position, id, status, steps, title and the start of its task, so
//! that one can be chosen without opening each; a fuzzy filter typed after `/`; and the way back
//! to the list once a run is open. Its state and drawing live here; `update` moves it. Run text
//! is made inert when the entry is built; nothing here does I/O.

use super::action::Action;
use super::app::{App, group};
use super::keymap::Scope;
use super::render::Areas;
use super::theme::Role;
use super::widgets::inert_text::{clipped, one_line, width_of};
use super::widgets::scroll_list::window;
use crate::analysis::model::{Run, RunStatus};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::cell::Cell;
use unicode_width::UnicodeWidthChar;

/// Longest id, title or task excerpt kept for an entry, in columns.
const MAX_FIELD: usize = 160;
/// Bytes of a task read to make its excerpt (the rest is never looked at).
const TASK_BYTES: usize = 1024;
/// Longest filter kept.
const MAX_FILTER: usize = 100;
/// Lines each entry takes: the run, then its task.
pub const ENTRY_LINES: usize = 2;
/// Width of the id column.
const ID_COL: usize = 24;

/// One run of the file, as the list shows it. Every text is inert and clipped.
#[derive(Clone, Debug, PartialEq)]
pub struct RunChoice {
    /// The run's id.
    pub id: String,
    /// Its title, when it has one.
    pub title: Option<String>,
    /// How it ended.
    pub status: RunStatus,
    /// Its number of steps.
    pub steps: usize,
    /// The start of its task (or, without one, of its final answer), on one line.
    pub task: Option<String>,
    /// The id of the task it was made for, when it names one (the trials of one task share it).
    pub task_id: Option<String>,
}

impl RunChoice {
    /// The entry for a run.
    pub fn new(run: &Run) -> RunChoice {
        RunChoice {
            id: clipped(&run.id, MAX_FIELD).into_owned(),
            title: run.title.as_deref().map(excerpt),
            status: run.status,
            steps: run.steps.len(),
            task: run
                .task
                .as_deref()
                .or(run.final_answer.as_deref())
                .map(excerpt)
                .filter(|t| !t.is_empty()),
            task_id: crate::analysis::compare::task_id(run),
        }
    }

    /// The fields the filter matches fuzzily: id, status and title, in the order they are drawn.
    fn fields(&self) -> [&str; 3] {
        [
            &self.id,
            self.status.as_str(),
            self.title.as_deref().unwrap_or(""),
        ]
    }

    fn haystack(&self) -> String {
        self.fields().join(" ")
    }

    /// Where the filter matches: the characters of id, status and title it matched fuzzily, or
    /// the characters of the task holding it as written (ignoring case). A long task would match
    /// almost any short filter fuzzily, so it is matched by its words.
    pub fn matches(&self, m: &SkimMatcherV2, filter: &str) -> Option<Hit> {
        if let Some((score, idx)) = m.fuzzy_indices(&self.haystack(), filter) {
            return Some(Hit::Fields(score, idx));
        }
        let task = self.task.as_deref()?.to_lowercase();
        let at = task.find(&filter.to_lowercase())?;
        let start = task.get(..at)?.chars().count();
        Some(Hit::Task(start..start + filter.chars().count()))
    }
}

/// Where a filter matched a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hit {
    /// The fuzzy score and the character positions in `id status title`.
    Fields(i64, Vec<usize>),
    /// Character positions in the task.
    Task(std::ops::Range<usize>),
}

/// The start of a text on one line: whitespace runs become one space, inert, clipped.
fn excerpt(text: &str) -> String {
    one_line(text, TASK_BYTES, MAX_FIELD)
}

/// The run list's state.
#[derive(Debug, Default)]
pub struct PickerState {
    /// The runs, in file order.
    pub runs: Vec<RunChoice>,
    /// Positions of the runs the filter lets through: best match first, else file order.
    pub shown: Vec<usize>,
    /// The selected entry (a position in `shown`).
    pub cursor: usize,
    /// First entry drawn.
    pub offset: Cell<usize>,
    /// An opening is under way (the run at this position).
    pub opening: Option<usize>,
    /// The run open behind the list, if any.
    pub opened: Option<usize>,
    /// The list is on screen (it stays kept while a run is open).
    pub visible: bool,
    /// The fuzzy filter.
    pub filter: String,
    /// The filter is being typed.
    pub filtering: bool,
}

impl PickerState {
    /// A list of these runs, all shown.
    pub fn new(runs: Vec<RunChoice>) -> PickerState {
        PickerState {
            shown: (0..runs.len()).collect(),
            runs,
            visible: true,
            ..PickerState::default()
        }
    }

    /// The run under the cursor.
    pub fn selected(&self) -> Option<usize> {
        self.shown.get(self.cursor).copied()
    }

    /// Adds a typed character to the filter; false when it is full.
    pub fn push(&mut self, c: char) -> bool {
        if self.filter.chars().count() >= MAX_FILTER || c.is_control() {
            return false;
        }
        self.filter.push(c);
        self.refilter();
        true
    }

    /// Removes the filter's last character.
    pub fn pop(&mut self) {
        self.filter.pop();
        self.refilter();
    }

    /// Drops the filter: every run is shown again, the selection kept.
    pub fn clear_filter(&mut self) {
        self.filter.clear();
        self.filtering = false;
        self.refilter();
    }

    /// Recomputes the shown runs for the filter, keeping the selected run when it still matches.
    pub fn refilter(&mut self) {
        let keep = self.selected();
        if self.filter.is_empty() {
            self.shown = (0..self.runs.len()).collect();
        } else {
            let m = SkimMatcherV2::default();
            let mut hits: Vec<(i64, usize)> = self
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| match r.matches(&m, &self.filter)? {
                    Hit::Fields(score, _) => Some((score, i)),
                    // Below every fuzzy match of the id, status or title.
                    Hit::Task(_) => Some((i64::MIN, i)),
                })
                .collect();
            // Best first; file order among equals.
            hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            self.shown = hits.into_iter().map(|(_, i)| i).collect();
        }
        self.cursor = keep
            .and_then(|k| self.shown.iter().position(|&i| i == k))
            .unwrap_or(0);
    }

    /// Puts the cursor on run `i` when it is shown.
    pub fn select_run(&mut self, i: usize) {
        if let Some(pos) = self.shown.iter().position(|&x| x == i) {
            self.cursor = pos;
        }
    }
}

/// Draws the list over the whole body.
pub fn render(app: &App, p: &PickerState, frame: &mut Frame, a: &Areas) {
    let t = &app.theme;
    let failed = p
        .runs
        .iter()
        .filter(|r| matches!(r.status, RunStatus::Failed | RunStatus::Error))
        .count();
    let mut head = format!(
        " tdn-tui · {} runs in this file, {failed} failed or errored",
        p.runs.len()
    );
    if let Some(o) = p.opened.and_then(|i| p.runs.get(i)) {
        head.push_str(&format!(" · open: {}", o.id));
    }
    frame.render_widget(
        Paragraph::new(Line::styled(
            clipped(&head, usize::from(a.header.width)).into_owned(),
            t.style(Role::Header),
        ))
        .style(t.style(Role::Header)),
        a.header,
    );
    let key = |a: Action| {
        app.keymap
            .first_key(&[Scope::Picker], &a)
            .unwrap_or_else(|| a.name().to_owned())
    };
    let mut title = format!(
        " Runs · {} opens · {} filters ",
        key(Action::PickRun),
        key(Action::Search)
    );
    if !p.filter.is_empty() {
        title.push_str(&format!(
            "· {} of {} match '{}' ",
            p.shown.len(),
            p.runs.len(),
            clipped(&p.filter, 30)
        ));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, t.style(Role::TitleFocus)))
        .border_type(ratatui::widgets::BorderType::Thick)
        .border_style(t.style(Role::BorderFocus));
    let inner = block.inner(a.body);
    frame.render_widget(block, a.body);
    if let Some(i) = p.opening {
        let id = p.runs.get(i).map(|r| r.id.as_str()).unwrap_or("");
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!("opening {id} (analysing it)…"),
                t.style(Role::TextDim),
            )),
            inner,
        );
        return;
    }
    if p.shown.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "No run matches '{}': Backspace edits the filter, {} clears it.",
                    clipped(&p.filter, 40),
                    app.keymap
                        .first_key(&[Scope::Search], &Action::Back)
                        .unwrap_or_else(|| "Esc".to_owned())
                ),
                t.style(Role::TextDim),
            )),
            inner,
        );
        return;
    }
    let entries = usize::from(inner.height) / ENTRY_LINES;
    let range = window(&p.offset, p.cursor, entries.max(1), p.shown.len());
    let width = usize::from(inner.width);
    let matcher = (!p.filter.is_empty()).then(SkimMatcherV2::default);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for pos in range {
        let Some((i, r)) = p.shown.get(pos).and_then(|&i| Some((i, p.runs.get(i)?))) else {
            continue;
        };
        let hit = matcher.as_ref().and_then(|m| r.matches(m, &p.filter));
        let selected = pos == p.cursor;
        lines.extend(entry_lines(app, p, i, r, hit.as_ref(), selected, width));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn entry_lines(
    app: &App,
    p: &PickerState,
    i: usize,
    r: &RunChoice,
    hit: Option<&Hit>,
    selected: bool,
    width: usize,
) -> [Line<'static>; ENTRY_LINES] {
    let t = &app.theme;
    let [id, status, title] = r.fields();
    let task = r.task.as_deref().unwrap_or("");
    let (matched, in_task): (Vec<usize>, Vec<usize>) = match hit {
        Some(Hit::Fields(_, idx)) => (idx.clone(), Vec::new()),
        Some(Hit::Task(range)) => (Vec::new(), range.clone().collect()),
        None => (Vec::new(), Vec::new()),
    };
    let matched = matched.as_slice();
    // Each field's first character in the haystack (fields are joined by one space).
    let mut starts = [0usize; 3];
    let mut at = 0;
    for (k, f) in r.fields().iter().enumerate() {
        starts[k] = at;
        at += f.chars().count() + 1;
    }
    let open_mark = if p.opened == Some(i) {
        super::widgets::marks::OPEN_RUN
    } else {
        " "
    };
    let mut first = vec![Span::styled(
        format!("{}{open_mark}{:>5}  ", if selected { "▶" } else { " " }, i),
        t.style(Role::TextDim),
    )];
    let id_w = ID_COL.min(width / 3).max(8);
    first.extend(highlighted(
        id,
        starts[0],
        matched,
        id_w,
        t.style(Role::Text),
        app,
    ));
    let id_used = width_of(&clipped(id, id_w));
    first.push(Span::raw(" ".repeat(id_w.saturating_sub(id_used) + 1)));
    let status_role = match r.status {
        RunStatus::Failed | RunStatus::Error => Role::Warning,
        _ => Role::TextDim,
    };
    first.extend(highlighted(
        status,
        starts[1],
        matched,
        10,
        t.style(status_role),
        app,
    ));
    first.push(Span::styled(
        format!(
            "{:>w$} {:>6} {:<5}  ",
            "",
            group(r.steps),
            if r.steps == 1 { "step" } else { "steps" },
            w = 10usize.saturating_sub(status.len())
        ),
        t.style(Role::TextDim),
    ));
    let used: usize = first.iter().map(|s| width_of(&s.content)).sum();
    first.extend(highlighted(
        title,
        starts[2],
        matched,
        width.saturating_sub(used),
        t.style(Role::Text),
        app,
    ));
    let indent = "         ";
    let mut second = vec![Span::raw(indent)];
    if task.is_empty() {
        second.push(Span::styled(
            "(no task or answer recorded)",
            t.style(Role::TextDim),
        ));
    } else {
        second.extend(highlighted(
            task,
            0,
            &in_task,
            width.saturating_sub(indent.len()),
            t.style(Role::TextDim),
            app,
        ));
    }
    let mut out = [Line::from(first), Line::from(second)];
    if selected {
        for l in &mut out {
            let w = l.width();
            if w < width {
                l.spans.push(Span::raw(" ".repeat(width - w)));
            }
            *l = std::mem::take(l).patch_style(t.style(Role::Selection));
        }
    }
    out
}

/// `text` clipped to `max` columns, the characters the filter matched (haystack positions, the
/// text starting at `start`) in the match style.
fn highlighted(
    text: &str,
    start: usize,
    matched: &[usize],
    max: usize,
    style: Style,
    app: &App,
) -> Vec<Span<'static>> {
    let text = clipped(text, max);
    let hit = app.theme.style(Role::SearchMatch);
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut buf_hit = false;
    let mut w = 0;
    for (k, c) in text.chars().enumerate() {
        w += c.width().unwrap_or(0);
        if w > max {
            break;
        }
        let is_hit = matched.binary_search(&(start + k)).is_ok();
        if is_hit != buf_hit && !buf.is_empty() {
            out.push(Span::styled(
                std::mem::take(&mut buf),
                if buf_hit { hit } else { style },
            ));
        }
        buf_hit = is_hit;
        buf.push(c);
    }
    if !buf.is_empty() {
        out.push(Span::styled(buf, if buf_hit { hit } else { style }));
    }
    out
}

/// The inner height of the list, for page motions (in entries).
pub fn page(area: Rect) -> usize {
    (usize::from(area.height.saturating_sub(4)) / ENTRY_LINES).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(id: &str, title: &str, task: &str) -> RunChoice {
        RunChoice {
            id: id.to_owned(),
            title: Some(title.to_owned()),
            status: RunStatus::Failed,
            steps: 3,
            task: Some(task.to_owned()),
            task_id: None,
        }
    }

    #[test]
    fn the_filter_matches_any_field_fuzzily_and_keeps_the_selection() {
        let mut p = PickerState::new(vec![
            choice("task-0", "airline 0", "fly from New York to Seattle"),
            choice("task-1", "airline 1", "cancel my reservation"),
            choice("task-2", "airline 2", "change the flight to Seattle"),
        ]);
        p.cursor = 2;
        for c in "Seattle".chars() {
            assert!(p.push(c));
        }
        assert_eq!(p.shown, vec![0, 2], "the task holds it, whatever the case");
        assert_eq!(p.selected(), Some(2), "the selected run still matches");
        p.pop();
        p.clear_filter();
        assert_eq!(p.shown, vec![0, 1, 2]);
        assert_eq!(p.selected(), Some(2));
        p.push('z');
        assert!(p.shown.is_empty());
        assert_eq!(p.selected(), None);
        // The id, status and title match fuzzily, the best first.
        p.clear_filter();
        for c in "task-2".chars() {
            p.push(c);
        }
        assert_eq!(p.shown.first(), Some(&2));
        p.clear_filter();
        for c in "airl1".chars() {
            p.push(c);
        }
        assert_eq!(p.shown, vec![1]);
    }

    #[test]
    fn an_entry_is_one_inert_line_of_the_task() {
        let mut run = Run::new("r\u{1b}[2J".to_owned(), RunStatus::Failed);
        run.task = Some("Book a\n\tflight   to Paris.\u{7}".to_owned());
        let c = RunChoice::new(&run);
        assert!(!c.id.contains('\u{1b}'), "{}", c.id);
        let task = c.task.unwrap_or_default();
        assert!(task.starts_with("Book a flight to Paris."), "{task}");
        assert!(!task.chars().any(|ch| ch.is_control()), "{task}");
    }
}
