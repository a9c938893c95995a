//! A model step's `messages` (its input as recorded, in the OpenAI chat shape) and the checks of
//! the context units' `at` entries against them, once every step is known.
//!
//! A part of the wrong type is warned and ignored, as for every other field. A `messages` list
//! holding an item that is no message (not an object, no string `role`) is ignored whole: a
//! runner could not send it, and `at` entries count messages by position. Linear in the run.

use super::leftover;
use super::step::Describe;
use crate::analysis::load::error::{json_type, quoted};
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{ContextUnit, Message, MessageCall, Step, TextTable, UnitAt};
use hashbrown::{HashMap, HashSet};
use serde_json::{Map, Value};

/// Reads `messages`; `None` (with a warning) when it is not a list of messages.
pub(super) fn read_messages(
    v: Value,
    describe: &Describe<'_>,
    here: &dyn Fn(String) -> Warning,
    w: &mut Vec<Warning>,
) -> Option<Vec<Message>> {
    let Value::Array(items) = v else {
        w.push(here(format!(
            "{describe}: \"messages\" is {}, not an array; it was ignored",
            json_type(&v)
        )));
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (n, item) in items.into_iter().enumerate() {
        let Value::Object(mut m) = item else {
            w.push(here(format!(
                "{describe}: messages[{n}] is {}, not an object; \"messages\" was ignored",
                json_type(&item)
            )));
            return None;
        };
        let role = match m.remove("role") {
            Some(Value::String(r)) => r,
            _ => {
                w.push(here(format!(
                    "{describe}: messages[{n}] has no string \"role\"; \"messages\" was ignored"
                )));
                return None;
            }
        };
        let mut wrong = |field: &str, found: &Value, want: &str| {
            w.push(here(format!(
                "{describe}: messages[{n}].{field} is {}, not {want}; it was ignored",
                json_type(found)
            )));
        };
        let content = match m.remove("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(other) => {
                wrong("content", &other, "a string");
                String::new()
            }
        }
        .into();
        let mut opt_string = |m: &mut Map<String, Value>, field: &str| match m.remove(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                wrong(field, &other, "a string");
                None
            }
        };
        let name = opt_string(&mut m, "name");
        let tool_call_id = opt_string(&mut m, "tool_call_id");
        let tool_calls = match m.remove("tool_calls") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(calls)) => calls
                .into_iter()
                .enumerate()
                .filter_map(|(k, c)| read_call(c, n, k, describe, here, w))
                .collect(),
            Some(other) => {
                w.push(here(format!(
                    "{describe}: messages[{n}].tool_calls is {}, not an array; it was ignored",
                    json_type(&other)
                )));
                Vec::new()
            }
        };
        out.push(Message {
            role,
            content,
            name,
            tool_calls,
            tool_call_id,
            extra: leftover(m).into(),
        });
    }
    Some(out)
}

/// Gives equal message texts across the run's steps one allocation ([`TextTable`]): every model
/// call sends the system prompt and the conversation so far again, so a run of many calls would
/// otherwise hold each text once per call (issue 28). Linear in the messages' text.
pub(super) fn share_contents(steps: &mut [Step]) {
    let mut table = TextTable::default();
    for step in steps.iter_mut().filter(|s| !s.messages().is_empty()) {
        for m in &mut step.call_mut().messages {
            table.share(&mut m.content);
        }
    }
}

/// One call of an assistant turn: `{id?, name, arguments}`, arguments as JSON text (a JSON
/// value other than text is written as its JSON text, with a warning).
fn read_call(
    c: Value,
    n: usize,
    k: usize,
    describe: &Describe<'_>,
    here: &dyn Fn(String) -> Warning,
    w: &mut Vec<Warning>,
) -> Option<MessageCall> {
    let at = format!("messages[{n}].tool_calls[{k}]");
    let Value::Object(mut c) = c else {
        w.push(here(format!(
            "{describe}: {at} is {}, not an object; it was ignored",
            json_type(&c)
        )));
        return None;
    };
    let Some(Value::String(name)) = c.remove("name") else {
        w.push(here(format!(
            "{describe}: {at} has no string \"name\"; it was ignored"
        )));
        return None;
    };
    let id = match c.remove("id") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let arguments = match c.remove("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => {
            w.push(here(format!(
                "{describe}: {at}.arguments is {}, not JSON text; it was written as JSON text",
                json_type(&other)
            )));
            other.to_string()
        }
    };
    Some(MessageCall {
        id,
        name,
        arguments,
    })
}

/// Reads a unit's `at` list as given; each entry is checked against the steps later
/// ([`check_places`]). Entries that are not `{step, message, start?, end?}` are warned and
/// dropped here.
pub(super) fn read_at(v: Value, unit: &str, warn: &mut dyn FnMut(String)) -> Vec<UnitAt> {
    let Value::Array(items) = v else {
        warn(format!(
            "context unit '{}': \"at\" is {}, not an array; it was ignored",
            quoted(unit),
            json_type(&v)
        ));
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for (n, item) in items.into_iter().enumerate() {
        let bad = |why: &str| {
            format!(
                "context unit '{}': at[{n}] {why}; the entry was dropped",
                quoted(unit)
            )
        };
        let Value::Object(o) = item else {
            warn(bad("is not an object"));
            continue;
        };
        let Some(Value::String(step)) = o.get("step") else {
            warn(bad("has no string \"step\""));
            continue;
        };
        let Some(message) = o.get("message").and_then(index) else {
            warn(bad("has no \"message\" position (a non-negative integer)"));
            continue;
        };
        let offset = |key: &str| match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => index(v).map(Some).ok_or(()),
        };
        let (Ok(start), Ok(end)) = (offset("start"), offset("end")) else {
            warn(bad(
                "has a \"start\" or \"end\" that is not a non-negative integer",
            ));
            continue;
        };
        if start.is_some() != end.is_some() {
            warn(bad("gives one of \"start\" and \"end\" without the other"));
            continue;
        }
        out.push(UnitAt {
            step: step.as_str().into(),
            message,
            start,
            end,
        });
    }
    out
}

fn index(v: &Value) -> Option<usize> {
    super::count(v).and_then(|n| usize::try_from(n).ok())
}

/// At most this many bytes of unit text are compared with the messages per byte of message
/// content in the run: what the comparisons of one run may cost, whatever its `at` lists say
/// (a hostile file could point a long unit at the same long message many times over).
const COMPARE_BUDGET_PER_BYTE: usize = 2;

/// Checks every unit's `at` entries once every step is known: an entry naming no step, no
/// message of that step's `messages`, or offsets past the message's end is dropped with a
/// warning; one whose text differs from the unit's, or whose step does not list the unit in
/// `context.sent`, is kept with a warning. Linear in the run (the text comparisons have a
/// budget, see [`COMPARE_BUDGET_PER_BYTE`]).
pub(super) fn check_places(
    units: &mut [ContextUnit],
    steps: &[Step],
    seen: &HashMap<String, usize>,
    w: &mut Vec<Warning>,
) {
    if units.iter().all(|u| u.at.is_empty()) {
        return;
    }
    let content_bytes: usize = steps
        .iter()
        .flat_map(|s| s.messages())
        .map(|m| m.content.len())
        .sum();
    let mut budget = content_bytes.saturating_mul(COMPARE_BUDGET_PER_BYTE);
    let mut sent: HashSet<(usize, &str)> = HashSet::new();
    for (i, s) in steps.iter().enumerate() {
        for id in s.context.iter().flat_map(|c| c.sent.iter()) {
            sent.insert((i, id.as_str()));
        }
    }
    // Char counts of the messages entries name, each counted once.
    let mut chars: HashMap<(usize, usize), usize> = HashMap::new();
    for unit in units.iter_mut() {
        let id = unit.id.as_str();
        let text = unit.text.as_str();
        let mut unsent_warned = false;
        let mut differs_warned = false;
        unit.at.retain(|at| {
            let Some(&si) = seen.get(at.step.as_str()) else {
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}': \"at\" names no step of this run ('{}'); the entry was dropped",
                        quoted(id),
                        quoted(at.step.as_str())
                    ),
                ));
                return false;
            };
            let Some(step) = steps.get(si) else {
                return false;
            };
            let Some(message) = step.messages().get(at.message) else {
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}': \"at\" names messages[{}] of {}, which records {} message(s); the entry was dropped",
                        quoted(id),
                        at.message,
                        step.describe(),
                        step.messages().len()
                    ),
                ));
                return false;
            };
            if let Some(end) = at.end {
                let n = *chars
                    .entry((si, at.message))
                    .or_insert_with(|| message.content.chars().count());
                if end > n || at.start.is_some_and(|s| s > end) {
                    w.push(Warning::run(
                        Some("context_units"),
                        format!(
                            "context unit '{}': \"at\" gives {}..{} in messages[{}] of {}, whose content is {n} characters long; the entry was dropped",
                            quoted(id),
                            at.start.unwrap_or(0),
                            end,
                            at.message,
                            step.describe()
                        ),
                    ));
                    return false;
                }
            }
            if !differs_warned && budget >= text.len() {
                budget -= text.len();
                let same = at.slice(&message.content) == Some(text);
                if !same {
                    differs_warned = true;
                    w.push(Warning::run(
                        Some("context_units"),
                        format!(
                            "context unit '{}': the text \"at\" names in messages[{}] of {} is not the unit's text (offsets count Unicode characters, not bytes or UTF-16 units); a runner that cuts it there cuts something else",
                            quoted(id),
                            at.message,
                            step.describe()
                        ),
                    ));
                }
            }
            if !unsent_warned && !sent.contains(&(si, id)) {
                unsent_warned = true;
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}' sits in the messages of {}, whose context.sent does not list it",
                        quoted(id),
                        step.describe()
                    ),
                ));
            }
            true
        });
    }
}
