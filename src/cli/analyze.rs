//! `analyze`: the diagnosis as text or as the JSON report.

use super::args::AnalyzeArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
