//! Showing a step in the user's own pager or editor: the step's detail as plain text, then the
//! step as JSON, written inert (escape sequences and bidirectional overrides made visible) to a
//! temporary file that is removed afterwards. The program is the one the settings resolved
//! (`config::Viewers`: `$PAGER`, else `less`; `$VISUAL`, else `$EDITOR`, else `vi`) and runs
//! under `sh -c` with the file's path as its argument
//! `$1`: run text never reaches a command line. The event loop hands the terminal over around
//! [`run`].

use super::app::Document;
use super::effects::External;
use super::panes::detail;
use super::theme::Theme;
use crate::analysis::model::inert_block;
use crate::config::ViewerCommand;
use std::io::Write;
use std::process::Command;

/// Columns the detail is laid out for in the file.
const FILE_WIDTH: u16 = 100;

/// The text a step is shown as: its detail as plain lines, then the whole step as JSON, inert.
pub fn step_text(doc: &Document, step: usize, theme: &Theme) -> String {
    let d = detail::build(doc, step, FILE_WIDTH, theme);
    let mut out = String::new();
    for l in &d.lines {
        for s in &l.spans {
            out.push_str(&s.content);
        }
        out.push('\n');
    }
    if let Some(s) = doc.run.steps.get(step) {
        out.push_str("\n── The step as recorded (JSON) ──\n");
        out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        out.push('\n');
    }
    inert_block(&out).into_owned()
}

/// Writes the step to a temporary file and runs the program on it, waiting until it ends; the
/// file is removed then. The terminal must have been handed over. Returns what to tell the user.
pub fn run(
    program: External,
    command: &ViewerCommand,
    doc: &Document,
    step: usize,
    theme: &Theme,
) -> Result<String, String> {
    let (cmd, from) = (&command.text, command.from);
    let mut file = tempfile::Builder::new()
        .prefix("tdn-step-")
        .suffix(".txt")
        .tempfile()
        .map_err(|e| format!("cannot make a temporary file ({e})"))?;
    file.write_all(step_text(doc, step, theme).as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("cannot write the temporary file ({e})"))?;
    let path = file.into_temp_path();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{cmd} \"$1\""))
        .arg("tdn-tui")
        .arg(&*path)
        .status()
        .map_err(|e| format!("cannot start '{cmd}' (from {from}): {e}"))?;
    let _ = path.close();
    let what = match program {
        External::Pager => "pager",
        External::Editor => "editor",
    };
    if status.success() {
        Ok(format!(
            "back from the {what} '{cmd}' (from {from}); edits there change nothing in the run"
        ))
    } else {
        Err(format!(
            "the {what} '{cmd}' (from {from}) ended with {status}; set {} to choose another",
            command.variable
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::run as run_program;
    use super::*;
    use crate::analysis::model::{Run, RunStatus, Step, StepKind};
    use crate::analysis::report::Report;

    fn calendar_report() -> Report {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("fixture")
    }

    #[test]
    fn the_program_is_the_command_given_with_the_file_as_its_argument() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps.push(Step::new("s1", StepKind::Tool));
        run.reindex();
        let doc = Document::new(run, calendar_report(), None);
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("seen.txt");
        // `sh -c '<command> "$1"'`: this command copies the file it is given.
        let command = ViewerCommand {
            text: format!("cat >'{}' <", out.display()),
            from: "a test",
            variable: "$PAGER",
        };
        let said = run_program(External::Pager, &command, &doc, 0, &Theme::bare());
        assert!(said.is_ok_and(|m| m.contains("(from a test)")));
        let seen = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(seen.contains("step 's1'"), "{seen}");
        let failing = ViewerCommand {
            text: "false".to_owned(),
            from: "a test",
            variable: "$EDITOR",
        };
        let said = run_program(External::Editor, &failing, &doc, 0, &Theme::bare());
        assert!(said.is_err_and(|m| m.contains("set $EDITOR to choose another")));
    }

    #[test]
    fn the_file_holds_the_step_inert() {
        let mut run = Run::new("r", RunStatus::Failed);
        let mut s = Step::new("s1", StepKind::Tool);
        s.output = Some(serde_json::json!("evil \u{1b}]52;c;x\u{7} \u{202e}text").into());
        run.steps.push(s);
        run.reindex();
        let report: Report = serde_json::from_str(include_str!(
            "../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("fixture");
        let doc = Document::new(run, report, None);
        let text = step_text(&doc, 0, &Theme::bare());
        assert!(text.contains("step 's1'"), "{text}");
        assert!(text.contains("The step as recorded (JSON)"));
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{text}"
        );
    }
}
