//! What each step produced and what it consumed, as plain text, computed once per run.
//!
//! A JSON value becomes its string and number leaves, one per line (keys and punctuation left
//! out, so a value reads the same whether it sat in a string or in JSON). Each text is capped at
//! [`LINK_SCAN_BYTES`], so a giant field costs one pass and no more. Pure; no I/O.

use super::tokens::clip;
use crate::analysis::model::{Run, Step, StepKind};
use crate::analysis::rank::params::LINK_SCAN_BYTES;
use serde_json::Value;

/// The produced and consumed text of every step, by position.
#[derive(Clone, Debug, Default)]
pub struct StepTexts {
    produced: Vec<String>,
    consumed: Vec<String>,
}

impl StepTexts {
    /// Builds both texts for every step of `run`.
    pub fn build(run: &Run) -> StepTexts {
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
        for (i, step) in run.steps.iter().enumerate() {
            produced.push(produced_text(
                run,
                step,
                units_of.get(i).map_or(&[][..], |v| v),
            ));
            consumed.push(consumed_text(run, step));
        }
        StepTexts { produced, consumed }
    }

    /// What step `i` produced: its output, documents, memory read, user message, the units it
    /// produced.
    pub fn produced(&self, i: usize) -> &str {
        self.produced.get(i).map_or("", String::as_str)
    }

    /// What step `i` consumed: its input, tool arguments, memory key and written value, and the
    /// text of the units sent to the model.
    pub fn consumed(&self, i: usize) -> &str {
        self.consumed.get(i).map_or("", String::as_str)
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

/// The leaves of `v` as text (see [`flat_text_into`]).
pub fn flat_text(v: &Value) -> String {
    let mut out = String::new();
    flat_text_into(v, &mut out);
    out
}

fn produced_text(run: &Run, step: &Step, units: &[usize]) -> String {
    let mut out = String::new();
    if step.kind == StepKind::User
        && let Some(v) = &step.input
    {
        flat_text_into(v, &mut out);
    }
    if let Some(v) = &step.output {
        flat_text_into(v, &mut out);
    }
    if let Some(docs) = &step.documents {
        for d in docs {
            if let Some(id) = &d.id {
                push_line(&mut out, id);
            }
            if let Some(src) = &d.source {
                push_line(&mut out, src);
            }
            push_line(&mut out, &d.text);
        }
    }
    if step.kind == StepKind::MemoryRead
        && let Some(m) = &step.memory
    {
        flat_text_into(&m.value, &mut out);
    }
    if let Some(d) = &step.decision {
        push_line(&mut out, &d.chosen);
    }
    for &u in units {
        if let Some(unit) = run.context_units.get(u) {
            push_line(&mut out, &unit.text);
        }
    }
    out
}

fn consumed_text(run: &Run, step: &Step) -> String {
    let mut out = String::new();
    if step.kind != StepKind::User
        && let Some(v) = &step.input
    {
        flat_text_into(v, &mut out);
    }
    if let Some(t) = &step.tool {
        flat_text_into(&t.arguments, &mut out);
    }
    if let Some(m) = &step.memory {
        push_line(&mut out, &m.key);
        if step.kind == StepKind::MemoryWrite {
            flat_text_into(&m.value, &mut out);
        }
    }
    if let Some(ctx) = &step.context {
        for id in &ctx.sent {
            if let Some(unit) = run.unit(id.as_str()) {
                push_line(&mut out, &unit.text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_text_keeps_leaves_in_order_and_drops_keys() {
        let v = json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday", "n": 120, "ok": true}}});
        assert_eq!(flat_text(&v), "create_event\nFriday\n120");
    }
}
