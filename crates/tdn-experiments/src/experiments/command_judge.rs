//! A [`Judge`] backed by the user's own command (`TDN_JUDGE` or `[judge] command`): run under
//! `sh -c` in its own process group with `[judge] timeout_s`, the request as JSON on stdin, the
//! answer read from the last stdout line that parses as a JSON object (runner.md "The judge").
//!
//! The command text comes only from the settings, never from a run file, and nothing is
//! substituted into it. A non-zero exit, a time-out, too much output or no JSON object is an
//! error with the reason and the tail of stderr; the analysis then keeps the rules' verdict.

use super::process::{GroupCommand, GroupError, run_blocking};
use crate::analysis::judge::{Judge, JudgeError, JudgeRequest};
use crate::analysis::model::inert_line;
use serde_json::Value;
use std::time::Duration;

/// The judge's stdout is capped at this (1 MiB); more kills its process group.
const MAX_STDOUT: usize = 1 << 20;
/// The last this many bytes of stderr are kept for the error message.
const STDERR_TAIL: usize = 4 * 1024;
/// Of the stderr tail, this many characters go into `report.judge.error`.
const STDERR_IN_MESSAGE: usize = 500;

/// A judge that runs a shell command.
#[derive(Clone, Debug)]
pub struct CommandJudge {
    command: String,
    timeout: Duration,
}

impl CommandJudge {
    /// A judge running `command` with a time-out of `timeout_s` seconds (a non-finite or
    /// non-positive value falls back to the default 60 s).
    pub fn new(command: impl Into<String>, timeout_s: f64) -> Self {
        let timeout = if timeout_s.is_finite() && timeout_s > 0.0 {
            Duration::try_from_secs_f64(timeout_s).unwrap_or(Duration::from_secs(60))
        } else {
            Duration::from_secs(60)
        };
        CommandJudge {
            command: command.into(),
            timeout,
        }
    }
}

fn tail_note(stderr: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        return String::new();
    }
    let start = t.len().saturating_sub(STDERR_IN_MESSAGE);
    let mut cut = start;
    while cut < t.len() && !t.is_char_boundary(cut) {
        cut += 1;
    }
    format!(
        "; stderr ends: '{}'",
        inert_line(t.get(cut..).unwrap_or(""))
    )
}

/// The last line of `stdout` that parses as a JSON object.
pub fn last_json_object(stdout: &str) -> Option<Value> {
    stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(Value::is_object)
}

impl Judge for CommandJudge {
    fn ask(&self, request: &JudgeRequest) -> Result<Value, JudgeError> {
        let stdin = serde_json::to_vec(request)
            .map_err(|e| JudgeError(format!("cannot write the judge's request: {e}")))?;
        let inv = GroupCommand {
            command: self.command.clone(),
            stdin,
            env: Vec::new(),
            timeout: self.timeout,
            max_stdout: MAX_STDOUT,
            stderr_tail: STDERR_TAIL,
        };
        let done = run_blocking(&inv).map_err(|e| {
            let why = match &e {
                GroupError::TimedOut { secs, .. } => {
                    format!("the judge command timed out after {secs:.1} s ([judge] timeout_s)")
                }
                other => format!("the judge command failed: {other}"),
            };
            JudgeError(format!("{why}{}", tail_note(e.stderr_tail())))
        })?;
        if done.code != Some(0) {
            let code = done.code.map_or_else(
                || "was killed by a signal".to_owned(),
                |c| format!("exited with status {c}"),
            );
            return Err(JudgeError(format!(
                "the judge command {code}{}",
                tail_note(&done.stderr_tail)
            )));
        }
        let text = String::from_utf8_lossy(&done.stdout);
        last_json_object(&text).ok_or_else(|| {
            JudgeError(format!(
                "no line of the judge's output is a JSON object{}",
                tail_note(&done.stderr_tail)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> JudgeRequest {
        JudgeRequest {
            run_id: "r1".to_owned(),
            task: None,
            final_answer: None,
            transcript: Vec::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn the_last_json_object_line_is_the_answer_and_stdin_holds_the_request() {
        let j = CommandJudge::new(
            r#"grep -q '"run_id":"r1"' && echo 'thinking...' && echo '{"step": "s1", "reason": "first"}' && echo '[1]' && echo '{"step": "s2", "reason": "second"}' && echo done"#,
            10.0,
        );
        let v = j.ask(&request()).unwrap();
        assert_eq!(v["step"], "s2");
    }

    #[test]
    fn failures_say_why() {
        let e = CommandJudge::new("echo nope >&2; exit 3", 10.0)
            .ask(&request())
            .unwrap_err();
        assert!(e.0.contains("exited with status 3"), "{e}");
        assert!(e.0.contains("nope"), "{e}");
        let e = CommandJudge::new("echo plain words", 10.0)
            .ask(&request())
            .unwrap_err();
        assert!(
            e.0.contains("no line of the judge's output is a JSON object"),
            "{e}"
        );
        let e = CommandJudge::new("sleep 5", 0.2)
            .ask(&request())
            .unwrap_err();
        assert!(e.0.contains("timed out"), "{e}");
    }
}
