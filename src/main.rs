//! The `tdn-tui` binary: parse arguments, run, turn the outcome into an exit status.

use clap::Parser;
use std::process::ExitCode;
use tdn_tui::cli::{self, args::Cli};
use tdn_tui::experiments::process::supervise;

/// mimalloc, tuned by `cli::heap::tune_allocator` (docs/performance.md, "The ninth round").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Started as the supervisor of a user command (process::supervise): nothing else runs.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == supervise::SUPERVISE_ARG) {
        let code = supervise::main(argv.get(2..).unwrap_or_default());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Every command this process starts runs under a supervisor that stops it if we die.
    if let Some(me) = supervise::this_program() {
        supervise::install(me);
    }
    cli::heap::tune_allocator();
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
