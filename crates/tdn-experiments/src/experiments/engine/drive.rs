//! Running one plan to its end from synchronous code (the command line): a small tokio runtime,
//! each event handed to a callback as it arrives, and every stop signal (SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT) a cancel: the running samples are stopped with every process they started,
//! recorded as cancelled, the batch is closed, and the caller learns which signal it was so it
//! can exit as the shell expects (128 + the signal). A second signal gives up waiting at once;
//! the samples' supervisors still stop their processes (`process::supervise`). Prints nothing.

use super::{Engine, EngineError, Plan};
use crate::experiments::event::{Event, EventKind, JobId, JobOutcome};
use std::sync::Arc;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Worker threads of the runtime: samples are processes, so the runtime only waits on them.
const WORKERS: usize = 2;

/// The signals that stop a run, with their numbers and names.
pub const STOP_SIGNALS: [(i32, &str); 4] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGQUIT, "SIGQUIT"),
];

/// How a driven job ended.
#[derive(Debug)]
pub struct Driven {
    /// What the job found (`None`: a second signal gave up waiting for it).
    pub outcome: Option<Arc<JobOutcome>>,
    /// The stop signal that cancelled it, if one did.
    pub signal: Option<i32>,
}

/// Listens for the stop signals; each stream resolves on its signal.
pub struct StopSignals(Vec<(i32, &'static str, Signal)>);

impl StopSignals {
    /// Starts listening (inside a runtime). A signal that cannot be listened for keeps its
    /// default action.
    pub fn listen() -> StopSignals {
        StopSignals(
            STOP_SIGNALS
                .iter()
                .filter_map(|&(n, name)| signal(SignalKind::from_raw(n)).ok().map(|s| (n, name, s)))
                .collect(),
        )
    }

    /// The next stop signal: its number and name.
    pub async fn next(&mut self) -> (i32, &'static str) {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.0.iter_mut().map(|(n, name, s)| {
            let (n, name) = (*n, *name);
            Box::pin(async move {
                s.recv().await;
                (n, name)
            })
        });
        futures_util::future::select_all(waits).await.0
    }
}

/// Runs `plan` as job 1 to its end, or until a stop signal, calling `on_event` for every event
/// in order.
pub fn run_to_end(
    engine: &Engine,
    plan: &Plan,
    mut on_event: impl FnMut(&Event),
) -> Result<Driven, EngineError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .map_err(|e| EngineError::Stopped(format!("cannot start the async runtime: {e}")))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let driven = rt.block_on(async {
        // Listening starts before the first sample, so no signal finds the default action.
        let mut signals = StopSignals::listen();
        let running = engine.start(plan, JobId(1), tx, &tokio::runtime::Handle::current())?;
        let cancel = running.canceller();
        let finish = tokio::spawn(running.finish());
        let mut stopped_by: Option<i32> = None;
        loop {
            tokio::select! {
                ev = rx.recv() => match ev {
                    Some(ev) => {
                        let done = matches!(ev.kind, EventKind::Done(_));
                        on_event(&ev);
                        if done {
                            break;
                        }
                    }
                    None => break,
                },
                (n, name) = signals.next() => {
                    if stopped_by.is_some() {
                        return Ok(Driven { outcome: None, signal: stopped_by });
                    }
                    stopped_by = Some(n);
                    cancel.cancel_because(&format!("tdn-tui received {name}"));
                }
            }
        }
        let outcome = finish
            .await
            .map_err(|e| EngineError::Stopped(e.to_string()))?;
        Ok(Driven {
            outcome: Some(outcome),
            signal: stopped_by,
        })
    });
    // Whatever is still running (a second signal) is dropped here: each sample's guard kills
    // its processes.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    driven
}
