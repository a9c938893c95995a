//! `import`: convert a trace in any format an importer reads (docs/importers.md) to one
//! `tdn.run/1` file.
//!
//! The converted run passes the loader's validation before anything is written, so the output
//! always opens; the importer's and the loader's warnings go to stderr. A file holding several
//! runs needs `--index` (exit 2 otherwise).

use super::args::ImportArgs;
use super::common::{EXIT_USAGE, load_options};
use crate::analysis::import::{self, SourceFormat};
use crate::analysis::load::{
    self, LoadError, parse_document_skipping_text, run_from_value, skipped_text_warning,
};
use crate::analysis::model::inert_line;
use anyhow::Context;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let path = &args.input_path;
    let opts = load_options(&args.input);
    let text = load::read_text(path)?;
    let (doc, skipped) = parse_document_skipping_text(&text, path)?;
    let format = match opts.format {
        Some(f) => f,
        None => import::sniff(&doc).ok_or_else(|| LoadError::UnknownFormat {
            path: path.clone(),
            why: import::why_unknown(&doc),
        })?,
    };
    if let Some(i) = opts.index
        && format == SourceFormat::Native
        && i != 0
    {
        return Err(LoadError::IndexOutOfRange {
            path: path.clone(),
            index: i,
            count: 1,
        }
        .into());
    }
    if opts.index.is_none()
        && let Some(imp) = import::importer(format)
        && format != SourceFormat::Native
    {
        let count = imp.count(&doc);
        if count > 1 {
            eprintln!(
                "tdn-tui: {}",
                LoadError::NeedsIndex {
                    path: path.clone(),
                    count
                }
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    let mut runs =
        import::to_native_values(format, doc, opts.index).map_err(|e| LoadError::Import {
            path: path.clone(),
            format,
            message: e.to_string(),
        })?;
    let Some(imported) = runs.pop().filter(|_| runs.is_empty()) else {
        return Err(LoadError::NoRuns { path: path.clone() }.into());
    };
    let (_, warnings) = run_from_value(imported.value.clone(), format).map_err(|e| e.at(path))?;
    if skipped > 0 {
        eprintln!(
            "{}: warning: {}",
            path.display(),
            skipped_text_warning(skipped)
        );
    }
    for w in imported.warnings.iter().chain(&warnings) {
        eprintln!("{}: warning: {}", path.display(), inert_line(&w.message));
    }
    let json = serde_json::to_string_pretty(&imported.value)
        .context("cannot serialise the converted run")?;
    std::fs::write(&args.output, json + "\n")
        .with_context(|| format!("{}: cannot write the converted run", args.output.display()))?;
    Ok(ExitCode::SUCCESS)
}
