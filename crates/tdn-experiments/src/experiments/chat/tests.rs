use super::endpoint::{body, chat_url, read_reply, shown_url};
use super::recorded::Recorded;
use super::*;
use serde_json::json;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: std::collections::HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k| m.get(k).cloned()
}

fn spec(kind: ExperimentKind, remove: &[&str], restore: &[&str]) -> ExperimentSpec {
    ExperimentSpec {
        run: String::new(),
        run_id: "rag-revenue".to_owned(),
        experiment: kind,
        remove: remove.iter().map(|s| (*s).to_owned()).collect(),
        restore: restore.iter().map(|s| (*s).to_owned()).collect(),
        from_step: None,
        patch: None,
        seed: 2,
        sample: 2,
        source: None,
    }
}

fn rag() -> Recorded {
    let text = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/tests/fixtures/experiments/rag-revenue.json"
    ))
    .unwrap();
    Recorded::from_value(serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn settings_need_an_endpoint_and_take_the_key_from_either_variable() {
    let e = ChatSettings::from_vars(vars(&[])).unwrap_err();
    assert!(matches!(e, ChatError::Setup(_)));
    assert!(
        e.to_string()
            .starts_with("no chat endpoint: set TDN_CHAT_URL"),
        "{e}"
    );
    let s = ChatSettings::from_vars(vars(&[
        (URL_VAR, "http://127.0.0.1:8080/v1/"),
        (FALLBACK_KEY_VAR, "sk-fallback"),
        (TIMEOUT_VAR, "30"),
    ]))
    .unwrap();
    assert_eq!(s.endpoint.url, "http://127.0.0.1:8080/v1/chat/completions");
    assert_eq!(s.endpoint.key.as_deref(), Some("sk-fallback"));
    assert_eq!(s.endpoint.timeout, Duration::from_secs(29));
    assert!(
        !format!("{s:?}").contains("sk-fallback"),
        "the key is never shown"
    );
    let s = ChatSettings::from_vars(vars(&[
        (URL_VAR, "https://x/v1"),
        (KEY_VAR, "sk-own"),
        (FALLBACK_KEY_VAR, "sk-fallback"),
    ]))
    .unwrap();
    assert_eq!(s.endpoint.key.as_deref(), Some("sk-own"));
    let e = ChatSettings::from_vars(vars(&[(URL_VAR, "api.openai.com/v1")])).unwrap_err();
    assert!(
        e.to_string().contains("not an http:// or https:// URL"),
        "{e}"
    );
    let e = ChatSettings::from_vars(vars(&[(URL_VAR, "http://x/v1"), (TEMPERATURE_VAR, "hot")]))
        .unwrap_err();
    assert!(e.to_string().contains("TDN_CHAT_TEMPERATURE 'hot'"), "{e}");
}

#[test]
fn urls_are_completed_and_shown_without_secrets() {
    assert_eq!(
        chat_url("https://r.openai.azure.com/openai/v1?api-version=preview").unwrap(),
        "https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview"
    );
    assert_eq!(
        chat_url("http://h/v1/chat/completions").unwrap(),
        "http://h/v1/chat/completions"
    );
    assert_eq!(
        shown_url("https://user:secret@h:8/v1/chat/completions?key=secret"),
        "https://h:8/v1/chat/completions"
    );
}

#[test]
fn each_experiment_rebuilds_the_answering_call_or_says_why_it_cannot() {
    let r = rag();
    let p = prepare(&r, &spec(ExperimentKind::Baseline, &[], &[])).unwrap();
    assert_eq!(p.call.step, "s3");
    assert_eq!(p.rebuilt.messages, p.call.messages);
    let p = prepare(&r, &spec(ExperimentKind::Ablate, &["doc-2022"], &[])).unwrap();
    assert!(!p.rebuilt.messages[1].content.contains("$116.6"));
    let p = prepare(&r, &spec(ExperimentKind::Restore, &[], &["doc-2023"])).unwrap();
    assert!(p.rebuilt.messages[1].content.contains("$134.9"));
    let e = prepare(&r, &spec(ExperimentKind::Ablate, &["nope"], &[])).unwrap_err();
    assert!(e.to_string().contains("no context unit 'nope'"), "{e}");
    let mut replay = spec(ExperimentKind::Replay, &[], &[]);
    replay.from_step = Some("s2".to_owned());
    let e = prepare(&r, &replay).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot re-run your agent from step 's2'"),
        "{e}"
    );
    replay.patch = Some("Revenue: $134.9 billion.".to_owned());
    let p = prepare(&r, &replay).unwrap();
    assert!(
        p.rebuilt.messages[1]
            .content
            .contains("Revenue: $134.9 billion.")
    );
    replay.from_step = Some("s3".to_owned());
    assert!(prepare(&r, &replay).is_err());
}

#[test]
fn a_run_without_recorded_messages_has_no_call_to_replay() {
    let none = Recorded::from_value(json!({"format": "tdn.run/1", "steps": [
        {"id": "s1", "kind": "llm", "output": "x"}]}))
    .unwrap();
    let e = prepare(&none, &spec(ExperimentKind::Baseline, &[], &[])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no recorded call to replay: none of the run's 1 model call(s) records its input ('messages'); the chat runner needs the messages a call was sent"
    );
    let no_llm = Recorded::from_value(json!({"format": "tdn.run/1", "steps": []})).unwrap();
    assert!(
        prepare(&no_llm, &spec(ExperimentKind::Baseline, &[], &[]))
            .unwrap_err()
            .to_string()
            .contains("no step of kind 'llm'")
    );
}

#[test]
fn the_request_carries_model_seed_and_temperature_and_tool_turns_that_pair() {
    let r = rag();
    let call = r.answering_call().unwrap();
    let mut notes = Vec::new();
    let b = body("gpt-4o-mini", &call.messages, Some(0.7), 2, &mut notes);
    assert_eq!(b["model"], "gpt-4o-mini");
    assert_eq!(b["seed"], 2);
    assert_eq!(b["temperature"], 0.7);
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": call.messages[0].content})
    );
    let b = body("m", &call.messages, None, 0, &mut notes);
    assert!(b.get("temperature").is_none());
    assert!(notes.is_empty());
    // Tool turns without ids cannot be sent as tool turns: they go as text, and a note says so.
    let unpaired = vec![
        recorded::Message {
            role: "assistant".to_owned(),
            tool_calls: vec![recorded::ToolCall {
                id: None,
                name: "lookup".to_owned(),
                arguments: "{\"q\":1}".to_owned(),
            }],
            ..Default::default()
        },
        recorded::Message {
            role: "tool".to_owned(),
            content: "42".to_owned(),
            ..Default::default()
        },
    ];
    let b = body("m", &unpaired, None, 0, &mut notes);
    assert_eq!(b["messages"][0]["content"], "[tool call] lookup({\"q\":1})");
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "[tool result] 42"})
    );
    assert_eq!(notes.len(), 1);
}

#[test]
fn a_reply_gives_its_text_and_tokens_and_the_answer_line_names_the_call() {
    let r = read_reply(
        &json!({"choices": [{"message": {"content": "It was $134.9 billion."}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 8}}),
    )
    .unwrap();
    assert_eq!(r.text, "It was $134.9 billion.");
    assert_eq!(r.tokens, Some(58.0));
    assert!(read_reply(&json!({"object": "list"})).is_err());
    assert!(read_reply(&json!({"choices": [{"message": {"content": ""}}]})).is_err());
    let calls = read_reply(
        &json!({"choices": [{"message": {"content": null, "tool_calls": [
        {"function": {"name": "f", "arguments": "{}"}}]}}]}),
    )
    .unwrap();
    assert_eq!(calls.text, "f({})");
    let line = answer_line(&ChatAnswer {
        output: "x".to_owned(),
        tokens: Some(58.0),
        call: "s3".to_owned(),
        notes: Vec::new(),
    });
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        v,
        json!({"output": "x", "cost": {"tokens": 58.0}, "replayed_call": "s3"})
    );
}
