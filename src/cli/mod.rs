//! The command line: a thin layer that turns arguments into library calls and results into exit
//! codes (0 done, 1 a failure the command measured, 2 bad usage or unusable input). Each
//! subcommand has one file with one `run` function.

pub mod args;
mod common;

mod against;
mod analyze;
mod confidence;
mod diff;
mod dropped;
mod eval;
mod experiment;
pub mod heap;
mod import;
mod influence;
mod ledger;
mod localize;
mod open;
mod progress_bar;
mod runner;
mod toolbox;
mod validate;

pub use common::{EXIT_FAILURE, EXIT_USAGE};

use args::{Cli, Command};
use std::process::ExitCode;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => open::run(&cli.open),
        Some(Command::Validate(a)) => validate::run(&a),
        Some(Command::Analyze(a)) => analyze::run(&a),
        Some(Command::Import(a)) => import::run(&a),
        Some(Command::Eval(a)) => eval::run(&a),
        Some(Command::Diff(a)) => diff::run(&a),
        Some(Command::Experiment(a)) => experiment::run(&a),
        Some(Command::Localize(a)) => localize::run(&a),
        Some(Command::Ledger(a)) => ledger::run(&a),
        Some(Command::Confidence(a)) => confidence::run(&a),
        Some(Command::Influence(a)) => influence::run(&a),
        Some(Command::Dropped(a)) => dropped::run(&a),
        Some(Command::Runner(a)) => runner::run(&a),
    }
}
