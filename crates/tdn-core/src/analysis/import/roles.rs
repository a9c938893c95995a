//! Who speaks in a message: the chat role names every format uses (`user`, `human`, `ai`,
//! Gemini's `model`, `developer`, `function`, ...) and LangChain's message classes and types, in
//! one table and one function, read by every importer that turns messages into steps and by the
//! reader of LangChain's serialised objects (`decode::unwrap_lc`). Pure; never panics.

use super::chat::str_at;
use serde_json::Value;

/// LangChain's message classes, the `type` each writes and the chat role each stands for: the one
/// table that [`message_role`] and `decode::unwrap_lc` both read. A streamed `*Chunk` class stands
/// for the same message as its class (its own `type` is its class name, `AIMessageChunk`).
const LC_MESSAGES: [(&str, &str, &str); 5] = [
    ("HumanMessage", "human", "user"),
    ("AIMessage", "ai", "assistant"),
    ("SystemMessage", "system", "system"),
    ("ToolMessage", "tool", "tool"),
    ("FunctionMessage", "function", "tool"),
];

fn lc_row(name: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = name.strip_suffix("Chunk").unwrap_or(name);
    LC_MESSAGES
        .iter()
        .find(|(class, kind, _)| *class == name || *kind == name)
}

/// The LangChain `type` (`human`, `ai`, `system`, `tool`, `function`) a message class or type
/// names, `*Chunk` classes included; `None` for anything else.
pub fn lc_type(name: &str) -> Option<&'static str> {
    lc_row(name).map(|(_, kind, _)| *kind)
}

/// The chat role (`user`, `assistant`, `system`, `tool`) a LangChain message class or type names,
/// `*Chunk` classes included; `None` for anything else.
pub fn lc_role(name: &str) -> Option<&'static str> {
    lc_row(name).map(|(_, _, role)| *role)
}

/// The class name of a LangChain serialised object (`{"lc": 1, "type": "constructor", "id":
/// [..., "HumanMessage"], ...}`): the last item of its `id`. `None` for any other value.
pub fn lc_class(v: &Value) -> Option<&str> {
    let o = v.as_object()?;
    if o.get("lc").is_none() || o.get("type").and_then(Value::as_str) != Some("constructor") {
        return None;
    }
    o.get("id")?.as_array()?.last()?.as_str()
}

/// A message's role, one of `system`, `user`, `assistant`, `tool` or the name it is given (an
/// agent's): `role`, `message.role` (`developer` is `system`, `human` is `user`, `ai` and Gemini's
/// `model` are `assistant`, `function` is `tool`), LangChain's `type` (`human`, `ai`, `system`,
/// `tool`, `function`, and the `*MessageChunk` class names it writes for streamed messages) or, for
/// its serialised objects, the class they name: read through the one table in
/// `LC_MESSAGES`, which `decode::unwrap_lc` reads too, so a message and its unwrapped
/// `kwargs` have the same role. Every importer that turns messages into steps reads roles here.
pub fn message_role(v: &Value) -> Option<&str> {
    if let Some(class) = lc_class(v) {
        let kwargs = v.get("kwargs");
        return kwargs
            .and_then(|k| str_at(k, "role"))
            .map(role_name)
            .or_else(|| kwargs.and_then(|k| str_at(k, "type")).and_then(lc_role))
            .or_else(|| lc_role(class));
    }
    if let Some(raw) =
        str_at(v, "role").or_else(|| v.get("message").and_then(|m| str_at(m, "role")))
    {
        return Some(role_name(raw));
    }
    // `type: "function"` is also a tool definition or a call item (`{"type": "function",
    // "function": {...}}`, `{"type": "function", "name", "parameters"}`): it is LangChain's
    // function message only with a `content` and no `function` object.
    let function_message = v.get("content").is_some() && v.get("function").is_none();
    v.get("kwargs")
        .and_then(|k| str_at(k, "type"))
        .or_else(|| str_at(v, "type"))
        .filter(|t| *t != "function" || function_message)
        .and_then(lc_role)
}

/// A `role` as one of the four chat roles when it is one of their other names.
fn role_name(raw: &str) -> &str {
    match raw {
        "developer" => "system",
        "human" => "user",
        "ai" | "model" => "assistant",
        "function" => "tool",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode;
    use super::*;
    use serde_json::json;

    #[test]
    fn langchain_roles_agree_with_their_unwrapped_kwargs() {
        for class in [
            "HumanMessage",
            "HumanMessageChunk",
            "AIMessage",
            "AIMessageChunk",
            "SystemMessage",
            "SystemMessageChunk",
            "ToolMessage",
            "ToolMessageChunk",
            "FunctionMessage",
            "FunctionMessageChunk",
        ] {
            let lc = json!({"lc": 1, "type": "constructor",
                "id": ["langchain_core", "messages", class], "kwargs": {"content": "x"}});
            let unwrapped = decode::unwrap_lc(&lc).map(Value::Object);
            let role = message_role(&lc);
            assert!(role.is_some(), "{class} has a role");
            assert_eq!(
                unwrapped.as_ref().and_then(message_role),
                role,
                "{class}: its kwargs give the same role"
            );
        }
        let chunk_kwargs = json!({"type": "AIMessageChunk", "content": "x"});
        assert_eq!(message_role(&chunk_kwargs), Some("assistant"));
        for not_message in [
            json!({"type": "function", "function": {"name": "f"}}),
            json!({"type": "function", "name": "f", "parameters": {}}),
            json!({"type": "function", "id": "c1", "function": {"name": "f", "arguments": "{}"}}),
        ] {
            assert_eq!(message_role(&not_message), None, "{not_message}");
        }
        for (role, expected) in [
            ("developer", "system"),
            ("function", "tool"),
            ("human", "user"),
            ("model", "assistant"),
        ] {
            assert_eq!(
                message_role(&json!({"role": role, "content": "x"})),
                Some(expected)
            );
        }
    }
}
