use super::*;
use crate::experiments::chat::recorded::Recorded;
use serde_json::json;

fn rag() -> Recorded {
    let text = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/tests/fixtures/experiments/rag-revenue.json"
    ))
    .unwrap();
    Recorded::from_value(serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn an_ablation_cuts_exactly_the_units_text_out_of_its_message() {
    let r = rag();
    let call = r.answering_call().unwrap();
    let out = cut(&r, call, &[r.unit("doc-2022").unwrap()]).unwrap();
    assert_eq!(out.messages.len(), 2);
    assert_eq!(out.messages[0], call.messages[0]);
    assert_eq!(
        out.messages[1].content,
        "Answer using the documents.\n\nDocument: \n\nQuestion: What was Meta's revenue in 2023?"
    );
    assert!(out.notes[0].contains("'doc-2022'"), "{:?}", out.notes);
}

#[test]
fn a_unit_that_is_a_whole_message_removes_the_message() {
    let r = rag();
    let call = r.answering_call().unwrap();
    let out = cut(&r, call, &[r.unit("u-instructions").unwrap()]).unwrap();
    assert_eq!(out.messages.len(), 1);
    assert_eq!(out.messages[0].role, "user");
    // Two units cut from one message at once: both ranges go.
    let both = cut(
        &r,
        call,
        &[r.unit("doc-2022").unwrap(), r.unit("u-question").unwrap()],
    )
    .unwrap();
    assert_eq!(
        both.messages[1].content,
        "Answer using the documents.\n\nDocument: \n\nQuestion: "
    );
}

#[test]
fn a_restored_document_goes_right_after_the_documents_the_call_was_sent() {
    let r = rag();
    let call = r.answering_call().unwrap();
    let out = put_back(&r, call, r.unit("doc-2023").unwrap()).unwrap();
    let c = &out.messages[1].content;
    let old = c.find("$116.6").unwrap();
    let new = c.find("$134.9").unwrap();
    let question = c.find("Question:").unwrap();
    assert!(old < new && new < question, "{c}");
    assert!(
        out.notes[0].contains("right after unit 'doc-2022'"),
        "{:?}",
        out.notes
    );
    // A unit already in the call has nothing to put back.
    let e = put_back(&r, call, r.unit("doc-2022").unwrap()).unwrap_err();
    assert!(e.to_string().contains("already in the input"), "{e}");
}

#[test]
fn without_a_unit_of_its_kind_a_restored_unit_leads_the_last_user_message() {
    let mut r = rag();
    r.units.retain(|u| u.id != "doc-2022");
    let call = r.answering_call().unwrap().clone();
    let out = put_back(&r, &call, r.unit("doc-2023").unwrap()).unwrap();
    assert!(
        out.messages[1].content.starts_with(
            "Meta Platforms reported revenue of $134.9 billion for fiscal 2023.\n\nAnswer using"
        ),
        "{}",
        out.messages[1].content
    );
}

#[test]
fn a_place_that_does_not_hold_the_units_text_is_refused() {
    let mut r = rag();
    for u in &mut r.units {
        if u.id == "doc-2022" {
            u.at[0].1.range = Some((0, 10));
        }
    }
    let call = r.answering_call().unwrap().clone();
    let e = cut(&r, &call, &[r.unit("doc-2022").unwrap()]).unwrap_err();
    assert!(e.to_string().contains("'at' is stale"), "{e}");
    // A unit that reached no call cannot be cut out; one that reached only an earlier call
    // cannot either, and the message says which call it reached.
    let e = cut(&r, &call, &[r.unit("doc-2023").unwrap()]).unwrap_err();
    assert!(e.to_string().contains("no recorded place"), "{e}");
}

fn agent_run() -> Recorded {
    Recorded::from_value(json!({
        "format": "tdn.run/1",
        "steps": [
            {"id": "c1", "kind": "llm", "messages": [
                {"role": "user", "content": "refund order 7"}]},
            {"id": "t1", "kind": "tool"},
            {"id": "c2", "kind": "llm", "model": "m", "messages": [
                {"role": "user", "content": "refund order 7"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "k1", "name": "policy", "arguments": "{}"},
                    {"id": "k2", "name": "order", "arguments": "{\"id\":7}"}]},
                {"role": "tool", "tool_call_id": "k1", "content": "refunds within 30 days"},
                {"role": "tool", "tool_call_id": "k2", "content": "order 7: 45 days old"}]}],
        "context_units": [
            {"id": "r-policy", "kind": "tool_result", "text": "refunds within 30 days",
             "produced_by": "t1", "at": [{"step": "c2", "message": 2}]},
            {"id": "u-ask", "kind": "user", "text": "refund order 7",
             "at": [{"step": "c1", "message": 0}, {"step": "c2", "message": 0}]},
            {"id": "early", "kind": "memory", "text": "refund order 7",
             "at": [{"step": "c1", "message": 0}]}
        ]
    }))
    .unwrap()
}

#[test]
fn a_removed_tool_result_takes_its_call_out_of_the_assistant_turn() {
    let r = agent_run();
    let call = r.answering_call().unwrap();
    assert_eq!(call.step, "c2");
    let out = cut(&r, call, &[r.unit("r-policy").unwrap()]).unwrap();
    let roles: Vec<&str> = out.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    let calls: Vec<&str> = out.messages[1]
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(calls, ["order"]);
    assert_eq!(out.messages[2].tool_call_id.as_deref(), Some("k2"));
    assert!(
        out.notes.iter().any(|n| n.contains("1 tool call(s)")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_unit_sent_only_to_an_earlier_call_is_refused_naming_that_call() {
    let r = agent_run();
    let call = r.answering_call().unwrap();
    let e = cut(&r, call, &[r.unit("early").unwrap()]).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("never reached the call that answered ('c2')") && e.contains("'c1'"),
        "{e}"
    );
}

#[test]
fn a_patch_takes_the_place_of_what_its_step_produced() {
    let r = rag();
    let call = r.answering_call().unwrap();
    let out = substitute(&r, call, "s2", "Revenue was $134.9 billion in 2023.").unwrap();
    assert_eq!(
        out.messages[1].content,
        "Answer using the documents.\n\nDocument: Revenue was $134.9 billion in 2023.\n\nQuestion: What was Meta's revenue in 2023?"
    );
    let r = agent_run();
    let call = r.answering_call().unwrap();
    let out = substitute(&r, call, "t1", "refunds within 60 days").unwrap();
    assert_eq!(out.messages[2].content, "refunds within 60 days");
    assert_eq!(out.messages[2].tool_call_id.as_deref(), Some("k1"));
    let e = substitute(&r, call, "c1", "x").unwrap_err();
    assert!(e.to_string().contains("nowhere to put the patch"), "{e}");
}

#[test]
fn char_offsets_count_characters_not_bytes() {
    let mut cuts = [(2, 4)];
    let mut ins = [(1, "·".to_owned())];
    assert_eq!(edit_text("héllo wörld", &mut cuts, &mut ins), "h·éo wörld");
}
