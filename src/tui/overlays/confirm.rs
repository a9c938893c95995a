//! The confirm overlay: before the first experiment of a session, the exact command (as it will
//! run under `sh -c`), where it came from, and what will run (the engine's plan); nothing runs
//! until the user says yes. Also before quitting while experiments run: which jobs will be
//! stopped and what happens to their samples. Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use crate::experiments::engine::Plan;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// What is waiting for the user's word.
#[derive(Debug, Clone)]
pub enum ConfirmState {
    /// A plan to run.
    Run(Box<Plan>),
    /// Quitting, which stops these running jobs (in words).
    Quit(Vec<String>),
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
        .title(Span::styled(
            match c {
                ConfirmState::Run(_) => " Run your agent? ",
                ConfirmState::Quit(_) => " Quit and stop the experiments? ",
            },
            t.style(Role::TitleFocus),
        ))
        .border_style(t.style(Role::BorderFocus))
        .style(t.style(Role::Overlay));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines), inner);
}

fn body(app: &App, c: &ConfirmState, w: usize) -> Vec<Line<'static>> {
    match c {
        ConfirmState::Run(plan) => run_body(app, plan, w),
        ConfirmState::Quit(jobs) => quit_body(app, jobs, w),
    }
}

fn keys_line(app: &App, yes: &'static str, no: &'static str) -> Line<'static> {
    let t = &app.theme;
    let k = |a: Action| app.keymap.keys_for(Scope::Confirm, &a);
    Line::from(vec![
        Span::styled(k(Action::ConfirmYes), t.style(Role::Key)),
        Span::styled(yes, t.style(Role::Text)),
        Span::styled(k(Action::ConfirmNo), t.style(Role::Key)),
        Span::styled(no, t.style(Role::Text)),
    ])
}

fn quit_body(app: &App, jobs: &[String], w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = wrap_spans(
        vec![(
            format!(
                "{} experiment job{} still running:",
                jobs.len(),
                if jobs.len() == 1 { " is" } else { "s are" }
            ),
            t.style(Role::Text),
        )],
        w,
        "",
    );
    for j in jobs.iter().take(8) {
        lines.extend(wrap_spans(
            vec![(format!("  • {}", clipped(j, 400)), t.style(Role::Text))],
            w,
            "    ",
        ));
    }
    if jobs.len() > 8 {
        lines.push(Line::styled(
            format!("  ... and {} more", jobs.len() - 8),
            t.style(Role::Text),
        ));
    }
    lines.push(Line::default());
    lines.extend(wrap_spans(
        vec![(
            "Quitting stops each running sample's agent with every process it started, records those samples in the ledger as cancelled (they form no trial), and closes each job's batch. Samples not yet started never run.".to_owned(),
            t.style(Role::TextDim),
        )],
        w,
        "",
    ));
    lines.push(Line::default());
    lines.push(keys_line(app, " quit and stop them    ", " keep running"));
    lines
}

fn run_body(app: &App, plan: &Plan, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = wrap_spans(
        vec![(
            format!(
                "{}: this runs the command below, under sh -c in the current folder, once per sample:",
                plan.request.label()
            ),
            t.style(Role::Text),
        )],
        w,
        "",
    );
    lines.push(Line::default());
    for l in plan.runner.text.lines() {
        lines.extend(wrap_spans(
            vec![(format!("  {}", clipped(l, 4000)), t.style(Role::Key))],
            w,
            "    ",
        ));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        format!("from {}", clipped(&plan.runner.origin_text(), 200)),
        t.style(Role::TextDim),
    ));
    for l in plan.lines() {
        lines.extend(wrap_spans(
            vec![(format!("  • {}", clipped(&l, 400)), t.style(Role::Text))],
            w,
            "    ",
        ));
    }
    lines.push(Line::styled(
        format!(
            "{} runner calls. You are asked once per session.",
            plan.runner_calls()
        ),
        t.style(Role::TextDim),
    ));
    lines.push(Line::default());
    lines.push(keys_line(app, " run it    ", " do not run it"));
    lines
}
