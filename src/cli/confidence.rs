//! `confidence`: ranking confidence of scores, JSON in and out (influence.md §10). Reads no
//! config file; exit 0 on success, 2 for bad usage or input.

use super::args::ConfidenceArgs;
use super::toolbox::{array, confidence_options, kind, number, print_json, read_input, string};
use crate::analysis::influence::ranking_confidence;
use serde_json::Value;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ConfidenceArgs) -> anyhow::Result<ExitCode> {
    // Options first: bad options fail even when there are no scores.
    let opts = confidence_options(&args.strategy)?;
    let input = read_input(args.file.as_deref())?;
    let entries = array(&input, "scores", "")?;
    let mut scores: Vec<(&str, f64)> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let at = format!("scores[{i}].");
        let Value::Object(m) = e else {
            anyhow::bail!(
                "scores[{i}] must be an object {{\"id\", \"score\"}}, not {}",
                kind(e)
            );
        };
        let id = string(m, "id", &at)?;
        let score = m
            .get("score")
            .ok_or_else(|| anyhow::anyhow!("{at}score is missing"))?;
        scores.push((id, number(score, &format!("{at}score"))?));
    }
    print_json(&ranking_confidence(&scores, &opts))?;
    Ok(ExitCode::SUCCESS)
}
