//! What several subcommands share: settings from flags, load options, the reference choice, the
//! outcome, and
//! writing to stdout so that a closed pipe ends the program quietly.

use super::args::{ConfigArgs, InputArgs, OutcomeArg, OutcomeArgs, ReferenceArgs};
use crate::analysis::import::SourceFormat;
use crate::analysis::load::{LoadOptions, Loaded};
use crate::analysis::model::{Run, RunStatus, StatusFrom};
use crate::analysis::report::ReferenceChoice;
use crate::config::{Overrides, Settings};
use anyhow::Context;
use std::io::Write;

/// Exit status for a failure the command measured (a failed verification, an embedder error).
pub const EXIT_FAILURE: u8 = 1;
/// Exit status for bad usage or unusable input.
pub const EXIT_USAGE: u8 = 2;

#[allow(dead_code, reason = "used by the subcommands as they are built")]
/// Resolves the settings for a subcommand; `tweak` adds its own flags. Config problems that
/// leave defaults in force are printed to stderr.
pub fn settings(
    config: &ConfigArgs,
    tweak: impl FnOnce(&mut Overrides),
) -> anyhow::Result<Settings> {
    let mut o = Overrides {
        config: config.config.clone(),
        yes: config.yes,
        ..Overrides::default()
    };
    tweak(&mut o);
    let s = Settings::resolve(&o)?;
    for w in &s.warnings {
        eprintln!("tdn-tui: warning: {w}");
    }
    Ok(s)
}

/// The loader's options from `--from` and `--index`.
pub fn load_options(input: &InputArgs) -> LoadOptions {
    LoadOptions {
        format: input.from.as_deref().and_then(SourceFormat::parse),
        index: input.index,
    }
}

#[allow(dead_code, reason = "used by the subcommands as they are built")]
/// The reference answer in force from `--reference`, `--reference-file`, `--no-reference`.
pub fn reference_choice(r: &ReferenceArgs) -> anyhow::Result<ReferenceChoice> {
    if r.no_reference {
        return Ok(ReferenceChoice::Ignore);
    }
    if let Some(t) = &r.reference {
        return Ok(ReferenceChoice::Given(t.clone()));
    }
    if let Some(p) = &r.reference_file {
        let t = std::fs::read_to_string(p)
            .with_context(|| format!("{}: cannot read the reference answer", p.display()))?;
        return Ok(ReferenceChoice::Given(t));
    }
    Ok(ReferenceChoice::FromRun)
}

/// Settles the run's outcome before it is analysed: `--outcome` replaces what the recording
/// says; else a run whose outcome nothing recorded succeeded when its final answer equals the
/// reference answer in force (docs/run-format.md, "Where the status came from").
pub fn settle_outcome(loaded: &mut Loaded, outcome: &OutcomeArgs, reference: &ReferenceChoice) {
    let run = &mut loaded.run;
    settle_run(run, outcome, reference);
    // The importer's warning that the outcome was assumed no longer holds.
    if run.status_from != StatusFrom::Assumed {
        loaded
            .warnings
            .retain(|w| !(w.file && w.field.as_deref() == Some("status")));
    }
}

fn settle_run(run: &mut Run, outcome: &OutcomeArgs, reference: &ReferenceChoice) {
    match outcome.outcome {
        Some(o) => run.give_outcome(outcome_status(o), "stated with --outcome"),
        None => {
            let r = match reference {
                ReferenceChoice::FromRun => run.reference_answer.clone(),
                ReferenceChoice::Ignore => None,
                ReferenceChoice::Given(t) => Some(t.clone()),
            };
            run.settle_by_reference(r.as_deref());
        }
    }
}

/// The status `--outcome` names.
pub fn outcome_status(o: OutcomeArg) -> RunStatus {
    match o {
        OutcomeArg::Failed => RunStatus::Failed,
        OutcomeArg::Succeeded => RunStatus::Succeeded,
    }
}

/// Leaves out a `cmd:` embedder found in a `tdn.toml` of the current folder when the user did
/// not pass `--yes` (docs/experiments.md, "Where the command comes from"): the default `hashed`
/// embedder is used instead, and the returned sentence says so and how to allow it.
pub fn embedder_consent(settings: &mut Settings) -> Option<String> {
    let cmd = settings.embedder.command()?;
    if !cmd.needs_consent() || settings.yes {
        return None;
    }
    let note = format!(
        "the embedder command '{}' from {} was not run, so the default hashed embedder is used; pass --yes to allow commands from a tdn.toml in the current folder",
        crate::analysis::model::inert_line(&cmd.text),
        cmd.origin_text()
    );
    settings.embedder = crate::config::EmbedderChoice::Hashed;
    Some(note)
}

/// Writes `text` to stdout. A closed pipe (`| head`) is not an error worth a message: the caller
/// gets `Ok(false)` and should stop.
pub fn write_stdout(text: &str) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}
