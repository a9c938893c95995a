//! Runners: one call re-runs the user's agent once (one sample) and returns its answer or why it
//! has none. [`shell::ShellRunner`] runs the user's configured command (docs/experiments.md);
//! [`fake::FakeRunner`] plays scripted outcomes for tests.
//!
//! A runner never decides flips or verdicts (that is `flip` and `verdict`), never writes the ledger
//! (that is the session's `SampleSink`), and never takes its command from a run file.

mod answer;
pub mod fake;
pub mod shell;

pub use crate::experiments::process::{Cancel, GroupCommand, GroupError, GroupOutput, run_group};
pub use answer::{MAX_STDOUT, STDERR_TAIL, parse_answer};

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
    /// Dollars (`usd`), as the agent reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
}

impl Cost {
    /// True when no member was reported.
    pub fn is_empty(&self) -> bool {
        self.loops.is_none() && self.tokens.is_none() && self.usd.is_none()
    }
}

/// What a sample, a probe or a job spent: the time the runner took (wall clock) and the tokens
/// and dollars the agent reported, summed over what reported them (`None` when nothing did).
/// Measured and summed by the session; the front ends only show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    /// Milliseconds.
    pub duration_ms: u64,
    /// Tokens reported.
    pub tokens: Option<f64>,
    /// Dollars reported.
    pub usd: Option<f64>,
}

impl Spent {
    /// One sample: its time and what it reported.
    pub fn sample(duration_ms: u64, cost: Option<&Cost>) -> Spent {
        Spent {
            duration_ms,
            tokens: cost.and_then(|c| c.tokens),
            usd: cost.and_then(|c| c.usd),
        }
    }

    /// In words: `1.2s, 1,806 tokens, $0.0045` (what was not reported is left out).
    pub fn words(&self) -> String {
        let mut parts = vec![crate::analysis::count::duration(self.duration_ms)];
        if let Some(t) = self.tokens {
            parts.push(format!(
                "{} tokens",
                crate::analysis::count::group(whole(t))
            ));
        }
        if let Some(u) = self.usd {
            parts.push(crate::analysis::count::dollars(u));
        }
        parts.join(", ")
    }

    /// Adds another's time and costs (a cost only one of them reported is kept).
    pub fn add(&mut self, other: &Spent) {
        let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        self.duration_ms = self.duration_ms.saturating_add(other.duration_ms);
        self.tokens = sum(self.tokens, other.tokens);
        self.usd = sum(self.usd, other.usd);
    }
}

/// A reported count as a whole number (rounded; negative and non-finite counts are 0).
fn whole(x: f64) -> usize {
    if x.is_finite() && x > 0.0 {
        // Saturates at usize::MAX for a count past it.
        format!("{:.0}", x).parse().unwrap_or(usize::MAX)
    } else {
        0
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
