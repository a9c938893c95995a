//! `localize`: rank, baseline, ablate, restore, cost verdicts.

use super::args::LocalizeArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &LocalizeArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
