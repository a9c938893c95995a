//! Reading a run from a file: sniff the format, import when it is not native, validate.
//!
//! Every run, native or imported, passes through [`native::run_from_value`], so one set of rules
//! (docs/run-format.md) decides what loads. Unusable input is a [`LoadError`] that names the file
//! and, for bad JSON, the line and column; for a bad run, the step (id and position) and the
//! field. Recoverable problems come back as [`Warning`]s beside the run. Nothing here panics on any
//! input, and nothing reads a file other than the one asked for.

mod document;
mod error;
mod native;
mod timestamp;

pub use crate::analysis::document::{Document, json_type_name};
pub use document::{parse_document, parse_document_skipping_text, skipped_text_warning};
pub use error::{LoadError, RunError};
pub use native::run_from_value;
pub(crate) use native::{MODEL_STEPS, run_from_imported};
use native::{SIZES, Streamed, run_from_file, run_from_text};
pub use warning::{Cut, Warning};

use crate::analysis::import::{self, SourceFormat};
use crate::analysis::model::Run;
use crate::analysis::progress::{Progress, Stage};
use crate::analysis::warning;
use std::path::Path;

/// The largest run file the loader reads (1 GiB); a bigger file is refused with a message.
pub const MAX_RUN_BYTES: u64 = 1 << 30;

/// How to read a file.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Force a format instead of sniffing (`--from`).
    pub format: Option<SourceFormat>,
    /// Take only the run at this 0-based position of a file holding several (`--index`).
    pub index: Option<usize>,
}

/// One loaded run with what the loader noticed on the way.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The validated run.
    pub run: Run,
    /// Recoverable problems (shown in the screen and the report).
    pub warnings: Vec<Warning>,
    /// Where it came from: `tdn.run/1` or an importer's name.
    pub source_format: SourceFormat,
}

/// Reads every run in the file at `path` (or only the `--index` one).
pub fn load_path(path: &Path, opts: &LoadOptions) -> Result<Vec<Loaded>, LoadError> {
    load_path_with_progress(path, opts, &Progress::new())
}

/// [`load_path`], counting in `progress` how far it has come. A native file is first read a
/// block at a time, never held whole (issue 11); a file that reader is not sure of is read whole.
pub fn load_path_with_progress(
    path: &Path,
    opts: &LoadOptions,
    progress: &Progress,
) -> Result<Vec<Loaded>, LoadError> {
    if matches!(opts.format, None | Some(SourceFormat::Native))
        && let Some(streamed) = run_from_file(path, progress, SIZES)
        && let Some(done) = native_result(streamed, path, opts)
    {
        return done;
    }
    progress.stage(Stage::Reading, 0);
    let text = read_text(path)?;
    // The text is handed over, so it is freed once parsed, before the runs are built.
    load_text(text, path, opts, progress)
}

/// Reads every run in `text`, reporting errors against `path`.
pub fn load_str(text: &str, path: &Path, opts: &LoadOptions) -> Result<Vec<Loaded>, LoadError> {
    load_str_with_progress(text, path, opts, &Progress::new())
}

/// [`load_str`], counting the steps read in `progress`. A native file that starts with its
/// `format` is read step by step, never held whole as JSON values (issue 11).
pub fn load_str_with_progress(
    text: &str,
    path: &Path,
    opts: &LoadOptions,
    progress: &Progress,
) -> Result<Vec<Loaded>, LoadError> {
    load_text(text, path, opts, progress)
}

/// [`load_str_with_progress`] on a text it owns (a `String`) or borrows: an owned text is freed
/// as soon as it is parsed (issue 28: an import holds the runs it builds, not the file too).
fn load_text<T: AsRef<str>>(
    text: T,
    path: &Path,
    opts: &LoadOptions,
    progress: &Progress,
) -> Result<Vec<Loaded>, LoadError> {
    progress.stage(Stage::Loading, 0);
    if matches!(opts.format, None | Some(SourceFormat::Native))
        && let Some(done) = native_result(run_from_text(text.as_ref(), progress), path, opts)
    {
        return done;
    }
    // An OTLP export is decoded span by span as it is parsed, never held as one JSON tree.
    if let Some(streamed) = import::stream(text.as_ref(), opts.format) {
        drop(text);
        let format = streamed.format();
        let raw = import::import_streamed_into(streamed, opts.index, MODEL_STEPS).map_err(|e| {
            LoadError::Import {
                path: path.to_path_buf(),
                format,
                message: e.to_string(),
            }
        })?;
        return validate(raw, format, path);
    }
    let (doc, skipped) = parse_document_skipping_text(text.as_ref(), path)?;
    drop(text);
    let format = match opts.format {
        Some(f) => f,
        None => import::sniff(&doc).ok_or_else(|| LoadError::UnknownFormat {
            path: path.to_path_buf(),
            why: import::why_unknown(&doc),
        })?,
    };
    let mut raw =
        import::to_native_values_into(format, doc, opts.index, MODEL_STEPS).map_err(|e| {
            LoadError::Import {
                path: path.to_path_buf(),
                format,
                message: e.to_string(),
            }
        })?;
    if skipped > 0 {
        for run in &mut raw {
            let w = Warning::file(None, skipped_text_warning(skipped));
            run.warnings.insert(0, w);
        }
    }
    let count = raw.len();
    if let Some(i) = opts.index
        && format == SourceFormat::Native
        && i != 0
    {
        return Err(LoadError::IndexOutOfRange {
            path: path.to_path_buf(),
            index: i,
            count,
        });
    }
    validate(raw, format, path)
}

/// The imported runs checked as native runs are, each with its importer's warnings first.
fn validate(
    raw: Vec<import::ImportedRun>,
    format: SourceFormat,
    path: &Path,
) -> Result<Vec<Loaded>, LoadError> {
    let mut out = Vec::with_capacity(raw.len());
    for imported in raw {
        let (run, mut warnings) =
            run_from_imported(imported.value, imported.messages, imported.built)
                .map_err(|e| e.at(path))?;
        let mut all = imported.warnings;
        all.append(&mut warnings);
        out.push(Loaded {
            run,
            warnings: warning::capped(all),
            source_format: format,
        });
    }
    Ok(out)
}

/// What a native run read by the native readers comes to (`None`: they left the file to the
/// general reader).
fn native_result(
    streamed: Streamed,
    path: &Path,
    opts: &LoadOptions,
) -> Option<Result<Vec<Loaded>, LoadError>> {
    if matches!(streamed, Streamed::NotHere) {
        return None;
    }
    if let Some(i) = opts.index.filter(|&i| i != 0) {
        return Some(Err(LoadError::IndexOutOfRange {
            path: path.to_path_buf(),
            index: i,
            count: 1,
        }));
    }
    Some(match streamed {
        Streamed::Loaded(run, warnings) => Ok(vec![Loaded {
            run: *run,
            warnings: warning::capped(warnings),
            source_format: SourceFormat::Native,
        }]),
        Streamed::Failed(e) => Err(e.at(path)),
        Streamed::NotHere => return None,
    })
}

/// Reads exactly one run: the file's only run, or the `--index` one. A file holding several runs
/// without `--index` is an error that says how many there are.
pub fn load_one(path: &Path, opts: &LoadOptions) -> Result<Loaded, LoadError> {
    let mut runs = load_path(path, opts)?;
    match runs.len() {
        1 => Ok(runs.remove(0)),
        0 => Err(LoadError::NoRuns {
            path: path.to_path_buf(),
        }),
        n => Err(LoadError::NeedsIndex {
            path: path.to_path_buf(),
            count: n,
        }),
    }
}

/// Reads a run file as text: a regular file of at most [`MAX_RUN_BYTES`], valid UTF-8 (a leading
/// byte-order mark is dropped). Errors name the file.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    let io = |cause: std::io::Error| LoadError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > MAX_RUN_BYTES {
        return Err(LoadError::TooBig {
            path: path.to_path_buf(),
            bytes: meta.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    match String::from_utf8(bytes) {
        Ok(mut s) => {
            if s.starts_with('\u{feff}') {
                s.drain(..'\u{feff}'.len_utf8());
            }
            Ok(s)
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let (line, column) = line_col_of_byte(&bytes, at);
            Err(LoadError::Json {
                path: path.to_path_buf(),
                line,
                column,
                message: "the file is not valid UTF-8".to_owned(),
            })
        }
    }
}

/// 1-based line and column of byte offset `at`.
fn line_col_of_byte(bytes: &[u8], at: usize) -> (usize, usize) {
    let upto = bytes.get(..at).unwrap_or(bytes);
    let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = upto.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

#[cfg(test)]
mod call_tests;
#[cfg(test)]
mod tests;
