//! `--report`: the analysis the screen shows, read from a file instead of computed, one report or
//! one per line (as `analyze --json` prints for a file of several runs), each checked against the
//! run it is for. Reads the file; prints nothing.

use crate::analysis::load::Loaded;
use crate::analysis::report::Report;
use anyhow::{Context, bail};
use std::path::Path;

/// Reads `--report`: one report, or one per line (as `analyze --json` prints for several runs),
/// each checked against its run.
pub fn read_reports(p: &Path, runs: &[Loaded]) -> anyhow::Result<Vec<Report>> {
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("{}: cannot read the report", p.display()))?;
    let reports: Vec<Report> = match serde_json::from_str::<Report>(&text) {
        Ok(r) => vec![r],
        Err(whole) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(n, l)| {
                serde_json::from_str(l).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: line {}: not a tdn.report/1 report ({e}; as one document: {whole})",
                        p.display(),
                        n + 1
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if reports.len() != runs.len() {
        bail!(
            "{}: holds {} reports for {} runs; give the report 'tdn-tui analyze --json' printed for this file",
            p.display(),
            reports.len(),
            runs.len()
        );
    }
    for (r, l) in reports.iter().zip(runs) {
        if r.run.id != l.run.id || r.run.steps != l.run.steps.len() {
            bail!(
                "{}: the report is for run '{}' with {} steps, but the file holds run '{}' with {}; give the matching report",
                p.display(),
                r.run.id,
                r.run.steps,
                l.run.id,
                l.run.steps.len()
            );
        }
    }
    Ok(reports)
}
