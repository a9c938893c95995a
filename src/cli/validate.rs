//! `validate`: load a run and print one line per warning; exit 0 when it loads, 2 when it does not.

use super::args::ValidateArgs;
use super::common::{load_options, write_stdout};
use crate::analysis::load;
use crate::analysis::model::inert_line;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let runs = load::load_path(&args.run, &load_options(&args.input))?;
    let many = runs.len() > 1;
    let mut out = String::new();
    for (i, loaded) in runs.iter().enumerate() {
        let prefix = if many {
            format!("run {i}: ")
        } else {
            String::new()
        };
        for w in &loaded.warnings {
            out.push_str(&format!(
                "{}: {prefix}warning: {}\n",
                inert_line(&args.run.display().to_string()),
                inert_line(&w.message)
            ));
        }
    }
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}
