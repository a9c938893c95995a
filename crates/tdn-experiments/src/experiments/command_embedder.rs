//! The `cmd:COMMAND` embedder (influence.md §1): the user's own program turns texts into vectors,
//! so a real semantic model can be plugged in. Once per batch it runs under `sh -c` in its own
//! process group, gets `{"texts": [...]}` on stdin and must print `{"vectors": [[...], ...]}`.
//!
//! Every failure (start, exit status, time-out, unparsable output, wrong count, uneven lengths,
//! non-finite numbers) is an [`EmbedError`] that names the command and shows the tail of its
//! stderr; nothing here panics or prints. The command comes only from the user's command line or
//! config, never from a run file, and nothing is substituted into it.

use super::process::{self, GroupCommand, GroupError};
use crate::analysis::influence::{EmbedError, Embedder};
use crate::analysis::model::inert_line;
use serde_json::Value;
use std::time::Duration;

/// `[embedder] timeout_s` when nothing sets it.
pub const DEFAULT_EMBEDDER_TIMEOUT_S: f64 = 60.0;
/// Most bytes of stdout read from one call (a batch of thousands of 1,024-number vectors fits).
const MAX_STDOUT_BYTES: usize = 256 << 20;
/// Bytes of stderr kept for the error message.
const STDERR_TAIL_BYTES: usize = 2000;
/// Characters of the command shown in messages.
const SHOWN_COMMAND_CHARS: usize = 120;

/// An embedder that runs a shell command once per batch.
#[derive(Clone, Debug)]
pub struct CommandEmbedder {
    command: String,
    timeout: Duration,
}

impl CommandEmbedder {
    /// An embedder running `command` with a time-out in seconds (a non-positive or non-finite
    /// value means the default, 60 s).
    pub fn new(command: impl Into<String>, timeout_s: f64) -> Self {
        let secs = if timeout_s.is_finite() && timeout_s > 0.0 {
            timeout_s
        } else {
            DEFAULT_EMBEDDER_TIMEOUT_S
        };
        CommandEmbedder {
            command: command.into(),
            timeout: Duration::from_secs_f64(secs.min(u32::MAX.into())),
        }
    }

    /// The command as given.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn error(&self, what: &str, stderr_tail: &str) -> EmbedError {
        let shown: String = self.command.chars().take(SHOWN_COMMAND_CHARS).collect();
        let more = if self.command.chars().count() > SHOWN_COMMAND_CHARS {
            "..."
        } else {
            ""
        };
        let mut msg = format!("the embedder command '{}{more}' {what}", inert_line(&shown));
        let tail = stderr_tail.trim();
        if tail.is_empty() {
            msg.push_str("; it wrote nothing on stderr");
        } else {
            msg.push_str("; the end of its stderr:\n");
            msg.push_str(&crate::analysis::model::inert_block(tail));
        }
        EmbedError(msg)
    }
}

impl Embedder for CommandEmbedder {
    fn name(&self) -> &str {
        "cmd"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let stdin = serde_json::to_vec(&serde_json::json!({ "texts": texts }))
            .map_err(|e| EmbedError(format!("cannot write the embedder's input: {e}")))?;
        let finished = process::run_blocking(&GroupCommand {
            command: self.command.clone(),
            stdin,
            env: Vec::new(),
            timeout: self.timeout,
            max_stdout: MAX_STDOUT_BYTES,
            stderr_tail: STDERR_TAIL_BYTES,
        })
        .map_err(|e| match &e {
            GroupError::TimedOut { .. } => self.error(
                &format!("{e}; raise [embedder] timeout_s if the model needs longer"),
                e.stderr_tail(),
            ),
            _ => self.error(&e.to_string(), e.stderr_tail()),
        })?;
        match finished.code {
            Some(0) => {}
            Some(code) => {
                return Err(
                    self.error(&format!("exited with status {code}"), &finished.stderr_tail)
                );
            }
            None => return Err(self.error("was killed by a signal", &finished.stderr_tail)),
        }
        parse_vectors(&finished.stdout, texts.len())
            .map_err(|what| self.error(&what, &finished.stderr_tail))
    }
}

/// Reads `{"vectors": [[...], ...]}`: one vector per text, one length, finite numbers. The whole
/// output must be that object, or else its last non-empty line (so a model library's progress
/// lines on stdout do no harm).
fn parse_vectors(stdout: &[u8], expected: usize) -> Result<Vec<Vec<f64>>, String> {
    let text = String::from_utf8_lossy(stdout);
    let value: Value = serde_json::from_str(&text)
        .or_else(|first| {
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .ok_or(first)
                .and_then(serde_json::from_str)
        })
        .map_err(|e| {
            if text.contains("NaN") || text.contains("Infinity") {
                format!("printed a non-finite number (NaN or Infinity), which JSON cannot hold: {e}")
            } else if text.trim().is_empty() {
                "printed nothing on stdout; it must print {\"vectors\": [[...], ...]}".to_owned()
            } else {
                format!("printed output that is not JSON ({e}); it must print {{\"vectors\": [[...], ...]}}")
            }
        })?;
    let list = value.get("vectors").and_then(Value::as_array).ok_or(
        "printed JSON without a \"vectors\" array; it must print {\"vectors\": [[...], ...]}",
    )?;
    if list.len() != expected {
        return Err(format!(
            "returned {} vectors for {expected} texts; it must return one per text, in order",
            list.len()
        ));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let numbers = v
            .as_array()
            .ok_or_else(|| format!("returned vector {i} that is not an array of numbers"))?;
        let mut vector = Vec::with_capacity(numbers.len());
        for (j, x) in numbers.iter().enumerate() {
            match x.as_f64() {
                Some(f) if f.is_finite() => vector.push(f),
                _ => {
                    return Err(format!(
                        "returned element {j} of vector {i} that is not a finite number ('{}')",
                        inert_line(&x.to_string())
                    ));
                }
            }
        }
        if let Some(first) = out.first().map(Vec::len)
            && first != vector.len()
        {
            return Err(format!(
                "returned vectors of different lengths ({first} for text 0, {} for text {i})",
                vector.len()
            ));
        }
        out.push(vector);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedder(script: &str) -> CommandEmbedder {
        CommandEmbedder::new(script, 10.0)
    }

    #[test]
    fn a_well_behaved_command_answers_one_vector_per_text() {
        // Vector = [number of texts, 1]: proves the texts arrived as one JSON batch.
        let e = embedder(
            r#"python3 -c 'import json,sys; t=json.load(sys.stdin)["texts"]; print(json.dumps({"vectors": [[len(t), 1.5] for _ in t]}))'"#,
        );
        let v = e.embed(&["a", "b", "c"]).unwrap();
        assert_eq!(v, vec![vec![3.0, 1.5]; 3]);
        assert_eq!(e.embed(&[]).unwrap(), Vec::<Vec<f64>>::new());
    }

    #[test]
    fn every_failure_names_the_command_and_shows_stderr() {
        let cases = [
            ("echo broken model >&2; exit 3", "status 3"),
            ("echo 'not json'; echo why >&2", "not JSON"),
            (r#"echo '{"vectors": [[1]]}'"#, "1 vectors for 2 texts"),
            (r#"echo '{"vectors": [[1, 2], [1]]}'"#, "different lengths"),
            (r#"echo '{"vectors": [[NaN], [1]]}'"#, "non-finite"),
            (r#"echo '{"vectors": [["1"], [1]]}'"#, "not a finite number"),
            (r#"echo '{"vecs": []}'"#, "\"vectors\""),
            ("true", "printed nothing"),
        ];
        for (script, what) in cases {
            let err = embedder(script).embed(&["x", "y"]).unwrap_err().0;
            assert!(err.contains(what), "{script}: {err}");
            assert!(
                err.contains(script.chars().take(20).collect::<String>().as_str()),
                "{err}"
            );
        }
        let err = embedder("echo broken model >&2; exit 3")
            .embed(&["x"])
            .unwrap_err()
            .0;
        assert!(err.contains("broken model"), "{err}");
    }

    #[test]
    fn a_slow_command_is_killed_at_the_time_out() {
        let e = CommandEmbedder::new("echo loading >&2; sleep 30", 0.3);
        let err = e.embed(&["x"]).unwrap_err().0;
        assert!(
            err.contains("timed out") && err.contains("timeout_s"),
            "{err}"
        );
        assert!(err.contains("loading"), "{err}");
    }

    #[test]
    fn progress_lines_before_the_answer_are_tolerated() {
        let e = embedder(r#"echo 'Loading model...'; echo '{"vectors": [[0.5, 0.5]]}'"#);
        assert_eq!(e.embed(&["x"]).unwrap(), vec![vec![0.5, 0.5]]);
    }
}
