//! The ledger's words in plain language (issue 26: a term is never shown without its meaning):
//! what an evidence level proves and what a disposition concludes, worded once for the screen, the
//! help and the command line. No I/O.

use super::record::{Disposition, EvidenceLevel};

impl EvidenceLevel {
    /// What the level proves, in plain words, to be shown beside its name.
    pub fn meaning(self) -> &'static str {
        match self {
            EvidenceLevel::CausalAblation => {
                "isolated: each pair of re-runs differed in this unit only"
            }
            EvidenceLevel::PairedShadow => {
                "not isolated: each pair of re-runs differed in more than this unit (units changed together, or a replay)"
            }
            EvidenceLevel::ComponentCorrelated => "a score, not a re-run: correlation, not a cause",
        }
    }
}

impl Disposition {
    /// What the disposition means, in plain words, to be shown beside its name.
    pub fn meaning(self) -> &'static str {
        match self {
            Disposition::Harmful => {
                "the outcome was good less often with the unit than without it (for a failed run: with it, the run stays on its recorded failure)"
            }
            Disposition::Retained => {
                "the outcome was good more often with the unit than without it (for a failed run: with it, the run moves off its recorded failure)"
            }
            Disposition::DemotionCandidate => {
                "nothing measured changed with or without it, and it costs many tokens"
            }
            Disposition::Uncertain => "nothing measured changed with or without it",
        }
    }
}
