//! What each step produced and what it consumed, as plain text, computed once per run.
//!
//! A JSON value becomes its string and number leaves, one per line (keys and punctuation left
//! out, so a value reads the same whether it sat in a string or in JSON). Each text is capped at
//! [`LINK_SCAN_BYTES`], so a giant field costs one pass and no more. Pure; no I/O.

use super::tokens::clip;
use crate::analysis::model::{Run, Step, StepKind};
use crate::analysis::rank::params::LINK_SCAN_BYTES;
use serde_json::Value;

/// The produced and consumed text of every step, by position. A text that is one string of the
/// run (a message, a one-field argument object) is borrowed from the run; only a text joined
/// from several leaves is a copy (issue 11: no second copy of the run's text where none is
/// needed).
#[derive(Clone, Debug, Default)]
pub struct StepTexts<'a> {
    produced: Vec<Text<'a>>,
    consumed: Vec<Text<'a>>,
}

/// One step's text: a string of the run, or leaves joined into a string of its own.
#[derive(Clone, Debug)]
enum Text<'a> {
    Borrowed(&'a str),
    Joined(Box<str>),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Joined(s) => s,
        }
    }
}

impl<'a> StepTexts<'a> {
    /// Builds both texts for every step of `run`.
    pub fn build(run: &'a Run) -> StepTexts<'a> {
        let n = run.steps.len();
        let mut units_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (u, unit) in run.context_units.iter().enumerate() {
            if let Some(p) = unit
                .produced_by
                .as_ref()
                .and_then(|id| run.step_index(id.as_str()))
                && let Some(list) = units_of.get_mut(p)
            {
                list.push(u);
            }
        }
        let mut produced = Vec::with_capacity(n);
        let mut consumed = Vec::with_capacity(n);
        let mut scratch = String::new();
        for (i, step) in run.steps.iter().enumerate() {
            let mut t = Lines::new(&mut scratch);
            produced_text(run, step, units_of.get(i).map_or(&[][..], |v| v), &mut t);
            produced.push(t.finish());
            let mut t = Lines::new(&mut scratch);
            consumed_text(run, step, &mut t);
            consumed.push(t.finish());
        }
        StepTexts { produced, consumed }
    }

    /// What step `i` produced: its output, documents, memory read, user message, the units it
    /// produced.
    pub fn produced(&self, i: usize) -> &str {
        self.produced.get(i).map_or("", Text::as_str)
    }

    /// What step `i` consumed: its input, tool arguments, memory key and written value, and the
    /// text of the units sent to the model.
    pub fn consumed(&self, i: usize) -> &str {
        self.consumed.get(i).map_or("", Text::as_str)
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.produced.len()
    }

    /// True for a run without steps.
    pub fn is_empty(&self) -> bool {
        self.produced.is_empty()
    }
}

fn push_line(out: &mut String, s: &str) {
    if out.len() >= LINK_SCAN_BYTES || s.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let room = LINK_SCAN_BYTES.saturating_sub(out.len());
    out.push_str(clip(s, room));
}

/// A text being built line by line, exactly as [`push_line`] builds it, without a copy while it
/// is one line of the run.
struct Lines<'a, 's> {
    one: &'a str,
    /// The lines are joined in `scratch` (once a second line came).
    joined: bool,
    scratch: &'s mut String,
}

impl<'a, 's> Lines<'a, 's> {
    fn new(scratch: &'s mut String) -> Self {
        scratch.clear();
        Lines {
            one: "",
            joined: false,
            scratch,
        }
    }

    /// A line that lives as long as the run.
    fn push(&mut self, s: &'a str) {
        if !self.joined && self.one.is_empty() {
            self.one = clip(s, LINK_SCAN_BYTES);
            return;
        }
        self.push_copy(s);
    }

    /// A line made for the moment (a number written out).
    fn push_copy(&mut self, s: &str) {
        if !self.joined {
            self.scratch.clear();
            self.scratch.push_str(self.one);
            self.joined = true;
        }
        push_line(self.scratch, s);
    }

    fn finish(self) -> Text<'a> {
        if self.joined {
            Text::Joined(self.scratch.as_str().into())
        } else {
            Text::Borrowed(self.one)
        }
    }

    fn full(&self) -> bool {
        if self.joined {
            self.scratch.len() >= LINK_SCAN_BYTES
        } else {
            self.one.len() >= LINK_SCAN_BYTES
        }
    }
}

/// Appends the string and number leaves of `v`, one per line, until `out` is full.
pub fn flat_text_into(v: &Value, out: &mut String) {
    let mut stack: Vec<&Value> = vec![v];
    while let Some(v) = stack.pop() {
        if out.len() >= LINK_SCAN_BYTES {
            return;
        }
        match v {
            Value::String(s) => push_line(out, s),
            Value::Number(n) => push_line(out, &n.to_string()),
            Value::Array(a) => stack.extend(a.iter().rev()),
            Value::Object(o) => {
                let start = stack.len();
                stack.extend(o.values());
                if let Some(slice) = stack.get_mut(start..) {
                    slice.reverse();
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
}

/// [`flat_text_into`] for a text of [`StepTexts`].
fn flat_lines<'a>(v: &'a Value, out: &mut Lines<'a, '_>) {
    let mut stack: Vec<&'a Value> = vec![v];
    while let Some(v) = stack.pop() {
        if out.full() {
            return;
        }
        match v {
            Value::String(s) => out.push(s),
            Value::Number(n) => out.push_copy(&n.to_string()),
            Value::Array(a) => stack.extend(a.iter().rev()),
            Value::Object(o) => {
                let start = stack.len();
                stack.extend(o.values());
                if let Some(slice) = stack.get_mut(start..) {
                    slice.reverse();
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
}

/// The leaves of `v` as text (see [`flat_text_into`]).
pub fn flat_text(v: &Value) -> String {
    let mut out = String::new();
    flat_text_into(v, &mut out);
    out
}

fn produced_text<'a>(run: &'a Run, step: &'a Step, units: &[usize], out: &mut Lines<'a, '_>) {
    if step.kind == StepKind::User
        && let Some(v) = &step.input
    {
        flat_lines(v, out);
    }
    if let Some(v) = &step.output {
        flat_lines(v, out);
    }
    if let Some(docs) = &step.documents {
        for d in docs {
            if let Some(id) = &d.id {
                out.push(id);
            }
            if let Some(src) = &d.source {
                out.push(src);
            }
            out.push(&d.text);
        }
    }
    if step.kind == StepKind::MemoryRead
        && let Some(m) = &step.memory
    {
        flat_lines(&m.value, out);
    }
    if let Some(d) = &step.decision {
        out.push(&d.chosen);
    }
    for &u in units {
        if let Some(unit) = run.context_units.get(u) {
            out.push(&unit.text);
        }
    }
}

fn consumed_text<'a>(run: &'a Run, step: &'a Step, out: &mut Lines<'a, '_>) {
    if step.kind != StepKind::User
        && let Some(v) = &step.input
    {
        flat_lines(v, out);
    }
    if let Some(t) = &step.tool {
        flat_lines(&t.arguments, out);
    }
    if let Some(m) = &step.memory {
        out.push(&m.key);
        if step.kind == StepKind::MemoryWrite {
            flat_lines(&m.value, out);
        }
    }
    if let Some(ctx) = &step.context {
        for id in &ctx.sent {
            if let Some(unit) = run.unit(id.as_str()) {
                out.push(&unit.text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_string_is_borrowed_and_joined_texts_read_as_lines() {
        use crate::analysis::testutil::{RunBuilder, doc};
        let long = "x".repeat(LINK_SCAN_BYTES + 10);
        let run = RunBuilder::failed()
            .user("s1", "Refund ORD-1042")
            .llm("s2", json!({"thought": "look it up", "n": 1200}))
            .tool_ok(
                "s3",
                "get_order",
                json!({"id": "ORD-1042"}),
                json!(long.clone()),
            )
            .retrieval(
                "s4",
                "policy",
                vec![doc("d1", "Refunds take 5 days.", false)],
            )
            .llm("s5", json!(""))
            .build();
        let t = StepTexts::build(&run);
        assert_eq!(t.produced(0), "Refund ORD-1042");
        assert!(matches!(t.produced[0], Text::Borrowed(_)));
        assert_eq!(t.produced(1), "look it up\n1200");
        assert_eq!(t.consumed(2), "ORD-1042");
        assert!(matches!(t.consumed[2], Text::Borrowed(_)));
        assert_eq!(t.produced(2).len(), LINK_SCAN_BYTES);
        assert_eq!(t.produced(3), "d1\nRefunds take 5 days.");
        assert_eq!(t.produced(4), "");
        assert_eq!(t.consumed(3), "policy");
    }

    #[test]
    fn flat_text_keeps_leaves_in_order_and_drops_keys() {
        let v = json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday", "n": 120, "ok": true}}});
        assert_eq!(flat_text(&v), "create_event\nFriday\n120");
    }
}
