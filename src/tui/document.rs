//! The opened [`Document`]: a run, its report and the look-ups built once at open (step labels
//! and excerpts, nesting, the dependency lanes, suspect and dropped rows) so that each frame only
//! looks things up. Nothing here does I/O or decides anything about the run.

mod links;
pub mod names;
mod rows;
#[cfg(test)]
mod tests;
pub mod turn;

pub use links::StepLinks;

use super::panes::dropped::DroppedIndex;
use super::widgets::graph_gutter::Graph;
use super::widgets::inert_text::{clipped, one_line};
use crate::analysis::cost::{CostSource, format_usd};
use crate::analysis::model::{Json, Run};
use crate::analysis::report::{Report, Suspect};
use links::link_lookups;
use rows::StepRows;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Longest step label kept for the timeline and search, in columns.
const MAX_LABEL_WIDTH: usize = 160;
/// Bytes of one text read to make an excerpt (the rest is never looked at).
const EXCERPT_BYTES: usize = 512;
/// Members of an object or array an excerpt looks at.
const EXCERPT_MEMBERS: usize = 8;

/// An opened run with its report and the look-ups built once.
#[derive(Debug)]
pub struct Document {
    /// The run.
    pub run: Arc<Run>,
    /// Its report: everything the panes show about it.
    pub report: Arc<Report>,
    /// The file the run came from (experiments and the ledger need it).
    pub source: Option<PathBuf>,
    /// The file the report was read from (`--report`), when it was read rather than computed:
    /// such a report is shown as it is and never analysed again, not even when the run's file
    /// changes.
    pub saved_report: Option<PathBuf>,
    /// Per step: `name @agent kind id` (the id only when a person could read it, see
    /// [`names`]), made inert and clipped (timeline rows and search).
    pub labels: Vec<String>,
    /// Per step: the character positions in its label where the agent, the kind and the id
    /// start (past the end when absent or cut).
    pub label_parts: Vec<[u16; 3]>,
    /// Some step records a duration or tokens (the timeline keeps columns for them).
    pub has_timing: bool,
    /// Some step records a duration (the timeline's `time` column has a header).
    pub has_durations: bool,
    /// Some step records tokens (the timeline's `tokens` column has a header).
    pub has_tokens: bool,
    /// Per step: when it ran, on the run's clock, with its nested steps included (for the
    /// waterfall); `None` without timestamps.
    pub spans: Vec<Option<(i64, i64)>>,
    /// The run's clock: the earliest start and the latest end of any step.
    pub clock: Option<(i64, i64)>,
    /// Per step: nesting depth.
    pub depth: Vec<u16>,
    /// Per step: its parent's index (always an earlier step).
    pub parent: Vec<Option<usize>>,
    /// Per step: some later step names it as `parent`.
    pub has_children: Vec<bool>,
    /// Some step has a parent (the timeline shows fold markers).
    pub nested: bool,
    /// Per step: its cost in dollars and whether it is an estimate, from the report's `cost`
    /// (empty when the report has none).
    pub step_cost: Vec<Option<(f64, bool)>>,
    /// Per step: another step with an opaque id has the same name (the short references
    /// add the position to tell them apart); empty when no name repeats.
    pub name_repeats: Vec<bool>,
    /// Per step: its position in `report.suspects`.
    pub suspect_of: Vec<Option<usize>>,
    /// Suspects in the full ranking: the listed ones and the like ones grouped under them
    /// (`similar`).
    pub ranked: usize,
    /// Digits of the largest listed rank (at least 2): the suspects' rank column is this wide,
    /// so rows stay aligned when grouping makes ranks skip to `#716`.
    pub rank_digits: usize,
    /// Steps in the suspects' shortlist.
    pub shortlisted: HashSet<usize>,
    /// The influence shortlist as positions in `report.influence.scores`, in shortlist order.
    pub influence_shortlist: Vec<usize>,
    /// Per position in `report.influence.scores`: the entry is shortlisted.
    pub influence_shortlisted: Vec<bool>,
    /// The report's links, indexed for drawing.
    pub graph: Graph,
    /// Per step: positions in `report.links` of the links into it, then of those out of it, in
    /// report order (the detail pane lists them without a search of every link).
    pub links_of: StepLinks,
    /// The dropped pane's rows, counts and comparisons.
    pub dropped: DroppedIndex,
    /// Per step: positions of the loader warnings about it.
    pub warnings_of: HashMap<usize, Vec<usize>>,
    /// The good run the run was compared with, and the comparison (`--against`, or picked in the
    /// screen); shown by the compare view.
    pub against: Option<Arc<super::compare::AgainstView>>,
}

impl Document {
    /// Builds the look-ups. Report entries that name no step of the run are kept in the report
    /// and simply not marked on the timeline.
    pub fn new(run: Run, report: Report, source: Option<PathBuf>) -> Document {
        Document::from_shared(Arc::new(run), report, source)
    }

    /// [`Document::new`] for a run shared with its opener (no copy of the run). The look-ups
    /// that read every step or every link are built side by side on the thread pool: at 100,000
    /// steps they took 0.1 s on one thread between the analysis and the first frame (issue 11).
    pub fn from_shared(run: Arc<Run>, report: Report, source: Option<PathBuf>) -> Document {
        let n = run.steps.len();
        let (rows, ((graph, links_of), dropped)) = rayon::join(
            || StepRows::build(&run),
            || {
                rayon::join(
                    || link_lookups(&run, &report),
                    || DroppedIndex::build(&run, &report),
                )
            },
        );
        let clock = rows
            .spans
            .iter()
            .flatten()
            .fold(None, |acc, &(a, b)| match acc {
                None => Some((a, b)),
                Some((c, d)) => Some((a.min(c), b.max(d))),
            });
        let mut suspect_of = vec![None; n];
        for (pos, s) in report.suspects.iter().enumerate() {
            if let Some(slot) = run.step_index(&s.step).and_then(|i| suspect_of.get_mut(i))
                && slot.is_none()
            {
                *slot = Some(pos);
            }
        }
        let name_repeats = name_repeats(&run);
        let mut step_cost = Vec::new();
        if let Some(c) = &report.cost {
            step_cost = vec![None; n];
            for sc in &c.steps {
                if let Some(slot) = step_cost.get_mut(sc.index) {
                    *slot = Some((sc.usd, sc.source == CostSource::Estimated));
                }
            }
        }
        let shortlisted = report
            .confidence
            .shortlist
            .iter()
            .filter_map(|id| run.step_index(id))
            .collect();
        let (influence_shortlist, influence_shortlisted) = influence_shortlist(&report);
        let rank_digits = report
            .suspects
            .iter()
            .map(|s| s.rank.to_string().len())
            .max()
            .unwrap_or(0)
            .max(2);
        let ranked = report.suspects.len()
            + report
                .suspects
                .iter()
                .map(|s| s.similar.len())
                .sum::<usize>();
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
            saved_report: None,
            labels: rows.labels,
            label_parts: rows.label_parts,
            has_timing: rows.has_durations || rows.has_tokens,
            has_durations: rows.has_durations,
            has_tokens: rows.has_tokens,
            spans: rows.spans,
            clock,
            depth: rows.depth,
            parent: rows.parent,
            nested: rows.has_children.iter().any(|&c| c),
            has_children: rows.has_children,
            suspect_of,
            name_repeats,
            step_cost,
            ranked,
            rank_digits,
            shortlisted,
            influence_shortlist,
            influence_shortlisted,
            graph,
            links_of,
            dropped,
            warnings_of,
            against: None,
        }
    }

    /// Step `i`'s entry in the report's suspects, when it is one.
    pub fn suspect_at(&self, i: usize) -> Option<&Suspect> {
        self.suspect_of
            .get(i)
            .copied()
            .flatten()
            .and_then(|p| self.report.suspects.get(p))
    }

    /// The step index of a report's step id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.run.step_index(id)
    }

    /// How a short place on screen (a suspect's row, a shortlist, a hint) names step `i`: an id
    /// a person chose as it is (`s4`); an opaque one by the step's name, with its position when
    /// another step has that name too (`ChatCompletion (3)`), else by its kind and position
    /// (`llm (3)`). Inert; the name cut to 40 columns.
    pub fn step_ref(&self, i: usize) -> String {
        self.step_ref_with(i, true, 40)
    }

    /// [`Document::step_ref`] in at most `max` columns, with or without the position a repeated
    /// name gets (a place that shows the position beside it leaves it out): the name gives way,
    /// the position stays (`ChatComplet… (3)`).
    pub fn step_ref_with(&self, i: usize, position: bool, max: usize) -> String {
        let Some(step) = self.run.steps.get(i) else {
            return clipped(&format!("position {}", i + 1), max).into_owned();
        };
        let id = step.id.as_str();
        if !names::is_opaque_id(id) {
            return clipped(id, max).into_owned();
        }
        let (name, at) = match names::step_name(step) {
            Some(n) => (
                names::shortened(n),
                position && self.name_repeats.get(i).copied().unwrap_or(false),
            ),
            None => (step.kind_label().to_owned(), true),
        };
        if !at {
            return clipped(&name, max).into_owned();
        }
        let suffix = format!(" ({})", i + 1);
        let room = max.saturating_sub(suffix.len()).max(1);
        format!("{}{suffix}", clipped(&name, room))
    }

    /// [`Document::step_ref`] of the step with this id; an id the run does not hold (a piece of
    /// context's) is shown as it is, cut to 40 columns.
    pub fn step_ref_of(&self, id: &str) -> String {
        match self.index_of(id) {
            Some(i) => self.step_ref(i),
            None => clipped(id, 40).into_owned(),
        }
    }

    /// What step `i` cost, as the screen writes it (`$0.0012`, `~$0.0045` for an estimate);
    /// `None` when it has no cost.
    pub fn cost_text(&self, i: usize) -> Option<String> {
        let (usd, estimated) = self.step_cost.get(i).copied().flatten()?;
        Some(format_usd(usd, estimated))
    }

    /// Some step has a cost (the timeline keeps a column for it).
    pub fn has_cost(&self) -> bool {
        self.report
            .cost
            .as_ref()
            .is_some_and(|c| !c.steps.is_empty())
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

/// Per step: its id is opaque and another such step has the same name. One pass to count the
/// names, one to mark; empty when none repeats.
fn name_repeats(run: &Run) -> Vec<bool> {
    fn named(s: &crate::analysis::model::Step) -> Option<&str> {
        names::is_opaque_id(s.id.as_str())
            .then(|| names::step_name(s))
            .flatten()
    }
    let mut count: HashMap<&str, u32> = HashMap::new();
    for s in &run.steps {
        if let Some(n) = named(s) {
            *count.entry(n).or_default() += 1;
        }
    }
    if count.values().all(|&c| c < 2) {
        return Vec::new();
    }
    run.steps
        .iter()
        .map(|s| named(s).is_some_and(|n| count.get(n).is_some_and(|&c| c > 1)))
        .collect()
}

/// The influence shortlist as positions in the ranking, and per position whether it is on it:
/// one pass over each, whatever their lengths.
fn influence_shortlist(report: &Report) -> (Vec<usize>, Vec<bool>) {
    let Some(inf) = &report.influence else {
        return (Vec::new(), Vec::new());
    };
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(inf.scores.len());
    for (i, e) in inf.scores.iter().enumerate() {
        position.entry(&*e.id).or_insert(i);
    }
    let mut on = vec![false; inf.scores.len()];
    let mut order = Vec::with_capacity(inf.confidence.shortlist.len());
    for id in &inf.confidence.shortlist {
        if let Some(&i) = position.get(id.as_str()) {
            order.push(i);
            if let Some(slot) = on.get_mut(i) {
                *slot = true;
            }
        }
    }
    (order, on)
}

/// What a step did, on one line, inert and cut to `max` columns: a tool call's arguments and
/// what came back (`to: dana@example.com → status: sent`, or its error), a model's text or the
/// tool it called, a search's query and what it found, else the start of its output, error or
/// input. Structured values are shown as `key: value` pairs. A model step's input is its
/// prompt, not something it said, so it is never shown. Reads only the first bytes of each text.
pub fn step_excerpt(step: &crate::analysis::model::Step, max: usize) -> String {
    use crate::analysis::model::StepKind;
    let mut out = String::new();
    let arrow = |out: &mut String| {
        if !out.is_empty() {
            out.push_str(" → ");
        }
    };
    let failed = |e: &str| format!("{} {}", super::widgets::marks::FAILED, compact_text(e));
    match (&step.tool, step.kind) {
        (Some(call), _) => {
            out.push_str(&compact(&call.arguments, max));
            arrow(&mut out);
            match (&step.error, &step.output) {
                (Some(e), _) => out.push_str(&failed(e)),
                (None, Some(v)) => out.push_str(&compact(v, max)),
                (None, None) => {}
            }
        }
        (None, StepKind::Retrieval | StepKind::Tool) => {
            if let Some(v) = &step.input {
                out.push_str(&compact(v, max));
            }
            if let Some(e) = &step.error {
                arrow(&mut out);
                out.push_str(&failed(e));
            } else if let Some(v) = &step.output {
                arrow(&mut out);
                out.push_str(&compact(v, max));
            } else if let Some(d) = &step.documents {
                arrow(&mut out);
                out.push_str(&match d.len() {
                    0 => "nothing found".to_owned(),
                    1 => "1 document".to_owned(),
                    k => format!("{k} documents"),
                });
            }
        }
        _ => {
            if let Some(v) = &step.output {
                // A conversation as output (an agent's whole run) reads as its last message.
                let last = match v {
                    Json::Array(a) => turn::last_message(a).unwrap_or(v),
                    _ => v,
                };
                out.push_str(&turn_excerpt(last, max).unwrap_or_else(|| compact(v, max)));
            }
            if let Some(e) = &step.error {
                arrow(&mut out);
                out.push_str(&failed(e));
            }
            if out.is_empty()
                && let Some(m) = &step.memory
            {
                out.push_str(&format!(
                    "{} = {}",
                    compact_text(&m.key),
                    compact(&m.value, max)
                ));
            }
            if out.is_empty()
                && let Some(d) = &step.decision
            {
                out.push_str(&format!("chose {}", compact_text(&d.chosen)));
            }
        }
    }
    clipped(out.trim(), max).into_owned()
}

/// A model turn on one line: `calls get_weather(city: Tokyo), lookup(q: x)` for the calls it
/// made, then the first words of its text; `None` for an output that is not shaped like a turn
/// (plain text is left to [`compact`]).
fn turn_excerpt(v: &Json, max: usize) -> Option<String> {
    if v.is_string() || !turn::looks_like_turn(v) {
        return None;
    }
    let t = turn::read_turn(v);
    if t.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (k, c) in t.calls.iter().enumerate() {
        if out.len() > max.saturating_mul(4) {
            out.push_str(&format!(", … {} more", t.calls.len() - k));
            break;
        }
        out.push_str(if k == 0 { "calls " } else { ", " });
        out.push_str(&call_text(c, 200));
    }
    if !t.text.is_empty() {
        if !out.is_empty() {
            out.push_str(" · ");
        }
        out.push_str(&compact_text(&t.text));
    }
    if out.is_empty() && !t.reasoning.is_empty() {
        out.push_str(&format!("thought: {}", compact_text(&t.reasoning)));
    }
    Some(out)
}

/// `get_weather(city: Tokyo)`: a call's name and its arguments on one line, inert.
pub fn call_text(c: &turn::TurnCall<'_>, max: usize) -> String {
    let args = match &c.arguments {
        Json::Null => String::new(),
        a => compact(a, max),
    };
    format!("{}({})", compact_text(c.name), clipped(&args, max))
}

/// The start of a text on one line, inert.
fn compact_text(t: &str) -> String {
    one_line(t, EXCERPT_BYTES, 200)
}

/// A JSON value on one line: text as it is, objects as `key: value` pairs, arrays by their first
/// members; nested containers are summarised. At most `max` columns are built.
fn compact(v: &Json, max: usize) -> String {
    fn go(v: &Json, depth: usize, out: &mut String, max: usize) {
        if out.len() > max.saturating_mul(4) {
            return;
        }
        match v {
            Json::String(t) => out.push_str(&compact_text(t)),
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(&n.to_string()),
            // A short list of plain values reads as itself; a list of messages or content
            // parts as what they say; any other list by its length.
            Json::Array(a)
                if depth > 0
                    && !a.is_empty()
                    && a.len() <= EXCERPT_MEMBERS
                    && a.iter().all(|x| !x.is_array() && !x.is_object()) =>
            {
                out.push('[');
                for (k, x) in a.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    go(x, depth + 1, out, max);
                }
                out.push(']');
            }
            Json::Array(a) if depth > 0 => {
                match turn_excerpt(turn::last_message(a).unwrap_or(v), max) {
                    Some(t) if !t.is_empty() => out.push_str(&t),
                    _ => out.push_str(&format!(
                        "[{}]",
                        crate::analysis::count::counted(a.len(), "item", "items")
                    )),
                }
            }
            Json::Object(o) if depth > 0 => out.push_str(if o.is_empty() { "{}" } else { "{…}" }),
            Json::Array(a) => {
                for (k, x) in a.iter().take(EXCERPT_MEMBERS).enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    go(x, depth + 1, out, max);
                }
                if a.len() > EXCERPT_MEMBERS {
                    out.push_str(", …");
                }
            }
            Json::Object(o) => {
                for (k, (key, x)) in o.iter().take(EXCERPT_MEMBERS).enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&compact_text(key));
                    out.push_str(": ");
                    go(x, depth + 1, out, max);
                }
                if o.len() > EXCERPT_MEMBERS {
                    out.push_str(", …");
                }
            }
        }
    }
    let mut out = String::new();
    go(v, 0, &mut out, max);
    out
}
