//! `runner chat`: the built-in runner that re-sends the run's recorded model call to an
//! OpenAI-compatible chat endpoint (`experiments::chat`). It is run by tdn-tui as any runner
//! command is: the experiment on stdin (or in `$TDN_SPEC_FILE`), the answer as one JSON line on
//! stdout, what it changed and any error on stderr (one line each; the key never appears).
//! Exit 0 with an answer, 1 when the endpoint failed, 2 when nothing could be sent.

use super::args::{BuiltInRunnerArgs, RunnerKind};
use super::common::{EXIT_FAILURE, EXIT_USAGE};
use crate::analysis::model::inert_line;
use crate::experiments::chat::{self, ChatError, ChatSettings, recorded::Recorded};
use crate::experiments::runner::shell::SPEC_FILE_VAR;
use crate::experiments::spec::ExperimentSpec;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &BuiltInRunnerArgs) -> anyhow::Result<ExitCode> {
    match args.kind {
        RunnerKind::Chat => Ok(chat_main()),
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "tdn-tui runner chat: {line}");
}

fn chat_main() -> ExitCode {
    match chat_sample() {
        Ok(line) => {
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                return ExitCode::from(EXIT_FAILURE);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            say(&e.to_string());
            ExitCode::from(match e {
                ChatError::Setup(_) => EXIT_USAGE,
                ChatError::Endpoint(_) => EXIT_FAILURE,
            })
        }
    }
}

/// The experiment: stdin, unless it is a terminal or empty, then `$TDN_SPEC_FILE`.
fn read_spec() -> Result<ExperimentSpec, ChatError> {
    let mut text = Vec::new();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let _ = stdin.lock().read_to_end(&mut text);
    }
    if text.iter().all(u8::is_ascii_whitespace)
        && let Some(path) = std::env::var_os(SPEC_FILE_VAR)
    {
        text = std::fs::read(&path).map_err(|e| {
            ChatError::Setup(format!(
                "cannot read ${SPEC_FILE_VAR} '{}': {e}",
                inert_line(&path.to_string_lossy())
            ))
        })?;
    }
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(ChatError::Setup(format!(
            "no experiment: tdn-tui gives it on stdin and in ${SPEC_FILE_VAR}; use this runner through tdn-tui (--runner \"tdn-tui runner chat\")"
        )));
    }
    serde_json::from_slice(&text).map_err(|e| {
        ChatError::Setup(format!(
            "the experiment is not the runner protocol's JSON object: {e}"
        ))
    })
}

fn chat_sample() -> Result<String, ChatError> {
    let spec = read_spec()?;
    let rec = Recorded::read(std::path::Path::new(&spec.run))?;
    // What the run allows is checked before the endpoint settings: a run with nothing to
    // replay is said as such, whatever the environment.
    chat::prepare(&rec, &spec)?;
    let settings = ChatSettings::from_vars(|k| std::env::var(k).ok())?;
    let answer = chat::run_sample(&rec, &spec, &settings)?;
    for n in &answer.notes {
        say(n);
    }
    Ok(chat::answer_line(&answer))
}
