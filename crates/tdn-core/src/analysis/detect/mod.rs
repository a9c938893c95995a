//! The rule detectors of docs/how-it-decides.md ("Detect"), one file each, listed in one
//! registry, [`ALL`]. A detector reads the run and the derived [`Facts`] and returns
//! [`Finding`]s: a step, a category, a confidence and evidence sentences a person can check.
//! Detectors never rank, never print and never do I/O; ranking is `analysis::rank`.

pub(crate) mod answer;
mod answer_handoff;
mod answer_origin;
mod answer_path;
mod blocked;
mod changed_state;
mod code_failure;
mod compiled_schema;
pub(crate) mod confirmation;
mod context_window;
pub(crate) mod conversation;
mod facts;
pub(crate) mod final_answer;
mod grounding;
mod hallucination;
mod loops;
mod made_up_data;
mod memory;
mod planning;
mod point_of_no_return;
mod prescan;
mod progress_stall;
mod prompt_injection;
mod reissued;
mod retrieval;
mod retry;
mod run_status;
pub(crate) mod schema;
mod task_drift;
#[cfg(test)]
mod tests_support;
mod tool_error;
mod wrong_tool;

pub use crate::analysis::model::decides;
pub(crate) use facts::INFRASTRUCTURE;
pub use facts::{Facts, RunFacts};
// Shared with the claims and the ranking, below the rules (no circle between modules).
use crate::analysis::{say, state_change};

/// Which detector found something; the names are the report's `detector` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DetectorId {
    /// Failed steps and arguments their tool's schema rejects.
    ToolErrors,
    /// A tool called where another fits.
    WrongTool,
    /// The first state-changing call of a failed run.
    PointOfNoReturn,
    /// Identical repeated calls; the step budget.
    Loops,
    /// Empty searches and outdated sources.
    RetrievalQuality,
    /// Retrieved text or tool output giving the model orders.
    PromptInjection,
    /// A nearly full context window.
    ContextWindow,
    /// A memory read that differs from what was written.
    MemoryConsistency,
    /// A decision whose chosen option needed a step that failed.
    Planning,
    /// Claims of the answer no source supports, or one contradicts.
    Hallucination,
    /// The run crashed and no step failed.
    RunStatus,
    /// An opening brief that leaves out the task.
    TaskDrift,
    /// A step that says it works from invented data or an assumption.
    MadeUpData,
    /// The step that first stated the final answer's values.
    AnswerOrigin,
    /// The author of the first code run that failed.
    CodeFailure,
    /// The step that opened what the team was stuck on when its coordinator saw no progress.
    ProgressStall,
    /// The steps that handed the final answer's value in to its origin and out of it.
    AnswerHandoff,
    /// The decision that committed the final answer of a failed run.
    FinalAnswer,
    /// The decisions the final answer of a failed run rested on: the action before, the plan.
    AnswerPath,
    /// A decision right after a failure whose own action failed again.
    RepeatedFailure,
    /// A change made before the user confirmed it.
    Confirmation,
    /// A number stated that nothing before it gives.
    Grounding,
    /// A change that made a later call on the same thing fail.
    ConflictingChange,
    /// An agent's action after which its coordinator asked it again.
    Instructions,
    /// A fetched page that was a bot check or an access block.
    BlockedSource,
    /// The optional judge model.
    Judge,
    /// The comparison with a good run of the same task (`--against`, docs/compare.md).
    Compare,
}

impl DetectorId {
    /// The name in the report and the docs.
    pub fn as_str(self) -> &'static str {
        match self {
            DetectorId::ToolErrors => "tool_errors",
            DetectorId::WrongTool => "wrong_tool",
            DetectorId::PointOfNoReturn => "point_of_no_return",
            DetectorId::Loops => "loops",
            DetectorId::RetrievalQuality => "retrieval_quality",
            DetectorId::PromptInjection => "prompt_injection",
            DetectorId::ContextWindow => "context_window",
            DetectorId::MemoryConsistency => "memory_consistency",
            DetectorId::Planning => "planning",
            DetectorId::Hallucination => "hallucination",
            DetectorId::RunStatus => "run_status",
            DetectorId::TaskDrift => "task_drift",
            DetectorId::MadeUpData => "made_up_data",
            DetectorId::AnswerOrigin => "answer_origin",
            DetectorId::CodeFailure => "code_failure",
            DetectorId::ProgressStall => "progress_stall",
            DetectorId::AnswerHandoff => "answer_handoff",
            DetectorId::FinalAnswer => "final_answer",
            DetectorId::AnswerPath => "answer_path",
            DetectorId::RepeatedFailure => "repeated_failure",
            DetectorId::Confirmation => "confirmation",
            DetectorId::Grounding => "grounding",
            DetectorId::ConflictingChange => "conflicting_change",
            DetectorId::Instructions => "instructions",
            DetectorId::BlockedSource => "blocked_source",
            DetectorId::Judge => "judge",
            DetectorId::Compare => "compare",
        }
    }
}

/// What kind of problem a finding is; the names are the report's `category` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// A tool call failed.
    ToolError,
    /// A step other than a tool call failed.
    StepError,
    /// A tool call's arguments fail its schema.
    InvalidArguments,
    /// A model step wrote the value a failing tool rejected (found by the walk back).
    WrongValue,
    /// A tool failed with valid arguments and an error not about them: the tool or its service.
    ServiceError,
    /// A tool was called where another fits.
    WrongTool,
    /// The first state-changing call of a failed run.
    PointOfNoReturn,
    /// The same call three or more times with identical arguments.
    RepeatedCall,
    /// A decision right after a failure whose own action failed again.
    RepeatedFailure,
    /// The step budget was used up or exceeded.
    StepBudget,
    /// A search returned nothing.
    EmptyRetrieval,
    /// A search returned a source marked outdated.
    OutdatedSource,
    /// Retrieved text or a tool result gives the model orders.
    PromptInjection,
    /// A prompt filled 95% or more of the window.
    ContextFull,
    /// A memory read differs from what was written.
    MemoryMismatch,
    /// A decision chose an option whose required step failed.
    FailedPrecondition,
    /// A claim of the answer no source supports.
    UnsupportedClaim,
    /// A claim of the answer a close source contradicts.
    ContradictedClaim,
    /// A claim of the answer only an outdated source supports.
    StaleClaim,
    /// The run crashed after its last recorded step.
    RunError,
    /// The opening brief leaves out the task.
    TaskDrift,
    /// A step works from invented data or an assumption.
    MadeUpData,
    /// The step that first stated the final answer's values.
    AnswerOrigin,
    /// A step wrote the code of the first code run that failed.
    CodeFailure,
    /// A step of the agent loop failed on its own (its code, its output's format): blamed on the
    /// latest decision inside it.
    ExecutionError,
    /// A step opened what the team got stuck on.
    ProgressStall,
    /// The coordinator's instruction that sent the agent to what the team got stuck on.
    StallInstruction,
    /// A step handed the final answer's value in to its origin, or took it up.
    AnswerHandoff,
    /// The decision that committed the final answer of a failed run.
    FinalAnswer,
    /// A decision that gave the final answer with nothing looked up, run or asked before it.
    UnsourcedAnswer,
    /// The agent's last action before the decision that committed a failed final answer.
    AnswerBasis,
    /// The plan the agent followed to a failed final answer.
    FollowedPlan,
    /// A change made before the user confirmed it.
    UnconfirmedAction,
    /// A conversation that ends on the user's yes to a change the agent proposed, never made.
    ConfirmedNotDone,
    /// A number stated that nothing before it gives.
    UngroundedNumber,
    /// A change that made a later call on the same thing fail.
    ConflictingChange,
    /// An agent's action that left an instruction unmet, so it was asked again.
    ReissuedInstruction,
    /// A fetched page was a bot check or an access block.
    BlockedPage,
    /// The step the judge named.
    JudgePick,
    /// Where this run first does something else than a good run of the same task (`--against`).
    FirstDivergence,
}

impl Category {
    /// Every category, in docs order.
    pub const ALL: [Category; 40] = [
        Category::ToolError,
        Category::StepError,
        Category::InvalidArguments,
        Category::WrongValue,
        Category::ServiceError,
        Category::WrongTool,
        Category::PointOfNoReturn,
        Category::RepeatedCall,
        Category::RepeatedFailure,
        Category::StepBudget,
        Category::EmptyRetrieval,
        Category::OutdatedSource,
        Category::PromptInjection,
        Category::ContextFull,
        Category::MemoryMismatch,
        Category::FailedPrecondition,
        Category::UnsupportedClaim,
        Category::ContradictedClaim,
        Category::StaleClaim,
        Category::RunError,
        Category::TaskDrift,
        Category::MadeUpData,
        Category::AnswerOrigin,
        Category::CodeFailure,
        Category::ExecutionError,
        Category::ProgressStall,
        Category::StallInstruction,
        Category::AnswerHandoff,
        Category::FinalAnswer,
        Category::UnsourcedAnswer,
        Category::AnswerBasis,
        Category::FollowedPlan,
        Category::UnconfirmedAction,
        Category::ConfirmedNotDone,
        Category::UngroundedNumber,
        Category::ConflictingChange,
        Category::ReissuedInstruction,
        Category::BlockedPage,
        Category::JudgePick,
        Category::FirstDivergence,
    ];

    /// True for a finding that names no fault: a step listed because of where it sits (the
    /// first change of a failed run, the last step of a run that crashed, a neighbour of the
    /// answer's origin, the instruction behind a stall) or because it wrote or led to the final
    /// answer (the commit, the action before it, the plan it followed). Such a step is a *lead*,
    /// listed apart from the suspects and never counted as one (docs/how-it-decides.md, "Leads").
    pub fn is_lead(self) -> bool {
        matches!(
            self,
            Category::PointOfNoReturn
                | Category::RunError
                | Category::StallInstruction
                | Category::AnswerHandoff
                | Category::FinalAnswer
                | Category::AnswerBasis
                | Category::FollowedPlan
        )
    }

    /// The name in the report and the docs.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::ToolError => "tool_error",
            Category::StepError => "step_error",
            Category::InvalidArguments => "invalid_arguments",
            Category::WrongValue => "wrong_value",
            Category::ServiceError => "service_error",
            Category::WrongTool => "wrong_tool",
            Category::PointOfNoReturn => "point_of_no_return",
            Category::RepeatedCall => "repeated_call",
            Category::RepeatedFailure => "repeated_failure",
            Category::StepBudget => "step_budget",
            Category::EmptyRetrieval => "empty_retrieval",
            Category::OutdatedSource => "outdated_source",
            Category::PromptInjection => "prompt_injection",
            Category::ContextFull => "context_full",
            Category::MemoryMismatch => "memory_mismatch",
            Category::FailedPrecondition => "failed_precondition",
            Category::UnsupportedClaim => "unsupported_claim",
            Category::ContradictedClaim => "contradicted_claim",
            Category::StaleClaim => "stale_claim",
            Category::RunError => "run_error",
            Category::TaskDrift => "task_drift",
            Category::MadeUpData => "made_up_data",
            Category::AnswerOrigin => "answer_origin",
            Category::CodeFailure => "code_failure",
            Category::ExecutionError => "execution_error",
            Category::ProgressStall => "progress_stall",
            Category::StallInstruction => "stall_instruction",
            Category::AnswerHandoff => "answer_handoff",
            Category::FinalAnswer => "final_answer",
            Category::AnswerBasis => "answer_basis",
            Category::FollowedPlan => "followed_plan",
            Category::UnconfirmedAction => "unconfirmed_action",
            Category::ConfirmedNotDone => "confirmed_not_done",
            Category::UngroundedNumber => "ungrounded_number",
            Category::ConflictingChange => "conflicting_change",
            Category::ReissuedInstruction => "reissued_instruction",
            Category::BlockedPage => "blocked_page",
            Category::UnsourcedAnswer => "unsourced_answer",
            Category::JudgePick => "judge_pick",
            Category::FirstDivergence => "first_divergence",
        }
    }
}

/// Whether a finding is where a failure showed up, or a step that looks wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nature {
    /// Where the failure surfaced (a failed call, a bad claim): the walk back starts here.
    Symptom,
    /// A step that looks wrong on its own; a candidate root cause.
    Suspect,
}

/// One thing a detector found.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The step's position.
    pub step: usize,
    /// What kind of problem.
    pub category: Category,
    /// Who found it.
    pub detector: DetectorId,
    /// The detector's confidence, before the ranking multipliers.
    pub confidence: f64,
    /// Symptom or suspect.
    pub nature: Nature,
    /// One line for people (run text in it is inert).
    pub title: String,
    /// Sentences a person can check against the run (run text in them is inert).
    pub evidence: Vec<String>,
    /// About what a read returned: scored x0.6 when no later step used the read.
    pub about_read: bool,
    /// A wording problem (a claim of the answer): x0.7 in a run that changed something.
    pub wording: bool,
    /// Further steps the walk back looks through (a claim's evidence), besides the links.
    pub upstream: Vec<usize>,
    /// The step only showed the effect of a decision made elsewhere (a failed call's result
    /// whose cause is known): kept as a record, not listed as a suspect.
    pub effect_only: bool,
    /// For a finding moved to the decision behind a step: the step where it was found (a
    /// call, a search), where the decision's effect showed.
    pub shown_at: Option<usize>,
}

impl Finding {
    /// A finding with no flags set.
    pub fn new(
        step: usize,
        category: Category,
        detector: DetectorId,
        confidence: f64,
        nature: Nature,
        title: String,
    ) -> Finding {
        Finding {
            step,
            category,
            detector,
            confidence,
            nature,
            title,
            evidence: Vec::new(),
            about_read: false,
            wording: false,
            upstream: Vec::new(),
            effect_only: false,
            shown_at: None,
        }
    }

    /// Adds an evidence sentence.
    pub fn because(mut self, sentence: String) -> Finding {
        self.evidence.push(sentence);
        self
    }
}

/// One rule detector.
pub trait Detector: Sync {
    /// Its stable name (report and docs).
    fn id(&self) -> DetectorId;
    /// One line for docs/how-it-decides.md.
    fn doc(&self) -> &'static str;
    /// Everything it finds in the run.
    fn detect(&self, facts: &Facts<'_>) -> Vec<Finding>;
}

/// Every detector, in the order of docs/how-it-decides.md.
pub const ALL: &[&dyn Detector] = &[
    &tool_error::ToolErrors,
    &wrong_tool::WrongTool,
    &point_of_no_return::PointOfNoReturn,
    &loops::Loops,
    &retrieval::RetrievalQuality,
    &prompt_injection::PromptInjection,
    &context_window::ContextWindow,
    &memory::MemoryConsistency,
    &planning::Planning,
    &hallucination::Hallucination,
    &run_status::RunStatus,
    &task_drift::TaskDrift,
    &made_up_data::MadeUpData,
    &answer_origin::AnswerOrigin,
    &code_failure::CodeFailure,
    &progress_stall::ProgressStall,
    &answer_handoff::AnswerHandoff,
    &final_answer::FinalAnswer,
    &answer_path::AnswerPath,
    &retry::RepeatedFailure,
    &confirmation::UnconfirmedAction,
    &grounding::UngroundedNumber,
    &changed_state::ConflictingChange,
    &reissued::ReissuedInstruction,
    &blocked::BlockedPage,
];

/// A count as a float, for ratios (saturating; counts never come near the limit).
pub(crate) fn count(n: usize) -> f64 {
    u32::try_from(n).map_or(f64::from(u32::MAX), f64::from)
}

/// Runs every detector. They only read the facts, so they run on the thread pool; their
/// findings are put together in the order of [`ALL`], as if run one after another (issue 11:
/// once the influence ranking is done the second core is free while they run).
pub fn detect_all(facts: &Facts<'_>) -> Vec<Finding> {
    use rayon::prelude::*;
    let found: Vec<Vec<Finding>> = ALL
        .par_iter()
        .with_max_len(1)
        .map(|d| d.detect(facts))
        .collect();
    found.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_detector_and_category_is_in_the_docs() {
        const DOC: &str = include_str!("../../../../../docs/how-it-decides.md");
        for d in ALL {
            assert!(
                DOC.contains(&format!("`{}`", d.id().as_str())),
                "{}",
                d.id().as_str()
            );
        }
        for c in Category::ALL {
            assert!(DOC.contains(&format!("`{}`", c.as_str())), "{}", c.as_str());
        }
    }

    #[test]
    fn the_registry_holds_every_detector_once_with_distinct_names() {
        assert_eq!(ALL.len(), 25);
        let names: HashSet<_> = ALL.iter().map(|d| d.id().as_str()).collect();
        assert_eq!(names.len(), ALL.len());
        assert!(!names.contains("judge"));
        for d in ALL {
            assert!(!d.doc().is_empty());
        }
    }

    #[test]
    fn findings_come_in_registry_order_as_if_each_detector_ran_in_turn() {
        use crate::analysis::load::{LoadOptions, load_path};
        let mut found = 0;
        for path in crate::analysis::testutil::sample_runs() {
            for loaded in load_path(&path, &LoadOptions::default()).unwrap() {
                let (all, one_by_one) = super::tests_support::facts_for(&loaded.run, |f| {
                    let in_turn: Vec<Finding> = ALL.iter().flat_map(|d| d.detect(f)).collect();
                    (detect_all(f), in_turn)
                });
                assert_eq!(all, one_by_one, "{}", path.display());
                found += all.len();
            }
        }
        assert!(found > 20, "the sample runs hold findings: {found}");
    }

    #[test]
    fn category_names_are_distinct_snake_case() {
        let names: HashSet<_> = Category::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), Category::ALL.len());
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
    }
}
