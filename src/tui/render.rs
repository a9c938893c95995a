//! Drawing the whole screen from `&App`: the header, the panes in a wide or narrow layout, the
//! status bar (a message or the key hints of the focused scope), then any overlay. Render reads
//! only; it does no I/O, builds only visible rows, and the layout function it uses is shared
//! with `update` (page sizes, mouse clicks).

use super::action::Action;
use super::app::{App, Document, Overlay, Pane};
use super::keymap::Scope;
use super::overlays::{confirm, help, search, too_small, viewer};
use super::panes::{claims, detail, dropped, experiments, suspects, timeline};
use super::theme::Role;
use super::widgets::inert_text::clipped;
use super::widgets::scroll_list::window;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

/// From this width the timeline, a secondary pane and the detail are shown side by side.
pub const WIDE_MIN_WIDTH: u16 = 100;
/// Share of the wide layout's width given to the timeline, in percent.
const TIMELINE_PERCENT: u16 = 45;

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
    let [header, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    if area.width >= WIDE_MIN_WIDTH {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(TIMELINE_PERCENT), Constraint::Min(0)])
                .areas(body);
        let [top, bottom] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Min(0)]).areas(right);
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

/// A pane's frame: its title (plus `extra`) and the focused border.
pub fn pane_block<'a>(app: &App, pane: Pane, focused: bool, extra: &str) -> Block<'a> {
    let t = &app.theme;
    let n = Pane::ALL.iter().position(|p| *p == pane).unwrap_or(0) + 1;
    let mut title = vec![Span::styled(
        format!(" {n} {} ", pane.title()),
        t.style(if focused {
            Role::TitleFocus
        } else {
            Role::Title
        }),
    )];
    if pane.is_secondary() && app.size.0 >= WIDE_MIN_WIDTH {
        for other in Pane::ALL.iter().filter(|p| p.is_secondary() && **p != pane) {
            let m = Pane::ALL.iter().position(|p| p == other).unwrap_or(0) + 1;
            title.push(Span::styled(
                format!("{m} {} ", short_title(*other)),
                t.style(Role::TextDim),
            ));
        }
    }
    if !extra.is_empty() {
        title.push(Span::styled(
            format!("· {} ", clipped(extra, 60)),
            t.style(Role::TextDim),
        ));
    }
    Block::default()
        .borders(Borders::ALL)
        .title(Line::from(title))
        .border_style(t.style(if focused {
            Role::BorderFocus
        } else {
            Role::Border
        }))
}

fn short_title(p: Pane) -> &'static str {
    match p {
        Pane::Dropped => "Dropped",
        other => other.title(),
    }
}

/// Draws the screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if too_small::too_small(area) {
        too_small::render(app, frame, area);
        return;
    }
    let a = layout(app, area);
    let Some(doc) = app.doc.as_deref() else {
        render_picker(app, frame, &a);
        render_status(app, frame, a.status);
        return;
    };
    render_header(app, doc, frame, a.header);
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
        Some(Overlay::Help { scroll }) => help::render(app, frame, a.body, *scroll),
        Some(Overlay::Confirm(c)) => confirm::render(app, frame, a.body, c),
        Some(Overlay::Prompt(p)) => super::overlays::prompt::render(app, frame, a.body, p),
        Some(Overlay::Viewer { scroll }) => viewer::render(app, doc, frame, a.body, *scroll),
        None => {}
    }
    if app.search.active {
        search::render_prompt(app, frame, a.status);
    } else {
        render_status(app, frame, a.status);
    }
}

fn render_header(app: &App, doc: &Document, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let r = &doc.report;
    let mut spans = vec![Span::styled(
        format!(
            " {} · {} · {} steps",
            clipped(&r.run.id, 40),
            r.run.status.as_str(),
            r.run.steps
        ),
        t.style(Role::Header),
    )];
    if r.run.source_format != crate::analysis::model::RUN_FORMAT {
        spans.push(Span::styled(
            format!(" · from {}", r.run.source_format),
            t.style(Role::Header),
        ));
    }
    if !r.fault.why.is_empty() || r.fault.party != crate::analysis::report::Party::None {
        spans.push(Span::styled(
            format!(" · fault: {}", party_name(r.fault.party)),
            t.style(Role::Header),
        ));
    }
    match &r.verdict {
        Some(v) => spans.push(Span::styled(
            format!(
                " · top suspect: {} · {}",
                doc.describe(v.index),
                clipped(&v.category, 30)
            ),
            t.style(Role::Header),
        )),
        None => spans.push(Span::styled(" · no suspect", t.style(Role::Header))),
    }
    if !r.run.warnings.is_empty() {
        spans.push(Span::styled(
            format!(" · ⚠ {} warnings", r.run.warnings.len()),
            t.style(Role::Header),
        ));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(t.style(Role::Header)),
        area,
    );
}

fn party_name(p: crate::analysis::report::Party) -> &'static str {
    use crate::analysis::report::Party;
    match p {
        Party::Agent => "agent",
        Party::User => "user",
        Party::Unfinished => "unfinished",
        Party::None => "none",
    }
}

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (n, p) in Pane::ALL.iter().enumerate() {
        let role = if *p == app.focus {
            Role::TitleFocus
        } else {
            Role::TextDim
        };
        spans.push(Span::styled(
            format!(" {} {} ", n + 1, short_title(*p)),
            t.style(role),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let line = match &app.status {
        Some(s) => Line::from(vec![Span::styled(
            format!(" {}", clipped(&s.text, usize::from(area.width))),
            t.style(if s.problem {
                Role::Warning
            } else {
                Role::StatusMessage
            }),
        )]),
        None => {
            let mut spans = Vec::new();
            for (keys, name) in app.keymap.hints(&app.scopes()) {
                spans.push(Span::styled(format!(" {keys}"), t.style(Role::Key)));
                spans.push(Span::styled(format!(" {name} "), t.style(Role::Status)));
            }
            if app.mouse {
                spans.push(Span::styled(" mouse on", t.style(Role::Status)));
            }
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line).style(t.style(Role::Status)), area);
}

fn render_picker(app: &App, frame: &mut Frame, a: &Areas) {
    let t = &app.theme;
    let Some(p) = &app.picker else { return };
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(" tdn-tui · this file holds {} runs: pick one", p.runs.len()),
            t.style(Role::Header),
        ))
        .style(t.style(Role::Header)),
        a.header,
    );
    let key = app
        .keymap
        .first_key(&[Scope::Picker], &Action::PickRun)
        .unwrap_or_default();
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(
            format!(" Runs · {key} opens "),
            t.style(Role::TitleFocus),
        ))
        .border_style(t.style(Role::BorderFocus));
    let inner = block.inner(a.body);
    frame.render_widget(block, a.body);
    if p.opening {
        frame.render_widget(
            Paragraph::new(Line::styled("opening…", t.style(Role::TextDim))),
            inner,
        );
        return;
    }
    let range = window(&p.offset, p.cursor, usize::from(inner.height), p.runs.len());
    let width = usize::from(inner.width);
    let lines: Vec<Line<'_>> = range
        .filter_map(|i| {
            let r = p.runs.get(i)?;
            let title = r
                .title
                .as_deref()
                .map(|x| format!("  {}", clipped(x, 60)))
                .unwrap_or_default();
            let mut line = Line::from(vec![
                Span::styled(
                    format!("{}{:>4}  ", if i == p.cursor { "▶" } else { " " }, i),
                    t.style(Role::TextDim),
                ),
                Span::styled(format!("{:<28}", clipped(&r.id, 28)), t.style(Role::Text)),
                Span::styled(
                    format!(" {:<10} {:>6} steps", r.status.as_str(), r.steps),
                    t.style(Role::TextDim),
                ),
                Span::styled(title, t.style(Role::Text)),
            ]);
            if i == p.cursor {
                let w = line.width();
                if w < width {
                    line.spans.push(Span::raw(" ".repeat(width - w)));
                }
                line = line.patch_style(t.style(Role::Selection));
            }
            Some(line)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
