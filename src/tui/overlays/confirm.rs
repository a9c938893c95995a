//! The confirm overlay: before the first experiment of a session, the exact command (as it will
//! run under `sh -c`), where it came from, and what will run (the engine's plan); nothing runs
//! until the user says yes. Also before quitting while experiments run: which jobs will be
//! stopped and what happens to their samples. Reads only the app.

use super::super::action::Action;
use super::super::app::{App, group};
use super::super::keymap::Scope;
use super::super::panes::experiments::plan_label;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use crate::experiments::engine::Plan;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

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

/// Most lines of the command shown (a longer command is cut, with a note).
const MAX_COMMAND_LINES: usize = 8;

/// Draws the confirm box, sized to what it says and never taller than the screen: the plan is
/// cut to fit (with how many lines were left out), the call count and the yes/no line stay.
pub fn render(app: &App, frame: &mut Frame, area: Rect, c: &ConfirmState) {
    let t = &app.theme;
    let box_w = area.width.min(MAX_WIDTH);
    let w = usize::from(box_w.saturating_sub(2));
    let room = usize::from(area.height.saturating_sub(2));
    let lines = body(app, c, w, room);
    let area = super::centered_box(area, box_w, lines.len());
    let title = match c {
        ConfirmState::Run(_) => " Run your agent? ",
        ConfirmState::Quit(_) => " Quit and stop the experiments? ",
    };
    let block = super::overlay_block(t, title).border_type(ratatui::widgets::BorderType::Thick);
    super::draw_box(frame, area, block, lines);
}

/// The box's lines for `w` columns, at most `room` of them.
pub fn body(app: &App, c: &ConfirmState, w: usize, room: usize) -> Vec<Line<'static>> {
    match c {
        ConfirmState::Run(plan) => run_body(app, plan, w, room),
        ConfirmState::Quit(jobs) => quit_body(app, jobs, w, room),
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

/// Quitting while jobs run: which (as many as fit), what stopping them does, the keys.
fn quit_body(app: &App, jobs: &[String], w: usize, room: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = wrap_spans(
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
    let what = wrap_spans(
        vec![(
            "Quitting stops each running sample's agent with every process it started, records those samples in the ledger as cancelled (they form no trial), and closes each job's batch. Samples not yet started never run.".to_owned(),
            t.style(Role::TextDim),
        )],
        w,
        "",
    );
    // The explanation, a blank line and the keys stay; the list of jobs gives way.
    let left = room.saturating_sub(out.len() + what.len() + 3);
    let listed = jobs.len().min(left.max(1));
    for j in jobs.iter().take(listed) {
        out.extend(
            wrap_spans(
                vec![(format!("  • {}", clipped(j, 400)), t.style(Role::Text))],
                w,
                "    ",
            )
            .into_iter()
            .take(1),
        );
    }
    if jobs.len() > listed {
        out.push(Line::styled(
            format!("  … and {} more", jobs.len() - listed),
            t.style(Role::TextDim),
        ));
    }
    out.push(Line::default());
    out.extend(what);
    out.push(Line::default());
    out.push(keys_line(app, " quit and stop them    ", " keep running"));
    out
}

/// A plan: the plan gives way first, then the command, then the explanation; the call count
/// and the keys are always there.
fn run_body(app: &App, p: &Plan, w: usize, room: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let intro = wrap_spans(
        vec![(
            format!(
                "{}: this runs the command below, under sh -c in the current folder, once per sample:",
                plan_label(p)
            ),
            t.style(Role::Text),
        )],
        w,
        "",
    );
    let mut command = Vec::new();
    for l in p.runner.text.lines() {
        command.extend(wrap_spans(
            vec![(format!("  {}", clipped(l, 4000)), t.style(Role::Key))],
            w,
            "    ",
        ));
    }
    if command.len() > MAX_COMMAND_LINES {
        let more = command.len() - MAX_COMMAND_LINES + 1;
        command.truncate(MAX_COMMAND_LINES - 1);
        command.push(Line::styled(
            format!("    … {more} more lines of the command"),
            t.style(Role::TextDim),
        ));
    }
    let origin = Line::styled(
        format!("from {}", clipped(&p.runner.origin_text(), 200)),
        t.style(Role::TextDim),
    );
    let plan_lines = p.lines();
    let mut plan = Vec::new();
    for l in &plan_lines {
        plan.extend(wrap_spans(
            vec![(format!("  • {}", clipped(l, 400)), t.style(Role::Text))],
            w,
            "    ",
        ));
        // Never build more than a screenful of a long plan.
        if plan.len() > room {
            break;
        }
    }
    let calls = wrap_spans(
        vec![(
            format!(
                "{} runner calls. You are asked once per session.",
                group(p.runner_calls())
            ),
            t.style(Role::Heading),
        )],
        w,
        "",
    );
    let keys = keys_line(app, " run it    ", " do not run it");
    // What must stay: the calls and the keys (and a blank line before the keys when there is room).
    let fixed = calls.len() + 1;
    let mut left = room.saturating_sub(fixed);
    let mut out: Vec<Line<'static>> = Vec::new();
    let take = |lines: Vec<Line<'static>>, out: &mut Vec<Line<'static>>, left: &mut usize| {
        let n = lines.len().min(*left);
        out.extend(lines.into_iter().take(n));
        *left -= n;
    };
    take(intro, &mut out, &mut left);
    if left > 0 {
        out.push(Line::default());
        left -= 1;
    }
    take(command, &mut out, &mut left);
    if left > 0 {
        out.push(Line::default());
        left -= 1;
    }
    take(vec![origin], &mut out, &mut left);
    let total = plan_lines.len();
    if !plan.is_empty() && left > 0 {
        if plan.len() <= left && plan.len() >= total {
            take(plan, &mut out, &mut left);
        } else {
            // Keep a line to say how much of the plan is not shown.
            let shown_lines = left.saturating_sub(1);
            let shown: Vec<Line<'static>> = plan.into_iter().take(shown_lines).collect();
            let items_shown = shown
                .iter()
                .filter(|l| {
                    l.spans
                        .first()
                        .is_some_and(|s| s.content.starts_with("  •"))
                })
                .count();
            out.extend(shown);
            out.push(Line::styled(
                format!(
                    "  … and {} more of the plan's {} lines",
                    group(total.saturating_sub(items_shown)),
                    group(total)
                ),
                t.style(Role::TextDim),
            ));
            left = 0;
        }
    }
    out.extend(calls);
    if left > 0 {
        out.push(Line::default());
    }
    out.push(keys);
    out
}
