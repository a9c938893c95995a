//! OTLP JSON: GenAI conventions, JSON lines, OpenInference and the indexed gen_ai.prompt form.

use super::*;
use serde_json::json;
use tdn_tui::analysis::model::Message;

#[test]
fn otlp_genai_trace_orders_spans_and_maps_calls_errors_and_tools() {
    let l = load("otlp-genai.json");
    assert_eq!(l.source_format, SourceFormat::Otlp);
    let run = &l.run;
    // Hex ids come out lowercase; parents first, siblings by start time.
    assert_eq!(
        ids(run),
        [
            "a1a1a1a1a1a1a1a1",
            "b2b2b2b2b2b2b2b2",
            "c3c3c3c3c3c3c3c3",
            "00f067aa0ba902b3"
        ]
    );
    assert_eq!(
        kinds(run),
        [
            StepKind::Agent,
            StepKind::Llm,
            StepKind::Tool,
            StepKind::Llm
        ]
    );
    let root = Some("a1a1a1a1a1a1a1a1");
    assert_eq!(parents(run), [None, root, root, root]);
    assert!(
        run.steps
            .iter()
            .all(|s| s.agent.as_deref() == Some("scheduler"))
    );
    assert_eq!(run.id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.task.as_deref(),
        Some("Book a 30 minute call with Dana next Friday at 10")
    );
    assert_eq!(
        run.final_answer.as_deref(),
        Some("Your call with Dana is booked for Friday.")
    );

    let call = &run.steps[1];
    assert_eq!(
        call.output,
        Some(
            json!({"tool_calls": [{"id": "call_1", "name": "create_event", "arguments": {"start": "Friday"}}]})
        ).map(tdn_tui::analysis::model::Json::from)
    );
    assert_eq!(
        call.messages().first().map(|m| m.role.as_str()),
        Some("system")
    );
    assert!(call.input.is_none(), "the recorded input became messages");

    let tool = &run.steps[2];
    let t = tool.tool.as_ref().unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(
        (t.name.as_str(), t.call_id.as_deref()),
        ("create_event", Some("call_1"))
    );
    assert_eq!(t.arguments, json!({"start": "Friday"}));
    assert_eq!(
        tool.error.as_deref(),
        Some("invalid start: 'Friday' is not a date-time")
    );

    let last = &run.steps[3];
    let usage = last.usage().unwrap_or_else(|| panic!("no usage"));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(120), Some(9))
    );
    assert_eq!(last.started_at().map(|t| t.0), Some(1_700_000_000_300));

    let def = run
        .tool("create_event")
        .unwrap_or_else(|| panic!("no tool definition"));
    assert_eq!(
        def.parameters.as_ref().map(|p| p["required"].clone()),
        Some(json!(["start"]))
    );
    assert_eq!(
        run.model.as_ref().and_then(|m| m.name.as_deref()),
        Some("gpt-x")
    );
    assert!(
        l.warnings
            .iter()
            .any(|w| w.field.as_deref() == Some("status")),
        "taking the run as failed is a guess and must say so"
    );
}

#[test]
fn otlp_json_lines_hold_one_run_per_trace_in_order_of_first_appearance() {
    let runs = load_all("otlp-lines.jsonl");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].run.id, "22222222222222222222222222222222");
    assert_eq!(runs[0].run.task.as_deref(), Some("second question"));
    let b = &runs[1].run;
    assert_eq!(b.id, "11111111111111111111111111111111");
    assert_eq!(ids(b), ["e5e5e5e5e5e5e5e5", "f6f6f6f6f6f6f6f6"]);
    assert_eq!(parents(b), [None, Some("e5e5e5e5e5e5e5e5")]);
    assert_eq!(b.steps[1].kind, StepKind::Llm);
    assert_eq!(b.steps[1].error.as_deref(), Some("rate limited"));
    assert_eq!(
        b.steps[1].attributes().get("otel.span_kind"),
        Some(&json!("client"))
    );
    assert_eq!(
        b.steps[1].started_at().map(|t| t.0),
        Some(1_700_000_003_500)
    );

    let one = load_path(
        &fixture("otlp-lines.jsonl"),
        &LoadOptions {
            format: None,
            index: Some(1),
        },
    )
    .unwrap_or_default();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].run.id, "11111111111111111111111111111111");
}

#[test]
fn openinference_trace_gives_documents_messages_and_tool_calls() {
    let l = load("openinference.json");
    assert_eq!(l.source_format, SourceFormat::Otlp);
    let run = &l.run;
    assert_eq!(
        ids(run),
        [
            "0101010101010101",
            "0202020202020202",
            "0303030303030303",
            "0404040404040404"
        ]
    );
    assert_eq!(
        kinds(run),
        [
            StepKind::Agent,
            StepKind::Retrieval,
            StepKind::Llm,
            StepKind::Tool
        ]
    );
    assert!(
        run.steps
            .iter()
            .all(|s| s.agent.as_deref() == Some("support-agent"))
    );
    let docs = run.steps[1]
        .documents
        .as_ref()
        .unwrap_or_else(|| panic!("no documents"));
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].id.as_deref(), Some("doc-1"));
    assert_eq!(docs[0].text, "Refunds are allowed within 30 days.");
    assert_eq!(docs[0].source.as_deref(), Some("policy.md"));
    assert_eq!(docs[1].text, "Shipping takes 5 days.");
    let llm = &run.steps[2];
    assert_eq!(
        llm.messages(),
        [
            Message::new("system", "You are a support agent."),
            Message::new("user", "Can I get a refund for order 7?")
        ]
    );
    assert_eq!(
        llm.output,
        Some(
            json!({"tool_calls": [{"id": "tc-1", "name": "refund", "arguments": {"order_id": 7}}]})
        )
        .map(tdn_tui::analysis::model::Json::from)
    );
    let tool = run.steps[3]
        .tool
        .as_ref()
        .unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(
        (tool.name.as_str(), &tool.arguments),
        ("refund", &json!({"order_id": 7}).into())
    );
    assert_eq!(
        run.steps[3].output,
        Some(json!("refunded")).map(tdn_tui::analysis::model::Json::from)
    );
    assert_eq!(run.task.as_deref(), Some("Can I get a refund for order 7?"));
    assert_eq!(
        run.final_answer.as_deref(),
        Some("Yes, order 7 was refunded.")
    );
    assert!(run.tool("refund").is_some_and(|t| t.parameters.is_some()));
}

#[test]
fn indexed_gen_ai_prompt_form_is_read() {
    let run = load("otlp-indexed.json").run;
    // Both spans are roots: ordered by start time, not file order.
    assert_eq!(ids(&run), ["0606060606060606", "0505050505050505"]);
    assert_eq!(kinds(&run), [StepKind::Llm, StepKind::Llm]);
    assert_eq!(
        run.steps[0].output,
        Some(
            json!({"tool_calls": [{"id": "call_9", "name": "lookup", "arguments": {"q": "capital of Australia"}}]})
        ).map(tdn_tui::analysis::model::Json::from)
    );
    assert_eq!(
        run.steps[1].output,
        Some(json!("Sydney")).map(tdn_tui::analysis::model::Json::from)
    );
    assert_eq!(
        run.steps[1].messages().get(2),
        Some(&Message::new(
            "tool",
            "Canberra is the capital city of Australia."
        ))
    );
    let usage = run.steps[1].usage().unwrap_or_else(|| panic!("no usage"));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(20), Some(2))
    );
    assert_eq!(
        run.task.as_deref(),
        Some("What is the capital of Australia?")
    );
    assert_eq!(run.final_answer.as_deref(), Some("Sydney"));
    assert!(run.tool("lookup").is_some_and(|t| t.parameters.is_some()));
}

#[test]
fn a_trace_id_that_is_not_32_hex_digits_is_kept_and_warned() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("short-id.json");
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "5B8EFFF798038103D269B633813FC60", "spanId": "051581BF3CB55C13", "name": "root"}
    ]}]}]});
    std::fs::write(&path, doc.to_string()).unwrap_or_default();
    let runs = load_path(&path, &LoadOptions::default()).unwrap_or_default();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run.id, "5B8EFFF798038103D269B633813FC60");
    assert!(
        runs[0].warnings.iter().any(|w| w
            .message
            .starts_with("the trace id '5B8EFFF798038103D269B633813FC60' is not 32 hex digits")),
        "{:?}",
        runs[0].warnings
    );
    assert_eq!(runs[0].run.steps[0].id.as_str(), "051581bf3cb55c13");
}
