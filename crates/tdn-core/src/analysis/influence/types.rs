//! The shared value types of the influence layer.

use super::sparse::SparseVector;
use serde::{Deserialize, Serialize};

/// The four signals of one scored piece of evidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    /// Resemblance to the final answer (contrastive: minus resemblance to the reference).
    #[serde(with = "super::num_text")]
    pub fa: f64,
    /// Mean resemblance to the ancestors.
    #[serde(with = "super::num_text")]
    pub avg: f64,
    /// Share of ancestors it resembles above the threshold.
    #[serde(with = "super::num_text")]
    pub persist: f64,
    /// `1 / (1 + ancestors)`.
    #[serde(with = "super::num_text")]
    pub depth: f64,
}

/// Weights of the four signals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Weight of FA.
    #[serde(with = "super::num_text")]
    pub fa: f64,
    /// Weight of AVG.
    #[serde(with = "super::num_text")]
    pub avg: f64,
    /// Weight of PERSIST.
    #[serde(with = "super::num_text")]
    pub persist: f64,
    /// Weight of DEPTH.
    #[serde(with = "super::num_text")]
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
    #[serde(default, with = "super::num_text::option")]
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

    /// True when a text's vector depends on that text alone, never on the other texts of the
    /// call: vectors from different calls can then be compared, and a text a run repeats is
    /// embedded once for the whole ranking. The default, false, embeds each chunk of evidence
    /// with its own texts in one call.
    fn per_text(&self) -> bool {
        false
    }

    /// True when a call may be cut into parts made at once on several threads, the parts'
    /// vectors being those the whole call gives (an in-process embedder whose vector depends on
    /// its text alone). The default, false, makes every call whole, on the caller's thread (a
    /// command is never run twice at once).
    fn parallel(&self) -> bool {
        false
    }

    /// True when vectors are comparable only with vectors of the same call (say, indicators over
    /// a vocabulary built from the call's texts). The ranking then embeds each chunk's texts,
    /// answer and reference included, in one call and never keeps a vector from one call for
    /// the next. The default, false, lets a text the previous chunk embedded keep its vector.
    fn per_call(&self) -> bool {
        false
    }

    /// The same vectors kept by their non-zero entries. The default asks [`Embedder::embed`];
    /// an embedder whose vectors are mostly zeros builds them directly (no dense copy).
    fn embed_sparse(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        Ok(self
            .embed(texts)?
            .iter()
            .map(|v| SparseVector::from_dense(v))
            .collect())
    }
}

/// One piece of evidence to score: its id, its text, and the texts of the model's reasoning
/// steps between it and the answer (influence.md §2).
#[derive(Clone, Debug, PartialEq)]
pub struct EvidenceItem<'a> {
    /// Unique among the items of one request.
    pub id: &'a str,
    /// The evidence text.
    pub text: &'a str,
    /// The ancestors' texts, in order.
    pub ancestors: Vec<&'a str>,
}

/// What a scorer is asked: an answer, the evidence, the weights and the persistence threshold.
#[derive(Clone, Debug)]
pub struct ScoreRequest<'a> {
    /// The answer every item is compared with.
    pub answer: &'a str,
    /// The items, in input order (which decides ties).
    pub evidence: &'a [EvidenceItem<'a>],
    /// The signal weights (default 0.4/0.3/0.2/0.1).
    pub weights: Weights,
    /// PERSIST counts ancestors with similarity strictly above this (default 0.3; any number).
    pub persistence_threshold: f64,
}

impl<'a> ScoreRequest<'a> {
    /// A request with the default weights and threshold.
    pub fn new(answer: &'a str, evidence: &'a [EvidenceItem<'a>]) -> Self {
        ScoreRequest {
            answer,
            evidence,
            weights: Weights::default(),
            persistence_threshold: super::cosine::DEFAULT_PERSISTENCE_THRESHOLD,
        }
    }
}

/// One scored item: `{id, score, signals, weights, adapted}`. The score is a similarity proxy,
/// not a probability and not a cause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InfluenceScore {
    /// The item's id.
    pub id: String,
    /// The composite.
    #[serde(with = "super::num_text")]
    pub score: f64,
    /// The four signals.
    pub signals: Signals,
    /// The weights in effect for this item.
    pub weights: Weights,
    /// True when AVG and PERSIST weight moved to FA and DEPTH for lack of ancestors.
    pub adapted: bool,
}

/// Why a scorer produced no ranking.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScoreError {
    /// The weights failed validation (the message names the weight).
    #[error(transparent)]
    Weights(#[from] super::weights::WeightsError),
    /// Two items share an id.
    #[error(
        "the evidence id '{}' appears more than once; give every item its own id",
        crate::analysis::model::inert_line(.0)
    )]
    DuplicateId(String),
    /// The embedder failed or answered nonsense.
    #[error(transparent)]
    Embed(#[from] EmbedError),
}
