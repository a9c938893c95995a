//! Experiment results as the report carries them (influence.md §7-8, runner.md). The rules that
//! compute them live in `experiments`; these are the plain values, so the analysis layer and the
//! screen can hold them without knowing about processes.

use serde::{Deserialize, Serialize};

/// What a probe's re-runs showed (influence.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// A strict majority of samples flipped against a stable baseline: a causal claim about this
    /// scenario under the stated flip test and sample count.
    #[serde(rename = "confirmed")]
    Confirmed,
    /// The outcome did not change; the rank remains a correlational proxy.
    #[serde(rename = "not-confirmed")]
    NotConfirmed,
    /// Some flips or errors, or an unstable baseline: no verdict can be drawn.
    #[serde(rename = "inconclusive")]
    Inconclusive,
    /// No sample completed at all: nothing was measured.
    #[serde(rename = "error")]
    Error,
}

impl Verdict {
    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::NotConfirmed => "not-confirmed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Error => "error",
        }
    }
}

/// The four cells of `classify_suspect` (influence.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SuspectClass {
    /// Flips the answer and its removal reduced cost.
    #[serde(rename = "both")]
    Both,
    /// Flips the answer.
    #[serde(rename = "content-bug")]
    ContentBug,
    /// Removal reduced cost without changing the answer.
    #[serde(rename = "cost-cause")]
    CostCause,
    /// Neither test saw an effect (never means innocent).
    #[serde(rename = "no-detected-effect")]
    NoDetectedEffect,
}

impl SuspectClass {
    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            SuspectClass::Both => "both",
            SuspectClass::ContentBug => "content-bug",
            SuspectClass::CostCause => "cost-cause",
            SuspectClass::NoDetectedEffect => "no-detected-effect",
        }
    }
}

/// Similarity of a probe's sample outputs to the original answer, in seed order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimilarityStats {
    /// Mean (sum then divide).
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Population standard deviation.
    pub stdev: f64,
}

/// Median, min and max of one cost field over the seeds that reported it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Range3 {
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

/// Cost stats of one probe (influence.md §8).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostStats {
    /// Samples in the probe.
    pub samples: usize,
    /// Loops, over the seeds that reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<Range3>,
    /// Tokens, over the seeds that reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Range3>,
}

/// The cost verdict of one suspect: claims only that removal reduced cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostVerdict {
    /// Stable, saved at least one loop, and beat every placebo.
    pub reduced_cost_on_removal: bool,
    /// Baseline median loops minus this probe's.
    pub loops_saved: f64,
    /// Baseline median tokens minus this probe's (reported, never gating).
    pub tokens_saved: f64,
    /// A placebo band exists and the saving held across seeds.
    pub stable: bool,
}

/// What re-running with one suspect removed (or one dropped unit restored) showed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// The verdict (null: listed, not probed within the budget).
    pub verdict: Option<Verdict>,
    /// Samples that flipped.
    pub flips: usize,
    /// Samples requested.
    pub samples: usize,
    /// Samples that produced an answer.
    #[serde(default)]
    pub completed: usize,
    /// Samples that errored (never flips; they block `not-confirmed`).
    #[serde(default)]
    pub errors: usize,
    /// Similarity to the original answer.
    pub similarity: Option<SimilarityStats>,
    /// The cost verdict (null without cost data).
    pub cost: Option<CostVerdict>,
    /// The class (null when not probed).
    pub class: Option<SuspectClass>,
}

/// `experiments` in the report `localize` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentsSummary {
    /// The baseline probe (null when nothing ran).
    pub baseline: Option<ProbeResult>,
    /// `baseline-unstable`, `baseline-incomplete`, ...
    pub flags: Vec<String>,
    /// How many times the runner was called.
    pub runner_calls: usize,
    /// The ledger file the samples went to.
    pub ledger: Option<String>,
}
