//! Experiments: re-running the user's own agent through a shell command they configured, turning
//! the re-runs into verdicts, and keeping every sample in the attribution ledger. Uses tokio and
//! processes; the analysis layer knows nothing of it.
//!
//! Entry points: [`setup::prepare`] (runner, flip judge, counts from the settings, after the
//! consent checks), [`setup::ledger_location`] and [`setup::open_ledger`] (the run's attribution
//! ledger behind the session's sink), [`target::probe_for`] and [`localize::plan_tiers`] (what to run),
//! [`session::start`] (run it, with [`session::TrialEvent`]s and cancellation),
//! [`summary::experiment_summary`] and [`localize::apply`] (what it found). [`verdict`] and
//! [`cost`] hold the rules of influence.md §7-8; [`sink::SampleSink`] is the ledger's seam.

pub mod command_embedder;
pub mod command_judge;
pub mod cost;
pub mod embedder;
pub mod flip;
pub mod headless;
pub mod ledger;
pub mod localize;
pub mod process;
pub mod run_ledger;
pub mod runner;
pub mod session;
pub mod setup;
pub mod sink;
pub mod spec;
pub mod summary;
pub mod target;
pub mod verdict;
