//! Langfuse traces, Who&When files and τ-bench results.

use super::*;
use serde_json::json;

#[test]
fn langfuse_trace_nests_observations_and_reads_json_strings() {
    let l = load("langfuse-trace.json");
    assert_eq!(l.source_format, SourceFormat::Langfuse);
    let run = &l.run;
    assert_eq!(
        ids(run),
        [
            "obs-agent",
            "obs-gen-1",
            "obs-tool",
            "obs-ret",
            "obs-gen-2",
            "obs-event"
        ]
    );
    assert_eq!(
        kinds(run),
        [
            StepKind::Agent,
            StepKind::Llm,
            StepKind::Tool,
            StepKind::Retrieval,
            StepKind::Llm,
            StepKind::Event
        ]
    );
    let agent = Some("obs-agent");
    assert_eq!(
        parents(run),
        [None, agent, agent, agent, agent, Some("obs-gen-2")]
    );
    assert!(
        run.steps
            .iter()
            .all(|s| s.agent.as_deref() == Some("support"))
    );
    assert_eq!(
        run.steps[1].output,
        Some(
            json!({"tool_calls": [{"id": "call_a", "name": "get_order", "arguments": {"order_id": 42}}]})
        ).map(tdn_tui::analysis::model::Json::from)
    );
    let tool = &run.steps[2];
    assert_eq!(tool.error.as_deref(), Some("order service timed out"));
    let call = tool.tool.as_ref().unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(
        (call.name.as_str(), &call.arguments),
        ("get_order", &json!({"order_id": 42}).into())
    );
    let docs = run.steps[3]
        .documents
        .as_ref()
        .unwrap_or_else(|| panic!("no documents"));
    assert_eq!(docs[0].text, "Orders ship within 2 days.");
    assert_eq!(docs[0].source.as_deref(), Some("faq.md"));
    assert_eq!(
        run.steps[4].output,
        Some(json!("Your order 42 was delivered yesterday."))
            .map(tdn_tui::analysis::model::Json::from)
    );
    let usage = run.steps[4].usage().unwrap_or_else(|| panic!("no usage"));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(80), Some(10))
    );
    assert_eq!(run.task.as_deref(), Some("Where is my order 42?"));
    assert_eq!(
        run.final_answer.as_deref(),
        Some("Your order 42 was delivered yesterday.")
    );
    assert_eq!(run.status, RunStatus::Failed);
}

#[test]
fn who_when_keeps_one_step_per_message_and_the_labels() {
    let l = load("whowhen/algorithm-generated.json");
    assert_eq!(l.source_format, SourceFormat::WhoWhen);
    let run = &l.run;
    assert_eq!(ids(run), ["h0", "h1", "h2", "h3", "h4", "h5"]);
    assert_eq!(
        kinds(run),
        [
            StepKind::Agent,
            StepKind::Agent,
            StepKind::Tool,
            StepKind::Agent,
            StepKind::System,
            StepKind::Agent
        ]
    );
    assert_eq!(run.steps[3].agent.as_deref(), Some("Verification_Expert"));
    let exec = &run.steps[2];
    assert_eq!(
        exec.error.as_deref(),
        Some("exit code 1: NameError: name 'reslt' is not defined")
    );
    let call = exec.tool.as_ref().unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(call.name, "execute_code");
    assert_eq!(
        call.arguments,
        json!({"code": "result = 17 * 23 - 4\nprint(reslt)\n"})
    );
    assert_eq!(exec.attributes().get("code_from"), Some(&json!("h1")));
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.task.as_deref(),
        Some("What is 17 multiplied by 23, minus 4?")
    );
    assert_eq!(run.reference_answer.as_deref(), Some("387"));
    assert_eq!(
        run.final_answer.as_deref(),
        Some("I agree: the answer is 377.")
    );
    assert_eq!(run.context_units.len(), 2);
    assert_eq!(
        run.attributes["whowhen"]["mistake_step"],
        json!("3"),
        "labels are kept as written for eval"
    );
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);

    let hc = load("whowhen/hand-crafted.json").run;
    assert_eq!(
        kinds(&hc),
        [
            StepKind::User,
            StepKind::Agent,
            StepKind::Agent,
            StepKind::Agent,
            StepKind::Tool,
            StepKind::System
        ]
    );
    let agents: Vec<Option<&str>> = hc.steps.iter().map(|s| s.agent.as_deref()).collect();
    assert_eq!(
        agents,
        [
            None,
            Some("Orchestrator"),
            Some("Orchestrator"),
            Some("WebSurfer"),
            Some("ComputerTerminal"),
            Some("Orchestrator")
        ]
    );
    assert_eq!(hc.steps[1].name.as_deref(), Some("Orchestrator (thought)"));
    assert_eq!(
        hc.steps[4].error.as_deref(),
        Some("exit code 1: ValueError: could not convert string to float: '1,230'")
    );
    assert_eq!(hc.final_answer.as_deref(), Some("Rhine"));
    assert_eq!(hc.reference_answer.as_deref(), Some("Danube"));
}

#[test]
fn tau_bench_records_become_runs_with_called_tools() {
    let runs = load_all("taubench.json");
    assert_eq!(runs.len(), 2);
    let first = &runs[0].run;
    assert_eq!(runs[0].source_format, SourceFormat::TauBench);
    assert_eq!(first.id, "task-7-trial-0");
    assert_eq!(first.status, RunStatus::Failed);
    assert_eq!(ids(first), ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"]);
    assert_eq!(
        kinds(first),
        [
            StepKind::System,
            StepKind::User,
            StepKind::Llm,
            StepKind::Tool,
            StepKind::Llm,
            StepKind::Tool,
            StepKind::Llm,
            StepKind::User
        ]
    );
    let lookup = &first.steps[3];
    let call = lookup
        .tool
        .as_ref()
        .unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(call.name, "get_reservation_details");
    assert_eq!(call.arguments, json!({"reservation_id": "ABC132"}));
    assert_eq!(call.call_id.as_deref(), Some("call_1"));
    assert_eq!(
        lookup.error.as_deref(),
        Some("Error: reservation ABC132 not found")
    );
    assert_eq!(first.steps[5].error, None);
    assert_eq!(
        first.steps[4].output,
        Some(json!({"content": "Let me cancel it.", "tool_calls": [
            {"id": "call_2", "name": "cancel_reservation", "arguments": {"reservation_id": "ABC123"}}]})).map(tdn_tui::analysis::model::Json::from)
    );
    // Every called tool is listed by name; which change things the analysis reads from their
    // action verbs, not from a list of this benchmark's tools.
    assert!(first.tool("cancel_reservation").is_some_and(|t| !t.mutates));
    assert!(first.tool("get_reservation_details").is_some());
    use tdn_tui::analysis::state_change::changes_state;
    assert!(changes_state(first, "cancel_reservation"));
    assert!(!changes_state(first, "get_reservation_details"));
    assert_eq!(
        first.final_answer.as_deref(),
        Some("Your reservation ABC123 is cancelled.")
    );
    // The agent's task is what the user told it, not the simulated user's hidden instruction.
    assert_eq!(
        first.task.as_deref(),
        Some("Please cancel my reservation ABC123.")
    );
    assert_eq!(
        first.attributes["taubench"]["user_instruction"],
        json!("You are ann_1. You want to cancel reservation ABC123.")
    );
    let second = &runs[1].run;
    assert_eq!(second.status, RunStatus::Succeeded);
    assert_eq!(second.reference_answer.as_deref(), Some("2 bags"));
}
