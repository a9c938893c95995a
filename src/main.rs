//! The `tdn-tui` binary: parse arguments, run, turn the outcome into an exit status.

use clap::Parser;
use std::process::ExitCode;
use tdn_tui::cli::{self, args::Cli};

fn main() -> ExitCode {
    let args = Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("tdn-tui: {e:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}

/// A closed stdout (`tdn-tui analyze run.json | head -1`) ends the program quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
