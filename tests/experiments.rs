//! Experiments with real processes: the `experiment` and `localize` commands (exit codes, JSON
//! shape, consent), runners that flip, flake, hang, crash, print garbage, non-UTF-8 or too much,
//! samples in parallel, and cancellation with no process left behind, whatever signal ends the
//! debugger.
//!
//! Stand-in agents are small scripts written into a temporary folder per test (the run they answer
//! about is tests/fixtures/experiments/refund-outdated-policy.json), or the stand-ins of
//! sample-runs/ in a copy of that folder; every ledger they write stays in the temporary folder.
//! Also: the ledger after a crash, samples that cannot be saved, and the built-in chat runner
//! against a stand-in endpoint on 127.0.0.1.

#[path = "experiments/support.rs"]
mod support;

#[path = "experiments/chat.rs"]
mod chat;
#[path = "experiments/cli.rs"]
mod cli;
#[path = "experiments/durability.rs"]
mod durability;
#[path = "experiments/processes.rs"]
mod processes;
#[path = "experiments/sample_agents.rs"]
mod sample_agents;
#[path = "experiments/screen.rs"]
mod screen;
#[path = "experiments/sessions.rs"]
mod sessions;
#[path = "experiments/signals.rs"]
mod signals;
