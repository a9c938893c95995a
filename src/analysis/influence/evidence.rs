//! Which pieces of a run are influence evidence, and which model outputs are each one's
//! ancestors (report.md, `influence`). Linear in the run (plus a binary search per item); no
//! scoring here.

use crate::analysis::model::{Json, Run, Step, StepKind, value_text};
use hashbrown::{HashMap, HashSet};
use std::borrow::Cow;
use std::ops::Range;

/// At most this many ancestors per item: the first half nearest the evidence (the reasoning that
/// took it up) and the second half nearest the answer. Keeps scoring linear on long runs; DEPTH
/// then bottoms out at `1 / (1 + MAX_ANCESTORS)`.
pub const MAX_ANCESTORS: usize = 20;

/// One piece of evidence found in a run. Its ids are the run's own strings, borrowed: owned
/// copies are made once, for the report's entries, after the ranking (issue 11: 50,000 pieces
/// at 100,000 steps held three copied ids each through the whole ranking).
#[derive(Clone, Debug, PartialEq)]
pub struct RunEvidence<'a> {
    /// The unit id, else `<step id>` (tool result, memory read) or `<step id>#<n>` (document n);
    /// owned only when made here (a document's, or one numbered to be unique).
    pub id: Cow<'a, str>,
    /// The unit an ablation removes, when it is one.
    pub unit: Option<&'a str>,
    /// The producing step, when known.
    pub step: Option<&'a str>,
    /// Its text: the run's own string when there is one, else the text made of a JSON value.
    pub text: Cow<'a, str>,
    /// The first step index at which its ancestors may start.
    pub from: usize,
}

/// Every unit that reached the model, then every document, tool result and memory read not
/// recorded as a unit, in step order. Pieces with no text are left out (nothing to compare).
pub fn gather_evidence<'a>(run: &'a Run) -> Vec<RunEvidence<'a>> {
    // At most every unit, every document and every tool and memory-read step: the list and
    // its id table are made that large at once, not grown piece by piece (on a long run each
    // growth copies megabytes), and the list is cut to its length at the end.
    let most = run.context_units.len()
        + run
            .steps
            .iter()
            .map(|s| {
                s.documents.as_ref().map_or(0, Vec::len)
                    + usize::from(matches!(s.kind, StepKind::Tool | StepKind::MemoryRead))
            })
            .sum::<usize>();
    let mut out = Vec::with_capacity(most);
    let mut ids = UniqueIds {
        taken: HashSet::with_capacity(most),
        last_number: HashMap::new(),
    };

    let mut first_sent: HashMap<&str, usize> = HashMap::with_capacity(run.context_units.len());
    let mut any_context = false;
    for step in run.steps.iter().filter(|s| s.kind == StepKind::Llm) {
        if let Some(c) = &step.context {
            any_context = true;
            for id in &c.sent {
                first_sent.entry(id.as_str()).or_insert(step.index);
            }
        }
    }
    for unit in &run.context_units {
        let from = if any_context {
            match first_sent.get(unit.id.as_str()) {
                Some(&i) => i,
                None => continue,
            }
        } else {
            unit.produced_by
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
                .map_or(0, |i| i + 1)
        };
        if unit.text.trim().is_empty() {
            continue;
        }
        out.push(RunEvidence {
            id: ids.claim(Cow::Borrowed(unit.id.as_str())),
            unit: Some(unit.id.as_str()),
            step: unit.produced_by.as_ref().map(|p| p.as_str()),
            text: Cow::Borrowed(unit.text.as_str()),
            from,
        });
    }

    let mut produced: HashSet<&str> = HashSet::with_capacity(run.context_units.len());
    produced.extend(
        run.context_units
            .iter()
            .filter_map(|u| u.produced_by.as_ref().map(|p| p.as_str())),
    );
    for step in &run.steps {
        if produced.contains(step.id.as_str()) {
            continue;
        }
        let mut add = |id: Cow<'a, str>, text: Cow<'a, str>, out: &mut Vec<RunEvidence<'a>>| {
            if !text.trim().is_empty() {
                out.push(RunEvidence {
                    id: ids.claim(id),
                    unit: None,
                    step: Some(step.id.as_str()),
                    text,
                    from: step.index + 1,
                });
            }
        };
        for (n, doc) in step.documents.iter().flatten().enumerate() {
            let is_unit = doc.id.as_deref().is_some_and(|d| run.unit(d).is_some());
            if !is_unit {
                add(
                    Cow::Owned(format!("{}#{n}", step.id)),
                    Cow::Borrowed(&doc.text),
                    &mut out,
                );
            }
        }
        match step.kind {
            StepKind::Tool => add(Cow::Borrowed(step.id.as_str()), tool_result(step), &mut out),
            StepKind::MemoryRead => {
                add(Cow::Borrowed(step.id.as_str()), memory_read(step), &mut out)
            }
            _ => {}
        }
    }
    out.shrink_to_fit();
    out
}

/// The text of a value as [`value_text`] makes it, borrowed when the value is a string. Other
/// values are written by `serde_json::to_string`, the same compact JSON as their `Display`
/// without going through a formatter (a long run has tens of thousands of them).
fn text_of(v: &Json) -> Cow<'_, str> {
    match v {
        Json::String(s) => Cow::Borrowed(s),
        Json::Null => Cow::Borrowed(""),
        other => {
            let mut text = serde_json::to_string(other).unwrap_or_else(|_| value_text(other));
            // Written into a buffer grown by doubling: give the slack back, as these texts are
            // held until the ranking embeds them.
            text.shrink_to_fit();
            Cow::Owned(text)
        }
    }
}

/// A step's output as text ("" when absent), as [`Step::output_text`] makes it.
fn output_of(step: &Step) -> Cow<'_, str> {
    step.output.as_ref().map_or(Cow::Borrowed(""), text_of)
}

/// A tool step's result: its output, or its error message when it printed nothing.
fn tool_result(step: &Step) -> Cow<'_, str> {
    let out = output_of(step);
    if out.trim().is_empty() {
        Cow::Borrowed(step.error.as_deref().unwrap_or_default())
    } else {
        out
    }
}

/// A memory read's value, or the step's output when no `memory` was recorded.
fn memory_read(step: &Step) -> Cow<'_, str> {
    match &step.memory {
        Some(m) => {
            let value = text_of(&m.value);
            if value.trim().is_empty() {
                output_of(step)
            } else {
                value
            }
        }
        None => output_of(step),
    }
}

/// Evidence ids made unique: a later piece whose id is taken gets `~2`, `~3`, ... (the first
/// of them not taken). Each id remembers the last number it got, so many pieces with one id
/// cost one try each: every number below it was taken then, and still is.
#[derive(Default)]
struct UniqueIds<'a> {
    taken: HashSet<Cow<'a, str>>,
    last_number: HashMap<String, usize>,
}

impl<'a> UniqueIds<'a> {
    /// The id the piece gets: `id` itself when free (a borrowed one stays borrowed), else the
    /// first free `id~k`.
    fn claim(&mut self, id: Cow<'a, str>) -> Cow<'a, str> {
        if !self.taken.contains(&*id) {
            self.taken.insert(id.clone());
            return id;
        }
        let mut k = self.last_number.get(&*id).copied().unwrap_or(1);
        loop {
            k += 1;
            let candidate = format!("{id}~{k}");
            if !self.taken.contains(candidate.as_str()) {
                self.last_number.insert(id.into_owned(), k);
                self.taken.insert(Cow::Owned(candidate.clone()));
                return Cow::Owned(candidate);
            }
        }
    }
}

/// The outputs of the model steps (`llm`, `agent`, `decision`) before the answer, in step order.
pub struct ModelOutputs<'a> {
    steps: Vec<usize>,
    texts: Vec<Cow<'a, str>>,
}

impl ModelOutputs<'_> {
    /// How many outputs there are.
    pub(super) fn len(&self) -> usize {
        self.texts.len()
    }

    /// The text of the `i`-th output.
    pub fn text(&self, i: usize) -> Option<&str> {
        self.texts.get(i).map(|t| &**t)
    }
}

impl<'a> ModelOutputs<'a> {
    /// Takes the text of the `i`-th output out (leaving "" behind).
    pub(super) fn take_text(&mut self, i: usize) -> Cow<'a, str> {
        self.texts
            .get_mut(i)
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// The model outputs that can be ancestors: every model step with an output, up to (not
/// including) the last model step whose output is the final answer itself.
pub fn model_outputs<'a>(run: &'a Run, answer: &str) -> ModelOutputs<'a> {
    let mut all: Vec<(usize, Cow<'a, str>)> = run
        .steps
        .iter()
        .filter(|s| s.kind.is_model())
        .map(|s| (s.index, output_of(s)))
        .filter(|(_, t)| !t.trim().is_empty())
        .collect();
    if let Some(last) = all.iter().rposition(|(_, t)| t.trim() == answer.trim()) {
        all.truncate(last);
    }
    let (steps, texts) = all.into_iter().unzip();
    ModelOutputs { steps, texts }
}

/// The positions (into `outputs`) of one piece of evidence's ancestors: the model outputs at or
/// after its `from` step, at most [`MAX_ANCESTORS`] of them, as two ranges read one after the
/// other (the second is empty when all fit).
pub fn ancestor_window(
    evidence: &RunEvidence<'_>,
    outputs: &ModelOutputs<'_>,
) -> [Range<usize>; 2] {
    window_from(first_ancestor(evidence, outputs), outputs.len())
}

/// The position (into `outputs`) of the first model output at or after the piece's `from` step:
/// where its ancestor window starts.
pub fn first_ancestor(evidence: &RunEvidence<'_>, outputs: &ModelOutputs<'_>) -> usize {
    outputs.steps.partition_point(|&s| s < evidence.from)
}

/// The ancestor window of [`ancestor_window`] from its first position, among `total` outputs.
pub fn window_from(first: usize, total: usize) -> [Range<usize>; 2] {
    let first = first.min(total);
    let count = total - first;
    if count <= MAX_ANCESTORS {
        [first..total, total..total]
    } else {
        let half = MAX_ANCESTORS / 2;
        [first..first + half, total - half..total]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_texts_are_those_of_value_text() {
        let values = [
            serde_json::json!(null),
            serde_json::json!("a \"b\"\n"),
            serde_json::json!({"b": [1, 2.5, -0.0, "x\u{1b}"], "a": {"c": null, "d": true}}),
            serde_json::json!([1e300, 12345678901234567890u64, -7]),
            serde_json::json!(false),
        ];
        for v in &values {
            let j = Json::from(v.clone());
            assert_eq!(text_of(&j), value_text(v), "{v}");
        }
    }

    #[test]
    fn taken_ids_get_the_first_free_number() {
        let mut ids = UniqueIds::default();
        let got: Vec<Cow<'_, str>> = ["a", "a~3", "a", "a", "a~2", "b", "a"]
            .into_iter()
            .map(|id| ids.claim(Cow::Borrowed(id)))
            .collect();
        // "a~3" is a piece's own id, so the third "a" skips it; the second "a~2" is numbered
        // in its turn.
        assert_eq!(got, ["a", "a~3", "a~2", "a~4", "a~2~2", "b", "a~5"]);
        // A free id is the piece's own string, not a copy; a numbered one is made here.
        assert!(matches!(got[0], Cow::Borrowed(_)) && matches!(got[2], Cow::Owned(_)));
        let owned = ids.claim(Cow::Owned("b".to_owned()));
        assert_eq!(owned, "b~2");
    }
}
