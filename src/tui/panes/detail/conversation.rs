//! A model step as a conversation (issue 26): the messages it was sent, each under its role, an
//! assistant turn's calls inline with their arguments and the result the following tool message
//! gave; then its reply, with the reasoning the trace records, its text and its calls with the
//! result the tool step that ran each one gave. Long content is folded to its first lines with a
//! line saying how much is folded; the zoomed pane and the full step view show it all.

use super::super::super::document::turn::{TurnCall, looks_like_turn, read_turn};
use super::super::super::document::{Document, call_text};
use super::super::super::theme::Role;
use super::super::super::widgets::inert_text::{clipped, one_line, wrapped};
use super::super::super::widgets::marks;
use super::Builder;
use crate::analysis::model::{Json, Message, Step, StepKind, value_text};
use std::collections::HashMap;

/// Wrapped lines a message may take before it is folded, and the lines kept when it is.
const FOLD_OVER: usize = 12;
const FOLD_KEEP: usize = 8;
/// Columns of a call's arguments on its line, folded and in full.
const ARGS_FOLDED: usize = 300;
const ARGS_FULL: usize = 20_000;
/// Columns of a call's result on the call's line.
const RESULT_CHARS: usize = 160;
/// Steps after a model step searched for the tool steps that ran its calls.
const RESULT_SEARCH: usize = 512;

impl Builder<'_> {
    /// Text under a message's header: whole in the full view, else folded past [`FOLD_OVER`]
    /// lines to its first [`FOLD_KEEP`] with a line saying how much is folded.
    pub(super) fn folded(&mut self, s: &str, role: Role) {
        if self.full {
            self.text(s, role);
            return;
        }
        let (cut, _) = super::cut(s);
        let lines = wrapped(cut, self.style(role), self.w);
        if lines.len() <= FOLD_OVER {
            self.text(s, role);
            return;
        }
        let hidden = lines.len() - FOLD_KEEP;
        let chars = s.chars().count();
        self.lines.extend(lines.into_iter().take(FOLD_KEEP));
        self.note(&format!(
            "… {hidden} more lines folded ({chars} characters in all): z zooms the pane, Enter shows the whole step"
        ));
    }

    /// The `messages` the step was sent, as a conversation.
    pub(super) fn conversation(&mut self, step: &Step) {
        let messages = step.messages();
        if messages.is_empty() {
            return;
        }
        let model = step
            .request_model()
            .map(|m| format!(" to {}", clipped(m, 40)))
            .unwrap_or_default();
        self.section(&format!(
            "Conversation: {}{model}",
            crate::analysis::count::counted(messages.len(), "message", "messages")
        ));
        let answers = answers(messages);
        for (n, m) in messages.iter().enumerate() {
            let mut head = format!("#{n} {}", clipped(&m.role, 20));
            if let Some(name) = &m.name {
                head.push_str(&format!(" ({})", clipped(name, 30)));
            }
            if let Some((from, k)) = answers.answered.get(&n) {
                let call = messages
                    .get(*from)
                    .and_then(|f| f.tool_calls.get(*k))
                    .map(|c| clipped(&c.name, 40).into_owned())
                    .unwrap_or_default();
                head.push_str(&format!(" · the result of {call} (#{from})"));
            } else if let Some(id) = &m.tool_call_id {
                head.push_str(&format!(" · answers call {}", clipped(id, 40)));
            }
            self.lines.push(ratatui::text::Line::styled(
                head,
                self.style(role_of(&m.role)),
            ));
            if !m.content.is_empty() {
                self.folded(&m.content, Role::Text);
            }
            for (k, c) in m.tool_calls.iter().enumerate() {
                let args = Json::from(
                    serde_json::from_str::<serde_json::Value>(&c.arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone())),
                );
                let call = TurnCall {
                    id: c.id.as_deref(),
                    name: &c.name,
                    arguments: args,
                };
                let result = answers.answer.get(&(n, k)).and_then(|&r| {
                    messages
                        .get(r)
                        .map(|a| (one_line(&a.content, 4096, RESULT_CHARS), format!("#{r}")))
                });
                self.call_line(&call, result);
            }
        }
    }

    /// The step's output read as a model's reply (its reasoning, text and calls); false when
    /// the output is not shaped like one (the caller shows it as it is).
    pub(super) fn reply(&mut self, doc: &Document, i: usize, step: &Step) -> bool {
        if !step.kind.is_model() {
            return false;
        }
        let reasoning = recorded_reasoning(step);
        let Some(out) = step.output.as_ref() else {
            if let Some(r) = reasoning {
                self.section("Reply");
                self.reasoning(r);
                return true;
            }
            return false;
        };
        if !looks_like_turn(out) {
            return false;
        }
        let turn = read_turn(out);
        if turn.is_empty() && reasoning.is_none() {
            return false;
        }
        self.section("Reply");
        if let Some(r) = reasoning {
            self.reasoning(r);
        }
        if !turn.reasoning.is_empty() {
            self.reasoning(&turn.reasoning);
        }
        if !turn.text.is_empty() {
            self.lines.push(ratatui::text::Line::styled(
                "assistant".to_owned(),
                self.style(Role::StepKind),
            ));
            self.folded(&turn.text, Role::Text);
        }
        let ran = ran_by(doc, i, &turn.calls);
        for (c, r) in turn.calls.iter().zip(ran) {
            let result = r.and_then(|k| {
                let s = doc.run.steps.get(k)?;
                let said = match (&s.error, &s.output) {
                    (Some(e), _) => {
                        format!("{} {}", marks::FAILED, one_line(e, 4096, RESULT_CHARS))
                    }
                    (None, Some(v)) => one_line(&value_text(&v.to_value()), 4096, RESULT_CHARS),
                    (None, None) => "no output recorded".to_owned(),
                };
                Some((said, format!("step {}", k + 1)))
            });
            self.call_line(c, result);
        }
        for (id, text) in &turn.results {
            let head = match id {
                Some(id) => format!("tool result for {}", clipped(id, 40)),
                None => "tool result".to_owned(),
            };
            self.lines
                .push(ratatui::text::Line::styled(head, self.style(Role::TextDim)));
            self.folded(text, Role::Text);
        }
        true
    }

    fn reasoning(&mut self, text: &str) {
        self.lines.push(ratatui::text::Line::styled(
            "reasoning".to_owned(),
            self.style(Role::TextDim),
        ));
        self.folded(text, Role::TextDim);
    }

    /// `↳ calls get_weather(city: Tokyo) → The weather in Tokyo is sunny. (#3)`.
    fn call_line(&mut self, c: &TurnCall<'_>, result: Option<(String, String)>) {
        let max = if self.full { ARGS_FULL } else { ARGS_FOLDED };
        let mut pieces = vec![(
            format!("↳ calls {}", call_text(c, max)),
            self.style(Role::StepKind),
        )];
        match result {
            Some((said, from)) => {
                pieces.push((format!(" → {said} ({from})"), self.style(Role::Text)))
            }
            None => pieces.push((
                " → no result recorded".to_owned(),
                self.style(Role::TextDim),
            )),
        }
        self.lines
            .extend(super::super::super::widgets::inert_text::wrap_spans(
                pieces, self.w, "    ",
            ));
    }
}

/// The style of a message's header, by role.
fn role_of(role: &str) -> Role {
    match role {
        "user" => Role::Heading,
        "assistant" => Role::StepKind,
        _ => Role::TextDim,
    }
}

/// Which tool message answers which call: by `tool_call_id`, else the next unanswered call of
/// the turns before it, in order (some traces record no ids).
struct Answers {
    /// (message, call) → the message holding its result.
    answer: HashMap<(usize, usize), usize>,
    /// A tool message → the (message, call) it answers.
    answered: HashMap<usize, (usize, usize)>,
}

fn answers(messages: &[Message]) -> Answers {
    let mut by_id: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut waiting: std::collections::VecDeque<(usize, usize)> = Default::default();
    let mut a = Answers {
        answer: HashMap::new(),
        answered: HashMap::new(),
    };
    for (n, m) in messages.iter().enumerate() {
        if !m.tool_calls.is_empty() {
            waiting.clear();
            for (k, c) in m.tool_calls.iter().enumerate() {
                if let Some(id) = c.id.as_deref() {
                    by_id.insert(id, (n, k));
                }
                waiting.push_back((n, k));
            }
            continue;
        }
        if m.role != "tool" {
            continue;
        }
        let by = m
            .tool_call_id
            .as_deref()
            .and_then(|id| by_id.remove(id))
            .or_else(|| {
                // Without an id, the first call still waiting.
                m.tool_call_id
                    .is_none()
                    .then(|| waiting.front().copied())
                    .flatten()
            });
        if let Some(call) = by {
            waiting.retain(|w| *w != call);
            a.answer.insert(call, n);
            a.answered.insert(n, call);
        }
    }
    a
}

/// For each call of step `i`'s reply, the later tool step that ran it: the one whose `call_id`
/// is the call's id, else the first not yet taken with the call's tool name, before the next
/// model step. Looks at most [`RESULT_SEARCH`] steps ahead.
fn ran_by(doc: &Document, i: usize, calls: &[TurnCall<'_>]) -> Vec<Option<usize>> {
    let mut out = vec![None; calls.len()];
    if calls.is_empty() {
        return out;
    }
    let mut taken = Vec::new();
    let end = doc.run.steps.len().min(i + 1 + RESULT_SEARCH);
    let later = doc.run.steps.get(i + 1..end).unwrap_or_default();
    for (slot, c) in out.iter_mut().zip(calls) {
        let by_id = c.id.and_then(|id| {
            later.iter().position(|s| {
                s.tool
                    .as_ref()
                    .and_then(|t| t.call_id.as_deref())
                    .is_some_and(|x| x == id)
            })
        });
        let by_name = || {
            later
                .iter()
                .take_while(|s| !(s.kind.is_model() && s.kind != StepKind::Agent))
                .enumerate()
                .find(|(k, s)| {
                    !taken.contains(k) && s.tool.as_ref().is_some_and(|t| t.name == c.name)
                })
                .map(|(k, _)| k)
        };
        if let Some(k) = by_id.or_else(by_name) {
            taken.push(k);
            *slot = Some(i + 1 + k);
        }
    }
    out
}

/// The reasoning a step's attributes record (`reasoning_content`, ATIF's
/// `atif.reasoning_content`), when any.
fn recorded_reasoning(step: &Step) -> Option<&str> {
    step.attributes()
        .iter()
        .find(|(k, v)| k.ends_with("reasoning_content") && v.is_string())
        .and_then(|(_, v)| v.as_str())
        .filter(|s| !s.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::MessageCall;

    fn call(id: Option<&str>, name: &str) -> MessageCall {
        MessageCall {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            arguments: "{}".to_owned(),
        }
    }

    #[test]
    fn tool_messages_answer_calls_by_id_else_in_order() {
        let mut a1 = Message::new("assistant", "");
        a1.tool_calls = vec![call(Some("c1"), "f"), call(Some("c2"), "g")];
        let mut t2 = Message::new("tool", "from g");
        t2.tool_call_id = Some("c2".to_owned());
        let mut t1 = Message::new("tool", "from f");
        t1.tool_call_id = Some("c1".to_owned());
        let mut a2 = Message::new("assistant", "");
        a2.tool_calls = vec![call(None, "h")];
        let t3 = Message::new("tool", "from h");
        let list = vec![Message::new("user", "go"), a1, t2, t1, a2, t3];
        let a = answers(&list);
        assert_eq!(a.answer.get(&(1, 0)), Some(&3));
        assert_eq!(a.answer.get(&(1, 1)), Some(&2));
        assert_eq!(a.answer.get(&(4, 0)), Some(&5));
        assert_eq!(a.answered.get(&5), Some(&(4, 0)));
    }
}
