//! Context influence (docs/influence.md): embedders, the four-signal, lexical and contrastive
//! scorers, ranking confidence, and dropped context. Scores here are similarity proxies, never
//! causes; only a re-run (`experiments`) proves one. Pure, synchronous code; a command embedder
//! is implemented in `experiments` behind the [`Embedder`] trait.

mod confidence;
mod cosine;
mod dropped;
mod evidence;
mod feature_counts;
mod from_run;
mod hashed;
mod json_text;
mod lexical;
mod mock;
pub mod num_text;
mod per_text;
mod prepared;
mod ring;
mod score;
mod scratch_pool;
mod section;
mod sparse;
mod token_cache;
mod types;
mod weights;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod from_run_paths_tests;
#[cfg(test)]
mod from_run_tests;
#[cfg(test)]
mod proptests;

pub use confidence::{
    ClearWinnerRule, ConfidenceError, ConfidenceRequest, DEFAULT_CLEAR_WINNER_MARGIN,
    DEFAULT_SHORTLIST_BAND, RankingSubject, non_negative, ranking_confidence,
    ranking_confidence_of, try_ranking_confidence,
};
pub use cosine::{
    BadCount, DEFAULT_PERSISTENCE_THRESHOLD, LengthMismatch, average_relevancy, cosine, depth,
    depth_of, persistence,
};
pub use dropped::{DroppedDiff, dropped_reason, find_dropped_context};
pub use evidence::MAX_ANCESTORS;
pub use from_run::{dropped_section, influence_section, influence_section_counted};
pub use hashed::{
    HASHED_DIM, HASHED_VERSION, HashedEmbedder, fnv1a64, hashed_tokens, hashed_vector,
};
pub use lexical::{LexicalEmbedder, STOP_WORDS, overlap, token_set, tokens};
pub use mock::{BUILTIN_EMBEDDERS, MOCK_DIM, MockEmbedder, builtin_embedder, mock_vector};
pub use score::{score_contrastive, score_influence, score_lexical};
pub use section::{DroppedEntry, DroppedSection, DroppedStep, InfluenceEntry, InfluenceSection};
pub use sparse::{SparseVector, cosine_sparse};
pub use types::{
    ConfidenceOptions, EmbedError, Embedder, EvidenceItem, InfluenceScore, RankingConfidence,
    ScoreError, ScoreRequest, Signals, Strategy, Weights,
};
pub use weights::{AdaptedWeights, WeightsError, adapt_weights, composite, validate_weights};
