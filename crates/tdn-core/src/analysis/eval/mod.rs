//! Measuring the blame against people's labels (`tdn-tui eval`): labels from Who&When's inline
//! fields, a labels file or per-trace annotation files, predictions from reports, top-1 and top-3
//! step accuracy by exact index (any accepted step of a label) and agent accuracy, beside the
//! random and trivial baselines on the same runs and each rule's own precision, per set and in
//! total.
//!
//! Pure: it scores the runs and reports it is given; reading files, analysing them and printing
//! belong to the command line.

mod baselines;
mod labels;
mod rules;
mod score;
mod table;

pub use baselines::{BASELINES, RANDOM, candidate, random_expectation};
pub use labels::{
    Label, LabelError, LabelFile, Reading, Resolved, StepRef, annotation_label, inline_label,
    label_keys, parse_step, set_name,
};
pub use rules::rule_findings;
pub use score::{
    BaselineRun, BaselineScore, LabelOut, Outcome, Prediction, Rate, RuleFinding, RuleScore,
    RuleTop, RunKey, RunResult, SetScore, TOP_K, Tally, judge, predict, summarize,
};
pub use table::{render_rules, render_table};

use serde::{Deserialize, Serialize};

/// The `format` of `eval --json`.
pub const EVAL_FORMAT: &str = "tdn.eval/2";

/// A run that had no label and was not scored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unlabelled {
    /// The file.
    pub file: String,
    /// The run's position in a file holding several, else null.
    pub index: Option<usize>,
    /// The run's id.
    pub run: String,
}

/// A file that could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileError {
    /// The file.
    pub file: String,
    /// Why (the loader's message).
    pub message: String,
}

/// Everything `eval` measured: what `--json` prints and the table shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// Always [`EVAL_FORMAT`].
    pub format: String,
    /// True when the runs' reference answers were in force (false with `--no-reference`).
    pub reference: bool,
    /// Per set, by name.
    pub sets: Vec<SetScore>,
    /// Over every set (`set` is `all`).
    pub total: SetScore,
    /// Each scored run, by file and position.
    pub runs: Vec<RunResult>,
    /// Runs without a label, by file and position.
    pub unlabelled: Vec<Unlabelled>,
    /// Files that could not be loaded, by file.
    pub errors: Vec<FileError>,
}

impl EvalReport {
    /// Sorts what was gathered (files may finish in any order) and scores it.
    pub fn new(
        reference: bool,
        mut runs: Vec<RunResult>,
        mut unlabelled: Vec<Unlabelled>,
        mut errors: Vec<FileError>,
    ) -> Self {
        runs.sort_by(|a, b| (&a.file, a.index, a.reading).cmp(&(&b.file, b.index, b.reading)));
        unlabelled.sort_by(|a, b| (&a.file, a.index).cmp(&(&b.file, b.index)));
        errors.sort_by(|a, b| a.file.cmp(&b.file));
        let (sets, total) = summarize(&runs);
        EvalReport {
            format: EVAL_FORMAT.to_owned(),
            reference,
            sets,
            total,
            runs,
            unlabelled,
            errors,
        }
    }
}
