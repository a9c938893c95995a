//! `experiment`: one probe through the user's runner.

use super::args::ExperimentArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
