//! The confirm overlay: before the first experiment of a session, the exact command (as it will
//! run under `sh -c`), where it came from, and what will run; nothing runs until the user says
//! yes. Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::experiment_port::{Plan, Request};
use super::super::keymap::Scope;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// A request waiting for the user's word.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmState {
    /// What was asked.
    pub request: Request,
    /// What it would run.
    pub plan: Plan,
}

/// Widest the box grows.
const MAX_WIDTH: u16 = 96;

/// Draws the confirm box, sized to what it says.
pub fn render(app: &App, frame: &mut Frame, area: Rect, c: &ConfirmState) {
    let t = &app.theme;
    let box_w = area.width.min(MAX_WIDTH);
    let w = usize::from(box_w.saturating_sub(2));
    let lines = body(app, c, w);
    let area = super::centered_box(area, box_w, lines.len());
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" Run your agent? ", t.style(Role::TitleFocus)))
        .border_style(t.style(Role::BorderFocus))
        .style(t.style(Role::Overlay));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines), inner);
}

fn body(app: &App, c: &ConfirmState, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = wrap_spans(
        vec![(
            format!(
                "{}: this runs the command below, under sh -c in the current folder, once per sample:",
                c.request.label()
            ),
            t.style(Role::Text),
        )],
        w,
        "",
    );
    lines.push(Line::default());
    for l in c.plan.command.lines() {
        lines.extend(wrap_spans(
            vec![(format!("  {}", clipped(l, 4000)), t.style(Role::Key))],
            w,
            "    ",
        ));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        format!("from {}", clipped(&c.plan.origin, 200)),
        t.style(Role::TextDim),
    ));
    for l in &c.plan.lines {
        lines.extend(wrap_spans(
            vec![(format!("  • {}", clipped(l, 400)), t.style(Role::Text))],
            w,
            "    ",
        ));
    }
    lines.push(Line::styled(
        format!(
            "{} runner calls. You are asked once per session.",
            c.plan.runner_calls
        ),
        t.style(Role::TextDim),
    ));
    lines.push(Line::default());
    let k = |a: Action| app.keymap.keys_for(Scope::Confirm, &a);
    lines.push(Line::from(vec![
        Span::styled(k(Action::ConfirmYes), t.style(Role::Key)),
        Span::styled(" run it    ", t.style(Role::Text)),
        Span::styled(k(Action::ConfirmNo), t.style(Role::Key)),
        Span::styled(" do not run it", t.style(Role::Text)),
    ]));
    lines
}
