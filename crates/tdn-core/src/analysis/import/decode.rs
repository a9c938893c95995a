//! Values that traces hold as text: JSON encoded once or twice (`"\"What is Langfuse?\""`, a whole
//! chat completion in `traceloop.entity.output`), Python literals and reprs
//! (`"{'query': 'x'}"`, `Message(role='user', ...)`), LangChain's serialised objects
//! (`{"lc": 1, "type": "constructor", "kwargs": {...}}`). [`decoded`] turns such text back into
//! the value it holds; [`serialised`] tells text that is still a serialised structure from prose.
//!
//! Pure; bounded (at most [`MAX_DECODES`] layers, the parsers' own depth limits); never panics.

use super::pyliteral;
use super::roles::{lc_class, lc_type};
use serde_json::{Map, Value};

/// At most this many layers of encoding are undone.
pub const MAX_DECODES: usize = 3;

/// The value a string holds when it is JSON (an object, an array, or a string: JSON encoded
/// twice) or a Python literal or repr, undone up to [`MAX_DECODES`] times; any other value (and
/// any other text) as it is.
pub fn decoded(v: Value) -> Value {
    let mut v = v;
    for _ in 0..MAX_DECODES {
        let Value::String(s) = &v else { break };
        match decode_once(s) {
            Some(d) => v = d,
            None => break,
        }
    }
    v
}

/// A string's value when it holds one (see [`decoded`]), else `None`.
pub fn decoded_text(s: &str) -> Option<Value> {
    match decoded(Value::String(s.to_owned())) {
        Value::String(t) if t == s => None,
        other => Some(other),
    }
}

fn decode_once(s: &str) -> Option<Value> {
    let t = s.trim();
    match t.as_bytes().first()? {
        b'{' | b'[' | b'"' => {
            if let Ok(v) = serde_json::from_str::<Value>(t) {
                return Some(v);
            }
        }
        _ => {}
    }
    if pyliteral::looks_like(t) {
        let v = pyliteral::parse(t)?;
        // A bare quoted word or number is not worth a layer; a structure or a quoted text is. A
        // call is a repr only with keyword arguments (`Message(role='user')`), so a line of code
        // such as `print('x')` stays text.
        return match &v {
            Value::Object(o) if o.contains_key(pyliteral::CLASS_KEY) => o
                .keys()
                .any(|k| k != pyliteral::CLASS_KEY && k != "args")
                .then_some(v),
            Value::Object(_) | Value::Array(_) => Some(v),
            Value::String(_) if matches!(t.as_bytes().first(), Some(b'\'' | b'"')) => Some(v),
            _ => None,
        };
    }
    None
}

/// True when the text is a serialised structure rather than prose: it decodes to an object or an
/// array, or it opens like one (`{"`, `{'`, `[{`, `["`, `[[`: JSON cut short still is not prose),
/// or it is a repr of an object (`Name(key=...)`).
pub fn serialised(text: &str) -> bool {
    let t = text.trim();
    let head: String = t.chars().filter(|c| !c.is_whitespace()).take(2).collect();
    if matches!(
        head.as_str(),
        "{\"" | "{'" | "[{" | "[\"" | "[[" | "['" | "{}" | "[]"
    ) {
        return true;
    }
    matches!(decoded_text(t), Some(Value::Object(_) | Value::Array(_)))
}

/// LangChain's serialised object `{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
/// "kwargs": {...}}` as the plain object it stands for: its `kwargs`, with `type` (`human`, `ai`,
/// `system`, `tool`, `function`) from the class name when `kwargs` has none. Any other value as
/// it is.
pub fn unwrap_lc(v: &Value) -> Option<Map<String, Value>> {
    let o = v.as_object()?;
    if o.get("lc").is_none() || o.get("type").and_then(Value::as_str) != Some("constructor") {
        return None;
    }
    let mut kwargs = o.get("kwargs")?.as_object()?.clone();
    if !kwargs.contains_key("type")
        && let Some(t) = lc_class(v).and_then(lc_type)
    {
        kwargs.insert("type".to_owned(), Value::String(t.to_owned()));
    }
    Some(kwargs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_encoded_once_or_twice_and_python_literals_are_undone() {
        assert_eq!(
            decoded(json!("\"What is Langfuse?\"")),
            json!("What is Langfuse?")
        );
        assert_eq!(
            decoded(json!("\"{\\\"a\\\": [1]}\"")),
            json!({"a": [1]}),
            "a JSON string holding a JSON object"
        );
        assert_eq!(decoded(json!("{'query': 'x'}")), json!({"query": "x"}));
        assert_eq!(
            decoded(json!("Message(role='user', content='hi')")),
            json!({"__class__": "Message", "role": "user", "content": "hi"})
        );
        assert_eq!(decoded(json!("plain words")), json!("plain words"));
        assert_eq!(decoded(json!("42")), json!("42"), "numbers stay text");
        assert_eq!(decoded(json!("{broken")), json!("{broken"));
        assert_eq!(
            decoded(json!("print('x')")),
            json!("print('x')"),
            "code is not a repr"
        );
        assert_eq!(decoded(json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn serialised_structures_are_told_from_prose() {
        assert!(serialised("{\"messages\": [{\"lc\": 1}]}"));
        assert!(serialised("{\"content\": \"cut sho"));
        assert!(serialised("[{'role': 'user'}]"));
        assert!(serialised("RunResponse(content=None, model='m')"));
        assert!(!serialised("Paris is the capital of France."));
        assert!(!serialised("[1] Smith, J. (2020). A study."));
        assert!(!serialised("The result (see above) is 4."));
        assert!(!serialised("\"quoted words\""));
    }

    #[test]
    fn langchain_constructors_unwrap_to_their_kwargs() {
        let human = json!({"lc": 1, "type": "constructor",
            "id": ["langchain", "schema", "messages", "HumanMessage"],
            "kwargs": {"content": "hi"}});
        assert_eq!(
            unwrap_lc(&human),
            json!({"content": "hi", "type": "human"})
                .as_object()
                .cloned()
        );
        assert_eq!(unwrap_lc(&json!({"content": "hi"})), None);
    }

    #[test]
    fn chunk_and_function_classes_unwrap_to_the_type_of_their_message() {
        let lc = |class: &str| {
            json!({"lc": 1, "type": "constructor",
                "id": ["langchain_core", "messages", class], "kwargs": {"content": "x"}})
        };
        let kind = |class: &str| {
            unwrap_lc(&lc(class))
                .and_then(|k| k.get("type").and_then(Value::as_str).map(str::to_owned))
        };
        assert_eq!(kind("SystemMessageChunk").as_deref(), Some("system"));
        assert_eq!(kind("ToolMessageChunk").as_deref(), Some("tool"));
        assert_eq!(kind("FunctionMessage").as_deref(), Some("function"));
        assert_eq!(kind("FunctionMessageChunk").as_deref(), Some("function"));
        assert_eq!(kind("AIMessageChunk").as_deref(), Some("ai"));
        assert_eq!(kind("Document"), None);
    }
}
