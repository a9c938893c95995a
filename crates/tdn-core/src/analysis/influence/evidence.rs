//! Which pieces of a run are influence evidence, and which model outputs are each one's
//! ancestors (report.md, `influence`). Linear in the run (plus a binary search per item); no
//! scoring here.

use super::json_text::write_compact;
use crate::analysis::model::{Json, Run, Step, StepKind};
use hashbrown::{HashMap, HashSet};
use std::borrow::Cow;
use std::ops::Range;

/// At most this many ancestors per item: the first half nearest the evidence (the reasoning that
/// took it up) and the second half nearest the answer. Keeps scoring linear on long runs; DEPTH
/// then bottoms out at `1 / (1 + MAX_ANCESTORS)`.
pub const MAX_ANCESTORS: usize = 20;

/// One piece of evidence found in a run. Its ids are the run's own strings, borrowed: owned
/// copies are made once, for the report's entries, after the ranking (issue 11: 50,000 pieces
/// at 100,000 steps held three copied ids each through the whole ranking). Its unit and step
/// are found from where it came from, when its entry is made (56 bytes a piece, not 80).
#[derive(Clone, Debug, PartialEq)]
pub struct RunEvidence<'a> {
    /// The unit id, else `<step id>` (tool result, memory read) or `<step id>#<n>` (document n);
    /// owned only when made here (a document's, or one numbered to be unique).
    pub id: Cow<'a, str>,
    /// Its text: the run's own string, or a JSON value whose text is written when read.
    pub text: Text<'a>,
    /// Where it came from.
    pub source: Source,
    /// The first step index at which its ancestors may start.
    pub from: usize,
}

/// Where a piece of evidence came from, by position in the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// The context unit at this position of `context_units`.
    Unit(u32),
    /// A document, tool result or memory read of the step at this position of `steps`.
    Step(u32),
}

impl RunEvidence<'_> {
    /// The unit an ablation removes, when it is one.
    pub fn unit<'r>(&self, run: &'r Run) -> Option<&'r str> {
        match self.source {
            Source::Unit(i) => run.context_units.get(i as usize).map(|u| u.id.as_str()),
            Source::Step(_) => None,
        }
    }

    /// The producing step, when known: a unit's `produced_by`, else the piece's own step.
    pub fn step<'r>(&self, run: &'r Run) -> Option<&'r str> {
        match self.source {
            Source::Unit(i) => run
                .context_units
                .get(i as usize)
                .and_then(|u| u.produced_by.as_ref())
                .map(|p| p.as_str()),
            Source::Step(i) => run.steps.get(i as usize).map(|s| s.id.as_str()),
        }
    }
}

/// A position in the run as a number (a run holds far fewer than 2^32 units or steps).
fn position(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
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
    for (at, unit) in run.context_units.iter().enumerate() {
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
            text: Text::Str(unit.text.as_str()),
            source: Source::Unit(position(at)),
            from,
        });
    }

    let mut produced: HashSet<&str> = HashSet::with_capacity(run.context_units.len());
    produced.extend(
        run.context_units
            .iter()
            .filter_map(|u| u.produced_by.as_ref().map(|p| p.as_str())),
    );
    for (at, step) in run.steps.iter().enumerate() {
        if produced.contains(step.id.as_str()) {
            continue;
        }
        let mut add = |id: Cow<'a, str>, text: Text<'a>, out: &mut Vec<RunEvidence<'a>>| {
            if !text.is_blank() {
                out.push(RunEvidence {
                    id: ids.claim(id),
                    text,
                    source: Source::Step(position(at)),
                    from: step.index + 1,
                });
            }
        };
        for (n, doc) in step.documents.iter().flatten().enumerate() {
            let is_unit = doc.id.as_deref().is_some_and(|d| run.unit(d).is_some());
            if !is_unit {
                add(
                    Cow::Owned(format!("{}#{n}", step.id)),
                    Text::Str(&doc.text),
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

/// A piece's or a model output's text: the run's own string, or a JSON value (not a string,
/// not null) whose text is what [`value_text`](crate::analysis::model::value_text) makes of it. A value's text is written only when
/// it is read, into a buffer the reader keeps (issue 11: 33,000 such texts at 100,000 steps
/// were written out and held until the ranking embedded them).
#[derive(Clone, Copy, Debug)]
pub enum Text<'a> {
    /// The run's own string.
    Str(&'a str),
    /// A value other than a string or null, written as compact JSON.
    Value(&'a Json),
}

impl<'a> Text<'a> {
    /// The text of a value as [`value_text`](crate::analysis::model::value_text) makes it: a string is itself, null is "".
    pub fn of(v: &'a Json) -> Text<'a> {
        match v {
            Json::String(s) => Text::Str(s),
            Json::Null => Text::Str(""),
            other => Text::Value(other),
        }
    }

    /// True when the text is empty or all whitespace. A value's text never is: compact JSON of
    /// a value other than a string or null starts with `{`, `[`, `t`, `f`, `-` or a digit.
    pub fn is_blank(&self) -> bool {
        match self {
            Text::Str(s) => s.trim().is_empty(),
            Text::Value(_) => false,
        }
    }

    /// The text: the run's string, or the value's text written into `buf` (cleared first;
    /// `bytes` is scratch).
    pub fn read<'b>(&self, buf: &'b mut String, bytes: &mut Vec<u8>) -> &'b str
    where
        'a: 'b,
    {
        match *self {
            Text::Str(s) => s,
            Text::Value(v) => {
                buf.clear();
                write_value(v, bytes, buf);
                buf
            }
        }
    }

    /// The text as an owned string, or the run's own one borrowed.
    pub fn to_cow(self) -> Cow<'a, str> {
        match self {
            Text::Str(s) => Cow::Borrowed(s),
            Text::Value(v) => {
                let mut out = String::new();
                write_value(v, &mut Vec::new(), &mut out);
                Cow::Owned(out)
            }
        }
    }

    /// True when the text with its ends trimmed is `trimmed`. A value's text is written only
    /// when `trimmed` starts as compact JSON of such a value does (see [`Text::is_blank`]).
    fn trimmed_is(&self, trimmed: &str, buf: &mut String, bytes: &mut Vec<u8>) -> bool {
        match self {
            Text::Str(s) => s.trim() == trimmed,
            Text::Value(_) => {
                let could = trimmed
                    .bytes()
                    .next()
                    .is_some_and(|b| matches!(b, b'{' | b'[' | b't' | b'f' | b'-' | b'0'..=b'9'));
                could && self.read(buf, bytes).trim() == trimmed
            }
        }
    }
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.to_cow() == other.to_cow()
    }
}

/// Appends the text [`value_text`](crate::analysis::model::value_text) makes of `v` to `out`: the compact JSON `serde_json`
/// writes (as `serde_json::to_string` would), written by [`write_compact`] (`bytes` is scratch).
pub fn write_value(v: &Json, bytes: &mut Vec<u8>, out: &mut String) {
    write_compact(v, out, bytes);
}

/// A step's output as text ("" when absent), as [`Step::output_text`] makes it.
fn output_of(step: &Step) -> Text<'_> {
    step.output.as_ref().map_or(Text::Str(""), Text::of)
}

/// A tool step's result: its output, or its error message when it printed nothing.
fn tool_result(step: &Step) -> Text<'_> {
    let out = output_of(step);
    if out.is_blank() {
        Text::Str(step.error.as_deref().unwrap_or_default())
    } else {
        out
    }
}

/// A memory read's value, or the step's output when no `memory` was recorded.
fn memory_read(step: &Step) -> Text<'_> {
    match &step.memory {
        Some(m) => {
            let value = Text::of(&m.value);
            if value.is_blank() {
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
    texts: Vec<Text<'a>>,
}

impl<'a> ModelOutputs<'a> {
    /// How many outputs there are.
    pub(super) fn len(&self) -> usize {
        self.texts.len()
    }

    /// The text of the `i`-th output.
    pub(super) fn text(&self, i: usize) -> Option<Text<'a>> {
        self.texts.get(i).copied()
    }
}

/// The model outputs that can be ancestors: every model step with an output, up to (not
/// including) the last model step whose output is the final answer itself.
pub fn model_outputs<'a>(run: &'a Run, answer: &str) -> ModelOutputs<'a> {
    let mut all: Vec<(usize, Text<'a>)> = run
        .steps
        .iter()
        .filter(|s| s.kind.is_model())
        .map(|s| (s.index, output_of(s)))
        .filter(|(_, t)| !t.is_blank())
        .collect();
    let (answer, mut buf, mut bytes) = (answer.trim(), String::new(), Vec::new());
    if let Some(last) = all
        .iter()
        .rposition(|(_, t)| t.trimmed_is(answer, &mut buf, &mut bytes))
    {
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
    use crate::analysis::model::value_text;

    #[test]
    fn value_texts_are_those_of_value_text() {
        let values = [
            serde_json::json!(null),
            serde_json::json!("a \"b\"\n"),
            serde_json::json!({"b": [1, 2.5, -0.0, "x\u{1b}"], "a": {"c": null, "d": true}}),
            serde_json::json!([1e300, 12345678901234567890u64, -7]),
            serde_json::json!(false),
        ];
        let (mut buf, mut bytes) = (String::new(), Vec::new());
        for v in &values {
            let j = Json::from(v.clone());
            let text = Text::of(&j);
            assert_eq!(text.to_cow(), value_text(v), "{v}");
            assert_eq!(text.read(&mut buf, &mut bytes), value_text(v), "{v}");
            assert_eq!(text.is_blank(), value_text(v).trim().is_empty(), "{v}");
            let trimmed = value_text(v);
            assert!(text.trimmed_is(trimmed.trim(), &mut buf, &mut bytes), "{v}");
            assert!(!text.trimmed_is("x", &mut buf, &mut bytes), "{v}");
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

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn a_piece_is_56_bytes() {
        assert_eq!(std::mem::size_of::<RunEvidence<'_>>(), 56);
    }
}
