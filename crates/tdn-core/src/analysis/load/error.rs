//! Why a file could not be loaded. Every message names the file; bad JSON adds line and column, a
//! bad run adds the step (id and position) and the field, and each says what to fix.

pub(crate) use crate::analysis::document::json_type_name as json_type;
use crate::analysis::import::SourceFormat;
use crate::analysis::model::{describe_step, inert_line};
use std::path::PathBuf;

/// A run that cannot be loaded (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{}: cannot read the file: {cause}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (in the message, not chained: printed once).
        cause: std::io::Error,
    },
    /// A directory, device or pipe was given.
    #[error("{}: not a regular file; give the path of a run file", .path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file is larger than the loader reads.
    #[error("{}: the file is {bytes} bytes, more than the 1 GiB a run may hold", .path.display())]
    TooBig {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Not JSON.
    #[error("{}:{line}:{column}: not valid JSON: {message}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// JSON, but no importer recognises it and it has no `format`.
    #[error("{}: {why}", .path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was looked for.
        why: String,
    },
    /// An importer refused the file.
    #[error("{}: cannot import as {}: {message}", .path.display(), .format.name())]
    Import {
        /// The file.
        path: PathBuf,
        /// The importer.
        format: SourceFormat,
        /// Why.
        message: String,
    },
    /// The run breaks a rule of docs/run-format.md that leaves it unusable.
    #[error("{}: {error}", .path.display())]
    Run {
        /// The file.
        path: PathBuf,
        /// Which rule.
        error: RunError,
    },
    /// `--index` past the end.
    #[error("{}: --index {index} is out of range: the file holds {count} run(s), numbered from 0", .path.display())]
    IndexOutOfRange {
        /// The file.
        path: PathBuf,
        /// The asked index.
        index: usize,
        /// How many runs the file holds.
        count: usize,
    },
    /// A command that takes one run got a file holding several.
    #[error("{}: the file holds {count} runs; choose one with --index N (0 to {})", .path.display(), .count.saturating_sub(1))]
    NeedsIndex {
        /// The file.
        path: PathBuf,
        /// How many runs it holds.
        count: usize,
    },
    /// The file holds no run at all.
    #[error("{}: the file holds no run", .path.display())]
    NoRuns {
        /// The file.
        path: PathBuf,
    },
}

/// A rule of the run format that leaves the run unusable, without the file name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The top level is not an object.
    #[error("the run must be a JSON object, found {found}")]
    NotObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// `format` is absent.
    #[error("\"format\" is missing; a native run starts with \"format\": \"tdn.run/1\"")]
    FormatMissing,
    /// `format` names something else.
    #[error("\"format\" is '{found}', which this version does not know; expected \"tdn.run/1\"")]
    FormatUnknown {
        /// What it said (made inert).
        found: String,
    },
    /// A required top-level field is missing or of the wrong type.
    #[error("\"{field}\" is {problem}; {fix}")]
    Field {
        /// The field.
        field: &'static str,
        /// "missing" or "a number, not a string", ...
        problem: String,
        /// What to write instead.
        fix: &'static str,
    },
    /// A step breaks a rule.
    #[error("{}: \"{field}\" {problem}", step_label(.step_id.as_deref(), *.index))]
    Step {
        /// The step's id, when it has a usable one (made inert).
        step_id: Option<String>,
        /// 0-based position.
        index: usize,
        /// The field.
        field: &'static str,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// A step is not an object.
    #[error("the step at position {} is {found}; each step must be an object with \"id\" and \"kind\"", .index + 1)]
    StepNotObject {
        /// 0-based position.
        index: usize,
        /// The JSON type found.
        found: &'static str,
    },
    /// Two steps share an id.
    #[error("{}: \"id\" repeats the id of step at position {}; step ids must be unique", describe_step(.id, *.index), .first + 1)]
    DuplicateStep {
        /// The id.
        id: String,
        /// 0-based position of the second.
        index: usize,
        /// 0-based position of the first.
        first: usize,
    },
}

impl RunError {
    /// Attaches the file.
    pub fn at(self, path: &std::path::Path) -> LoadError {
        LoadError::Run {
            path: path.to_path_buf(),
            error: self,
        }
    }
}

fn step_label(id: Option<&str>, index: usize) -> String {
    match id {
        Some(id) => describe_step(id, index),
        None => format!("the step at position {}", index + 1),
    }
}

/// A stranger's text made safe and short for a message.
pub(crate) fn quoted(s: &str) -> String {
    let mut t: String = s.chars().take(80).collect();
    if s.chars().nth(80).is_some() {
        t.push('…');
    }
    inert_line(&t).into_owned()
}
