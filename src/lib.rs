//! tdn-tui: a terminal debugger for AI-agent runs.
//!
//! Four layers, each using only those before it: [`analysis`] (synchronous and pure: the run,
//! detectors, ranking, claims, influence, the report), [`experiments`] (re-runs through the user's
//! command, verdicts, the attribution ledger), [`tui`] (the screen) and [`cli`] (the command line).
//! [`config`] resolves settings once for all of them.

pub use tdn_core::analysis;
pub mod cli;
pub use tdn_experiments::config;
pub use tdn_experiments::experiments;
pub mod tui;
