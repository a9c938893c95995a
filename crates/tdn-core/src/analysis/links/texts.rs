//! What each step produced and what it consumed, as plain text, computed once per run.
//!
//! A JSON value becomes its string and number leaves, one per line (keys and punctuation left
//! out, so a value reads the same whether it sat in a string or in JSON). Each text is capped at
//! [`LINK_SCAN_BYTES`] (the newlines between its leaves counted), so a giant field costs one
//! pass and no more. Pure; no I/O.
//!
//! A text is kept as its leaves, never joined (issue 11: no second copy of the run's text): a
//! leaf is a string of the run, borrowed, or a number written out into one shared buffer. The
//! links read a text leaf by leaf; no token, value or sentence crosses the newline between two
//! leaves, so a leaf's end reads as that newline does. A reader that needs the text as one
//! string gets it joined on demand ([`StepTexts::produced`]).

use super::tokens::clip;
use crate::analysis::model::{Json, Run, Step, StepKind};
use crate::analysis::params::LINK_SCAN_BYTES;
use std::borrow::Cow;

/// The produced and consumed text of every step, by position, each as a run of leaves.
#[derive(Clone, Debug, Default)]
pub struct StepTexts<'a> {
    produced: Vec<Span>,
    consumed: Vec<Span>,
    /// The leaves of all texts, text after text.
    leaves: Vec<Leaf<'a>>,
    /// The number leaves written out, back to back.
    numbers: String,
}

/// One text: `leaves[start..start + len]` of [`StepTexts`].
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: u32,
    len: u32,
}

/// One leaf of a text: a string of the run (clipped to the text's cap), or a number leaf written
/// out as `numbers[start..start + len]` of [`StepTexts`].
#[derive(Clone, Copy, Debug)]
enum Leaf<'a> {
    Run(&'a str),
    Number { start: u32, len: u32 },
}

/// A step's text as its leaves; read as the leaves joined by newlines.
#[derive(Clone, Copy, Debug)]
pub struct Text<'s> {
    leaves: &'s [Leaf<'s>],
    numbers: &'s str,
}

impl<'s> Text<'s> {
    /// The text without leaves.
    const EMPTY: Text<'static> = Text {
        leaves: &[],
        numbers: "",
    };

    fn leaf(&self, l: &Leaf<'s>) -> &'s str {
        match *l {
            Leaf::Run(s) => s,
            Leaf::Number { start, len } => self
                .numbers
                .get(start as usize..start as usize + len as usize)
                .unwrap_or(""),
        }
    }

    /// The leaves, in order.
    pub fn leaves(self) -> impl DoubleEndedIterator<Item = &'s str> + Clone + 's {
        self.leaves.iter().map(move |l| self.leaf(l))
    }

    /// Bytes of the joined text (the leaves and a newline between each two).
    pub fn len(self) -> usize {
        self.leaves().map(str::len).sum::<usize>() + self.leaves.len().saturating_sub(1)
    }

    /// True for a text without leaves.
    pub fn is_empty(self) -> bool {
        self.leaves.is_empty()
    }

    /// The text as one string: borrowed when it is one leaf, else joined.
    pub fn join(self) -> Cow<'s, str> {
        match self.leaves {
            [] => Cow::Borrowed(""),
            [one] => Cow::Borrowed(self.leaf(one)),
            _ => {
                let mut out = String::with_capacity(self.len());
                self.join_into(&mut out);
                Cow::Owned(out)
            }
        }
    }

    /// The text as one string, joined into `buf` (reused) when it has several leaves.
    pub fn joined_in<'b>(self, buf: &'b mut String) -> &'b str
    where
        's: 'b,
    {
        match self.leaves {
            [] => "",
            [one] => self.leaf(one),
            _ => {
                buf.clear();
                self.join_into(buf);
                buf
            }
        }
    }

    fn join_into(self, out: &mut String) {
        for (k, leaf) in self.leaves().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str(leaf);
        }
    }
}

impl<'a> StepTexts<'a> {
    /// Builds both texts for every step of `run`.
    pub fn build(run: &'a Run) -> StepTexts<'a> {
        let n = run.steps.len();
        let units_of = UnitsOf::new(run);
        let mut produced = Vec::with_capacity(n);
        let mut consumed = Vec::with_capacity(n);
        let mut b = Builder::default();
        for (i, step) in run.steps.iter().enumerate() {
            let mut t = Lines::new(&mut b);
            produced_text(run, step, units_of.of(i), &mut t);
            produced.push(t.finish());
            let mut t = Lines::new(&mut b);
            consumed_text(run, step, &mut t);
            consumed.push(t.finish());
        }
        b.leaves.shrink_to_fit();
        b.numbers.shrink_to_fit();
        StepTexts {
            produced,
            consumed,
            leaves: b.leaves,
            numbers: b.numbers,
        }
    }

    fn text(&self, span: Option<&Span>) -> Text<'_> {
        let Some(&Span { start, len }) = span else {
            return Text::EMPTY;
        };
        Text {
            leaves: self
                .leaves
                .get(start as usize..start as usize + len as usize)
                .unwrap_or_default(),
            numbers: &self.numbers,
        }
    }

    /// What step `i` produced, as its leaves.
    pub fn produced_text(&self, i: usize) -> Text<'_> {
        self.text(self.produced.get(i))
    }

    /// What step `i` consumed, as its leaves.
    pub fn consumed_text(&self, i: usize) -> Text<'_> {
        self.text(self.consumed.get(i))
    }

    /// What step `i` produced: its output, documents, memory read, user message, the units it
    /// produced (joined when it is several leaves: a reader that scans many steps should read
    /// [`StepTexts::produced_text`] or join into a buffer it reuses).
    pub fn produced(&self, i: usize) -> Cow<'_, str> {
        self.produced_text(i).join()
    }

    /// What step `i` consumed: its input, tool arguments, memory key and written value, and the
    /// text of the units sent to the model (joined as [`StepTexts::produced`] is).
    pub fn consumed(&self, i: usize) -> Cow<'_, str> {
        self.consumed_text(i).join()
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

/// The context units each step produced, in the run's order: `units[start[p]..start[p + 1]]`
/// are step `p`'s (a counting sort: no list a step, issue 11).
struct UnitsOf {
    start: Vec<u32>,
    units: Vec<u32>,
}

impl UnitsOf {
    fn new(run: &Run) -> UnitsOf {
        let n = run.steps.len();
        // each unit's producer, `u32::MAX` for none
        let producer: Vec<u32> = run
            .context_units
            .iter()
            .map(|unit| {
                unit.produced_by
                    .as_ref()
                    .and_then(|id| run.step_index(id.as_str()))
                    .filter(|&p| p < n)
                    .and_then(|p| u32::try_from(p).ok())
                    .unwrap_or(u32::MAX)
            })
            .collect();
        let mut start = vec![0u32; n + 1];
        for &p in &producer {
            if let Some(c) = start.get_mut(p as usize + 1) {
                *c += 1;
            }
        }
        for p in 0..n {
            let before = start.get(p).copied().unwrap_or(0);
            if let Some(c) = start.get_mut(p + 1) {
                *c += before;
            }
        }
        let mut fill = start.clone();
        let mut units = vec![0u32; start.last().copied().unwrap_or(0) as usize];
        for (u, &p) in producer.iter().enumerate() {
            if let Some(at) = fill.get_mut(p as usize) {
                if let (Some(slot), Ok(u)) = (units.get_mut(*at as usize), u32::try_from(u)) {
                    *slot = u;
                }
                *at += 1;
            }
        }
        UnitsOf { start, units }
    }

    /// The units step `p` produced, in order.
    fn of(&self, p: usize) -> &[u32] {
        match (self.start.get(p), self.start.get(p + 1)) {
            (Some(&a), Some(&b)) => self.units.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
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

/// What the texts are built with: the leaves, the numbers written out, and scratch.
#[derive(Default)]
struct Builder<'a> {
    leaves: Vec<Leaf<'a>>,
    numbers: String,
    /// The leaves still to read of the JSON value at hand.
    stack: Vec<&'a Json>,
}

/// A text being built leaf by leaf, cut exactly where [`push_line`] would cut the leaves
/// joined: an empty leaf is left out, a newline counts one byte before every leaf but the
/// first, and the leaf that reaches [`LINK_SCAN_BYTES`] is clipped (to nothing when only its
/// newline fits).
struct Lines<'a, 'b> {
    /// The text's first leaf in `b.leaves`.
    start: usize,
    /// Bytes of the text joined so far.
    len: usize,
    b: &'b mut Builder<'a>,
}

impl<'a, 'b> Lines<'a, 'b> {
    fn new(b: &'b mut Builder<'a>) -> Self {
        Lines {
            start: b.leaves.len(),
            len: 0,
            b,
        }
    }

    /// The room left for a leaf of `len` bytes after its newline, or None when it adds no
    /// leaf.
    fn room(&mut self, len: usize) -> Option<usize> {
        if self.len >= LINK_SCAN_BYTES || len == 0 {
            return None;
        }
        if self.len > 0 {
            self.len += 1;
        }
        Some(LINK_SCAN_BYTES.saturating_sub(self.len))
    }

    /// A leaf that lives as long as the run.
    fn push(&mut self, s: &'a str) {
        if let Some(room) = self.room(s.len()) {
            let s = clip(s, room);
            self.len += s.len();
            self.b.leaves.push(Leaf::Run(s));
        }
    }

    /// A number leaf, written out.
    fn push_number(&mut self, n: &serde_json::Number) {
        use std::fmt::Write;
        let numbers = &mut self.b.numbers;
        let at = numbers.len();
        let _ = write!(numbers, "{n}");
        let written = numbers.len() - at;
        let Some(room) = self.room(written) else {
            self.b.numbers.truncate(at);
            return;
        };
        let numbers = &mut self.b.numbers;
        let kept = numbers.get(at..).map_or(0, |s| clip(s, room).len());
        numbers.truncate(at + kept);
        self.len += kept;
        match (u32::try_from(at), u32::try_from(kept)) {
            (Ok(start), Ok(len)) => self.b.leaves.push(Leaf::Number { start, len }),
            _ => numbers.truncate(at),
        }
    }

    fn finish(self) -> Span {
        match (
            u32::try_from(self.start),
            u32::try_from(self.b.leaves.len() - self.start),
        ) {
            (Ok(start), Ok(len)) => Span { start, len },
            _ => Span::default(),
        }
    }

    fn full(&self) -> bool {
        self.len >= LINK_SCAN_BYTES
    }
}

/// Appends the string and number leaves of `v`, one per line, until `out` is full.
pub fn flat_text_into(v: &Json, out: &mut String) {
    walk(v, &mut Vec::new(), |v| {
        if out.len() >= LINK_SCAN_BYTES {
            return false;
        }
        match v {
            Json::String(s) => push_line(out, s),
            Json::Number(n) => push_line(out, &n.to_string()),
            _ => {}
        }
        true
    });
}

/// [`flat_text_into`] for a text of [`StepTexts`].
fn flat_lines<'a>(v: &'a Json, out: &mut Lines<'a, '_>) {
    let mut stack = std::mem::take(&mut out.b.stack);
    walk(v, &mut stack, |v| {
        if out.full() {
            return false;
        }
        match v {
            Json::String(s) => out.push(s),
            Json::Number(n) => out.push_number(n),
            _ => {}
        }
        true
    });
    out.b.stack = stack;
}

/// Hands `v` and everything inside it to `visit` in document order, depth first, until `visit`
/// says stop; `stack` is the walk's room (no recursion, so any depth is safe).
fn walk<'a>(v: &'a Json, stack: &mut Vec<&'a Json>, mut visit: impl FnMut(&'a Json) -> bool) {
    stack.clear();
    stack.push(v);
    while let Some(v) = stack.pop() {
        if !visit(v) {
            break;
        }
        match v {
            Json::Array(a) => stack.extend(a.iter().rev()),
            Json::Object(o) => {
                let start = stack.len();
                stack.extend(o.values());
                if let Some(slice) = stack.get_mut(start..) {
                    slice.reverse();
                }
            }
            _ => {}
        }
    }
}

/// The leaves of `v` as text (see [`flat_text_into`]).
pub fn flat_text(v: &Json) -> String {
    let mut out = String::new();
    flat_text_into(v, &mut out);
    out
}

fn produced_text<'a>(run: &'a Run, step: &'a Step, units: &[u32], out: &mut Lines<'a, '_>) {
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
        if let Some(unit) = run.context_units.get(u as usize) {
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
    // A model call's recorded messages: their text and the arguments of their calls. The units
    // found in them are in that text already; a unit sent without a place in any messages is
    // read from the unit below.
    let messages = step.messages();
    for m in messages {
        out.push(&m.content);
        for c in &m.tool_calls {
            out.push(&c.arguments);
        }
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
            if let Some(unit) = run.unit(id.as_str())
                && (messages.is_empty() || unit.at.is_empty())
            {
                out.push(&unit.text);
            }
        }
    }
}

#[cfg(test)]
#[path = "texts_tests.rs"]
mod tests;
