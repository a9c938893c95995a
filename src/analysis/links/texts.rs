//! What each step produced and what it consumed, as plain text, computed once per run.
//!
//! A JSON value becomes its string and number leaves, one per line (keys and punctuation left
//! out, so a value reads the same whether it sat in a string or in JSON). Each text is capped at
//! [`LINK_SCAN_BYTES`], so a giant field costs one pass and no more. Pure; no I/O.

use super::tokens::clip;
use crate::analysis::model::{Json, Run, Step, StepKind};
use crate::analysis::rank::params::LINK_SCAN_BYTES;

/// The produced and consumed text of every step, by position. A text that is one string of the
/// run (a message, a one-field argument object) is borrowed from the run; only a text joined
/// from several leaves is a copy (issue 11: no second copy of the run's text where none is
/// needed), kept in a few large buffers rather than one allocation per text.
#[derive(Clone, Debug, Default)]
pub struct StepTexts<'a> {
    produced: Vec<Text<'a>>,
    consumed: Vec<Text<'a>>,
    /// The joined texts, back to back.
    joined: Vec<String>,
}

/// One step's text: a string of the run, or leaves joined into a buffer of [`StepTexts`].
#[derive(Clone, Debug)]
enum Text<'a> {
    Borrowed(&'a str),
    Joined { buffer: u32, start: u32, len: u32 },
}

/// Bytes of one buffer of joined texts. A joined text is at most [`LINK_SCAN_BYTES`] long and
/// starts a new buffer when the current one has less room than that, so a buffer never grows.
const JOINED_BUFFER_BYTES: usize = 1 << 20;

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
        let mut b = Builder::default();
        for (i, step) in run.steps.iter().enumerate() {
            let mut t = Lines::new(&mut b);
            produced_text(run, step, units_of.get(i).map_or(&[][..], |v| v), &mut t);
            produced.push(t.finish());
            let mut t = Lines::new(&mut b);
            consumed_text(run, step, &mut t);
            consumed.push(t.finish());
        }
        StepTexts {
            produced,
            consumed,
            joined: b.buffers,
        }
    }

    fn text(&self, t: &Text<'a>) -> &str {
        match *t {
            Text::Borrowed(s) => s,
            Text::Joined { buffer, start, len } => self
                .joined
                .get(buffer as usize)
                .and_then(|b| b.get(start as usize..start as usize + len as usize))
                .unwrap_or(""),
        }
    }

    /// What step `i` produced: its output, documents, memory read, user message, the units it
    /// produced.
    pub fn produced(&self, i: usize) -> &str {
        self.produced.get(i).map_or("", |t| self.text(t))
    }

    /// What step `i` consumed: its input, tool arguments, memory key and written value, and the
    /// text of the units sent to the model.
    pub fn consumed(&self, i: usize) -> &str {
        self.consumed.get(i).map_or("", |t| self.text(t))
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

/// [`push_line`] for a text that starts at byte `start` of `out`.
fn push_line_at(out: &mut String, start: usize, s: &str) {
    let len = out.len() - start;
    if len >= LINK_SCAN_BYTES || s.is_empty() {
        return;
    }
    if len > 0 {
        out.push('\n');
    }
    let room = LINK_SCAN_BYTES.saturating_sub(out.len() - start);
    out.push_str(clip(s, room));
}

/// What the texts are built with: the buffers of joined texts, and scratch.
#[derive(Default)]
struct Builder<'a> {
    buffers: Vec<String>,
    /// The leaves still to read of the JSON value at hand.
    stack: Vec<&'a Json>,
    /// A number written out.
    number: String,
}

/// A text being built line by line, exactly as [`push_line`] builds it, without a copy while it
/// is one line of the run.
struct Lines<'a, 'b> {
    one: &'a str,
    /// The lines are joined in the last buffer from `start` on (once a second line came).
    joined: bool,
    start: usize,
    b: &'b mut Builder<'a>,
}

impl<'a, 'b> Lines<'a, 'b> {
    fn new(b: &'b mut Builder<'a>) -> Self {
        Lines {
            one: "",
            joined: false,
            start: 0,
            b,
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
        let buffers = &mut self.b.buffers;
        if !self.joined {
            if buffers
                .last()
                .is_none_or(|b| b.capacity() - b.len() < LINK_SCAN_BYTES)
            {
                buffers.push(String::with_capacity(JOINED_BUFFER_BYTES));
            }
            let Some(buf) = buffers.last_mut() else {
                return;
            };
            self.start = buf.len();
            buf.push_str(self.one);
            self.joined = true;
        }
        if let Some(buf) = buffers.last_mut() {
            push_line_at(buf, self.start, s);
        }
    }

    /// A number leaf.
    fn push_number(&mut self, n: &serde_json::Number) {
        use std::fmt::Write;
        let mut number = std::mem::take(&mut self.b.number);
        number.clear();
        let _ = write!(number, "{n}");
        self.push_copy(&number);
        self.b.number = number;
    }

    fn finish(self) -> Text<'a> {
        if !self.joined {
            return Text::Borrowed(self.one);
        }
        let buffer = self.b.buffers.len().saturating_sub(1);
        let end = self.b.buffers.last().map_or(0, String::len);
        match (
            u32::try_from(buffer),
            u32::try_from(self.start),
            u32::try_from(end - self.start),
        ) {
            (Ok(buffer), Ok(start), Ok(len)) => Text::Joined { buffer, start, len },
            _ => Text::Borrowed(""),
        }
    }

    fn full(&self) -> bool {
        if self.joined {
            self.b.buffers.last().map_or(0, String::len) - self.start >= LINK_SCAN_BYTES
        } else {
            self.one.len() >= LINK_SCAN_BYTES
        }
    }
}

/// Appends the string and number leaves of `v`, one per line, until `out` is full.
pub fn flat_text_into(v: &Json, out: &mut String) {
    let mut stack: Vec<&Json> = vec![v];
    while let Some(v) = stack.pop() {
        if out.len() >= LINK_SCAN_BYTES {
            return;
        }
        match v {
            Json::String(s) => push_line(out, s),
            Json::Number(n) => push_line(out, &n.to_string()),
            Json::Array(a) => stack.extend(a.iter().rev()),
            Json::Object(o) => {
                let start = stack.len();
                stack.extend(o.values());
                if let Some(slice) = stack.get_mut(start..) {
                    slice.reverse();
                }
            }
            Json::Bool(_) | Json::Null => {}
        }
    }
}

/// [`flat_text_into`] for a text of [`StepTexts`].
fn flat_lines<'a>(v: &'a Json, out: &mut Lines<'a, '_>) {
    let mut stack = std::mem::take(&mut out.b.stack);
    stack.clear();
    stack.push(v);
    while let Some(v) = stack.pop() {
        if out.full() {
            break;
        }
        match v {
            Json::String(s) => out.push(s),
            Json::Number(n) => out.push_number(n),
            Json::Array(a) => stack.extend(a.iter().rev()),
            Json::Object(o) => {
                let start = stack.len();
                stack.extend(o.values());
                if let Some(slice) = stack.get_mut(start..) {
                    slice.reverse();
                }
            }
            Json::Bool(_) | Json::Null => {}
        }
    }
    out.b.stack = stack;
}

/// The leaves of `v` as text (see [`flat_text_into`]).
pub fn flat_text(v: &Json) -> String {
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
        assert!(matches!(t.produced[1], Text::Joined { .. }));
        assert_eq!(t.consumed(2), "ORD-1042");
        assert!(matches!(t.consumed[2], Text::Borrowed(_)));
        assert_eq!(t.produced(2).len(), LINK_SCAN_BYTES);
        assert_eq!(t.produced(3), "d1\nRefunds take 5 days.");
        assert_eq!(t.produced(4), "");
        assert_eq!(t.consumed(3), "policy");
    }

    #[test]
    fn joined_texts_spread_over_several_buffers_read_back_whole() {
        use crate::analysis::testutil::RunBuilder;
        let mut b = RunBuilder::failed();
        let mut want = Vec::new();
        for i in 0..60 {
            let long = format!("{i}").repeat(20_000 + i * 500);
            b = b.llm(&format!("s{i}"), json!({"a": long.clone(), "n": 100 + i}));
            want.push(format!("{}\n{}", clip(&long, LINK_SCAN_BYTES), 100 + i));
        }
        let run = b.build();
        let t = StepTexts::build(&run);
        assert!(t.joined.len() > 1, "{} buffers", t.joined.len());
        for (i, w) in want.iter().enumerate() {
            let cut = clip(w, LINK_SCAN_BYTES);
            assert_eq!(t.produced(i), cut, "step {i}");
        }
        assert!(t.joined.iter().all(|b| b.capacity() == JOINED_BUFFER_BYTES));
    }

    #[test]
    fn flat_text_keeps_leaves_in_order_and_drops_keys() {
        let v = json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday", "n": 120, "ok": true}}});
        assert_eq!(flat_text(&Json::from(v)), "create_event\nFriday\n120");
    }
}
