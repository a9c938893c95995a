//! Runners: one call re-runs the user's agent once (one sample) and returns its answer or why it
//! has none. [`shell::ShellRunner`] runs the user's configured command (docs/experiments.md);
//! [`fake::FakeRunner`] plays scripted outcomes for tests.
//!
//! A runner never decides flips or verdicts (that is `flip` and `verdict`), never writes the ledger
//! (that is the session's `SampleSink`), and never takes its command from a run file.

mod answer;
mod cancel;
pub mod fake;
mod group;
pub mod shell;

pub use answer::{MAX_STDOUT, STDERR_TAIL, parse_answer};
pub use cancel::Cancel;
pub use group::{GroupCommand, GroupError, GroupOutput, run_group};

use crate::experiments::spec::ExperimentSpec;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// What one run of the agent cost, as it reported it. Members that were missing or not
/// non-negative numbers are `None` ("not reported").
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Agent loops (model calls, turns: the agent's own unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<f64>,
    /// Tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<f64>,
}

impl Cost {
    /// True when neither member was reported.
    pub fn is_empty(&self) -> bool {
        self.loops.is_none() && self.tokens.is_none()
    }
}

/// A sample that produced an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The agent's final answer for this sample.
    pub output: String,
    /// What it cost, when reported.
    pub cost: Cost,
    /// The recorded model call whose output this is, when the runner re-sent one call alone
    /// instead of re-running the agent (`replayed_call`, a step id).
    pub replayed_call: Option<String>,
}

/// Why a sample has no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleErrorKind {
    /// The command could not be started.
    Spawn,
    /// It exited non-zero or was killed by a signal.
    Exit,
    /// It ran past the time-out; its process group was killed.
    TimedOut,
    /// It printed more than [`MAX_STDOUT`] on stdout; its process group was killed.
    TooMuchOutput,
    /// It finished, but its answer could not be read.
    Unreadable,
    /// The flip rule could not judge the answer (embedder or `cmd:` rule failed).
    Judge,
    /// The session was cancelled while it ran; its process group was killed.
    Cancelled,
}

/// A sample that errored: never a flip, never a similarity (influence.md §7).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleError {
    /// What went wrong, by kind.
    pub kind: SampleErrorKind,
    /// One sentence for the user: what, and what to check.
    pub message: String,
    /// The last bytes of its stderr (lossy UTF-8; untrusted text, print through `inert_line` or `inert_block`).
    pub stderr_tail: String,
}

/// The result of one runner call.
pub type SampleRun = Result<Answer, SampleError>;

/// Re-runs the agent once per call. Implementations must stop (and leave no process behind) when
/// `cancel` fires or the returned future is dropped.
pub trait Runner: Send + Sync {
    /// The command as the user wrote it, for messages and the ledger.
    fn command(&self) -> &str;
    /// Runs one sample of `spec`.
    fn run<'a>(&'a self, spec: &'a ExperimentSpec, cancel: &'a Cancel) -> BoxFuture<'a, SampleRun>;
}
