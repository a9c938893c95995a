//! Recorded inputs of every shape read as chat messages.

use super::*;
use serde_json::json;

fn roles(v: Value) -> Vec<(String, &'static str, String)> {
    messages_of(&v)
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.role, m.kind, m.content))
        .collect()
}

fn r(role: &str, kind: &'static str, content: &str) -> (String, &'static str, String) {
    (role.to_owned(), kind, content.to_owned())
}

#[test]
fn openai_messages_with_parts_calls_and_results() {
    let v = json!([
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"}
    ]);
    let m = messages_of(&v).unwrap_or_default();
    assert_eq!(
        m.iter()
            .map(|m| (m.role.as_str(), m.kind, m.content.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("system", "instruction", "Be brief."),
            ("user", "user", "a\nb"),
            ("assistant", "message", ""),
            ("tool", "tool_result", "42")
        ]
    );
    assert_eq!(
        m[2].calls,
        vec![(Some("c1".into()), "f".into(), "{\"x\": 1}".into())]
    );
    assert_eq!(m[3].call_id.as_deref(), Some("c1"));
    assert_eq!(
        m[2].to_value(),
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f", "arguments": "{\"x\": 1}"}]})
    );
}

#[test]
fn genai_parts_anthropic_blocks_and_gemini_parts() {
    let genai = json!([
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "w", "arguments": {"l": "T"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": "rainy"}]}
    ]);
    let m = messages_of(&genai).unwrap_or_default();
    assert_eq!(
        m[0].calls,
        vec![(Some("c".into()), "w".into(), "{\"l\":\"T\"}".into())]
    );
    assert_eq!(
        (
            m[1].role.as_str(),
            m[1].content.as_str(),
            m[1].call_id.as_deref()
        ),
        ("tool", "rainy", Some("c"))
    );
    assert_eq!(m.len(), 2);
    let anthropic = json!([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "u1", "content": [{"type": "text", "text": "r1"}]},
        {"type": "tool_result", "tool_use_id": "u2", "content": "r2"},
        {"type": "text", "text": "and now?"}]}]);
    assert_eq!(
        roles(anthropic),
        vec![
            r("tool", "tool_result", "r1"),
            r("tool", "tool_result", "r2"),
            r("user", "user", "and now?")
        ]
    );
    let gemini = json!({"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]},
        {"role": "function", "parts": [{"function_response": {"name": "f", "response": {"ok": true}}}]}],
        "config": {"system_instruction": "sys"}});
    assert_eq!(
        roles(gemini),
        vec![
            r("system", "instruction", "sys"),
            r("user", "user", "hi"),
            r("assistant", "message", ""),
            r("tool", "tool_result", "{\"ok\":true}")
        ]
    );
}

#[test]
fn responses_items_langchain_smolagents_and_vercel() {
    let responses = json!({"instructions": "sys", "input": [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "A"},
        {"type": "reasoning", "summary": []}]});
    let m = messages_of(&responses).unwrap_or_default();
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!(m[2].calls.len(), 2, "the two calls are one turn");
    assert_eq!(m[3].call_id.as_deref(), Some("a"));
    let lc = json!({"messages": [{"lc": 1, "type": "constructor", "id": ["x", "SystemMessage"], "kwargs": {"content": "s"}},
        {"lc": 1, "type": "constructor", "id": ["x", "ToolMessage"], "kwargs": {"content": "t", "tool_call_id": "k"}}]});
    let m = messages_of(&lc).unwrap_or_default();
    assert_eq!(
        (
            m[0].role.as_str(),
            m[1].role.as_str(),
            m[1].call_id.as_deref()
        ),
        ("system", "tool", Some("k"))
    );
    let smol = json!([{"role": "tool-call", "content": "Calling tools: f"}, {"role": "tool-response", "content": "Observation: 1"}]);
    assert_eq!(
        roles(smol),
        vec![
            r("assistant", "message", "Calling tools: f"),
            r("user", "tool_result", "Observation: 1")
        ]
    );
    let vercel = json!({"system": "S", "messages": [
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "v1", "toolName": "w", "output": {"type": "text", "value": "64F"}},
                                     {"type": "tool-result", "toolCallId": "v2", "toolName": "w", "result": {"t": 1}}]}]});
    let m = messages_of(&vercel).unwrap_or_default();
    assert_eq!(m.len(), 3, "{m:?}");
    assert_eq!(
        (
            m[1].content.as_str(),
            m[1].call_id.as_deref(),
            m[1].name.as_deref()
        ),
        ("64F", Some("v1"), Some("w"))
    );
    assert_eq!(m[2].content, "{\"t\":1}");
}

#[test]
fn an_assistant_s_calls_written_as_a_tool_message_are_the_assistant_s() {
    let koog = json!([{"role": "tool", "content": "[{\"function\":{\"name\":\"HelloTool\",\"arguments\":\"{\\\"name\\\": \\\"Bob\\\"}\"},\"id\":\"call_1\",\"type\":\"function\"}]"},
        {"role": "tool", "content": "Hello my darling Bob!"}]);
    let m = messages_of(&koog).unwrap_or_default();
    assert_eq!(
        (m[0].role.as_str(), m[0].content.as_str()),
        ("assistant", "")
    );
    assert_eq!(
        m[0].calls,
        vec![(
            Some("call_1".into()),
            "HelloTool".into(),
            "{\"name\": \"Bob\"}".into()
        )]
    );
    assert_eq!((m[1].role.as_str(), m[1].kind), ("tool", "tool_result"));
    let offered = json!([{"role": "user", "content": "q"},
        {"role": "tool", "content": {"type": "function", "function": {"name": "Web-Search", "parameters": {}}}}]);
    assert_eq!(
        roles(offered),
        vec![r("user", "user", "q")],
        "a tool offered is no message"
    );
}

#[test]
fn prompts_transcripts_and_what_is_no_input() {
    assert_eq!(
        roles(json!("Just a prompt")),
        vec![r("user", "user", "Just a prompt")]
    );
    assert_eq!(
        roles(json!({"args": ["What is X?"]})),
        vec![r("user", "user", "What is X?")]
    );
    assert_eq!(
        roles(json!(
            "developer: Be nice.\nStill the system.\nuser: hi\nassistant: None\ntool: [1]"
        )),
        vec![
            r("system", "instruction", "Be nice.\nStill the system."),
            r("user", "user", "hi"),
            r("assistant", "message", ""),
            r("tool", "tool_result", "[1]")
        ]
    );
    assert_eq!(
        roles(json!("user: only one turn")),
        vec![r("user", "user", "user: only one turn")]
    );
    assert!(messages_of(&json!({"query": "x"})).is_none());
    assert!(messages_of(&json!([])).is_none());
    assert!(messages_of(&json!(5)).is_none());
    assert!(messages_of(&json!([{"a": 1}])).is_none());
    assert_eq!(
        roles(json!("[{\"role\": \"user\", \"content\": \"as text\"}]")),
        vec![r("user", "user", "as text")]
    );
}
