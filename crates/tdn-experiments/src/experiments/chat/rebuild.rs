//! Rebuilding a recorded call's messages for one experiment: a unit cut out by its `at` offsets
//! (a unit that is a whole message removes the message), a dropped unit put back beside the
//! units of its kind, or the units a step produced replaced by a patch. Every place is checked
//! to hold the unit's text before anything is cut. The conversation is kept well formed for a
//! chat endpoint: a removed tool result takes its call out of the assistant turn that made it,
//! and a removed assistant turn takes the results of its calls with it (each said in a note).
//!
//! Pure: no I/O. Offsets are in `char`s (docs/run-format.md, `at`).

use super::ChatError;
use super::recorded::{Call, Message, Place, Recorded, Unit};
use crate::analysis::model::inert_line;

/// The messages to send, with what was done, for stderr.
#[derive(Clone, Debug, PartialEq)]
pub struct Rebuilt {
    /// The call's messages after the change.
    pub messages: Vec<Message>,
    /// One line per change, for people.
    pub notes: Vec<String>,
}

/// One change to the messages.
#[derive(Clone, Debug, PartialEq)]
enum Edit {
    /// Remove `[start, end)` (chars) of a message's content.
    Cut {
        message: usize,
        start: usize,
        end: usize,
    },
    /// Remove a whole message.
    Drop { message: usize },
    /// Insert text at a char offset of a message's content.
    Insert {
        message: usize,
        at: usize,
        text: String,
    },
    /// Replace a message's whole content.
    Replace { message: usize, text: String },
    /// Insert a new message before position `before` (`len` appends).
    New { before: usize, message: Message },
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn q(s: &str) -> String {
    format!("'{}'", inert_line(s))
}

/// Checks that `place` of `unit` in `call` holds the unit's text; returns the edit removing it.
fn removal(call: &Call, unit: &Unit, place: Place) -> Result<Edit, ChatError> {
    let stale = |what: String| {
        ChatError::Setup(format!(
            "the recorded place of unit {} in call {} ({what}) does not hold the unit's text; the run's 'at' is stale, so it cannot be cut out safely",
            q(&unit.id),
            q(&call.step)
        ))
    };
    let Some(m) = call.messages.get(place.message) else {
        return Err(stale(format!(
            "message {}, of {}",
            place.message,
            call.messages.len()
        )));
    };
    match place.range {
        None => {
            if norm(&m.content) != norm(&unit.text) {
                return Err(stale(format!("the whole of message {}", place.message)));
            }
            Ok(Edit::Drop {
                message: place.message,
            })
        }
        Some((start, end)) => {
            let len = m.content.chars().count();
            let end = end.min(len);
            if start > end {
                return Err(stale(format!("message {} [{start}..{end}]", place.message)));
            }
            let slice: String = m.content.chars().skip(start).take(end - start).collect();
            if norm(&slice) != norm(&unit.text) {
                return Err(stale(format!("message {} [{start}..{end}]", place.message)));
            }
            Ok(Edit::Cut {
                message: place.message,
                start,
                end,
            })
        }
    }
}

/// The places of `unit` in `call`, or why it cannot be cut out of that call.
fn places_to_cut(rec: &Recorded, call: &Call, unit: &Unit) -> Result<Vec<Place>, ChatError> {
    let here: Vec<Place> = unit.places_in(&call.step).collect();
    if !here.is_empty() {
        return Ok(here);
    }
    let elsewhere: Vec<&str> = rec
        .calls
        .iter()
        .filter(|c| c.step != call.step && unit.places_in(&c.step).next().is_some())
        .map(|c| c.step.as_str())
        .collect();
    Err(ChatError::Setup(if let Some(last) = elsewhere.last() {
        format!(
            "unit {} never reached the call that answered ({}): it was sent only to earlier calls (the last {}), and re-sending one of those alone cannot be compared with the final answer; the chat runner re-sends one call, so test this unit with a runner that re-runs your agent",
            q(&unit.id),
            q(&call.step),
            q(last)
        )
    } else if call.sent.iter().any(|s| s == &unit.id) {
        format!(
            "unit {} was sent to call {} but its place in that call's messages is not recorded ('at'), so it cannot be cut out",
            q(&unit.id),
            q(&call.step)
        )
    } else {
        format!(
            "unit {} has no recorded place in any call's messages ('at'), so the chat runner cannot cut it out",
            q(&unit.id)
        )
    }))
}

/// `call`'s messages without `units` (ablation).
pub fn cut(rec: &Recorded, call: &Call, units: &[&Unit]) -> Result<Rebuilt, ChatError> {
    let mut edits = Vec::new();
    let mut notes = Vec::new();
    for u in units {
        let places = places_to_cut(rec, call, u)?;
        for p in &places {
            edits.push(removal(call, u, *p)?);
        }
        notes.push(format!(
            "cut unit {} out of call {} ({} place(s))",
            q(&u.id),
            q(&call.step),
            places.len()
        ));
    }
    apply(call, edits, notes)
}

/// `call`'s messages with `unit` put back (restoration): beside the units of its kind in that
/// call, where the run put pieces like it; an instruction after the system messages; anything
/// else at the start of the last user message, ahead of the question, as context is given.
pub fn put_back(rec: &Recorded, call: &Call, unit: &Unit) -> Result<Rebuilt, ChatError> {
    if unit.places_in(&call.step).next().is_some() {
        return Err(ChatError::Setup(format!(
            "unit {} is already in the input of call {}: there is nothing to put back",
            q(&unit.id),
            q(&call.step)
        )));
    }
    // The last place of a unit of the same kind in this call.
    let sibling = rec
        .units
        .iter()
        .filter(|u| u.kind == unit.kind && u.id != unit.id)
        .flat_map(|u| u.places_in(&call.step).map(move |p| (u, p)))
        .filter(|(_, p)| call.messages.get(p.message).is_some())
        .max_by_key(|(_, p)| (p.message, p.range.map_or(usize::MAX, |r| r.1)));
    let (edit, where_) = match sibling {
        Some((
            s,
            Place {
                message,
                range: Some((_, end)),
            },
        )) => {
            let len = call.messages[message].content.chars().count();
            (
                Edit::Insert {
                    message,
                    at: end.min(len),
                    text: format!("\n\n{}", unit.text),
                },
                format!(
                    "in message {message}, right after unit {} (a {} too): where the run put pieces of this kind",
                    q(&s.id),
                    inert_line(&unit.kind)
                ),
            )
        }
        Some((
            s,
            Place {
                message,
                range: None,
            },
        )) if matches!(call.messages[message].role.as_str(), "system" | "user") => (
            Edit::New {
                before: message + 1,
                message: Message {
                    role: call.messages[message].role.clone(),
                    content: unit.text.clone(),
                    ..Message::default()
                },
            },
            format!(
                "as a new {} message right after unit {} (a {} too): where the run put pieces of this kind",
                call.messages[message].role,
                q(&s.id),
                inert_line(&unit.kind)
            ),
        ),
        _ if unit.kind == "instruction" => {
            let before = call
                .messages
                .iter()
                .take_while(|m| m.role == "system")
                .count();
            (
                Edit::New {
                    before,
                    message: Message {
                        role: "system".to_owned(),
                        content: unit.text.clone(),
                        ..Message::default()
                    },
                },
                "as a system message after the call's system messages (it is an instruction)"
                    .to_owned(),
            )
        }
        _ => match call.messages.iter().rposition(|m| m.role == "user") {
            Some(message) => (
                Edit::Insert {
                    message,
                    at: 0,
                    text: format!("{}\n\n", unit.text),
                },
                format!(
                    "at the start of the last user message ({message}), ahead of the question, as context is given (the call holds no unit of its kind to put it beside)"
                ),
            ),
            None => (
                Edit::New {
                    before: call.messages.len(),
                    message: Message {
                        role: "user".to_owned(),
                        content: unit.text.clone(),
                        ..Message::default()
                    },
                },
                "as a user message at the end (the call holds no user message)".to_owned(),
            ),
        },
    };
    let note = format!(
        "put unit {} back into call {} {where_}",
        q(&unit.id),
        q(&call.step)
    );
    apply(call, vec![edit], vec![note])
}

/// `call`'s messages with what step `from` produced replaced by `patch` (a replay with a patch):
/// the patch takes the first place of the step's units in the call, the others are cut.
pub fn substitute(
    rec: &Recorded,
    call: &Call,
    from: &str,
    patch: &str,
) -> Result<Rebuilt, ChatError> {
    let mut places: Vec<(&Unit, Place)> = rec
        .units
        .iter()
        .filter(|u| u.produced_by.as_deref() == Some(from))
        .flat_map(|u| u.places_in(&call.step).map(move |p| (u, p)))
        .collect();
    if places.is_empty() {
        return Err(ChatError::Setup(format!(
            "nothing step {} produced reached the input of the call that answered ({}), so the chat runner has nowhere to put the patch; it re-sends one recorded call and cannot re-run your agent from a step (use a runner of your own for that)",
            q(from),
            q(&call.step)
        )));
    }
    places.sort_by_key(|(_, p)| (p.message, p.range.map_or(0, |r| r.0)));
    let mut edits = Vec::new();
    for (i, (u, p)) in places.iter().enumerate() {
        let removal = removal(call, u, *p)?;
        if i > 0 {
            edits.push(removal);
            continue;
        }
        match removal {
            Edit::Drop { message } => edits.push(Edit::Replace {
                message,
                text: patch.to_owned(),
            }),
            Edit::Cut { message, start, .. } => {
                edits.push(Edit::Insert {
                    message,
                    at: start,
                    text: patch.to_owned(),
                });
                edits.push(removal);
            }
            other => edits.push(other),
        }
    }
    let note = format!(
        "replaced what step {} produced ({} place(s) in call {}) with the patch",
        q(from),
        places.len(),
        q(&call.step)
    );
    apply(call, edits, vec![note])
}

/// Applies `edits` to `call`'s messages, then keeps tool calls and their results paired.
fn apply(call: &Call, edits: Vec<Edit>, mut notes: Vec<String>) -> Result<Rebuilt, ChatError> {
    let n = call.messages.len();
    let mut dropped = vec![false; n];
    let mut cuts: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut inserts: Vec<Vec<(usize, String)>> = vec![Vec::new(); n];
    let mut replaced: Vec<Option<String>> = vec![None; n];
    let mut new: Vec<(usize, Message)> = Vec::new();
    for e in edits {
        match e {
            Edit::Drop { message } => dropped[message] = true,
            Edit::Cut {
                message,
                start,
                end,
            } => cuts[message].push((start, end)),
            Edit::Insert { message, at, text } => inserts[message].push((at, text)),
            Edit::Replace { message, text } => replaced[message] = Some(text),
            Edit::New { before, message } => new.push((before.min(n), message)),
        }
    }
    let mut out: Vec<(usize, Message)> = Vec::with_capacity(n + new.len());
    for (i, m) in call.messages.iter().enumerate() {
        for (_, nm) in new.iter().filter(|(b, _)| *b == i) {
            out.push((usize::MAX, nm.clone()));
        }
        if let Some(text) = &replaced[i] {
            out.push((
                i,
                Message {
                    content: text.clone(),
                    ..m.clone()
                },
            ));
            continue;
        }
        if dropped[i] {
            continue;
        }
        let mut m = m.clone();
        if !cuts[i].is_empty() || !inserts[i].is_empty() {
            m.content = edit_text(&m.content, &mut cuts[i], &mut inserts[i]);
        }
        out.push((i, m));
    }
    for (_, nm) in new.iter().filter(|(b, _)| *b >= n) {
        out.push((usize::MAX, nm.clone()));
    }
    pair_tool_calls(&call.messages, &mut out, &mut notes);
    Ok(Rebuilt {
        messages: out.into_iter().map(|(_, m)| m).collect(),
        notes,
    })
}

/// `text` with the char ranges `cuts` removed and `inserts` placed at their char offsets.
fn edit_text(text: &str, cuts: &mut [(usize, usize)], inserts: &mut [(usize, String)]) -> String {
    cuts.sort_unstable();
    inserts.sort_by_key(|(at, _)| *at);
    let mut out = String::with_capacity(text.len());
    let (mut ci, mut ii) = (0, 0);
    for (i, c) in text.chars().enumerate() {
        while let Some((_, t)) = inserts.get(ii).filter(|(at, _)| *at <= i) {
            out.push_str(t);
            ii += 1;
        }
        while cuts.get(ci).is_some_and(|(_, e)| *e <= i) {
            ci += 1;
        }
        let inside = cuts
            .get(ci..)
            .unwrap_or_default()
            .iter()
            .take_while(|(s, _)| *s <= i)
            .any(|(_, e)| i < *e);
        if !inside {
            out.push(c);
        }
    }
    for (_, t) in inserts.get(ii..).unwrap_or_default() {
        out.push_str(t);
    }
    out
}

/// Keeps tool calls and their results paired after the removals (compared with `original`): a
/// tool result whose call was removed goes, and a call whose result was removed is taken out of
/// its assistant turn (an assistant turn left with neither text nor calls goes too). Pairs the
/// recording itself left unmatched are left as they were.
fn pair_tool_calls(original: &[Message], out: &mut Vec<(usize, Message)>, notes: &mut Vec<String>) {
    use std::collections::HashSet;
    let call_ids = |ms: &mut dyn Iterator<Item = &Message>| -> HashSet<String> {
        ms.flat_map(|m| m.tool_calls.iter().filter_map(|c| c.id.clone()))
            .collect()
    };
    let result_ids = |ms: &mut dyn Iterator<Item = &Message>| -> HashSet<String> {
        ms.filter(|m| m.role == "tool")
            .filter_map(|m| m.tool_call_id.clone())
            .collect()
    };
    let calls_before = call_ids(&mut original.iter());
    let results_before = result_ids(&mut original.iter());
    let calls_now = call_ids(&mut out.iter().map(|(_, m)| m));
    let results_now = result_ids(&mut out.iter().map(|(_, m)| m));
    let gone = |id: &Option<String>, before: &HashSet<String>, now: &HashSet<String>| {
        id.as_ref()
            .is_some_and(|id| before.contains(id) && !now.contains(id))
    };
    let n = out.len();
    out.retain(|(_, m)| m.role != "tool" || !gone(&m.tool_call_id, &calls_before, &calls_now));
    if out.len() < n {
        notes.push(format!(
            "also removed {} tool result(s) whose call was removed",
            n - out.len()
        ));
    }
    let mut unpaired = 0;
    let mut emptied = Vec::new();
    for (i, (_, m)) in out.iter_mut().enumerate() {
        let had = m.tool_calls.len();
        m.tool_calls
            .retain(|c| !gone(&c.id, &results_before, &results_now));
        unpaired += had - m.tool_calls.len();
        if had > 0 && m.tool_calls.is_empty() && m.content.trim().is_empty() {
            emptied.push(i);
        }
    }
    if unpaired > 0 {
        notes.push(format!(
            "also took {unpaired} tool call(s) whose result was removed out of their assistant turn"
        ));
    }
    for i in emptied.into_iter().rev() {
        out.remove(i);
    }
}

#[cfg(test)]
#[path = "rebuild_tests.rs"]
mod tests;
