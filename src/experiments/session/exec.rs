//! The session's loop: start samples in plan order up to `parallel` at once, judge each answer,
//! hand each finished sample to the sink (on a blocking thread) before reporting it (saying so
//! when the sink holds it back for a ledger another process has locked), emit a probe's
//! verdict once it and its baseline are complete, and wind down on cancel.
//!
//! Every sample runs in a task of one `JoinSet`: if the session itself is dropped, the set aborts
//! them and each runner's guard kills its process group.

use super::results::{finish, probe_event};
use super::{
    Judged, ProbeId, SampleResult, Saved, SessionDeps, SessionOutcome, SessionPlan, TrialEvent,
};
use crate::experiments::runner::{Cancel, SampleErrorKind};
use crate::experiments::sink::{FinishedSample, HoldBack, SampleRecordOutcome, utc_now};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;

pub(super) async fn execute(
    plan: SessionPlan,
    deps: SessionDeps,
    cancel: Cancel,
    tx: UnboundedSender<TrialEvent>,
) -> SessionOutcome {
    let plan = Arc::new(plan);
    let deps = Arc::new(deps);
    let n = plan.samples;
    let probes = plan.probes.len();
    let mut slots: Vec<Vec<Option<SampleResult>>> = vec![vec![None; n]; probes];
    let mut remaining: Vec<usize> = vec![n; probes];
    let mut announced = vec![false; probes];
    let mut queue = (0..probes).flat_map(|p| (0..n).map(move |s| (p, s)));
    let mut running: JoinSet<(usize, usize, SampleResult)> = JoinSet::new();
    let parallel = deps.parallel.max(1);
    let mut runner_calls = 0usize;
    let mut not_saved = 0usize;
    let rule = deps.judge.rule().label(deps.judge.embedder_name());

    loop {
        while running.len() < parallel && !cancel.is_cancelled() {
            let Some((p, s)) = queue.next() else { break };
            runner_calls += 1;
            running.spawn(sample_task(
                Arc::clone(&plan),
                Arc::clone(&deps),
                p,
                s,
                cancel.clone(),
                tx.clone(),
            ));
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let Ok((p, s, result)) = joined else {
            // A sample task panicked or was aborted: it counts as never run.
            continue;
        };
        if matches!(result.saved, Saved::No(_)) {
            not_saved += 1;
        }
        if let Some(slot) = slots.get_mut(p).and_then(|v| v.get_mut(s)) {
            *slot = Some(result);
        }
        if let Some(r) = remaining.get_mut(p) {
            *r = r.saturating_sub(1);
        }
        announce_ready(&plan, &slots, &remaining, &mut announced, &rule, &tx);
    }

    let cancelled = (cancel.is_cancelled() && remaining.iter().any(|&r| r > 0))
        || slots
            .iter()
            .flatten()
            .flatten()
            .any(|r| matches!(&r.outcome, Err(e) if e.kind == SampleErrorKind::Cancelled));
    let close_error = {
        let sink = Arc::clone(&deps.sink);
        let cohort = deps.cohort.clone();
        match tokio::task::spawn_blocking(move || sink.close_cohort(&cohort)).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(e) => Some(format!("closing the cohort stopped: {e}")),
        }
    };
    let outcome = finish(
        &plan,
        slots,
        &rule,
        SessionOutcome {
            probes: Vec::new(),
            runner_calls,
            cancelled,
            not_saved,
            close_error,
        },
    );
    let outcome = Arc::new(outcome);
    let _ = tx.send(TrialEvent::SessionDone {
        outcome: Arc::clone(&outcome),
    });
    Arc::try_unwrap(outcome).unwrap_or_else(|a| (*a).clone())
}

/// Emits the verdict of every probe that is complete, whose baseline is complete, and that has not
/// been announced yet (a baseline first announces itself).
fn announce_ready(
    plan: &SessionPlan,
    slots: &[Vec<Option<SampleResult>>],
    remaining: &[usize],
    announced: &mut [bool],
    rule: &str,
    tx: &UnboundedSender<TrialEvent>,
) {
    let done = |p: usize| remaining.get(p) == Some(&0);
    for (p, probe) in plan.probes.iter().enumerate() {
        if announced.get(p) != Some(&false) || !done(p) {
            continue;
        }
        let base = probe.role.baseline();
        if base.is_some_and(|b| !done(b.0)) {
            continue;
        }
        if let Some(a) = announced.get_mut(p) {
            *a = true;
        }
        if let Some(ev) = probe_event(plan, slots, ProbeId(p), rule) {
            let _ = tx.send(ev);
        }
    }
}

async fn sample_task(
    plan: Arc<SessionPlan>,
    deps: Arc<SessionDeps>,
    p: usize,
    s: usize,
    cancel: Cancel,
    tx: UnboundedSender<TrialEvent>,
) -> (usize, usize, SampleResult) {
    let seed = u64::try_from(s).unwrap_or(u64::MAX);
    let probe = ProbeId(p);
    let Some(probe_plan) = plan.probes.get(p) else {
        return (p, s, cancelled_result(seed));
    };
    let spec = plan.spec(probe_plan, seed);
    let _ = tx.send(TrialEvent::SampleStarted { probe, seed });
    let run = deps.runner.run(&spec, &cancel).await;
    let outcome = match run {
        Ok(answer) => match deps
            .judge
            .judge(&plan.original, &answer.output, &cancel)
            .await
        {
            Ok(j) => Ok(Judged {
                output: answer.output,
                flipped: j.flipped,
                similarity: j.similarity,
                cost: answer.cost,
            }),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = &outcome
        && e.kind == SampleErrorKind::Cancelled
    {
        let _ = tx.send(TrialEvent::SampleCancelled { probe, seed });
        return (
            p,
            s,
            SampleResult {
                seed,
                outcome,
                saved: Saved::yes(),
            },
        );
    }
    let record = FinishedSample {
        cohort: deps.cohort.clone(),
        evaluator_epoch: deps.evaluator_epoch.clone(),
        run_id: plan.run_id.clone(),
        run_status: plan.run_status,
        runner_command: deps.runner.command().to_owned(),
        spec,
        finished_at: utc_now(),
        outcome: match &outcome {
            Ok(j) => SampleRecordOutcome::Answered {
                output: j.output.clone(),
                flipped: j.flipped,
                similarity: j.similarity,
            },
            Err(e) => SampleRecordOutcome::Errored {
                kind: e.kind,
                message: e.message.clone(),
            },
        },
        cost: outcome.as_ref().ok().map(|j| j.cost),
    };
    let sink = Arc::clone(&deps.sink);
    let held_tx = tx.clone();
    let held_cancel = cancel.clone();
    let save = move || {
        // Another process may hold the ledger's lock: the sample is held back (and said to be)
        // until it is written, or until the session is cancelled.
        let on_wait = |why: &str| {
            let _ = held_tx.send(TrialEvent::SampleHeld {
                probe,
                seed,
                why: why.to_owned(),
            });
        };
        let give_up = || held_cancel.is_cancelled();
        sink.append_waiting(
            &record,
            &HoldBack {
                on_wait: &on_wait,
                give_up: &give_up,
            },
        )
    };
    let saved = match tokio::task::spawn_blocking(save).await {
        Ok(Ok(receipt)) => Saved::Yes(receipt),
        Ok(Err(why)) => Saved::No(why),
        Err(e) => Saved::No(format!("saving the sample stopped: {e}")),
    };
    let event = match &outcome {
        Ok(j) => TrialEvent::SampleFinished {
            probe,
            seed,
            judged: j.clone(),
            saved: saved.clone(),
        },
        Err(e) => TrialEvent::SampleErrored {
            probe,
            seed,
            error: e.clone(),
            saved: saved.clone(),
        },
    };
    let _ = tx.send(event);
    (
        p,
        s,
        SampleResult {
            seed,
            outcome,
            saved,
        },
    )
}

fn cancelled_result(seed: u64) -> SampleResult {
    SampleResult {
        seed,
        outcome: Err(crate::experiments::runner::SampleError {
            kind: SampleErrorKind::Cancelled,
            message: "cancelled".to_owned(),
            stderr_tail: String::new(),
        }),
        saved: Saved::yes(),
    }
}
