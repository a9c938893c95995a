//! Tests of the opened document's look-ups and excerpts.

use super::{Document, MAX_LABEL_WIDTH, step_excerpt};
use crate::analysis::model::{Run, RunStatus, Step, StepKind, Timestamp, ToolCall};
use crate::analysis::report::{Link, Report};
use serde_json::json;
use unicode_width::UnicodeWidthStr;

/// Steps in the long run: more than two of the parts the look-ups are cut into.
const LONG: usize = 10_000;

/// A run of [`LONG`] steps nested in chains of 50 (step `i` inside step `i - 1` unless `i`
/// is a multiple of 50), every step timed `[10i, 10i + 5]`, with a long name, an agent and
/// a name that is not safe to show, and one parent (of step 9,010) named after its child; and a report
/// linking each step to the next, with one link that names no step.
fn long_document() -> Document {
    let mut run = Run::new("r", RunStatus::Failed);
    for i in 0..LONG {
        let mut s = Step::new(format!("s{i}"), StepKind::Tool);
        if i % 50 != 0 {
            s.parent = Some(format!("s{}", i - 1).into());
        }
        s.extras_mut().started_at = Some(Timestamp(10 * i as i64));
        s.extras_mut().ended_at = Some(Timestamp(10 * i as i64 + 5));
        run.steps.push(s);
    }
    run.steps[4_100].name = Some("x".repeat(400));
    run.steps[4_101].agent = Some("planner".to_owned());
    run.steps[8_200].name = Some("evil\u{1b}[2Jname".to_owned());
    run.steps[9_010].parent = Some("s9011".into());
    run.reindex();
    let mut report: Report = serde_json::from_str(include_str!(
        "../../../tests/fixtures/tui/calendar.report.json"
    ))
    .expect("fixture");
    report.links = (0..LONG - 1)
        .map(|k| Link {
            from: format!("s{k}"),
            to: format!("s{}", k + 1),
            value: "v".to_owned(),
        })
        .collect();
    report.links.insert(
        5_000,
        Link {
            from: "s1".to_owned(),
            to: "nowhere".to_owned(),
            value: "v".to_owned(),
        },
    );
    Document::new(run, report, None)
}

/// The look-ups of a long run, read step by step against how the run was made.
#[test]
fn a_long_runs_look_ups_hold_every_step_in_order() {
    let doc = long_document();
    for i in 0..LONG {
        let expected_parent = (i % 50 != 0 && i != 9_010).then(|| i - 1);
        assert_eq!(doc.parent[i], expected_parent, "parent of {i}");
        let expected_depth = if (9_010..9_050).contains(&i) {
            i - 9_010
        } else {
            i % 50
        };
        assert_eq!(usize::from(doc.depth[i]), expected_depth, "depth of {i}");
        assert_eq!(
            doc.has_children[i],
            i % 50 != 49 && i != 9_009,
            "children of {i}"
        );
        // A span takes in the spans of the steps nested in it: the rest of its chain.
        let chain_end = if (9_000..9_010).contains(&i) {
            9_009
        } else {
            i - i % 50 + 49
        };
        assert_eq!(
            doc.spans[i],
            Some((10 * i as i64, 10 * chain_end as i64 + 5)),
            "span of {i}"
        );
        if ![4_100, 4_101, 8_200].contains(&i) {
            assert_eq!(doc.labels[i], format!("tool s{i}"), "label of {i}");
        }
    }
    assert_eq!(doc.labels[4_101], "@planner tool s4101");
    assert!(doc.labels[4_100].starts_with("xxx"));
    assert!(doc.labels[4_100].width() <= MAX_LABEL_WIDTH);
    assert!(doc.labels[8_200].starts_with("evil"));
    assert!(
        !doc.labels[8_200].contains('\u{1b}'),
        "{}",
        doc.labels[8_200]
    );
    // Link positions in report order: the one naming no step sits at 5,000.
    let at = |k: usize| if k < 5_000 { k } else { k + 1 };
    for k in 0..LONG - 1 {
        assert_eq!(
            doc.links_of.out_of_step(k + 1).first(),
            (k + 1 < LONG - 1).then(|| at(k + 1)).as_ref()
        );
        assert_eq!(doc.links_of.into_step(k + 1), [at(k)], "into {}", k + 1);
        assert_eq!(doc.graph.outputs_to(k), [k + 1], "lane from {k}");
    }
    assert_eq!(doc.links_of.out_of_step(1), [at(1), 5_000]);
    assert_eq!(doc.links_of.into_step(0), [] as [usize; 0]);
}

#[test]
fn a_tool_step_shows_its_arguments_and_what_came_back() {
    let mut s = Step::new("s5", StepKind::Tool);
    s.tool = Some(Box::new(ToolCall {
        name: "send_email".to_owned(),
        arguments: json!({"to": "dana@example.com", "subject": "Refund"}).into(),
        call_id: None,
    }));
    s.output = Some(json!({"status": "sent"}).into());
    assert_eq!(
        step_excerpt(&s, 200),
        "to: dana@example.com, subject: Refund → status: sent"
    );
    s.output = None;
    s.error = Some("mailbox full".to_owned());
    assert_eq!(
        step_excerpt(&s, 200),
        "to: dana@example.com, subject: Refund → ✗ mailbox full"
    );
}

#[test]
fn a_model_step_that_calls_a_tool_names_it_and_never_shows_its_prompt() {
    let mut s = Step::new("s4", StepKind::Llm);
    s.input = Some(json!("SECRET PROMPT").into());
    s.output = Some(
        json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday"}}}).into(),
    );
    assert_eq!(step_excerpt(&s, 200), "calls create_event(start: Friday)");
    s.output = None;
    assert_eq!(step_excerpt(&s, 200), "");
}

/// An agent step whose output is its whole conversation (Pydantic AI's agent run, as a real
/// Langfuse export records it) shows the reply it ended with, not its system prompt.
#[test]
fn a_conversation_as_output_shows_its_last_message() {
    let mut s = Step::new("a1", StepKind::Agent);
    s.output = Some(
        json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is Langfuse?"},
            {"role": "assistant", "content": "An LLM engineering platform."}
        ])
        .into(),
    );
    assert_eq!(step_excerpt(&s, 200), "An LLM engineering platform.");
}

#[test]
fn excerpts_are_inert_nested_values_summarised_and_cut() {
    let mut s = Step::new("s1", StepKind::Llm);
    s.output =
        Some(json!({"a": {"b": 1}, "list": [1, 2], "deep": [[1]], "t": "x\u{1b}[2J"}).into());
    assert_eq!(
        step_excerpt(&s, 200),
        "a: {…}, list: [1, 2], deep: [1 item], t: x\\u{1b}[2J"
    );
    // Issue 26: one member is one item, not "[1 items]"; a model's content is what it says.
    s.output = Some(json!({"rows": [{"a": 1}], "parts": [[1], [2]]}).into());
    assert_eq!(step_excerpt(&s, 200), "rows: [1 item], parts: [2 items]");
    s.output = Some(json!({"content": ["only"]}).into());
    assert_eq!(step_excerpt(&s, 200), "only");
    s.output = Some(json!("word ".repeat(100)).into());
    let e = step_excerpt(&s, 20);
    assert!(e.ends_with('…') && e.chars().count() <= 20, "{e}");
}

#[test]
fn a_model_turns_row_shows_its_calls_with_their_arguments_or_its_first_words() {
    let llm = |out: serde_json::Value| {
        let mut s = Step::new("m", StepKind::Llm);
        s.output = Some(out.into());
        step_excerpt(&s, 200)
    };
    // Plural calls in the importers' shape: no `tool_calls: [2 items]`.
    assert_eq!(
        llm(json!({"tool_calls": [
            {"id": "c1", "name": "HelloTool", "arguments": {"name": "Bob"}},
            {"id": "c2", "name": "ByeTool", "arguments": {"name": "Bob"}}]})),
        "calls HelloTool(name: Bob), ByeTool(name: Bob)"
    );
    // Text with a call: the call first, then the reply's first words.
    assert_eq!(
        llm(json!({"content": "Checking.", "tool_calls": [
            {"name": "get_weather", "arguments": "{\"city\": \"Tokyo\"}"}]})),
        "calls get_weather(city: Tokyo) · Checking."
    );
    // Anthropic blocks: no `content: [1 items]`.
    assert_eq!(
        llm(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Weather in Berlin…"},
            {"type": "tool_use", "id": "t", "name": "mcp__weather__get_weather", "input": {"city": "Berlin"}}]})),
        "calls mcp__weather__get_weather(city: Berlin) · Weather in Berlin…"
    );
    // A short list of plain values reads as itself; a list of messages as the last one.
    let mut t = Step::new("t", StepKind::Tool);
    t.output = Some(
        json!({"tickers": ["AAPL", "MSFT"], "messages": [
        {"type": "human", "content": "go"}, {"type": "ai", "content": "Done."}]})
        .into(),
    );
    assert_eq!(
        step_excerpt(&t, 200),
        "tickers: [AAPL, MSFT], messages: Done."
    );
}

#[test]
fn steps_are_named_by_their_names_with_the_position_when_names_repeat() {
    let mut run = Run::new("r", RunStatus::Failed);
    for (id, name) in [
        ("338d5ac2c68af598", Some("ChatCompletion")),
        ("04dc3df345b4c1d7", Some("ChatCompletion")),
        ("5b99c3e3411ed17b", Some("get_weather")),
        ("aa539eb36c9027e2", None),
        ("s4", Some("ChatCompletion")),
    ] {
        let mut s = Step::new(id, StepKind::Llm);
        s.name = name.map(str::to_owned);
        run.steps.push(s);
    }
    run.reindex();
    let report: Report = serde_json::from_str(include_str!(
        "../../../tests/fixtures/tui/calendar.report.json"
    ))
    .expect("fixture");
    let doc = Document::new(run, report, None);
    assert_eq!(doc.step_ref(0), "ChatCompletion (1)");
    assert_eq!(doc.step_ref(1), "ChatCompletion (2)");
    assert_eq!(doc.step_ref(2), "get_weather");
    assert_eq!(doc.step_ref(3), "llm (4)");
    assert_eq!(doc.step_ref(4), "s4", "an id a person chose stays");
    assert_eq!(doc.step_ref_with(0, false, 40), "ChatCompletion");
    assert_eq!(doc.step_ref_with(0, true, 12), "ChatCom… (1)");
    assert_eq!(doc.step_ref_of("tool_result-9d53"), "tool_result-9d53");
}
