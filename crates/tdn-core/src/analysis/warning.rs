//! A recoverable problem found while loading: the run still loads, and the warning is shown in
//! the screen and carried into the report (`run.warnings`).

use serde::{Deserialize, Serialize};

/// `{"message", "step", "index", "field"}`; the last three are null when the warning is not about
/// one step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// A sentence for people; names the step and the field, and what was done about it.
    pub message: String,
    /// The step's id.
    pub step: Option<String>,
    /// The step's 0-based position.
    pub index: Option<usize>,
    /// The field at fault.
    pub field: Option<String>,
    /// The warning is about the whole file (its format, values that hold no run), the same for
    /// every run in it: commands that list several runs say it once. Not written to reports.
    #[serde(skip)]
    pub file: bool,
    /// For a warning that a list was cut short: what, how many there were, how many are listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

/// A list cut short (`warnings`, `suspects`): the numbers behind its warning, so a reader need
/// not parse the sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// Which list: `warnings` or `suspects`.
    pub what: String,
    /// How many there were.
    pub found: usize,
    /// How many are listed.
    pub kept: usize,
}

/// At most this many loader warnings are kept per run; the rest are counted in one more.
pub const MAX_WARNINGS: usize = 1_000;

/// `all` with at most [`MAX_WARNINGS`] kept, in order, and one more saying how many were left
/// out, so a hostile file cannot fill the report and the screen with warnings.
pub fn capped(mut all: Vec<Warning>) -> Vec<Warning> {
    if all.len() > MAX_WARNINGS {
        let found = all.len();
        let rest = found - MAX_WARNINGS;
        all.truncate(MAX_WARNINGS);
        all.push(
            Warning::run(
                None,
                format!(
                    "{rest} more warning(s) are not listed: only the first {MAX_WARNINGS} are kept; fix these and validate again"
                ),
            )
            .with_cut("warnings", found, MAX_WARNINGS),
        );
    }
    all
}

impl Warning {
    /// A warning about the run as a whole.
    pub fn run(field: Option<&str>, message: impl Into<String>) -> Self {
        Warning {
            message: message.into(),
            step: None,
            index: None,
            field: field.map(str::to_owned),
            file: false,
            cut: None,
        }
    }

    /// A warning about the whole file, the same for every run it holds.
    pub fn file(field: Option<&str>, message: impl Into<String>) -> Self {
        Warning {
            file: true,
            ..Warning::run(field, message)
        }
    }

    /// The same warning, saying that the list `what` held `found` items of which `kept` are
    /// listed.
    pub fn with_cut(mut self, what: &str, found: usize, kept: usize) -> Self {
        self.cut = Some(Cut {
            what: what.to_owned(),
            found,
            kept,
        });
        self
    }

    /// A warning about one step.
    pub fn step(id: &str, index: usize, field: &str, message: impl Into<String>) -> Self {
        Warning {
            message: message.into(),
            step: Some(id.to_owned()),
            index: Some(index),
            field: Some(field.to_owned()),
            file: false,
            cut: None,
        }
    }
}
