//! Experiments: re-running the user's own agent through a shell command they configured, turning
//! the re-runs into verdicts, and keeping every sample in the attribution ledger. Uses tokio and
//! processes; the analysis layer knows nothing of it.

pub mod cost;
pub mod embedder;
pub mod flip;
pub mod process;
pub mod runner;
pub mod session;
pub mod sink;
pub mod spec;
pub mod verdict;
