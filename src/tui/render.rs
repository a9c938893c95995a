//! Drawing the whole screen from `&App`: the header, the panes in a wide or narrow layout, the
//! status bar (a message or the key hints of the focused scope), then any overlay. Render reads
//! only; it does no I/O, builds only visible rows, and the layout function it uses is shared
//! with `update` (page sizes, mouse clicks).

use super::action::Action;
use super::app::{App, Overlay, Pane};
use super::overlays::{confirm, help, search, too_small, viewer};
use super::panes::{claims, detail, dropped, experiments, suspects, timeline};
use super::theme::Role;
use super::widgets::inert_text::{clipped, width_of, wrap_spans};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

/// From this width the timeline, a secondary pane and the detail are shown side by side.
pub const WIDE_MIN_WIDTH: u16 = 100;
/// Longest extra text in a pane's title, in columns.
const MAX_TITLE_EXTRA: usize = 60;
/// Most rows a status message takes.
const STATUS_MAX_LINES: usize = 2;
/// Share of the wide layout's width given to the timeline, in percent.
const TIMELINE_PERCENT: u16 = 45;
/// Share of the right column's height given to the secondary pane (suspects...), in percent.
const SECONDARY_PERCENT: u16 = 60;

/// Where everything goes on the screen.
#[derive(Clone, Debug, PartialEq)]
pub struct Areas {
    /// The top line.
    pub header: Rect,
    /// The panes shown, with their rectangles.
    pub panes: Vec<(Pane, Rect)>,
    /// The tab strip (narrow layout only).
    pub tabs: Option<Rect>,
    /// Everything between header and status bar.
    pub body: Rect,
    /// The bottom line.
    pub status: Rect,
}

impl Areas {
    /// The rectangle of a pane, when shown.
    pub fn of(&self, pane: Pane) -> Option<Rect> {
        self.panes.iter().find(|(p, _)| *p == pane).map(|(_, r)| *r)
    }
}

/// The layout for `area`.
pub fn layout(app: &App, area: Rect) -> Areas {
    let doc = app.doc.as_deref().filter(|_| app.shown_picker().is_none());
    let [header, body, status] = Layout::vertical([
        Constraint::Length(super::header::rows(doc)),
        Constraint::Min(0),
        Constraint::Length(status_height(app, area.width)),
    ])
    .areas(area);
    if app.zoom {
        return Areas {
            header,
            panes: vec![(app.focus, body)],
            tabs: None,
            body,
            status,
        };
    }
    if area.width >= WIDE_MIN_WIDTH {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(TIMELINE_PERCENT), Constraint::Min(0)])
                .areas(body);
        let [top, bottom] = Layout::vertical([
            Constraint::Percentage(SECONDARY_PERCENT),
            Constraint::Min(0),
        ])
        .areas(right);
        Areas {
            header,
            panes: vec![
                (Pane::Timeline, left),
                (app.secondary, top),
                (Pane::Detail, bottom),
            ],
            tabs: None,
            body,
            status,
        }
    } else {
        let [tabs, pane] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        Areas {
            header,
            panes: vec![(app.focus, pane)],
            tabs: Some(tabs),
            body,
            status,
        }
    }
}

/// The inner height of a pane when shown (page size), else the body's.
pub fn pane_height(app: &App, pane: Pane) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let a = layout(app, area);
    usize::from(a.of(pane).unwrap_or(a.body).height.saturating_sub(2))
}

/// The inner width of the detail text (pane or viewer), if shown.
pub fn detail_width(app: &App) -> Option<u16> {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    if too_small::too_small(area) {
        return None;
    }
    let a = layout(app, area);
    if matches!(app.overlay, Some(Overlay::Viewer { .. })) {
        return Some(viewer::inner_area(a.body).width);
    }
    a.of(Pane::Detail).map(|r| r.width.saturating_sub(2))
}

/// The detail is shown in full, nothing folded: in the full step view or the zoomed detail pane.
pub fn detail_full(app: &App) -> bool {
    matches!(app.overlay, Some(Overlay::Viewer { .. })) || (app.zoom && app.focus == Pane::Detail)
}

/// A pane's frame: its title (plus `extra`) and its border, thick when the pane has the focus
/// (so the focus reads without colour too).
pub fn pane_block<'a>(app: &App, pane: Pane, focused: bool, extra: &str, width: u16) -> Block<'a> {
    let t = &app.theme;
    let compact = !extra.is_empty()
        && room_with(app, pane, width, false) < width_of(extra).min(MIN_TITLE_ROOM);
    let mut title: Vec<Span<'a>> = title_parts(app, pane, compact)
        .into_iter()
        .map(|(text, this)| {
            let role = match (this, focused) {
                (true, true) => Role::TitleFocus,
                (true, false) => Role::Title,
                _ => Role::TextDim,
            };
            Span::styled(text, t.style(role))
        })
        .collect();
    // The extra text is cut to the room the frame leaves (a cut ends in `…`).
    let room = title_room(app, pane, width).min(MAX_TITLE_EXTRA);
    if !extra.is_empty() && room > 1 {
        title.push(Span::styled(
            format!("· {} ", clipped(extra, room)),
            t.style(Role::TextDim),
        ));
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .title(Line::from(title))
        .border_style(t.style(if focused {
            Role::BorderFocus
        } else {
            Role::Border
        }))
}

/// The pane's own title, or, for a secondary pane in the wide layout, every secondary pane in
/// their fixed order with this one in brackets (the others are a number away); `true` marks the
/// pane's own part.
fn title_parts(app: &App, pane: Pane, compact: bool) -> Vec<(String, bool)> {
    let number = |p: Pane| Pane::ALL.iter().position(|x| *x == p).unwrap_or(0) + 1;
    if pane.is_secondary() && app.size.0 >= WIDE_MIN_WIDTH && !app.zoom {
        let mut parts = vec![(" ".to_owned(), false)];
        for other in Pane::ALL.iter().filter(|p| p.is_secondary()) {
            if *other == pane {
                parts.push((format!("[{} {}] ", number(*other), other.title()), true));
            } else if compact {
                parts.push((format!("{} ", number(*other)), false));
            } else {
                parts.push((
                    format!("{} {} ", number(*other), short_title(*other)),
                    false,
                ));
            }
        }
        return parts;
    }
    vec![(format!(" {} {} ", number(pane), pane.title()), true)]
}

/// Columns left for the `extra` text of [`pane_block`]'s title in a pane `width` wide, at most
/// (the other panes' names shrink to their numbers to make room).
pub fn title_room(app: &App, pane: Pane, width: u16) -> usize {
    room_with(app, pane, width, true)
}

fn room_with(app: &App, pane: Pane, width: u16, compact: bool) -> usize {
    let used: usize = title_parts(app, pane, compact)
        .iter()
        .map(|p| width_of(&p.0))
        .sum();
    // The two corners, then "· " before the extra text and a space after it.
    usize::from(width).saturating_sub(used + 2 + 3)
}

/// Columns of a pane's title text worth shrinking the other panes' names to their numbers for.
const MIN_TITLE_ROOM: usize = 36;

fn short_title(p: Pane) -> &'static str {
    match p {
        Pane::Dropped => "Dropped",
        other => other.title(),
    }
}

/// Draws the screen.
pub fn render(app: &App, frame: &mut Frame) {
    app.hits.borrow_mut().clear();
    let area = frame.area();
    if too_small::too_small(area) {
        too_small::render(app, frame, area);
        return;
    }
    let a = layout(app, area);
    let shown = app.shown_picker();
    let (Some(doc), None) = (app.doc.as_deref(), shown) else {
        if let Some(p) = shown {
            super::picker::render(app, p, frame, &a);
            if let Some(Overlay::Help { scroll, filter, .. }) = &app.overlay {
                help::render(app, frame, a.body, *scroll, filter);
            }
        }
        if shown.is_some_and(|p| p.filtering) || help_typing(app) {
            search::render_prompt(app, frame, a.status);
        } else {
            render_status(app, frame, a.status);
        }
        return;
    };
    super::header::render(app, doc, frame, a.header, &app.key(Action::Warnings));
    if let Some(tabs) = a.tabs {
        render_tabs(app, frame, tabs);
    }
    for (pane, rect) in &a.panes {
        let focused = *pane == app.focus;
        match pane {
            Pane::Timeline => timeline::render(app, doc, frame, *rect, focused),
            Pane::Suspects => suspects::render(app, doc, frame, *rect, focused),
            Pane::Detail => detail::render(app, doc, frame, *rect, focused),
            Pane::Dropped => dropped::render(app, doc, frame, *rect, focused),
            Pane::Claims => claims::render(app, doc, frame, *rect, focused),
            Pane::Experiments => experiments::render(app, frame, *rect, focused),
        }
    }
    match &app.overlay {
        Some(Overlay::Help { scroll, filter, .. }) => {
            help::render(app, frame, a.body, *scroll, filter)
        }
        Some(Overlay::Warnings { cursor, offset }) => {
            super::overlays::warnings::render(app, doc, frame, a.body, *cursor, offset)
        }
        Some(Overlay::Confirm(c)) => confirm::render(app, frame, a.body, c),
        Some(Overlay::Prompt(p)) => super::overlays::prompt::render(app, frame, a.body, p),
        Some(Overlay::Viewer { scroll }) => viewer::render(app, doc, frame, a.body, *scroll),
        Some(Overlay::Compare(state)) => {
            if let Some(view) = &doc.against {
                super::compare::render::render(app, doc, view, state, frame, a.body);
            }
        }
        Some(Overlay::CompareWith(state)) => {
            super::compare::render::render_chooser(app, state, frame, a.body)
        }
        None => {}
    }
    if app.search.active || app.line.is_some() || help_typing(app) {
        search::render_prompt(app, frame, a.status);
    } else {
        render_status(app, frame, a.status);
    }
}

/// The help's filter is being typed.
fn help_typing(app: &App) -> bool {
    matches!(app.overlay, Some(Overlay::Help { typing: true, .. }))
}

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (n, p) in Pane::ALL.iter().enumerate() {
        let (text, role) = if *p == app.focus {
            (format!("[{} {}]", n + 1, short_title(*p)), Role::TitleFocus)
        } else {
            (format!(" {} {} ", n + 1, short_title(*p)), Role::TextDim)
        };
        spans.push(Span::styled(text, t.style(role)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The bottom of the screen: the message, if any (on one or two lines), above the key hints,
/// which stay in sight.
fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let width = usize::from(area.width);
    let mut lines = match &app.status {
        Some(s) => wrap_spans(
            vec![(
                format!(" {}", clipped(&s.text, width * STATUS_MAX_LINES)),
                t.style(if s.problem {
                    Role::Warning
                } else {
                    Role::StatusMessage
                }),
            )],
            width,
            " ",
        ),
        None => Vec::new(),
    };
    lines.truncate(STATUS_MAX_LINES);
    lines.push(hint_line(app, width));
    frame.render_widget(Paragraph::new(lines).style(t.style(Role::Status)), area);
}

/// The key hints of the scopes in force that fit whole, help first.
fn hint_line(app: &App, width: usize) -> Line<'static> {
    let t = &app.theme;
    let mut hints = app.keymap.hints(&app.scopes());
    if let Some(i) = hints.iter().position(|(_, n)| *n == Action::Help.label()) {
        let help = hints.remove(i);
        hints.insert(0, help);
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (keys, words) in hints {
        let w = width_of(&keys) + width_of(words) + 3;
        if used + w > width {
            continue;
        }
        used += w;
        spans.push(Span::styled(format!(" {keys}"), t.style(Role::Key)));
        spans.push(Span::styled(format!(" {words} "), t.style(Role::Status)));
    }
    if app.mouse && used + 9 <= width {
        spans.push(Span::styled(" mouse on", t.style(Role::Status)));
    }
    Line::from(spans)
}

/// Rows the bottom of the screen takes: the hints, and a message above them (two rows for a
/// long one).
pub fn status_height(app: &App, width: u16) -> u16 {
    let prompt = app.search.active
        || app.line.is_some()
        || help_typing(app)
        || app.shown_picker().is_some_and(|p| p.filtering);
    if prompt {
        return 1;
    }
    match &app.status {
        Some(s) if width_of(&s.text) + 1 > usize::from(width) => 3,
        Some(_) => 2,
        None => 1,
    }
}
