//! `validate`: load a run and print one line per warning; exit 0 when it loads, 2 when it does not.
//! A warning about the whole file (its format, values that hold no run) is printed once, before
//! the warnings of each run, however many runs the file holds.

use super::args::ValidateArgs;
use super::common::{load_options, write_stdout};
use crate::analysis::load;
use crate::analysis::model::inert_line;
use std::collections::HashSet;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let runs = load::load_path(&args.run, &load_options(&args.input))?;
    let many = runs.len() > 1;
    let path = inert_line(&args.run.display().to_string()).into_owned();
    let mut out = String::new();
    let mut said: HashSet<&str> = HashSet::new();
    for w in runs.iter().flat_map(|l| &l.warnings).filter(|w| w.file) {
        if said.insert(w.message.as_str()) {
            out.push_str(&format!("{path}: warning: {}\n", inert_line(&w.message)));
        }
    }
    for (i, loaded) in runs.iter().enumerate() {
        let prefix = if many {
            format!("run {i}: ")
        } else {
            String::new()
        };
        for w in loaded.warnings.iter().filter(|w| !w.file) {
            out.push_str(&format!(
                "{path}: {prefix}warning: {}\n",
                inert_line(&w.message)
            ));
        }
    }
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}
