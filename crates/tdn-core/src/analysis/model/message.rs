//! A model call's input as recorded (`messages`, docs/run-format.md): chat messages in the
//! OpenAI shape, so a runner can send them to a chat endpoint as they are, and the places where
//! a context unit sits in them (`at`).

use super::ids::StepId;
use super::shared_text::SharedText;
use super::step::LazyMap;
use serde::{Deserialize, Serialize};

/// One message of a model call's input (`messages[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool` (another role is kept as written).
    pub role: String,
    /// Its text (content parts joined as text; empty for an assistant turn that only called
    /// tools). Shared: the same text sent in many calls is held once (see [`SharedText`]).
    pub content: SharedText,
    /// The speaker's or the tool's name, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The calls an assistant turn made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageCall>,
    /// For a `tool` message: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Fields this project does not know, kept and written back.
    #[serde(flatten)]
    pub extra: LazyMap,
}

impl Message {
    /// A message with this role and content and nothing else.
    pub fn new(role: impl Into<String>, content: impl Into<SharedText>) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
            ..Message::default()
        }
    }
}

/// A call an assistant turn made (`messages[].tool_calls[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageCall {
    /// The provider's call id, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool called.
    pub name: String,
    /// The arguments as the JSON text the model wrote.
    pub arguments: String,
}

/// What a model step records of the call itself: the model it asked for and its input messages.
/// Behind one pointer in a step's rarely set parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelCall {
    /// The model the call asked for (the request model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The call's input messages, in order (empty: not recorded).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

impl ModelCall {
    /// True when it records nothing.
    pub fn is_empty(&self) -> bool {
        self.model.is_none() && self.messages.is_empty()
    }
}

/// One place where a context unit's text sits in a recorded call's messages (`at[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnitAt {
    /// The `llm` step whose messages hold it.
    pub step: StepId,
    /// The 0-based position of the message in that step's `messages`.
    pub message: usize,
    /// Where the text starts in the message's `content`, in Unicode scalar values (Rust `char`s,
    /// Python `str` indices); with `end` absent too, the unit is the whole content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<usize>,
    /// Where it ends (exclusive), in the same units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<usize>,
}

impl UnitAt {
    /// The whole content of message `message` of step `step`.
    pub fn whole(step: impl Into<String>, message: usize) -> UnitAt {
        UnitAt {
            step: StepId(step.into()),
            message,
            start: None,
            end: None,
        }
    }

    /// The `chars` `start..end` of message `message` of step `step`.
    pub fn span(step: impl Into<String>, message: usize, start: usize, end: usize) -> UnitAt {
        UnitAt {
            step: StepId(step.into()),
            message,
            start: Some(start),
            end: Some(end),
        }
    }

    /// The text this entry names in `content`: the slice `start..end` (in `char`s), or the whole
    /// content when neither is given; `None` when the offsets do not fit the content or only one
    /// is given.
    pub fn slice<'a>(&self, content: &'a str) -> Option<&'a str> {
        match (self.start, self.end) {
            (None, None) => Some(content),
            (Some(s), Some(e)) if s <= e => {
                let from = char_to_byte(content, s)?;
                let len = char_to_byte(content.get(from..)?, e - s)?;
                content.get(from..from + len)
            }
            _ => None,
        }
    }
}

/// The byte offset of the `n`-th `char` of `s` (`s.len()` for `n` = its `char` count); `None`
/// past the end.
pub fn char_to_byte(s: &str, n: usize) -> Option<usize> {
    if n == 0 {
        return Some(0);
    }
    match s.char_indices().nth(n) {
        Some((b, _)) => Some(b),
        None => (s.chars().count() == n).then_some(s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_slices_its_content_by_chars() {
        let content = "Grüße: 42 € und mehr";
        let at = UnitAt::span("s1", 0, 7, 11);
        assert_eq!(at.slice(content), Some("42 €"));
        assert_eq!(UnitAt::whole("s1", 0).slice(content), Some(content));
        let n = content.chars().count();
        assert_eq!(UnitAt::span("s1", 0, 0, n).slice(content), Some(content));
        assert_eq!(UnitAt::span("s1", 0, n, n).slice(content), Some(""));
        assert_eq!(UnitAt::span("s1", 0, 0, n + 1).slice(content), None);
        assert_eq!(UnitAt::span("s1", 0, 5, 4).slice(content), None);
        let half = UnitAt {
            start: Some(1),
            ..UnitAt::whole("s1", 0)
        };
        assert_eq!(half.slice(content), None);
    }

    #[test]
    fn a_message_writes_only_what_it_holds() {
        let mut m = Message::new("tool", "42");
        m.tool_call_id = Some("c1".to_owned());
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"tool","content":"42","tool_call_id":"c1"}"#
        );
        let mut a = Message::new("assistant", "");
        a.tool_calls.push(MessageCall {
            id: None,
            name: "f".to_owned(),
            arguments: "{}".to_owned(),
        });
        a.extra.insert("x".to_owned(), serde_json::json!(1));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"role":"assistant","content":"","tool_calls":[{"name":"f","arguments":"{}"}],"x":1}"#
        );
    }
}
