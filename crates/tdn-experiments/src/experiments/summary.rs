//! What `experiment --json` prints (docs/experiments.md): one probe against its baseline, with
//! verdict, counts, similarity, cost, class, every errored sample with its stderr tail, the
//! ledger path and the attributions the batch appended to it. Built from a finished session and
//! what its ledger wrote; the screen can show the same structure.

use crate::analysis::report::{CostStats, CostVerdict, SimilarityStats, SuspectClass, Verdict};
use crate::experiments::ledger::Closed;
use crate::experiments::runner::Spent;
use crate::experiments::session::{ProbeOutcome, SessionOutcome};
use serde::Serialize;

/// `baseline` in the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineSummary {
    /// Baseline samples that flipped.
    pub flips: usize,
    /// Baseline samples requested.
    pub samples: usize,
    /// Baseline samples that produced an answer.
    pub completed: usize,
    /// Zero flips and every sample completed.
    pub stable: bool,
}

/// One errored sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleErrorSummary {
    /// `baseline` or `experiment`.
    pub probe: &'static str,
    /// Its seed.
    pub seed: u64,
    /// What went wrong.
    pub message: String,
    /// The last 4 KiB of its stderr.
    pub stderr_tail: String,
}

/// What one sample spent, in `spent.samples`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleSpent {
    /// `baseline` or `experiment`.
    pub probe: &'static str,
    /// Its seed.
    pub seed: u64,
    /// Its time and reported costs.
    #[serde(flatten)]
    pub spent: Spent,
}

/// What the experiment spent (issue 26): the job's wall-clock time and its samples' reported
/// tokens and dollars, then each sample's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpentSummary {
    /// The job's.
    #[serde(flatten)]
    pub total: Spent,
    /// Each finished sample's, baseline first, in seed order.
    pub samples: Vec<SampleSpent>,
}

/// Cost stats of both probes, for people who want the numbers behind `cost`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostStatsPair {
    /// The baseline's.
    pub baseline: Option<CostStats>,
    /// The experiment's.
    pub experiment: Option<CostStats>,
}

/// One attribution the batch appended to the ledger (attribution-ledger.md §5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AttributionSummary {
    /// The unit's kind (or `replay`).
    pub kind: String,
    /// The unit's id (or the replayed step).
    pub unit: String,
    /// `causal_ablation` or `paired_shadow`.
    pub evidence_level: &'static str,
    /// Mean of the trial effects (score with the unit minus score without it).
    pub effect: f64,
    /// Agreement of the trials, scaled by their number.
    pub confidence: f64,
    /// `harmful`, `retained`, `demotion_candidate` or `uncertain`.
    pub disposition: &'static str,
    /// Its 1-based line in the ledger.
    pub line: usize,
}

/// The attributions a closed batch appended, in ledger order.
pub fn attribution_summaries(c: &Closed) -> Vec<AttributionSummary> {
    c.attributions
        .iter()
        .map(|a| AttributionSummary {
            kind: a.component_kind.clone(),
            unit: a.component_id.clone(),
            evidence_level: a.evidence_level.as_str(),
            effect: a.effect,
            confidence: a.confidence,
            disposition: a.disposition.as_str(),
            line: a.line,
        })
        .collect()
}

/// The whole `experiment --json` object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExperimentSummary {
    /// `baseline`, `ablate`, `restore` or `replay`.
    pub experiment: String,
    /// The units removed or restored (`[]` for the baseline alone and for a replay).
    pub units: Vec<String>,
    /// For a replay: the step re-run from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_step: Option<String>,
    /// The verdict (null for the baseline alone, or when cancelled).
    pub verdict: Option<Verdict>,
    /// Samples that flipped (for the baseline alone: the baseline's).
    pub flips: usize,
    /// Samples requested.
    pub samples: usize,
    /// Samples that produced an answer.
    pub completed: usize,
    /// The baseline the verdict is judged against.
    pub baseline: BaselineSummary,
    /// `baseline-unstable`, `baseline-incomplete`.
    pub flags: Vec<String>,
    /// Similarity of the answers to the recorded one.
    pub similarity: SimilarityStats,
    /// The cost verdict (null without cost data, for restorations, replays and the baseline).
    pub cost: Option<CostVerdict>,
    /// The class (null for the baseline alone, a replay, or an `error` verdict).
    pub class: Option<SuspectClass>,
    /// What the verdict proves, in words.
    pub claim: Option<String>,
    /// The recorded model call the runner re-sent alone to answer every sample (the built-in
    /// chat runner), when it did: the verdict is about that call's output, not the run's answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replayed_call: Option<String>,
    /// One entry per errored sample.
    pub errors: Vec<SampleErrorSummary>,
    /// Runner invocations.
    pub runner_calls: usize,
    /// Finished samples the ledger could not save.
    pub not_saved: usize,
    /// The session was cancelled before every sample ran.
    pub cancelled: bool,
    /// Samples stopped by the cancel while they ran: their processes were killed and each was
    /// recorded in the ledger as cancelled (forming no trial).
    pub stopped: usize,
    /// Cost stats behind `cost`.
    pub cost_stats: CostStatsPair,
    /// Time and cost: the job's and each sample's.
    pub spent: SpentSummary,
    /// The ledger file.
    pub ledger: Option<String>,
    /// What the batch appended to the ledger when it closed (empty when it formed no trial).
    pub attributions: Vec<AttributionSummary>,
}

fn errors_of(p: &ProbeOutcome, label: &'static str, out: &mut Vec<SampleErrorSummary>) {
    for r in p.samples.iter().flatten() {
        if let Err(e) = &r.outcome
            && e.kind != crate::experiments::runner::SampleErrorKind::Cancelled
        {
            out.push(SampleErrorSummary {
                probe: label,
                seed: r.seed,
                message: e.message.clone(),
                stderr_tail: e.stderr_tail.clone(),
            });
        }
    }
}

/// The summary of a session of a baseline (`probes[0]`) and at most one experiment probe.
pub fn experiment_summary(outcome: &SessionOutcome, ledger: Option<String>) -> ExperimentSummary {
    let base = outcome.probes.first();
    let probe = outcome.probes.get(1);
    let shown = probe.or(base);
    let mut errors = Vec::new();
    if let Some(b) = base {
        errors_of(b, "baseline", &mut errors);
    }
    if let Some(p) = probe {
        errors_of(p, "experiment", &mut errors);
    }
    let t = shown.map(|p| p.tally.clone()).unwrap_or_default();
    let bt = base.map(|b| b.tally.clone()).unwrap_or_default();
    ExperimentSummary {
        experiment: probe
            .map_or("baseline", |p| p.plan.intervention.kind().as_str())
            .to_owned(),
        units: probe
            .map(|p| {
                p.plan
                    .intervention
                    .units()
                    .iter()
                    .map(|u| u.0.clone())
                    .collect()
            })
            .unwrap_or_default(),
        from_step: probe.and_then(|p| p.plan.intervention.from_step().map(|s| s.0.clone())),
        verdict: probe.and_then(|p| p.result.verdict),
        flips: t.flips,
        samples: t.samples,
        completed: t.completed,
        baseline: BaselineSummary {
            flips: bt.flips,
            samples: bt.samples,
            completed: bt.completed,
            stable: bt.is_stable_baseline(),
        },
        flags: base.map(|b| b.flags.clone()).unwrap_or_default(),
        similarity: t.similarity(),
        cost: probe.and_then(|p| p.result.cost),
        class: probe.and_then(|p| p.result.class),
        claim: probe.and_then(|p| p.claim.clone()),
        replayed_call: match crate::experiments::verdict::Scope::of(&bt, &t) {
            crate::experiments::verdict::Scope::Call(step) => Some(step),
            _ => None,
        },
        errors,
        runner_calls: outcome.runner_calls,
        not_saved: outcome.not_saved,
        cancelled: outcome.cancelled,
        stopped: outcome.stopped,
        cost_stats: CostStatsPair {
            baseline: base.and_then(|b| b.cost_stats.clone()),
            experiment: probe.and_then(|p| p.cost_stats.clone()),
        },
        spent: SpentSummary {
            total: outcome.spent,
            samples: [(base, "baseline"), (probe, "experiment")]
                .into_iter()
                .filter_map(|(p, label)| p.map(|p| (p, label)))
                .flat_map(|(p, label)| {
                    p.samples.iter().flatten().map(move |r| SampleSpent {
                        probe: label,
                        seed: r.seed,
                        spent: r.spent,
                    })
                })
                .collect(),
        },
        ledger,
        attributions: Vec::new(),
    }
}

/// What an experiment's samples ran, for its `spent:` line (the command line's and the
/// screen's): re-sends of one recorded model call when the runner re-sent one alone (its
/// `replayed_call`, named as `run` names its step), else runs of the user's agent; with who
/// reported the tokens and dollars.
pub fn spent_over(
    samples: usize,
    replayed_call: Option<&str>,
    run: &crate::analysis::model::Run,
) -> String {
    use crate::analysis::count::counted;
    match replayed_call {
        Some(call) => format!(
            "{} of model call {} (tokens and dollars as the runner reported them)",
            counted(samples, "re-send", "re-sends"),
            crate::analysis::say::step_label(run, call)
        ),
        None => format!(
            "{} of your agent (tokens and dollars as the agent reported them)",
            counted(samples, "run", "runs")
        ),
    }
}
