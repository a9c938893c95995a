//! Running a session to its end from synchronous code (the command line): a small tokio runtime,
//! Ctrl-C as cancel (every running sample's process group is killed), and each event handed to a
//! callback as it arrives. Prints nothing itself.

use crate::experiments::session::{self, SessionDeps, SessionOutcome, SessionPlan, TrialEvent};

/// Worker threads of the runtime: samples are processes, so the runtime only waits on them.
const WORKERS: usize = 2;

/// Runs `plan` to its end (or until Ctrl-C), calling `on_event` for every event in order.
pub fn run_to_end(
    plan: SessionPlan,
    deps: SessionDeps,
    mut on_event: impl FnMut(&TrialEvent),
) -> Result<SessionOutcome, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let (handle, mut rx) = session::start(plan, deps);
        let cancel = handle.canceller();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        while let Some(ev) = rx.recv().await {
            on_event(&ev);
        }
        ctrl_c.abort();
        handle.join().await
    })
}
