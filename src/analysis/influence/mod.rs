//! Context influence (docs/influence.md): embedders, the four-signal, lexical and contrastive
//! scorers, ranking confidence, and dropped context. Scores here are similarity proxies, never
//! causes; only a re-run (`experiments`) proves one. Pure, synchronous code; a command embedder
//! is implemented in `experiments` behind the [`Embedder`] trait.

mod confidence;
mod from_run;
mod types;

pub use confidence::ranking_confidence;
pub use from_run::{dropped_section, influence_section};
pub use types::{
    ConfidenceOptions, EmbedError, Embedder, RankingConfidence, Signals, Strategy, Weights,
};
