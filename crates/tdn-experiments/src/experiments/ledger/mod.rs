//! The attribution ledger (attribution-ledger.md): an append-only JSON-lines file per run or
//! scenario holding every finished runner sample, the matched with/without trials formed from
//! them, and the per-unit attributions aggregated from trials; each line canonical JSON, chained
//! to the one above by hash, so `ledger verify` can recompute every conclusion.
//!
//! The pieces, by concern: [`canonical`] and [`digest`] (§2), [`bundle`] (§3), [`record`] and
//! [`parse`] (the line types), [`attribute`] (§5), [`file`] and [`store`] (§7: reading, locking,
//! appending), [`session`] (samples in, trials and attributions out, for the runner), [`pair`]
//! (which trials a pair of samples forms), [`migrate`] (schema 1),
//! [`verify`] (§6), [`plan`] (§8), [`select`] (§9), [`history`] (what the screen shows of a run),
//! [`naming`] (ids, epochs, file location).
//!
//! The runner's entry points are [`Ledger::open`], [`Ledger::append_sample`] and
//! [`Ledger::close_cohort`] (the session reaches them through `SampleSink`, as
//! `experiments::run_ledger::RunLedger`); all block on file I/O and belong in `spawn_blocking`.

pub mod attribute;
pub mod bundle;
pub mod canonical;
pub mod digest;
mod error;
pub mod file;
pub mod history;
mod meaning;
pub mod migrate;
pub mod naming;
pub mod output;
pub mod pair;
#[cfg(test)]
mod parity;
pub mod parse;
pub mod plan;
pub mod record;
pub mod select;
pub mod session;
pub mod spent;
pub mod store;
#[cfg(test)]
mod testutil;
pub mod verify;

pub use attribute::{Aggregation, Rejection, RejectionCode, attribute, round6, trial_effect};
pub use bundle::{Baseline, BaselineSource, Bundle, Entry, baseline_of};
pub use error::LedgerError;
pub use history::{Evidence, HistoryTrial, LatestAttribution, OpenCohort, evidence, open_cohorts};
pub use naming::{Location, default_path, evaluator_epoch, locate, new_cohort, new_sample_id};
pub use pair::{Refusal, RefusalCode};
pub use record::{Cost, Disposition, EvidenceLevel, Policy, Scope, TrialExperiment};
pub use session::{
    Appended, Cancelled, Closed, ClosedAttribution, NewSample, NewTrial, SampleOutcome,
};
pub use store::Ledger;
pub use verify::{Checked, Status, verify_path};
