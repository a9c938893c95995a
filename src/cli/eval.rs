//! `eval`: step and agent accuracy on labelled runs.

use super::args::EvalArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
