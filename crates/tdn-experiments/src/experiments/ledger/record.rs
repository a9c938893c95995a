//! The ledger's record types (attribution-ledger.md §4, §5, §7) as plain values, the names the
//! spec gives them, and their JSON members as the writer emits them. Reading a line into these
//! types is `parse.rs`; checking them against each other is `verify`. No I/O.

pub use super::spent::{Cost, Spent};
use crate::experiments::spec::ExperimentKind;
use serde_json::{Map, Value, json};

/// The current schema version.
pub const SCHEMA: u64 = 2;

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// The spec's name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the spec's name.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

named_enum!(
    /// How much a trial or attribution proves (§1).
    EvidenceLevel {
        /// The bundles differ in exactly this unit.
        CausalAblation = "causal_ablation",
        /// Matched samples, but not only this unit differs.
        PairedShadow = "paired_shadow",
        /// A score, never a trial: rejected wherever it appears as one.
        ComponentCorrelated = "component_correlated",
    }
);

named_enum!(
    /// What an attribution concludes about its unit (§5).
    Disposition {
        /// The outcome is good less often with the unit than without it.
        Harmful = "harmful",
        /// Better with it.
        Retained = "retained",
        /// Costs at least `high_token_cost` tokens and changes nothing measured.
        DemotionCandidate = "demotion_candidate",
        /// Nothing measured, cheap.
        Uncertain = "uncertain",
    }
);

named_enum!(
    /// The `type` of a line.
    RecordType {
        /// The header, first line.
        Ledger = "ledger",
        /// A bundle manifest.
        Bundle = "bundle",
        /// One finished runner call.
        Sample = "sample",
        /// A matched with/without pair.
        Trial = "trial",
        /// A per-unit conclusion.
        Attribution = "attribution",
        /// Seals a torn line.
        Torn = "torn",
        /// Closes a cancelled batch: its trials conclude nothing.
        Cancel = "cancel",
    }
);

named_enum!(
    /// Whose evidence a ledger holds (§7).
    Scope {
        /// One run: every sample's `run_id` equals the ledger's name.
        Run = "run",
        /// Several runs of one agent.
        Scenario = "scenario",
    }
);

/// The header: `{scope, name, created_at, created_by}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// Run or scenario.
    pub scope: Scope,
    /// The run id (scope run) or the scenario's name.
    pub name: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    /// `tdn-tui/<version>`.
    pub created_by: String,
}

/// A bundle record: the manifest, so digests and diffs recompute without the run file.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleRecord {
    /// The stored bundle digest.
    pub digest: String,
    /// The stored entries with their stored component digests, in file order.
    pub units: Vec<(super::bundle::Entry, String)>,
}

/// `outcome` of a successful sample. The output text itself is never stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// SHA-256 hex of the output text.
    pub output_sha256: String,
    /// The comparator said the outcome is the recorded one (not a flip).
    pub reproduced: bool,
    /// 0 or 1 by the score rule; none for runs that have no score.
    pub score: Option<f64>,
}

/// A sample record (§4).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// 32 random hex.
    pub sample_id: String,
    /// The batch.
    pub cohort: String,
    /// The comparator and version.
    pub evaluator_epoch: String,
    /// The run.
    pub run_id: String,
    /// The run's status as recorded.
    pub run_status: String,
    /// SHA-256 hex of the runner command.
    pub runner_sha256: String,
    /// The experiment as sent.
    pub experiment: ExperimentKind,
    /// Units left out.
    pub remove: Vec<String>,
    /// Units put back.
    pub restore: Vec<String>,
    /// Replay start.
    pub from_step: Option<String>,
    /// Replay patch.
    pub patch: Option<String>,
    /// Seed.
    pub seed: u64,
    /// Position in its probe.
    pub sample: u64,
    /// Digest of B.
    pub baseline_bundle: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub finished_at: String,
    /// Present when the runner answered.
    pub outcome: Option<Outcome>,
    /// One line, present when the sample failed.
    pub error: Option<String>,
    /// What the runner reported.
    pub cost: Option<Cost>,
    /// How long the runner took, in milliseconds (absent in lines written before it was
    /// recorded).
    pub duration_ms: Option<u64>,
}

/// The score rule of §4: for a `failed` run 0 if reproduced else 1 ("departs from the recorded
/// failure"), for `succeeded` 1 if reproduced else 0; `error` and `unfinished` runs have none.
pub fn score_rule(run_status: &str, reproduced: bool) -> Option<f64> {
    match crate::analysis::model::RunStatus::parse(run_status)? {
        crate::analysis::model::RunStatus::Failed => Some(if reproduced { 0.0 } else { 1.0 }),
        crate::analysis::model::RunStatus::Succeeded => Some(if reproduced { 1.0 } else { 0.0 }),
        _ => None,
    }
}

impl Sample {
    /// The intervention the sample ran, read from its recorded fields.
    pub fn intervention(&self) -> crate::experiments::intervention::Intervention {
        crate::experiments::intervention::Intervention::from_fields(
            self.experiment,
            &self.remove,
            &self.restore,
            self.from_step.as_deref(),
            self.patch.as_deref(),
        )
    }

    /// The score when the sample succeeded and has one.
    pub fn score(&self) -> Option<f64> {
        self.outcome.as_ref().and_then(|o| o.score)
    }
}

/// A trial's `experiment` as recorded: the kind of its experiment sample, or, in history the
/// bindings predate (schema 1, migrated with `""`) and in lines that fail verification, the text
/// as written (kept so the line's digests recompute).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrialExperiment {
    /// `ablate`, `restore`, `replay` (a `baseline` fails verification).
    Kind(ExperimentKind),
    /// Anything else, as written.
    Other(String),
}

impl TrialExperiment {
    /// Reads the recorded text.
    pub fn read(s: &str) -> TrialExperiment {
        match ExperimentKind::parse(s) {
            Some(k) => TrialExperiment::Kind(k),
            None => TrialExperiment::Other(s.to_owned()),
        }
    }

    /// The text as recorded.
    pub fn as_str(&self) -> &str {
        match self {
            TrialExperiment::Kind(k) => k.as_str(),
            TrialExperiment::Other(s) => s,
        }
    }

    /// The kind, when it is one.
    pub fn kind(&self) -> Option<ExperimentKind> {
        match self {
            TrialExperiment::Kind(k) => Some(*k),
            TrialExperiment::Other(_) => None,
        }
    }
}

/// A trial record (§4). `with_sample`/`without_sample` are absent only in schema-1 history.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// `digest({with_sample, without_sample, component_digest})`.
    pub trial_id: String,
    /// The unit's kind (or `replay`).
    pub component_kind: String,
    /// The unit's id (or the replayed step).
    pub component_id: String,
    /// The component digest.
    pub component_digest: String,
    /// Contains the component.
    pub tested_bundle: String,
    /// Does not.
    pub comparison_bundle: String,
    /// B.
    pub baseline_bundle: String,
    /// What the diff supports at most.
    pub evidence_level: EvidenceLevel,
    /// Shared by both samples.
    pub evaluator_epoch: String,
    /// Shared by both samples.
    pub cohort: String,
    /// Shared by both samples.
    pub run_id: String,
    /// Shared by both samples.
    pub runner_sha256: String,
    /// Shared by both samples.
    pub seed: u64,
    /// `ablate`, `restore` or `replay`.
    pub experiment: TrialExperiment,
    /// The sample with the component.
    pub with_sample: Option<String>,
    /// The sample without it.
    pub without_sample: Option<String>,
    /// Score with.
    pub with_score: f64,
    /// Score without.
    pub without_score: f64,
    /// The unit's tokens (0 for a replay).
    pub token_cost: u64,
    /// The later `finished_at` of the two samples.
    pub tested_at: String,
    /// Other changes of the diff.
    pub interactions: Vec<String>,
    /// What the sample with the component spent.
    pub with_spent: Option<Spent>,
    /// What the sample without it spent.
    pub without_spent: Option<Spent>,
    /// `digest` of the line as stored (every member, `schema`, `type` and `prev` included).
    pub source_digest: String,
}

/// The classification policy in force (`[ledger]` keys of the same names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    /// Effects within ±this are neutral.
    pub neutral_effect: f64,
    /// Token cost from which a neutral unit is a demotion candidate.
    pub high_token_cost: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            neutral_effect: 0.0,
            high_token_cost: 256,
        }
    }
}

/// An attribution record (§5). Schema-1 history may lack bindings; see `migrate.rs`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribution {
    /// Digest of the binding fields.
    pub attribution_id: String,
    /// Group key: kind.
    pub component_kind: String,
    /// Group key: id.
    pub component_id: String,
    /// Group key: digest.
    pub component_digest: String,
    /// Group key: tested bundle.
    pub tested_bundle: String,
    /// Group key: level.
    pub evidence_level: EvidenceLevel,
    /// Shared comparison bundle.
    pub comparison_bundle: String,
    /// Shared cohort.
    pub cohort: String,
    /// Shared baseline bundle.
    pub baseline_bundle: String,
    /// Shared epoch.
    pub evaluator_epoch: String,
    /// round6(mean of trial effects).
    pub effect: f64,
    /// round6(min(1, n/4) × agreement).
    pub confidence: f64,
    /// Max of the trials'.
    pub token_cost: u64,
    /// Max of the trials'.
    pub tested_at: String,
    /// Sorted union of the trials'.
    pub interactions: Vec<String>,
    /// Sorted.
    pub trial_ids: Vec<String>,
    /// Sorted.
    pub matched_pair_keys: Vec<String>,
    /// Sorted.
    pub source_trial_digests: Vec<String>,
    /// The policy in force.
    pub policy: Policy,
    /// The classification.
    pub disposition: Disposition,
    /// The latest earlier attribution for the same component, if any.
    pub supersedes: Option<String>,
}

/// A `torn` record: `{line, bytes}` of the line it seals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Torn {
    /// 1-based line number of the torn line.
    pub line: u64,
    /// Its length in bytes.
    pub bytes: u64,
}

/// A `cancel` record: `{cohort, reason, trial_ids, cancelled_at}`. The batch `cohort` was
/// cancelled before every sample ran: its trials (`trial_ids`, every trial of the cohort above,
/// sorted) stay as history, marked cancelled; the cohort is closed with no attribution, and none
/// may follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CancelRecord {
    /// The batch.
    pub cohort: String,
    /// Why it was cancelled (a signal, a key), one line.
    pub reason: String,
    /// Every trial of the cohort written before it, sorted.
    pub trial_ids: Vec<String>,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub cancelled_at: String,
}

impl CancelRecord {
    /// JSON members.
    pub fn fields(&self) -> Value {
        json!({"cohort": self.cohort, "reason": self.reason, "trial_ids": self.trial_ids,
               "cancelled_at": self.cancelled_at})
    }
}

/// One parsed record.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// The header.
    Header(Header),
    /// A bundle.
    Bundle(BundleRecord),
    /// A sample.
    Sample(Box<Sample>),
    /// A trial.
    Trial(Box<Trial>),
    /// An attribution.
    Attribution(Box<Attribution>),
    /// A torn seal.
    Torn(Torn),
    /// A cancelled batch.
    Cancel(CancelRecord),
}

impl Record {
    /// The record's type.
    pub fn kind(&self) -> RecordType {
        match self {
            Record::Header(_) => RecordType::Ledger,
            Record::Bundle(_) => RecordType::Bundle,
            Record::Sample(_) => RecordType::Sample,
            Record::Trial(_) => RecordType::Trial,
            Record::Attribution(_) => RecordType::Attribution,
            Record::Torn(_) => RecordType::Torn,
            Record::Cancel(_) => RecordType::Cancel,
        }
    }

    /// The record's id: sample, trial or attribution id, or bundle digest.
    pub fn id(&self) -> Option<&str> {
        match self {
            Record::Header(h) => Some(&h.name),
            Record::Bundle(b) => Some(&b.digest),
            Record::Sample(s) => Some(&s.sample_id),
            Record::Trial(t) => Some(&t.trial_id),
            Record::Attribution(a) => Some(&a.attribution_id),
            Record::Cancel(c) => Some(&c.cohort),
            Record::Torn(_) => None,
        }
    }
}

/// The members the writer emits for each type (without `schema`, `type`, `prev`).
impl Header {
    /// JSON members.
    pub fn fields(&self) -> Value {
        json!({"scope": self.scope.as_str(), "name": self.name,
               "created_at": self.created_at, "created_by": self.created_by})
    }
}

impl Sample {
    /// JSON members.
    pub fn fields(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_owned(), v);
        };
        put("sample_id", json!(self.sample_id));
        put("cohort", json!(self.cohort));
        put("evaluator_epoch", json!(self.evaluator_epoch));
        put("run_id", json!(self.run_id));
        put("run_status", json!(self.run_status));
        put("runner_sha256", json!(self.runner_sha256));
        put("experiment", json!(self.experiment.as_str()));
        put("remove", json!(self.remove));
        put("restore", json!(self.restore));
        put("from_step", json!(self.from_step));
        put("patch", json!(self.patch));
        put("seed", json!(self.seed));
        put("sample", json!(self.sample));
        put("baseline_bundle", json!(self.baseline_bundle));
        put("finished_at", json!(self.finished_at));
        if let Some(o) = &self.outcome {
            put(
                "outcome",
                json!({"output_sha256": o.output_sha256, "reproduced": o.reproduced, "score": o.score}),
            );
        }
        if let Some(e) = &self.error {
            put("error", json!(e));
        }
        let cost = self.cost.map(|c| Value::Object(c.fields()));
        put("cost", cost.unwrap_or(Value::Null));
        if let Some(d) = self.duration_ms {
            put("duration_ms", json!(d));
        }
        Value::Object(m)
    }
}

impl Trial {
    /// JSON members.
    pub fn fields(&self) -> Value {
        let mut v = json!({
            "trial_id": self.trial_id,
            "component_kind": self.component_kind,
            "component_id": self.component_id,
            "component_digest": self.component_digest,
            "tested_bundle": self.tested_bundle,
            "comparison_bundle": self.comparison_bundle,
            "baseline_bundle": self.baseline_bundle,
            "evidence_level": self.evidence_level.as_str(),
            "evaluator_epoch": self.evaluator_epoch,
            "cohort": self.cohort,
            "run_id": self.run_id,
            "runner_sha256": self.runner_sha256,
            "seed": self.seed,
            "experiment": self.experiment.as_str(),
            "with_sample": self.with_sample,
            "without_sample": self.without_sample,
            "with_score": self.with_score,
            "without_score": self.without_score,
            "token_cost": self.token_cost,
            "tested_at": self.tested_at,
            "interactions": self.interactions,
        });
        if let Value::Object(m) = &mut v {
            for (k, spent) in [
                ("with_spent", &self.with_spent),
                ("without_spent", &self.without_spent),
            ] {
                if let Some(sp) = spent {
                    m.insert(k.to_owned(), sp.fields());
                }
            }
        }
        v
    }
}

impl Attribution {
    /// JSON members.
    pub fn fields(&self) -> Value {
        json!({
            "attribution_id": self.attribution_id,
            "component_kind": self.component_kind,
            "component_id": self.component_id,
            "component_digest": self.component_digest,
            "tested_bundle": self.tested_bundle,
            "evidence_level": self.evidence_level.as_str(),
            "comparison_bundle": self.comparison_bundle,
            "cohort": self.cohort,
            "baseline_bundle": self.baseline_bundle,
            "evaluator_epoch": self.evaluator_epoch,
            "effect": self.effect,
            "confidence": self.confidence,
            "token_cost": self.token_cost,
            "tested_at": self.tested_at,
            "interactions": self.interactions,
            "trial_ids": self.trial_ids,
            "matched_pair_keys": self.matched_pair_keys,
            "source_trial_digests": self.source_trial_digests,
            "neutral_effect": self.policy.neutral_effect,
            "high_token_cost": self.policy.high_token_cost,
            "disposition": self.disposition.as_str(),
            "supersedes": self.supersedes,
        })
    }
}

impl Torn {
    /// JSON members.
    pub fn fields(&self) -> Value {
        json!({"line": self.line, "bytes": self.bytes})
    }
}

/// A full line's value: `{schema, type, prev, ...fields}`.
pub fn line_value(kind: RecordType, prev: Option<&str>, fields: Value) -> Value {
    let mut m = Map::new();
    m.insert("schema".to_owned(), json!(SCHEMA));
    m.insert("type".to_owned(), json!(kind.as_str()));
    m.insert("prev".to_owned(), json!(prev));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    Value::Object(m)
}
