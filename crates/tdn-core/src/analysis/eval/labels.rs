//! Where the right answers come from: the inline Who&When labels an import keeps under
//! `attributes.whowhen` (`mistake_step`, a string holding a 0-based index, and `mistake_agent`),
//! a labels file for other runs, or an annotation file naming the steps (spans) where people
//! found errors.
//!
//! A label may accept several steps (any annotated error span of a trace is a hit). Steps are
//! named by 0-based index or by step id; indices are compared as integers: "1" is step 1, "01" is
//! step 1, "12" is never step 1, and a value that is not a whole non-negative number is no label
//! at all.
//!
//! An annotation file that gives each error an impact (`LOW`, `MEDIUM`, `HIGH`, as TRAIL's do) is
//! read three ways ([`Reading`]): any annotated error counts; only the earliest annotated error
//! (the first step, in run order, where something went wrong); only the earliest HIGH-impact
//! error (the decisive one a user needs to find).

use crate::analysis::model::Run;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// One labelled step, as the label names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StepRef {
    /// A 0-based position in the run.
    Index(usize),
    /// A step id (a span id in a trace).
    Id(String),
}

/// The labelled failure of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Label {
    /// The steps any of which counts as the right one (empty: no step label).
    pub steps: Vec<StepRef>,
    /// The agent that made the mistake.
    pub agent: Option<String>,
    /// When the label gives each error an impact: the steps of its HIGH-impact errors (empty when
    /// none is HIGH). `None` when it gives no impacts: only [`Reading::Any`] is scored.
    pub high: Option<Vec<StepRef>>,
}

/// How a label is read: which of its steps count.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// Any labelled step counts (the label as written).
    #[default]
    Any,
    /// Only the earliest labelled step, in run order.
    Earliest,
    /// Only the earliest step of a HIGH-impact error.
    EarliestHigh,
}

impl Reading {
    /// The words added to a set's name for this reading (none for [`Reading::Any`]).
    pub fn suffix(self) -> &'static str {
        match self {
            Reading::Any => "",
            Reading::Earliest => "earliest",
            Reading::EarliestHigh => "earliest HIGH",
        }
    }
}

/// A label with its steps found in one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// 0-based positions of the accepted steps, ascending, each once.
    pub steps: Vec<usize>,
    /// True when the label names steps at all (some may not exist in the run).
    pub has_steps: bool,
    /// Steps the label names that the run does not hold (an id no step has, an index past the
    /// end): they count in the label but no prediction can hit them.
    pub missing: usize,
    /// The agent that made the mistake.
    pub agent: Option<String>,
}

impl Label {
    /// A label of one step by index.
    pub fn at(step: usize) -> Self {
        Label {
            steps: vec![StepRef::Index(step)],
            agent: None,
            high: None,
        }
    }

    /// True when neither part is known.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.agent.is_none()
    }

    /// The label's steps found in `run`.
    pub fn resolve(&self, run: &Run) -> Resolved {
        resolve_steps(&self.steps, self.agent.clone(), run)
    }

    /// Every reading of the label that can be scored on `run`, each with its steps found: the
    /// label as written; and, when it gives impacts, its earliest step found in the run and the
    /// earliest step of a HIGH-impact error (when one is found). A derived reading has one step
    /// and no agent.
    pub fn readings(&self, run: &Run) -> Vec<(Reading, Resolved)> {
        let all = self.resolve(run);
        let mut out = Vec::with_capacity(3);
        if let Some(high) = &self.high {
            let earliest = |r: &Resolved| {
                r.steps.first().map(|&i| Resolved {
                    steps: vec![i],
                    has_steps: true,
                    missing: 0,
                    agent: None,
                })
            };
            if let Some(e) = earliest(&all) {
                out.push((Reading::Earliest, e));
            }
            if let Some(e) = earliest(&resolve_steps(high, None, run)) {
                out.push((Reading::EarliestHigh, e));
            }
        }
        out.insert(0, (Reading::Any, all));
        out
    }
}

fn resolve_steps(refs: &[StepRef], agent: Option<String>, run: &Run) -> Resolved {
    let mut steps = Vec::with_capacity(refs.len());
    let mut missing = 0;
    for r in refs {
        let found = match r {
            StepRef::Index(i) => (*i < run.steps.len()).then_some(*i),
            StepRef::Id(id) => run.step_index(id),
        };
        match found {
            Some(i) => steps.push(i),
            None => missing += 1,
        }
    }
    steps.sort_unstable();
    steps.dedup();
    Resolved {
        steps,
        has_steps: !refs.is_empty(),
        missing,
        agent,
    }
}

/// Why a labels file could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LabelError(pub String);

/// A step label: a whole non-negative number, or a string holding exactly one.
pub fn parse_step(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|u| usize::try_from(u).ok()),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        }
        _ => None,
    }
}

/// A step label or a list of them; `None` when any element is not a whole number (a list that
/// is partly wrong is a mistake in the file, not a smaller label).
fn parse_steps(v: &Value) -> Option<Vec<StepRef>> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|x| parse_step(x).map(StepRef::Index))
            .collect(),
        other => parse_step(other).map(|i| vec![StepRef::Index(i)]),
    }
}

/// A step id or a list of them.
fn parse_ids(v: &Value) -> Option<Vec<StepRef>> {
    let one = |x: &Value| {
        x.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| StepRef::Id(s.to_owned()))
    };
    match v {
        Value::Array(items) => items.iter().map(one).collect(),
        other => one(other).map(|r| vec![r]),
    }
}

fn parse_agent(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The label a Who&When import carries, if any.
pub fn inline_label(run: &Run) -> Option<Label> {
    let w = run.attributes.get("whowhen")?;
    let label = Label {
        steps: w
            .get("mistake_step")
            .and_then(parse_step)
            .map(|i| vec![StepRef::Index(i)])
            .unwrap_or_default(),
        agent: w.get("mistake_agent").and_then(parse_agent),
        high: None,
    };
    (!label.is_empty()).then_some(label)
}

/// The steps of an annotation file: `{"errors": [{"location": "<step id>", "impact": "HIGH",
/// ...}, ...]}`, as the TRAIL benchmark writes one per trace. `None` when it names no error (the
/// trace is not scored), or is not such an object. When any error gives an `impact`, the steps
/// of the `HIGH` ones (any case) are kept apart too.
pub fn annotation_label(v: &Value) -> Option<Label> {
    let errors = v.get("errors")?.as_array()?;
    let mut steps: Vec<StepRef> = Vec::new();
    let mut high: Vec<StepRef> = Vec::new();
    let mut impacts = false;
    for e in errors {
        if let Some(id) = e.get("location").and_then(Value::as_str).map(str::trim)
            && !id.is_empty()
        {
            let r = StepRef::Id(id.to_owned());
            let impact = e.get("impact").and_then(Value::as_str).map(str::trim);
            impacts |= impact.is_some();
            if impact.is_some_and(|i| i.eq_ignore_ascii_case("high")) && !high.contains(&r) {
                high.push(r.clone());
            }
            if !steps.contains(&r) {
                steps.push(r);
            }
        }
    }
    (!steps.is_empty()).then_some(Label {
        steps,
        agent: None,
        high: impacts.then_some(high),
    })
}

/// Labels by key: `{"<key>": {"step": N, "agent": "..."}}`. `step` is a 0-based index (or a
/// string holding one) or a list of them, any of which counts; `step_id` names steps by id
/// instead (one or a list); `mistake_step` and `mistake_agent` are accepted too. A key names a
/// run file as given on the command line, as `<folder>/<file>`, or as `<file>`; a file holding
/// several runs adds `#<index>`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelFile {
    by_key: HashMap<String, Label>,
}

impl LabelFile {
    /// Parses the text of a labels file.
    pub fn parse(text: &str) -> Result<Self, LabelError> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            LabelError(format!(
                "not valid JSON at line {}, column {}: give an object of {{\"file\": {{\"step\": N, \"agent\": \"...\"}}}}",
                e.line(),
                e.column()
            ))
        })?;
        let Value::Object(entries) = v else {
            return Err(LabelError(
                "the labels must be a JSON object: {\"file\": {\"step\": N, \"agent\": \"...\"}}"
                    .to_owned(),
            ));
        };
        let mut by_key = HashMap::with_capacity(entries.len());
        for (key, entry) in entries {
            let bad = || {
                LabelError(format!(
                    "the entry for '{}' has no usable \"step\" (a whole number or a list of them), \"step_id\" (a step id or a list of them) or \"agent\" (a string)",
                    crate::analysis::model::inert_line(&key)
                ))
            };
            let pick = |a: &str, b: &str| entry.get(a).or_else(|| entry.get(b));
            let mut steps = Vec::new();
            if let Some(v) = pick("step", "mistake_step") {
                steps.extend(parse_steps(v).ok_or_else(bad)?);
            }
            if let Some(v) = entry.get("step_id") {
                steps.extend(parse_ids(v).ok_or_else(bad)?);
            }
            let label = Label {
                steps,
                agent: pick("agent", "mistake_agent").and_then(parse_agent),
                high: None,
            };
            if label.is_empty() {
                return Err(bad());
            }
            by_key.insert(key, label);
        }
        Ok(LabelFile { by_key })
    }

    /// Adds a label under a key (a later one for the same key replaces it).
    pub fn insert(&mut self, key: String, label: Label) {
        self.by_key.insert(key, label);
    }

    /// Adds every label of another file; its entries win over equal keys.
    pub fn extend(&mut self, other: LabelFile) {
        self.by_key.extend(other.by_key);
    }

    /// The label for a run: the first of its [`label_keys`] that has an entry.
    pub fn lookup(&self, path: &Path, run_index: Option<usize>) -> Option<&Label> {
        label_keys(path, run_index)
            .iter()
            .find_map(|k| self.by_key.get(k))
    }

    /// The label under exactly this key.
    pub fn get(&self, key: &str) -> Option<&Label> {
        self.by_key.get(key)
    }

    /// How many entries the file holds.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// The keys a run is looked up by, most specific first: the path as given, `<folder>/<file>`,
/// `<file>`; each with `#<index>` when the file holds several runs.
pub fn label_keys(path: &Path, run_index: Option<usize>) -> Vec<String> {
    let mut keys = vec![path.to_string_lossy().into_owned()];
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
    if let Some(f) = &file {
        if let Some(set) = folder_name(path) {
            keys.push(format!("{set}/{f}"));
        }
        keys.push(f.clone());
    }
    keys.dedup();
    match run_index {
        Some(i) => keys.into_iter().map(|k| format!("{k}#{i}")).collect(),
        None => keys,
    }
}

fn folder_name(path: &Path) -> Option<String> {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
}

/// The set a run file belongs to: the name of its folder (e.g. `Hand-Crafted`); for a file
/// holding several runs, the file's name without `.json` (each such file is a set of its own).
pub fn set_name(path: &Path, many: bool) -> Option<String> {
    if many && let Some(stem) = path.file_stem() {
        return Some(stem.to_string_lossy().into_owned());
    }
    folder_name(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{RunStatus, Step, StepKind};
    use serde_json::json;

    #[test]
    fn steps_are_whole_numbers_never_substrings() {
        assert_eq!(parse_step(&json!("5")), Some(5));
        assert_eq!(parse_step(&json!(" 12 ")), Some(12));
        assert_eq!(parse_step(&json!(3)), Some(3));
        assert_eq!(parse_step(&json!("1, 2")), None);
        assert_eq!(parse_step(&json!("-1")), None);
        assert_eq!(parse_step(&json!("1.0")), None);
        assert_eq!(parse_step(&json!(2.5)), None);
        assert_eq!(parse_step(&json!("")), None);
    }

    #[test]
    fn inline_labels_come_from_the_whowhen_attributes() {
        let mut run = Run::new("r", RunStatus::Failed);
        assert_eq!(inline_label(&run), None);
        run.attributes.insert(
            "whowhen".into(),
            json!({"mistake_step": "14", "mistake_agent": "Orchestrator"}),
        );
        assert_eq!(
            inline_label(&run),
            Some(Label {
                steps: vec![StepRef::Index(14)],
                agent: Some("Orchestrator".into()),
                high: None,
            })
        );
    }

    #[test]
    fn a_labels_file_is_looked_up_by_path_folder_and_file() {
        let f = LabelFile::parse(
            r#"{"Hand-Crafted/1.json": {"step": "3", "agent": "WebSurfer"},
                "1.json": {"mistake_step": 7},
                "results.json#2": {"step": 0}}"#,
        )
        .unwrap_or_default();
        assert_eq!(f.len(), 3);
        let hc = f.lookup(Path::new("bench/Hand-Crafted/1.json"), None);
        assert_eq!(hc.map(|l| l.steps.clone()), Some(vec![StepRef::Index(3)]));
        let other = f.lookup(Path::new("bench/Other/1.json"), None);
        assert_eq!(
            other.map(|l| l.steps.clone()),
            Some(vec![StepRef::Index(7)])
        );
        let many = f.lookup(Path::new("x/results.json"), Some(2));
        assert_eq!(many.map(|l| l.steps.clone()), Some(vec![StepRef::Index(0)]));
        assert_eq!(f.lookup(Path::new("x/results.json"), Some(1)), None);
    }

    #[test]
    fn a_label_may_accept_several_steps_by_index_or_id() {
        let f = LabelFile::parse(
            r#"{"a.json": {"step": [3, "7"]}, "b.json": {"step_id": ["s2", "zz"], "step": 0}}"#,
        )
        .unwrap_or_default();
        let a = f.get("a.json").cloned().unwrap_or_default();
        assert_eq!(a.steps, vec![StepRef::Index(3), StepRef::Index(7)]);
        let mut run = Run::new("r", RunStatus::Failed);
        for id in ["s0", "s1", "s2", "s3"] {
            run.steps.push(Step::new(id, StepKind::Llm));
        }
        run.reindex();
        // 7 is past the end of a four-step run: counted, never hit.
        let r = a.resolve(&run);
        assert_eq!((r.steps, r.missing, r.has_steps), (vec![3], 1, true));
        let b = f.get("b.json").cloned().unwrap_or_default().resolve(&run);
        assert_eq!((b.steps, b.missing), (vec![0, 2], 1));
    }

    #[test]
    fn annotations_name_every_error_span_once() {
        let v = json!({"trace_id": "t", "errors": [
            {"location": "aa", "category": "x"}, {"location": "bb"}, {"location": "aa"},
            {"category": "no location"}]});
        assert_eq!(
            annotation_label(&v).map(|l| l.steps),
            Some(vec![StepRef::Id("aa".into()), StepRef::Id("bb".into())])
        );
        assert_eq!(annotation_label(&json!({"errors": []})), None);
        assert_eq!(annotation_label(&json!([1])), None);
    }

    #[test]
    fn an_annotation_with_impacts_is_read_three_ways() {
        let v = json!({"errors": [
            {"location": "s3", "impact": "HIGH"},
            {"location": "s1", "impact": "LOW"},
            {"location": "s2", "impact": "high"},
            {"location": "gone", "impact": "HIGH"}]});
        let label = annotation_label(&v).unwrap_or_default();
        assert_eq!(
            label.high,
            Some(vec![
                StepRef::Id("s3".into()),
                StepRef::Id("s2".into()),
                StepRef::Id("gone".into())
            ])
        );
        let mut run = Run::new("r", RunStatus::Failed);
        for id in ["s0", "s1", "s2", "s3"] {
            run.steps.push(Step::new(id, StepKind::Llm));
        }
        run.reindex();
        let got: Vec<(Reading, Vec<usize>)> = label
            .readings(&run)
            .into_iter()
            .map(|(r, l)| (r, l.steps))
            .collect();
        // Any error; the earliest in run order (s1, though LOW); the earliest HIGH one (s2).
        assert_eq!(
            got,
            vec![
                (Reading::Any, vec![1, 2, 3]),
                (Reading::Earliest, vec![1]),
                (Reading::EarliestHigh, vec![2])
            ]
        );
        // No impacts: the label as written only. No HIGH error: no such reading.
        let plain = annotation_label(&json!({"errors": [{"location": "s1"}]})).unwrap_or_default();
        assert_eq!(plain.readings(&run).len(), 1);
        let low = annotation_label(&json!({"errors": [{"location": "s1", "impact": "LOW"}]}))
            .unwrap_or_default();
        let readings: Vec<Reading> = low.readings(&run).into_iter().map(|(r, _)| r).collect();
        assert_eq!(readings, vec![Reading::Any, Reading::Earliest]);
    }

    #[test]
    fn a_bad_labels_file_says_what_to_fix() {
        let e = LabelFile::parse(r#"{"a.json": {"step": "x"}}"#).err();
        assert!(
            e.as_ref().is_some_and(|e| e
                .0
                .starts_with("the entry for 'a.json' has no usable \"step\"")),
            "{e:?}"
        );
        assert!(LabelFile::parse(r#"{"a.json": {"step": [1, "x"]}}"#).is_err());
        assert!(LabelFile::parse("[1]").is_err());
        assert!(LabelFile::parse("{").is_err());
    }

    #[test]
    fn a_file_of_several_runs_is_a_set_of_its_own() {
        let p = Path::new("bench/agentrx/tau-retail-dev.json");
        assert_eq!(set_name(p, true).as_deref(), Some("tau-retail-dev"));
        assert_eq!(set_name(p, false).as_deref(), Some("agentrx"));
    }
}
