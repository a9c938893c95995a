//! Ranking confidence (influence.md §5): is the top of a ranking clear, or too close to call?

use super::types::{ConfidenceOptions, RankingConfidence};

/// The confidence of a ranking given as `(id, score)` pairs in any order.
pub fn ranking_confidence(scores: &[(&str, f64)], opts: &ConfidenceOptions) -> RankingConfidence {
    let _ = (scores, opts);
    RankingConfidence {
        clear_winner: false,
        margin: None,
        lead: None,
        shortlist: Vec::new(),
        strategy: String::new(),
        reason: "not computed yet".to_owned(),
    }
}
