//! Experiments: re-running the user's own agent through a shell command they configured, turning
//! the re-runs into verdicts, and keeping every sample in the attribution ledger. Uses tokio and
//! processes; the analysis layer knows nothing of it.

pub mod command_judge;
pub mod embedder;
pub mod process;
pub mod spec;
