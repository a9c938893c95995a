//! `tdn-tui RUN`: open the debugger (or render it headless).

use super::args::OpenArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &OpenArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
