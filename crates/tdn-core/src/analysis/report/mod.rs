//! The diagnosis report, `tdn.report/1` (docs/report.md): the one contract between the analysis,
//! `analyze --json`, the text output and the screen. Field for field as the spec; fields may be
//! added, none renamed. The screen renders this structure and computes nothing of its own.

mod against;
mod build;
mod group;
mod json;
mod markdown;
mod text;

pub use crate::analysis::probe::{
    CostStats, CostVerdict, ExperimentsSummary, ProbeResult, Range3, SimilarityStats, SuspectClass,
    Verdict,
};
pub use against::{
    Against, AgainstDivergence, AgainstSection, DifferenceCounts, DivergenceWhat, PlacedStep,
    StepAt,
};
pub use build::{AnalyzeOptions, ReferenceChoice, analyze, analyze_run, analyze_with_progress};
pub use group::GROUP_MIN_SIMILAR;
pub use json::{render_json, write_json};
pub use markdown::{MarkdownExtras, VerdictRow, md, render_markdown};
pub use text::{outcome_sentence, render_text};

pub use crate::analysis::claims::SupportLabel;
pub use crate::analysis::influence::{
    DroppedEntry, DroppedSection, DroppedStep, InfluenceEntry, InfluenceSection,
};
pub use crate::analysis::rank::{Fault, Party, Role};

use crate::analysis::influence::RankingConfidence;
use crate::analysis::load::Warning;
use crate::analysis::model::describe_step;
use serde::{Deserialize, Serialize};

/// The `format` of every report.
pub const REPORT_FORMAT: &str = "tdn.report/1";

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// What was analysed.
    pub run: RunSummary,
    /// The top suspect (null when there are no suspects).
    pub verdict: Option<VerdictStep>,
    /// Who was at fault.
    pub fault: Fault,
    /// Ranked, best first, one per step: steps where a rule found a fault.
    pub suspects: Vec<Suspect>,
    /// Steps listed only because of where they sit or because they wrote the final answer (the
    /// commit of a failed answer, the action and plan before it, the first change of a failed
    /// run, ...): places to look, not faults. Same shape as a suspect, ranked among themselves;
    /// never the verdict. Empty in reports written before it existed.
    #[serde(default)]
    pub leads: Vec<Suspect>,
    /// How far the suspect ranking can be trusted.
    pub confidence: RankingConfidence,
    /// Which step used which earlier step's output (verbatim value reuse).
    pub links: Vec<Link>,
    /// Each claim of the final answer with its support.
    pub claims: Vec<Claim>,
    /// Context influence ranking (null when there is no final answer, no evidence, or the
    /// embedder failed).
    pub influence: Option<InfluenceSection>,
    /// Context that was available but never sent (null when no step records `context`).
    pub dropped: Option<DroppedSection>,
    /// The optional judge (null when none was asked).
    pub judge: Option<JudgeOutcome>,
    /// Only with `--against`: the good run the run was compared with and where they part
    /// (docs/compare.md, "In the ranking").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<AgainstSection>,
    /// What the run cost in dollars, per step and in all, recorded or estimated from tokens
    /// (absent when nothing in the run has a cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::analysis::cost::CostSection>,
    /// Only from `localize`: the experiment session behind the verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiments: Option<ExperimentsSummary>,
}

/// `run`: what was analysed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: String,
    /// The run's name as the trace records it (`title`: a trace's or root span's name), when
    /// it has one: what the screen's header and the Markdown call the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the agent was asked (the run's `task`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `failed`, `succeeded`, `error` or `unfinished`.
    pub status: crate::analysis::model::RunStatus,
    /// Where the status came from: `recorded`, `assumed` (nothing recorded whether the outcome
    /// was right: the run is diagnosed as failed), `given` (`--outcome`, the screen's key) or
    /// `reference` (the final answer equals the reference answer).
    #[serde(default)]
    pub status_from: crate::analysis::model::StatusFrom,
    /// What the status was read from, in words (null when the recording does not say).
    #[serde(default)]
    pub status_why: Option<String>,
    /// Number of steps.
    pub steps: usize,
    /// `tdn.run/1` or an importer's name.
    pub source_format: String,
    /// Recoverable problems the loader found.
    pub warnings: Vec<Warning>,
}

/// `verdict`: the top suspect, in short.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictStep {
    /// Step id.
    pub step: String,
    /// The step's name when its id is opaque (a span id, a UUID) and its name is not: how trace
    /// viewers show it and how the text and Markdown name it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 0-based position.
    pub index: usize,
    /// What kind of problem.
    pub category: String,
    /// One line for people.
    pub title: String,
    /// Sentences a person can check against the run.
    pub evidence: Vec<String>,
}

impl VerdictStep {
    /// How a person names it: `step 'ChatOpenAI' (position 8)`, by its name when it has one
    /// ([`VerdictStep::name`]), else its id.
    pub fn described(&self) -> String {
        by_name(&self.step, self.name.as_deref(), self.index)
    }
}

/// `step 'NAME' (position N)` when the step has a readable name, else by its id.
fn by_name(id: &str, name: Option<&str>, index: usize) -> String {
    describe_step(name.unwrap_or(id), index)
}

/// One ranked suspect.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    /// 1-based rank.
    pub rank: usize,
    /// Step id.
    pub step: String,
    /// The step's name when its id is opaque (a span id, a UUID) and its name is not: how trace
    /// viewers show it and how the text and Markdown name it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 0-based position.
    pub index: usize,
    /// What kind of problem (docs/how-it-decides.md lists them).
    pub category: String,
    /// Which detector found it (`judge` for the judge).
    pub detector: String,
    /// One line for people.
    pub title: String,
    /// After the ranking multipliers; orders suspects, not a probability.
    pub score: f64,
    /// The detector's own confidence, before the multipliers.
    pub confidence: f64,
    /// How it was found.
    pub role: Role,
    /// For a symptom: the step that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Sentences a person can check against the run.
    pub evidence: Vec<String>,
    /// The same finding on other steps, listed under this one (docs/report.md): each with its
    /// rank in the full ranking. Empty for a finding that does not repeat.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<SimilarStep>,
}

impl Suspect {
    /// How a person names it, as [`VerdictStep::described`] does.
    pub fn described(&self) -> String {
        by_name(&self.step, self.name.as_deref(), self.index)
    }
}

/// A step whose suspect is grouped under a like one (`suspects[].similar`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimilarStep {
    /// Its rank in the full ranking (1-based; the listed suspects keep theirs too).
    pub rank: usize,
    /// Step id.
    pub step: String,
    /// 0-based position.
    pub index: usize,
    /// Its score.
    pub score: f64,
}

/// A dependency: a value of `from`'s output appears verbatim in `to`'s input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The earlier step.
    pub from: String,
    /// The later step.
    pub to: String,
    /// The reused value (made short for display).
    pub value: String,
}

/// One claim of the final answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The claim as written in the answer.
    pub text: String,
    /// Its support.
    pub label: SupportLabel,
    /// The step holding the best evidence, or null.
    pub evidence_step: Option<String>,
    /// The earliest model step whose output already held the claim, or null.
    pub origin_step: Option<String>,
    /// That step's 0-based position, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_index: Option<usize>,
    /// That step's name when its id is opaque and its name is not (as [`Suspect::name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_name: Option<String>,
    /// Why this label, in one sentence (inert).
    #[serde(default)]
    pub why: String,
    /// The evidence passage the label rests on (run text), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_text: Option<String>,
}

impl Claim {
    /// How a person names the step that first wrote it: `step 'ChatOpenAI' (position 3)`, by
    /// its name when its id is opaque; by id alone in a report written before positions were
    /// kept. Made inert.
    pub fn origin_described(&self) -> Option<String> {
        let id = self.origin_step.as_deref()?;
        Some(match self.origin_index {
            Some(i) => by_name(id, self.origin_name.as_deref(), i),
            None => format!(
                "step '{}'",
                crate::analysis::model::inert_line(self.origin_name.as_deref().unwrap_or(id))
            ),
        })
    }
}

/// `judge`: what the optional judge said, or why it said nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeOutcome {
    /// The blamed step (null on failure).
    pub step: Option<String>,
    /// Its reason (null on failure).
    pub reason: Option<String>,
    /// Why the judge gave nothing usable (null on success).
    pub error: Option<String>,
    /// The step the judge named, when the rules moved its finding to another step (`step`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named: Option<String>,
    /// Why the finding was moved from `named` to `step`, in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_because: Option<String>,
}

impl Report {
    /// The report as pretty JSON (what `analyze --json` prints is the compact form).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
