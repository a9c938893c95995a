//! The top of the screen (issue 26): what the run was asked (its task, a line of its own when the
//! run records one), how it ended (its status and the start of its final answer, or its error),
//! what it is called (the trace's name; never an opaque trace id), then its steps, the fault's
//! party, the top suspect and the loader's warnings. In fewer words when the terminal is narrow:
//! the source format goes first, then the suspect's category, then the suspect, and the answer
//! and the name are cut to what is left. Reads the report and the run; decides nothing.

use super::app::{App, Document};
use super::document::names::{is_opaque_id, shortened, step_name};
use super::theme::Role;
use super::widgets::inert_text::{clipped, one_line, width_of};
use super::widgets::marks;
use crate::analysis::cost::format_usd;
use crate::analysis::count::counted;
use crate::analysis::model::RunStatus;
use crate::analysis::report::Party;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// Longest name shown in the header, in columns, and the fewest it is cut to.
const MAX_NAME: usize = 40;
const MIN_NAME: usize = 16;
/// Fewest columns of an answer worth showing.
const MIN_ANSWER: usize = 12;
/// Columns of the answer the suspect's words give way to.
const WANTED_ANSWER: usize = 40;
/// Bytes of the answer, the error and the task read for the header.
const READ_BYTES: usize = 2048;

/// Rows the header takes: two when the run records its task (the task on a line of its own), else
/// one.
pub fn rows(doc: Option<&Document>) -> u16 {
    if doc.is_some_and(|d| d.report.run.task.is_some()) {
        2
    } else {
        1
    }
}

/// Draws the header.
pub fn render(app: &App, doc: &Document, frame: &mut Frame, area: Rect, warnings_key: &str) {
    let t = &app.theme;
    let width = usize::from(area.width);
    let lines: Vec<Line<'static>> = text(doc, width, warnings_key)
        .into_iter()
        .map(|l| Line::styled(l, t.style(Role::Header)))
        .collect();
    frame.render_widget(Paragraph::new(lines).style(t.style(Role::Header)), area);
}

/// The header's lines, each at most `width` columns: the task (when recorded), then the outcome
/// line.
pub fn text(doc: &Document, width: usize, warnings_key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(task) = &doc.report.run.task {
        let task = one_line(task, READ_BYTES, width.saturating_sub(7));
        out.push(clipped(&format!(" Task: {task}"), width).into_owned());
    }
    out.push(outcome_line(doc, width, warnings_key));
    out
}

/// What the run is called: the trace's name, else its id when a person chose it, else the name
/// of the file it came from, else its id.
pub fn run_name(doc: &Document) -> String {
    if let Some(t) = &doc.report.run.title {
        return shortened(t);
    }
    let id = &doc.report.run.id;
    if !is_opaque_id(id) {
        return id.clone();
    }
    doc.source
        .as_deref()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| id.clone())
}

/// How a person finds step `i` on screen: `step 's3' (position 3)`, or, for a step whose id is
/// opaque, its name and position (`'ChatCompletion' (position 3)`).
pub fn step_words(doc: &Document, i: usize) -> String {
    let Some(step) = doc.run.steps.get(i) else {
        return format!("position {}", i + 1);
    };
    if !is_opaque_id(step.id.as_str()) {
        return doc.describe(i);
    }
    match step_name(step) {
        Some(n) => format!("'{}' (position {})", clipped(&shortened(n), 40), i + 1),
        None => format!("the {} step at position {}", step.kind_label(), i + 1),
    }
}

/// The run's status and how it ended, in words: the start of its final answer, or its error.
fn ending(doc: &Document) -> (String, Option<String>) {
    let r = &doc.report.run;
    // A status nothing recorded is said to be assumed wherever the verdict is shown.
    let status = if r.status_from == crate::analysis::model::StatusFrom::Assumed {
        format!("{} (assumed)", r.status.as_str())
    } else {
        r.status.as_str().to_owned()
    };
    let said = match (r.status, &doc.run.error, &doc.run.final_answer) {
        (RunStatus::Error, Some(e), _) => Some(one_line(e, READ_BYTES, 400)),
        (_, _, Some(a)) if !a.trim().is_empty() => {
            Some(format!("\"{}\"", one_line(a, READ_BYTES, 400)))
        }
        _ => Some("no final answer".to_owned()),
    };
    (status, said)
}

/// Everything after the name, in fewer words at each `level` (0: all; then without the source
/// format and the word "estimated", the suspect's category, the suspect, the warnings' word; and
/// only when the answer has no room even so, the cost).
fn tail(doc: &Document, level: usize, warnings_key: &str) -> String {
    let r = &doc.report;
    let mut out = format!(" · {}", counted(r.run.steps, "step", "steps"));
    // What the run cost: an estimate says so, in fewer words when room is short.
    if let Some(c) = r.cost.as_ref().filter(|c| c.known()) {
        let usd = format_usd(c.total_usd, c.estimated());
        match (c.estimated(), level) {
            (true, 0..=1) => out.push_str(&format!(" · {usd} estimated")),
            (_, 0..=4) => out.push_str(&format!(" · {usd}")),
            // The last resort, for an answer that has no room at all.
            _ => {}
        }
    }
    if level == 0 && r.run.source_format != crate::analysis::model::RUN_FORMAT {
        out.push_str(&format!(" · from {}", r.run.source_format));
    }
    if !r.fault.why.is_empty() || r.fault.party != Party::None {
        out.push_str(&format!(" · fault: {}", party_name(r.fault.party)));
    }
    match (&r.verdict, level) {
        (Some(v), 0) => out.push_str(&format!(
            " · top suspect: {} · {}",
            step_words(doc, v.index),
            clipped(&v.category, 30)
        )),
        (Some(v), 1) => out.push_str(&format!(
            " · top: {} {}",
            clipped(&step_words(doc, v.index), 30),
            clipped(&v.category, 24)
        )),
        (Some(v), 2) => out.push_str(&format!(
            " · top: {}",
            clipped(&step_words(doc, v.index), 24)
        )),
        (Some(_), _) => {}
        (None, 0 | 1) => out.push_str(" · no suspect"),
        (None, _) => {}
    }
    let warnings = r.run.warnings.len();
    if warnings > 0 && level < 4 {
        out.push_str(&format!(
            " · {} {} ({warnings_key})",
            marks::WARNING,
            counted(warnings, "warning", "warnings")
        ));
    } else if warnings > 0 {
        out.push_str(&format!(
            " · {} {warnings} ({warnings_key})",
            marks::WARNING
        ));
    }
    out
}

/// ` failed: "You will be refunded $120." · Refund policy · 4 steps · fault: agent · …`, fitted
/// to `width`: the answer comes before the suspect, so the tail gives way until the answer has
/// [`WANTED_ANSWER`] columns (or all it needs).
fn outcome_line(doc: &Document, width: usize, warnings_key: &str) -> String {
    let (status, said) = ending(doc);
    let name = run_name(doc);
    let wanted = said
        .as_deref()
        .map_or(0, |s| width_of(s).min(WANTED_ANSWER));
    let mut best: Option<(usize, String)> = None;
    for level in 0..6 {
        // The cost gives way only to an answer that has no room at all.
        if level == 5 && best.as_ref().is_some_and(|(r, _)| *r >= MIN_ANSWER) {
            break;
        }
        let tail = tail(doc, level, warnings_key);
        // The leading space, the status, " · " before the name.
        let fixed = 1 + width_of(&status) + 3 + width_of(&tail);
        let Some(room) = width.checked_sub(fixed) else {
            continue;
        };
        // The name gives way to the answer down to [`MIN_NAME`] columns.
        let name_w = width_of(&clipped(&name, MAX_NAME))
            .min(room.saturating_sub(wanted + 2).max(MIN_NAME))
            .min(room);
        if name_w < MIN_NAME.min(width_of(&name)) {
            continue;
        }
        let name = clipped(&name, name_w);
        // ": " before what it said.
        let answer_room = room.saturating_sub(width_of(&name) + 2);
        if level == 5 && answer_room < MIN_ANSWER {
            continue;
        }
        let shown = said
            .as_deref()
            .filter(|_| answer_room >= MIN_ANSWER)
            .map(|s| format!(": {}", clipped(s, answer_room)))
            .unwrap_or_default();
        let line = format!(" {status}{shown} · {name}{tail}");
        if answer_room >= wanted {
            return line;
        }
        if best.as_ref().is_none_or(|(r, _)| answer_room > *r) {
            best = Some((answer_room, line));
        }
    }
    best.map(|(_, line)| line).unwrap_or_else(|| {
        let tail = tail(doc, 5, warnings_key);
        clipped(&format!(" {status} · {name}{tail}"), width).into_owned()
    })
}

fn party_name(p: Party) -> &'static str {
    match p {
        Party::Agent => "agent",
        Party::User => "user",
        Party::Unfinished => "unfinished",
        Party::None => "none",
    }
}
