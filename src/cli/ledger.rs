//! `ledger show|verify|plan|select`.

use super::args::LedgerArgs;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &LedgerArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("this command is not built yet")
}
