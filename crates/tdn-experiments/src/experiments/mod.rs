//! Experiments: re-running the user's own agent through a shell command they configured, turning
//! the re-runs into verdicts, and keeping every sample in the attribution ledger. Uses tokio and
//! processes; the analysis layer knows nothing of it.
//!
//! The front door is [`engine`]: an [`engine::Engine`] built once from the settings plans a
//! request about a run ([`engine::Request`] → [`engine::Plan`] of [`intervention::Intervention`]s),
//! runs it through the user's runner as a [`session`], writes every sample to the run's attribution
//! [`ledger`], and reports one event type ([`event::Event`]) that the command line and the screen
//! both consume. [`verdict`] and [`cost`] hold the rules of influence.md §7-8;
//! [`sink::SampleSink`] is the ledger's seam; [`process`] runs commands so that nothing they start
//! outlives the debugger.

pub mod chat;
pub mod command_embedder;
pub mod command_judge;
pub mod cost;
pub mod embedder;
pub mod engine;
pub mod event;
pub mod flip;
pub mod intervention;
pub mod ledger;
pub mod localize;
pub mod process;
pub mod run_ledger;
pub mod runner;
pub mod session;
pub mod sink;
pub mod spec;
pub mod summary;
pub mod verdict;
