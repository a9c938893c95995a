//! `dropped`: available-but-unsent context, JSON in and out (influence.md §10).

use super::args::DroppedArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &DroppedArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
