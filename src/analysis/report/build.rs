//! Building a [`Report`] from a loaded run: detectors, links, walk back, ranking, fault, claims,
//! influence, dropped context and the optional judge, in that order.

use super::{Fault, Party, REPORT_FORMAT, Report, RunSummary};
use crate::analysis::influence::{ConfidenceOptions, Embedder, RankingConfidence};
use crate::analysis::load::Loaded;

/// Which reference answer is in force.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ReferenceChoice {
    /// The run's own `reference_answer`, if any.
    #[default]
    FromRun,
    /// None (`--no-reference`).
    Ignore,
    /// This text (`--reference`, `--reference-file`).
    Given(String),
}

/// Everything `analyze` needs besides the run.
pub struct AnalyzeOptions<'a> {
    /// The reference answer in force.
    pub reference: ReferenceChoice,
    /// The embedder for the influence ranking.
    pub embedder: &'a dyn Embedder,
    /// How both rankings' confidence is judged.
    pub confidence: ConfidenceOptions,
}

/// Analyses one run.
pub fn analyze(loaded: &Loaded, opts: &AnalyzeOptions<'_>) -> Report {
    let _ = (opts.embedder, &opts.reference);
    let run = &loaded.run;
    Report {
        format: REPORT_FORMAT.to_owned(),
        run: RunSummary {
            id: run.id.clone(),
            status: run.status,
            steps: run.steps.len(),
            source_format: loaded.source_format.name().to_owned(),
            warnings: loaded.warnings.clone(),
        },
        verdict: None,
        fault: Fault {
            party: Party::None,
            why: String::new(),
        },
        suspects: Vec::new(),
        confidence: RankingConfidence {
            clear_winner: false,
            margin: None,
            lead: None,
            shortlist: Vec::new(),
            strategy: String::new(),
            reason: String::new(),
        },
        links: Vec::new(),
        claims: Vec::new(),
        influence: None,
        dropped: None,
        judge: None,
        experiments: None,
    }
}
