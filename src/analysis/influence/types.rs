//! The shared value types of the influence layer.

use serde::{Deserialize, Serialize};

/// The four signals of one scored piece of evidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    /// Resemblance to the final answer (contrastive: minus resemblance to the reference).
    pub fa: f64,
    /// Mean resemblance to the ancestors.
    pub avg: f64,
    /// Share of ancestors it resembles above the threshold.
    pub persist: f64,
    /// `1 / (1 + ancestors)`.
    pub depth: f64,
}

/// Weights of the four signals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Weight of FA.
    pub fa: f64,
    /// Weight of AVG.
    pub avg: f64,
    /// Weight of PERSIST.
    pub persist: f64,
    /// Weight of DEPTH.
    pub depth: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            fa: 0.4,
            avg: 0.3,
            persist: 0.2,
            depth: 0.1,
        }
    }
}

/// The rule that says whether the top of a ranking is clear.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strategy {
    /// Clear when `s0 - s1 >= t`.
    Margin(f64),
    /// Clear when `s0 != 0` and `(s0 - s1) / |s0| >= t`.
    Ratio(f64),
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy::Margin(0.05)
    }
}

/// How `ranking_confidence` is asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfidenceOptions {
    /// The clear-winner rule.
    pub strategy: Strategy,
    /// The shortlist band.
    pub band: f64,
}

impl Default for ConfidenceOptions {
    fn default() -> Self {
        ConfidenceOptions {
            strategy: Strategy::default(),
            band: 0.1,
        }
    }
}

/// `{clear_winner, margin, lead, shortlist, strategy, reason}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankingConfidence {
    /// The top clearly leads under the strategy.
    pub clear_winner: bool,
    /// Top minus runner-up, when both are finite.
    pub margin: Option<f64>,
    /// The top id.
    pub lead: Option<String>,
    /// What to re-run.
    pub shortlist: Vec<String>,
    /// The strategy's name, e.g. `margin>=0.05`.
    pub strategy: String,
    /// A sentence for people; never parse it.
    pub reason: String,
}

/// Why an embedder gave no vectors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// Turns a batch of texts into vectors of one length.
pub trait Embedder: Send + Sync {
    /// `mock`, `lexical`, `hashed` or `cmd`.
    fn name(&self) -> &str;
    /// One vector per text, in order, all the same length.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError>;
}
