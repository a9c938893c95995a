//! tdn-experiments: re-runs of the user's own agent through the command they configured, the
//! verdicts drawn from them and the attribution ledger ([`experiments`]), and the settings every
//! layer reads ([`config`]). Built on `tdn-core`, re-exported here as [`analysis`] so that paths
//! read the same in every crate. See `docs/architecture.md`.

pub use tdn_core::analysis;

pub mod config;
pub mod experiments;
