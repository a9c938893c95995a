//! Importers end to end: each hand-made trace in tests/fixtures/import/ loads with no flags, its
//! steps come out in the order, kinds, parents, tools and errors the trace records, and the
//! `import`, `validate` and `eval` commands behave as docs/importers.md and docs/accuracy.md say.
//! Real framework exports (`real`) open and read as the files say. This file holds what the tests
//! share; `otlp`, `datasets`, `commands` and `real` hold the tests.

mod commands;
mod datasets;
mod otlp;
mod real;
mod units;

pub use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tdn_tui::analysis::import::SourceFormat;
use tdn_tui::analysis::influence::{ConfidenceOptions, EmbedError, Embedder};
use tdn_tui::analysis::load::{LoadOptions, Loaded, load_path};
use tdn_tui::analysis::model::{Run, RunStatus, StepKind};
use tdn_tui::analysis::report::{AnalyzeOptions, ReferenceChoice, analyze};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

pub fn load_all(name: &str) -> Vec<Loaded> {
    load_path(&fixture(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name} does not load: {e}"))
}

pub fn load(name: &str) -> Loaded {
    let mut runs = load_all(name);
    assert_eq!(runs.len(), 1, "{name} should hold one run");
    runs.remove(0)
}

pub fn ids(run: &Run) -> Vec<&str> {
    run.steps.iter().map(|s| s.id.as_str()).collect()
}

pub fn kinds(run: &Run) -> Vec<StepKind> {
    run.steps.iter().map(|s| s.kind).collect()
}

pub fn parents(run: &Run) -> Vec<Option<&str>> {
    run.steps
        .iter()
        .map(|s| s.parent.as_ref().map(|p| p.as_str()))
        .collect()
}

pub fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tdn-tui: {e}"))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub struct FlatEmbedder;

impl Embedder for FlatEmbedder {
    fn name(&self) -> &str {
        "test"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    }
}
