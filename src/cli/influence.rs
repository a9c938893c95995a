//! `influence`: score evidence against an answer, JSON in and out (influence.md §10).

use super::args::InfluenceArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &InfluenceArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
