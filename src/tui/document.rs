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
    /// Per step: positions in `report.links` of the links into it, then of those out of it, in
    /// report order (the detail pane lists them without a search of every link).
    pub links_of: StepLinks,
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
        let links_of = StepLinks::build(
            n,
            report
                .links
                .iter()
                .map(|l| (run.step_index(&l.from), run.step_index(&l.to))),
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
            links_of,
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

/// The report's links by step: for each step, the positions of the links into it and out of it.
#[derive(Clone, Debug, Default)]
pub struct StepLinks {
    in_start: Vec<usize>,
    ins: Vec<usize>,
    out_start: Vec<usize>,
    outs: Vec<usize>,
}

impl StepLinks {
    /// From each link's `(from, to)` step positions, in report order (`None`: names no step).
    fn build(n: usize, ends: impl Iterator<Item = (Option<usize>, Option<usize>)>) -> StepLinks {
        let ends: Vec<(Option<usize>, Option<usize>)> = ends.collect();
        let (in_start, ins) = by_step(n, ends.iter().map(|&(_, t)| t));
        let (out_start, outs) = by_step(n, ends.iter().map(|&(f, _)| f));
        StepLinks {
            in_start,
            ins,
            out_start,
            outs,
        }
    }

    /// Positions in `report.links` of the links into step `i`, in report order.
    pub fn into_step(&self, i: usize) -> &[usize] {
        part(&self.in_start, &self.ins, i)
    }

    /// Positions in `report.links` of the links out of step `i`, in report order.
    pub fn out_of_step(&self, i: usize) -> &[usize] {
        part(&self.out_start, &self.outs, i)
    }
}

/// Item positions grouped by the step each names, in item order (a counting sort).
fn by_step(
    n: usize,
    steps: impl Iterator<Item = Option<usize>> + Clone,
) -> (Vec<usize>, Vec<usize>) {
    let mut start = vec![0usize; n + 1];
    for s in steps.clone().flatten() {
        if let Some(c) = start.get_mut(s + 1) {
            *c += 1;
        }
    }
    for k in 0..n {
        let before = start.get(k).copied().unwrap_or(0);
        if let Some(c) = start.get_mut(k + 1) {
            *c += before;
        }
    }
    let mut fill = start.clone();
    let mut out = vec![0usize; start.last().copied().unwrap_or(0)];
    for (pos, s) in steps.enumerate() {
        if let Some(at) = s.and_then(|s| fill.get_mut(s)) {
            if let Some(slot) = out.get_mut(*at) {
                *slot = pos;
            }
            *at += 1;
        }
    }
    (start, out)
}

fn part<'a>(start: &[usize], list: &'a [usize], i: usize) -> &'a [usize] {
    match (start.get(i), start.get(i + 1)) {
        (Some(&a), Some(&b)) => list.get(a..b).unwrap_or(&[]),
        _ => &[],
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
