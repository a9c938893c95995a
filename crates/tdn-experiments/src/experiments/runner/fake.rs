//! A runner that plays scripted outcomes, for tests of verdicts and sessions without processes.
//! It never starts a process.

use super::{Answer, Cancel, Cost, Runner, SampleError, SampleErrorKind, SampleRun};
use crate::experiments::spec::ExperimentSpec;
use futures_util::future::BoxFuture;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the script says one sample gives.
#[derive(Clone, Debug, PartialEq)]
pub enum FakeOutcome {
    /// An answer with its cost.
    Answer(String, Cost),
    /// An errored sample with this message.
    Error(String),
    /// No answer until the session is cancelled (a stuck agent).
    Hang,
}

impl FakeOutcome {
    /// An answer without cost.
    pub fn answer(text: impl Into<String>) -> Self {
        FakeOutcome::Answer(text.into(), Cost::default())
    }
}

type Script = dyn Fn(&ExperimentSpec) -> FakeOutcome + Send + Sync;

/// Answers each spec by calling the script; counts calls and remembers the specs it saw.
pub struct FakeRunner {
    script: Box<Script>,
    calls: AtomicUsize,
    seen: Mutex<Vec<ExperimentSpec>>,
}

impl FakeRunner {
    /// A runner that answers with `script(spec)`.
    pub fn new(script: impl Fn(&ExperimentSpec) -> FakeOutcome + Send + Sync + 'static) -> Self {
        FakeRunner {
            script: Box::new(script),
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// How many samples it ran.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Every spec it was given, in call order.
    pub fn seen(&self) -> Vec<ExperimentSpec> {
        self.seen.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Runner for FakeRunner {
    fn command(&self) -> &str {
        "fake"
    }

    fn run<'a>(&'a self, spec: &'a ExperimentSpec, cancel: &'a Cancel) -> BoxFuture<'a, SampleRun> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(SampleError {
                    kind: SampleErrorKind::Cancelled,
                    message: "cancelled".to_owned(),
                    stderr_tail: String::new(),
                });
            }
            self.calls.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut v) = self.seen.lock() {
                v.push(spec.clone());
            }
            match (self.script)(spec) {
                FakeOutcome::Answer(output, cost) => Ok(Answer {
                    output,
                    cost,
                    replayed_call: None,
                }),
                FakeOutcome::Error(message) => Err(SampleError {
                    kind: SampleErrorKind::Exit,
                    message,
                    stderr_tail: String::new(),
                }),
                FakeOutcome::Hang => {
                    cancel.cancelled().await;
                    Err(SampleError {
                        kind: SampleErrorKind::Cancelled,
                        message: "cancelled".to_owned(),
                        stderr_tail: String::new(),
                    })
                }
            }
        })
    }
}
