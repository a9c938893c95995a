//! Importers end to end: each hand-made trace in tests/fixtures/import/ loads with no flags, its
//! steps come out in the order, kinds, parents, tools and errors the trace records, and the
//! `import`, `validate` and `eval` commands behave as docs/importers.md and docs/accuracy.md say.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tdn_tui::analysis::import::SourceFormat;
use tdn_tui::analysis::influence::{ConfidenceOptions, EmbedError, Embedder};
use tdn_tui::analysis::load::{LoadOptions, Loaded, load_path};
use tdn_tui::analysis::model::{Run, RunStatus, StepKind};
use tdn_tui::analysis::report::{AnalyzeOptions, ReferenceChoice, analyze};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

fn load_all(name: &str) -> Vec<Loaded> {
    load_path(&fixture(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name} does not load: {e}"))
}

fn load(name: &str) -> Loaded {
    let mut runs = load_all(name);
    assert_eq!(runs.len(), 1, "{name} should hold one run");
    runs.remove(0)
}

fn ids(run: &Run) -> Vec<&str> {
    run.steps.iter().map(|s| s.id.as_str()).collect()
}

fn kinds(run: &Run) -> Vec<StepKind> {
    run.steps.iter().map(|s| s.kind).collect()
}

fn parents(run: &Run) -> Vec<Option<&str>> {
    run.steps
        .iter()
        .map(|s| s.parent.as_ref().map(|p| p.as_str()))
        .collect()
}

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tdn-tui: {e}"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

struct FlatEmbedder;

impl Embedder for FlatEmbedder {
    fn name(&self) -> &str {
        "test"
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    }
}

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
        )
    );
    assert_eq!(
        call.input.as_ref().map(|i| i[0]["role"].clone()),
        Some(json!("system"))
    );

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
    let usage = last.usage.as_ref().unwrap_or_else(|| panic!("no usage"));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(120), Some(9))
    );
    assert_eq!(last.started_at.map(|t| t.0), Some(1_700_000_000_300));

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
        b.steps[1].attributes.get("otel.span_kind"),
        Some(&json!("client"))
    );
    assert_eq!(b.steps[1].started_at.map(|t| t.0), Some(1_700_000_003_500));

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
        llm.input,
        Some(json!([
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "Can I get a refund for order 7?"}
        ]))
    );
    assert_eq!(
        llm.output,
        Some(
            json!({"tool_calls": [{"id": "tc-1", "name": "refund", "arguments": {"order_id": 7}}]})
        )
    );
    let tool = run.steps[3]
        .tool
        .as_ref()
        .unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(
        (tool.name.as_str(), &tool.arguments),
        ("refund", &json!({"order_id": 7}))
    );
    assert_eq!(run.steps[3].output, Some(json!("refunded")));
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
        )
    );
    assert_eq!(run.steps[1].output, Some(json!("Sydney")));
    assert_eq!(
        run.steps[1].input.as_ref().map(|i| i[2].clone()),
        Some(json!({"role": "tool", "content": "Canberra is the capital city of Australia."}))
    );
    let usage = run.steps[1]
        .usage
        .as_ref()
        .unwrap_or_else(|| panic!("no usage"));
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
        )
    );
    let tool = &run.steps[2];
    assert_eq!(tool.error.as_deref(), Some("order service timed out"));
    let call = tool.tool.as_ref().unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(
        (call.name.as_str(), &call.arguments),
        ("get_order", &json!({"order_id": 42}))
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
    );
    let usage = run.steps[4]
        .usage
        .as_ref()
        .unwrap_or_else(|| panic!("no usage"));
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
    assert_eq!(exec.attributes.get("code_from"), Some(&json!("h1")));
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
            {"id": "call_2", "name": "cancel_reservation", "arguments": {"reservation_id": "ABC123"}}]}))
    );
    assert!(first.tool("cancel_reservation").is_some_and(|t| t.mutates));
    assert!(
        first
            .tool("get_reservation_details")
            .is_some_and(|t| !t.mutates)
    );
    assert_eq!(
        first.final_answer.as_deref(),
        Some("Your reservation ABC123 is cancelled.")
    );
    assert_eq!(
        first.task.as_deref(),
        Some("You are ann_1. You want to cancel reservation ABC123.")
    );
    let second = &runs[1].run;
    assert_eq!(second.status, RunStatus::Succeeded);
    assert_eq!(second.reference_answer.as_deref(), Some("2 bags"));
}

#[test]
fn every_fixture_is_analysed_with_no_flags() {
    let names = [
        "otlp-genai.json",
        "otlp-lines.jsonl",
        "openinference.json",
        "otlp-indexed.json",
        "langfuse-trace.json",
        "whowhen/algorithm-generated.json",
        "whowhen/hand-crafted.json",
        "taubench.json",
    ];
    let embedder = FlatEmbedder;
    let opts = AnalyzeOptions {
        reference: ReferenceChoice::FromRun,
        embedder: &embedder,
        confidence: ConfidenceOptions::default(),
    };
    for name in names {
        for l in load_all(name) {
            let report = analyze(&l, &opts);
            assert_eq!(report.run.id, l.run.id, "{name}");
            assert_eq!(report.run.steps, l.run.steps.len(), "{name}");
            assert_eq!(report.run.source_format, l.source_format.name(), "{name}");
        }
        let out = bin(&["validate", fixture(name).to_str().unwrap_or_default()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    }
}

#[test]
fn import_writes_a_loadable_run_and_asks_for_an_index() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out_path = dir.path().join("run.json");
    let out = out_path.to_str().unwrap_or_default();
    let tau = fixture("taubench.json");
    let tau = tau.to_str().unwrap_or_default();

    let o = bin(&["import", tau, "-o", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the file holds 2 runs; choose one with --index N (0 to 1)"),
        "{}",
        stderr(&o)
    );
    assert!(!out_path.exists(), "nothing is written without --index");

    let o = bin(&["import", tau, "-o", out, "--index", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("the output is not JSON: {e}"));
    assert_eq!(written["format"], "tdn.run/1");
    assert_eq!(written["id"], "task-8-trial-1");
    let back = load_path(&out_path, &LoadOptions::default()).unwrap_or_default();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].source_format, SourceFormat::Native);
    assert_eq!(back[0].run.steps.len(), 4);

    let o = bin(&["import", tau, "-o", out, "--index", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--index 5 is out of range"),
        "{}",
        stderr(&o)
    );

    let genai = fixture("otlp-genai.json");
    let o = bin(&[
        "import",
        "--from",
        "whowhen",
        genai.to_str().unwrap_or_default(),
        "-o",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot import as whowhen"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn eval_scores_labelled_runs_per_set_in_both_settings() {
    let dir = fixture("whowhen");
    let dir = dir.to_str().unwrap_or_default();
    for (flag, reference) in [(None, true), (Some("--no-reference"), false)] {
        let mut args = vec!["eval", dir, "--json"];
        args.extend(flag);
        let o = bin(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v["format"], "tdn.eval/1");
        assert_eq!(v["reference"], json!(reference));
        assert_eq!(v["sets"].as_array().map(Vec::len), Some(1));
        assert_eq!(v["sets"][0]["set"], "whowhen");
        assert_eq!(v["total"]["runs"], 2);
        assert_eq!(v["total"]["step_top1"]["total"], 2);
        assert_eq!(v["total"]["agent"]["total"], 2);
        let labels: Vec<Value> = v["runs"]
            .as_array()
            .map(|r| r.iter().map(|x| x["label"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(
            labels,
            [
                json!({"step": 3, "agent": "Verification_Expert"}),
                json!({"step": 3, "agent": "WebSurfer"})
            ]
        );
    }
}

#[test]
fn eval_needs_labels_for_runs_without_inline_ones() {
    let tau = fixture("taubench.json");
    let tau = tau.to_str().unwrap_or_default();
    let o = bin(&["eval", tau]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds a labelled run"),
        "{}",
        stderr(&o)
    );

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let labels = dir.path().join("labels.json");
    std::fs::write(&labels, r#"{"taubench.json#0": {"step": 2}}"#).unwrap_or_default();
    let o = bin(&[
        "eval",
        tau,
        "--labels",
        labels.to_str().unwrap_or_default(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v["total"]["runs"], 1);
    assert_eq!(v["runs"][0]["index"], 0);
    assert_eq!(v["runs"][0]["label"], json!({"step": 2, "agent": null}));
    assert_eq!(v["total"]["agent"]["total"], 0);
    assert_eq!(v["unlabelled"][0]["run"], "task-8-trial-1");
}
