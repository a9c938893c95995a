//! The opened [`Document`]: a run, its report and the look-ups built once at open (step labels
//! and excerpts, nesting, the dependency lanes, suspect and dropped rows) so that each frame only
//! looks things up. Nothing here does I/O or decides anything about the run.

use super::panes::dropped::DroppedRow;
use super::widgets::graph_gutter::Graph;
use super::widgets::inert_text::{clipped, one_line};
use crate::analysis::model::Run;
use crate::analysis::report::Report;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Longest step label kept for the timeline and search, in columns.
const MAX_LABEL_WIDTH: usize = 160;
/// Longest excerpt of a step's text kept for the timeline, in columns.
const MAX_EXCERPT_WIDTH: usize = 120;
/// Bytes of a step's text read to make its excerpt (the rest is never looked at).
const EXCERPT_BYTES: usize = 512;

/// An opened run with its report and the look-ups built once.
#[derive(Debug)]
pub struct Document {
    /// The run.
    pub run: Arc<Run>,
    /// Its report: everything the panes show about it.
    pub report: Arc<Report>,
    /// The file the run came from (experiments and the ledger need it).
    pub source: Option<PathBuf>,
    /// Per step: `id kind name @agent`, made inert and clipped (timeline rows and search).
    pub labels: Vec<String>,
    /// Per step: the start of its text (output, else input, else error) on one line, inert and
    /// clipped, shown after the label where there is room; empty when it has none.
    pub excerpts: Vec<String>,
    /// Some step records a duration or tokens (the timeline keeps columns for them).
    pub has_timing: bool,
    /// Per step: nesting depth.
    pub depth: Vec<u16>,
    /// Per step: its parent's index (always an earlier step).
    pub parent: Vec<Option<usize>>,
    /// Per step: some later step names it as `parent`.
    pub has_children: Vec<bool>,
    /// Some step has a parent (the timeline shows fold markers).
    pub nested: bool,
    /// Per step: its position in `report.suspects`.
    pub suspect_of: Vec<Option<usize>>,
    /// Steps in the suspects' shortlist.
    pub shortlisted: HashSet<usize>,
    /// The report's links, indexed for drawing.
    pub graph: Graph,
    /// The rows of the dropped pane.
    pub dropped_rows: Vec<DroppedRow>,
    /// Per step: positions of the loader warnings about it.
    pub warnings_of: HashMap<usize, Vec<usize>>,
}

impl Document {
    /// Builds the look-ups. Report entries that name no step of the run are kept in the report
    /// and simply not marked on the timeline.
    pub fn new(run: Run, report: Report, source: Option<PathBuf>) -> Document {
        Document::from_shared(Arc::new(run), report, source)
    }

    /// [`Document::new`] for a run shared with its opener (no copy of the run).
    pub fn from_shared(run: Arc<Run>, report: Report, source: Option<PathBuf>) -> Document {
        let n = run.steps.len();
        let mut depth = vec![0u16; n];
        let mut parent = vec![None; n];
        let mut has_children = vec![false; n];
        let mut labels = Vec::with_capacity(n);
        let mut excerpts = Vec::with_capacity(n);
        let mut has_timing = false;
        for (i, step) in run.steps.iter().enumerate() {
            if let Some(p) = step
                .parent
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
                && p < i
            {
                let d = depth.get(p).copied().unwrap_or(0).saturating_add(1);
                if let Some(slot) = depth.get_mut(i) {
                    *slot = d;
                }
                if let Some(slot) = has_children.get_mut(p) {
                    *slot = true;
                }
                if let Some(slot) = parent.get_mut(i) {
                    *slot = Some(p);
                }
            }
            let name = step
                .name
                .as_deref()
                .or(step.tool.as_ref().map(|t| t.name.as_str()))
                .unwrap_or("");
            let mut label = format!("{} {}", step.id, step.kind_label());
            if !name.is_empty() {
                label.push(' ');
                label.push_str(name);
            }
            if let Some(a) = &step.agent {
                label.push_str(" @");
                label.push_str(a);
            }
            labels.push(clipped(&label, MAX_LABEL_WIDTH).into_owned());
            excerpts.push(step_excerpt(step));
            has_timing |= step.duration_ms().is_some()
                || step
                    .usage
                    .as_ref()
                    .is_some_and(|u| u.input_tokens.is_some() || u.output_tokens.is_some());
        }
        let mut suspect_of = vec![None; n];
        for (pos, s) in report.suspects.iter().enumerate() {
            if let Some(slot) = run.step_index(&s.step).and_then(|i| suspect_of.get_mut(i))
                && slot.is_none()
            {
                *slot = Some(pos);
            }
        }
        let shortlisted = report
            .confidence
            .shortlist
            .iter()
            .filter_map(|id| run.step_index(id))
            .collect();
        let graph = Graph::build(
            n,
            report
                .links
                .iter()
                .filter_map(|l| Some((run.step_index(&l.from)?, run.step_index(&l.to)?))),
        );
        let dropped_rows = DroppedRow::build(&report);
        let mut warnings_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (wi, w) in report.run.warnings.iter().enumerate() {
            if let Some(i) = w.step.as_deref().and_then(|id| run.step_index(id)) {
                warnings_of.entry(i).or_default().push(wi);
            }
        }
        Document {
            run,
            report: Arc::new(report),
            source,
            labels,
            excerpts,
            has_timing,
            depth,
            parent,
            nested: has_children.iter().any(|&c| c),
            has_children,
            suspect_of,
            shortlisted,
            graph,
            dropped_rows,
            warnings_of,
        }
    }

    /// The step index of a report's step id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.run.step_index(id)
    }

    /// How a person names the step at `i`: `step 's4' (position 4)`.
    pub fn describe(&self, i: usize) -> String {
        self.run
            .steps
            .get(i)
            .map(|s| s.describe())
            .unwrap_or_else(|| format!("position {}", i + 1))
    }
}

/// The start of what a step said on one line: its output, else its error, else (for a search or
/// a tool call, whose input is its query) its input, when it is text (JSON values are left to the
/// detail pane); whitespace runs become one space. A model step's input is its prompt, not
/// something it said, so it is never shown.
fn step_excerpt(step: &crate::analysis::model::Step) -> String {
    use crate::analysis::model::StepKind;
    fn text_of(v: &Option<serde_json::Value>) -> Option<&str> {
        match v {
            Some(serde_json::Value::String(t)) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        }
    }
    let query = matches!(step.kind, StepKind::Retrieval | StepKind::Tool);
    let text = text_of(&step.output)
        .or(step.error.as_deref())
        .or(if query { text_of(&step.input) } else { None })
        .unwrap_or("");
    if text.is_empty() {
        return String::new();
    }
    one_line(text, EXCERPT_BYTES, MAX_EXCERPT_WIDTH)
}
