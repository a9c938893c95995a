//! `import`: convert a trace to tdn.run/1.

use super::args::ImportArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
