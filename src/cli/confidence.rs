//! `confidence`: ranking confidence of scores, JSON in and out (influence.md §10).

use super::args::ConfidenceArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ConfidenceArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
