//! The session's loop: start samples in plan order up to `parallel` at once, judge each answer,
//! hand each finished sample to the sink (on a blocking thread) before reporting it (saying so
//! when the sink holds it back for a ledger another process has locked), emit a probe's
//! verdict once it and its baseline are complete, and wind down on cancel: a sample stopped
//! while it ran is recorded as cancelled (an error sample, no trial) before it is reported.
//!
//! Every sample runs in a task of one `JoinSet`: if the session itself is dropped, the set aborts
//! them and each runner's guard kills its process group.

use super::results::{finish, probe_event};
use super::{Judged, ProbeId, SampleResult, Saved, SessionDeps, SessionOutcome, SessionPlan};
use crate::experiments::event::{Event, EventKind, EventSender, SampleEnd};
use crate::experiments::runner::{Cancel, SampleError, SampleErrorKind, Spent};
use crate::experiments::sink::{FinishedSample, HoldBack, SampleRecordOutcome, SinkError, utc_now};
use std::sync::Arc;
use std::time::Instant;
use tokio::task::JoinSet;

pub(super) async fn execute(
    plan: SessionPlan,
    deps: SessionDeps,
    cancel: Cancel,
    tx: EventSender,
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
    let mut stopped = 0usize;
    let rule = deps.judge.rule().label(deps.judge.embedder_name());
    let began = Instant::now();

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
        if matches!(&result.outcome, Err(e) if e.kind == SampleErrorKind::Cancelled) {
            stopped += 1;
        }
        if let Some(slot) = slots.get_mut(p).and_then(|v| v.get_mut(s)) {
            *slot = Some(result);
        }
        if let Some(r) = remaining.get_mut(p) {
            *r = r.saturating_sub(1);
        }
        announce_ready(&plan, &deps, &slots, &remaining, &mut announced, &rule, &tx);
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
        // A cancelled batch concludes nothing (attribution-ledger.md §5): closed as cancelled,
        // its trials kept as history, no attribution.
        let why = cancelled.then(|| cancel.reason().unwrap_or("cancelled").to_owned());
        let close = move || match why {
            Some(why) => sink.cancel_cohort(&cohort, &why),
            None => sink.close_cohort(&cohort),
        };
        match tokio::task::spawn_blocking(close).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(e) => Some(SinkError::Write {
                path: deps.sink.path().map(std::path::Path::to_path_buf),
                message: format!("closing the batch stopped: {e}"),
            }),
        }
    };
    let mut spent = Spent::default();
    for r in slots.iter().flatten().flatten() {
        spent.add(&Spent {
            duration_ms: 0,
            ..r.spent
        });
    }
    spent.duration_ms = millis(began.elapsed());
    finish(
        &plan,
        slots,
        &rule,
        SessionOutcome {
            probes: Vec::new(),
            runner_calls,
            cancelled,
            not_saved,
            stopped,
            close_error,
            spent,
        },
    )
}

/// Emits the verdict of every probe that is complete, whose baseline is complete, and that has not
/// been announced yet (a baseline first announces itself).
fn announce_ready(
    plan: &SessionPlan,
    deps: &SessionDeps,
    slots: &[Vec<Option<SampleResult>>],
    remaining: &[usize],
    announced: &mut [bool],
    rule: &str,
    tx: &EventSender,
) {
    let done = |p: usize| remaining.get(p) == Some(&0);
    for (p, probe) in plan.probes.iter().enumerate() {
        if announced.get(p) != Some(&false) || !done(p) {
            continue;
        }
        let base = probe.baseline;
        if base.is_some_and(|b| !done(b.0)) {
            continue;
        }
        if let Some(a) = announced.get_mut(p) {
            *a = true;
        }
        if let Some(kind) = probe_event(plan, slots, ProbeId(p), rule) {
            let _ = tx.send(Event {
                job: deps.job,
                kind,
            });
        }
    }
}

async fn sample_task(
    plan: Arc<SessionPlan>,
    deps: Arc<SessionDeps>,
    p: usize,
    s: usize,
    cancel: Cancel,
    tx: EventSender,
) -> (usize, usize, SampleResult) {
    let seed = u64::try_from(s).unwrap_or(u64::MAX);
    let probe = ProbeId(p);
    let job = deps.job;
    let send = |kind: EventKind| {
        let _ = tx.send(Event { job, kind });
    };
    let Some(probe_plan) = plan.probes.get(p) else {
        return (p, s, never_ran(seed));
    };
    let spec = plan.spec(probe_plan, seed);
    send(EventKind::SampleStarted { probe, seed });
    let started = Instant::now();
    let run = deps.runner.run(&spec, &cancel).await;
    let duration_ms = millis(started.elapsed());
    let outcome = match run {
        Ok(answer) => match deps
            .judge
            .judge(plan.original(), &answer.output, &cancel)
            .await
        {
            Ok(j) => Ok(Judged {
                output: answer.output,
                flipped: j.flipped,
                similarity: j.similarity,
                cost: answer.cost,
                replayed_call: answer.replayed_call,
            }),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    let stopped = matches!(&outcome, Err(e) if e.kind == SampleErrorKind::Cancelled);
    let why = cancel.reason().unwrap_or("cancelled").to_owned();
    let record = FinishedSample {
        cohort: deps.cohort.clone(),
        evaluator_epoch: deps.evaluator_epoch.clone(),
        run_id: plan.run.id.clone(),
        run_status: plan.run.status,
        runner_command: deps.runner.command().to_owned(),
        spec,
        finished_at: utc_now(),
        outcome: match &outcome {
            Ok(j) => SampleRecordOutcome::Answered {
                output: j.output.clone(),
                flipped: j.flipped,
                similarity: j.similarity,
            },
            Err(_) if stopped => SampleRecordOutcome::Errored {
                kind: SampleErrorKind::Cancelled,
                message: format!("cancelled ({why}): the sample's processes were stopped"),
            },
            Err(e) => SampleRecordOutcome::Errored {
                kind: e.kind,
                message: e.message.clone(),
            },
        },
        cost: outcome.as_ref().ok().map(|j| j.cost),
        duration_ms: Some(duration_ms),
    };
    let spent = Spent::sample(duration_ms, outcome.as_ref().ok().map(|j| &j.cost));
    let sink = Arc::clone(&deps.sink);
    let held_tx = tx.clone();
    let held_cancel = cancel.clone();
    let save = move || {
        if stopped {
            // Already cancelled: recorded under the usual lock limit, never held back.
            return sink.append(&record, None);
        }
        // Another process may hold the ledger's lock: the sample is held back (and said to be)
        // until it is written, or until the session is cancelled.
        let on_wait = |why: &str| {
            let _ = held_tx.send(Event {
                job,
                kind: EventKind::SampleHeld {
                    probe,
                    seed,
                    why: why.to_owned(),
                },
            });
        };
        let give_up = || held_cancel.is_cancelled();
        sink.append(
            &record,
            Some(&HoldBack {
                on_wait: &on_wait,
                give_up: &give_up,
            }),
        )
    };
    let saved = match tokio::task::spawn_blocking(save).await {
        Ok(Ok(receipt)) => Saved::Yes(receipt),
        Ok(Err(why)) => Saved::No(why),
        Err(e) => Saved::No(SinkError::Write {
            path: deps.sink.path().map(std::path::Path::to_path_buf),
            message: format!("saving the sample stopped: {e}"),
        }),
    };
    let end = match &outcome {
        Ok(j) => SampleEnd::Answered {
            judged: j.clone(),
            saved: saved.clone(),
        },
        Err(_) if stopped => SampleEnd::Cancelled {
            why,
            saved: saved.clone(),
        },
        Err(e) => SampleEnd::Errored {
            error: e.clone(),
            saved: saved.clone(),
        },
    };
    send(EventKind::SampleFinished {
        probe,
        seed,
        end,
        spent,
    });
    (
        p,
        s,
        SampleResult {
            seed,
            outcome,
            saved,
            spent,
        },
    )
}

/// Whole milliseconds of a duration (a sample that took longer than `u64` milliseconds never
/// ends).
fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A sample whose probe is missing from the plan (never happens): counts as cancelled, unsaved.
fn never_ran(seed: u64) -> SampleResult {
    SampleResult {
        seed,
        outcome: Err(SampleError {
            kind: SampleErrorKind::Cancelled,
            message: "cancelled".to_owned(),
            stderr_tail: String::new(),
        }),
        saved: Saved::yes(),
        spent: Spent::default(),
    }
}
