//! Context units, task and outcome of imports (docs/importers.md, "Context units, task and
//! outcome"), on the real framework exports and on a hand-made RAG trace in two conventions.
//! Every expected value was written by reading the files (the messages each model call records,
//! the tool call ids, the trace's scores), not by running the importers.

use super::*;
use std::collections::HashSet;
use tdn_tui::analysis::model::{ContextUnit, StatusFrom, Step};

fn real(name: &str) -> Loaded {
    load(&format!("real/{name}"))
}

fn unit_with<'a>(run: &'a Run, kind: &str, text_starts: &str) -> &'a ContextUnit {
    run.context_units
        .iter()
        .find(|u| u.kind == kind && u.text.starts_with(text_starts))
        .unwrap_or_else(|| {
            panic!(
                "no {kind} unit '{text_starts}…' in {:#?}",
                run.context_units
            )
        })
}

fn places(u: &ContextUnit) -> Vec<(&str, usize)> {
    u.at.iter().map(|a| (a.step.as_str(), a.message)).collect()
}

/// Every place slices its message to the unit's text, its step lists the unit as sent, and ids
/// are unique.
fn places_hold(run: &Run) {
    let mut ids = HashSet::new();
    for u in &run.context_units {
        assert!(ids.insert(u.id.as_str()), "{} twice", u.id);
        for at in &u.at {
            let step: &Step = run.step(at.step.as_str()).expect("the step");
            let content = &step.messages()[at.message].content;
            assert_eq!(at.slice(content), Some(u.text.as_str()), "{}", u.id);
            let sent = &step.context.as_ref().expect("context").sent;
            assert!(
                sent.iter().any(|s| s == &u.id),
                "{} not sent at {}",
                u.id,
                step.id
            );
        }
    }
}

fn real_files() -> Vec<String> {
    let root = fixture("real");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap().flatten() {
        if dir.path().is_dir() {
            for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let p = f.path();
                out.push(p.strip_prefix(&root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_model_call_that_records_its_input_has_messages_units_and_context() {
    let mut with_messages = 0;
    for name in real_files() {
        for l in load_all(&format!("real/{name}")) {
            let run = &l.run;
            places_hold(run);
            for s in run.steps.iter().filter(|s| s.kind == StepKind::Llm) {
                if s.messages().is_empty() {
                    continue;
                }
                with_messages += 1;
                assert!(
                    s.input.is_none(),
                    "{name} {}: input kept beside messages",
                    s.id
                );
                let sent = s.context.as_ref().map_or(0, |c| c.sent.len());
                let texts = s.messages().iter().filter(|m| !m.content.trim().is_empty());
                assert!(
                    sent > 0 || texts.count() == 0,
                    "{name} {}: messages with text but nothing sent",
                    s.id
                );
            }
            // The same trace imported twice gives the same units and ids.
            let again = load_all(&format!("real/{name}"));
            let same = again.iter().find(|a| a.run.id == run.id).expect("run");
            assert_eq!(same.run.context_units, run.context_units, "{name}");
        }
    }
    // Read from the files: the model calls of the Langfuse, OpenAI Agents, OTLP and Phoenix
    // exports that record their input.
    assert!(with_messages >= 60, "{with_messages}");
}

#[test]
fn a_tool_result_fed_back_is_the_tool_s_unit_and_a_correctness_score_is_the_outcome() {
    let l = real("langfuse/langfuse__microsoft-agent-2025-12-17.trace.json");
    let run = &l.run;
    let user = unit_with(run, "user", "What's the weather in Tokyo?");
    assert_eq!(places(user), [("2406e8343fd49c0e", 0)]);
    let fed = unit_with(run, "tool_result", "{\"type\": \"function_result\"");
    assert_eq!(
        fed.produced_by.as_ref().map(|p| p.as_str()),
        Some("a2de97aac476c036")
    );
    assert_eq!(places(fed), [("b0913e7cd82d72b8", 0)]);
    let call = run.step("b0913e7cd82d72b8").expect("call");
    assert_eq!(
        call.messages()[0].tool_call_id.as_deref(),
        Some("call_CwaJHuXTm9dmHFQPlVbqyzJ0")
    );
    assert_eq!(call.request_model(), Some("gpt-5-mini"));
    // The trace's score 'correctness' is 1: the answer was right.
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.status_from, StatusFrom::Recorded);
    assert!(
        run.status_why
            .as_deref()
            .unwrap_or("")
            .contains("correctness")
    );
    let r = analyze(&l, &AnalyzeOptions::new(&FlatEmbedder));
    assert!(r.suspects.is_empty() && r.verdict.is_none());
    // A score of something else says nothing: the outcome is assumed.
    let other = real("langfuse/langfuse__google-adk-2025-08-28.trace.json");
    assert_eq!(other.run.status_from, StatusFrom::Assumed);
    assert_eq!(other.run.status, RunStatus::Failed);
}

#[test]
fn a_system_prompt_sent_in_every_call_is_one_unit() {
    let run = real("otlp/evilmartians__quo_tav_agent.json").run;
    let calls: Vec<&str> = run
        .steps
        .iter()
        .filter(|s| !s.messages().is_empty())
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(calls.len(), 6);
    let system = unit_with(&run, "instruction", "You are a helpful research assistant.");
    let at: Vec<&str> = system.at.iter().map(|a| a.step.as_str()).collect();
    assert_eq!(at, calls, "one place per call, each message 0");
    assert!(
        system
            .at
            .iter()
            .all(|a| a.message == 0 && a.start.is_none())
    );
    let question = unit_with(&run, "user", "What are the latest AI trends in 2024?");
    assert_eq!(question.at.len(), 6);
    assert_eq!(
        run.context_units
            .iter()
            .filter(|u| u.kind == "instruction")
            .count(),
        1
    );
}

#[test]
fn calls_written_as_tool_messages_and_short_results_are_read() {
    let run = real("langfuse/langfuse__koog-2025-08-26.trace.json").run;
    let second = run.step("e44e72cf2d221781").expect("second call");
    let m = second.messages();
    assert_eq!(m[2].role, "assistant");
    assert_eq!(m[2].tool_calls[0].name, "HelloTool");
    assert_eq!(m[4].tool_calls[0].name, "ByeTool");
    let hello = unit_with(&run, "tool_result", "Hello my darling Bob!");
    assert_eq!(
        hello.produced_by.as_ref().map(|p| p.as_str()),
        Some("66f269083a2fff81")
    );
    let bye = unit_with(&run, "tool_result", "Bye my dear Bob!");
    assert_eq!(
        bye.produced_by.as_ref().map(|p| p.as_str()),
        Some("33188493784a060d")
    );
}

#[test]
fn a_rag_trace_pastes_two_of_three_documents_the_third_is_dropped() {
    let l = load("rag-openinference.json");
    let run = &l.run;
    places_hold(run);
    assert_eq!(
        run.task.as_deref(),
        Some("What was Meta's revenue in 2023?")
    );
    let sent = &run
        .step("a000000000000003")
        .expect("call")
        .context
        .as_ref()
        .expect("ctx")
        .sent;
    let sent: Vec<&str> = sent.iter().map(|s| s.as_str()).collect();
    assert!(
        sent.contains(&"doc-meta-10k") && sent.contains(&"doc-meta-rl"),
        "{sent:?}"
    );
    assert!(!sent.contains(&"doc-meta-buyback"));
    let dropped = run.unit("doc-meta-buyback").expect("dropped unit");
    assert!(dropped.at.is_empty());
    assert_eq!(
        dropped.produced_by.as_ref().map(|p| p.as_str()),
        Some("a000000000000002")
    );
    let doc = run.unit("doc-meta-10k").expect("doc");
    assert!(doc.at[0].start.is_some(), "inside the prompt");
    let r = analyze(&l, &AnalyzeOptions::new(&FlatEmbedder));
    let d = r.dropped.expect("dropped context");
    assert_eq!(
        d.dropped.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["doc-meta-buyback"]
    );
    let influence = r.influence.expect("influence");
    assert!(
        influence
            .scores
            .iter()
            .any(|s| &*s.id == "doc-meta-10k" && s.unit.as_deref() == Some("doc-meta-10k")),
        "the influence list names real units"
    );
    assert!(influence.scores.iter().all(|s| !s.id.contains('#')));
    // OpenLLMetry's envelope: the task is the chain's input, not the filled prompt.
    let ol = load("rag-openllmetry.json");
    assert_eq!(
        ol.run.task.as_deref(),
        Some("What was Meta's revenue in 2023?")
    );
    assert_eq!(
        ol.run.final_answer.as_deref(),
        Some("Meta's revenue in 2023 was 134.90 billion dollars.")
    );
}

#[test]
fn the_outcome_is_stated_assumed_or_settled_by_a_reference() {
    let file = fixture("rag-openinference.json");
    let f = file.to_str().unwrap();
    let report = |args: &[&str]| -> Value {
        let mut all = vec!["analyze", "--json", f];
        all.extend_from_slice(args);
        let o = bin(&all);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let r = report(&[]);
    assert_eq!(r["run"]["status_from"], "assumed");
    let r = report(&["--outcome", "succeeded"]);
    assert_eq!(
        (&r["run"]["status"], &r["run"]["status_from"]),
        (&"succeeded".into(), &"given".into())
    );
    assert_eq!(r["verdict"], Value::Null);
    assert_eq!(r["suspects"], serde_json::json!([]));
    assert_eq!(r["fault"]["party"], "none");
    assert!(r["influence"].is_object(), "influence is still given");
    let r = report(&[
        "--reference",
        "  META'S REVENUE in 2023 was 134.90 billion dollars ",
    ]);
    assert_eq!(r["run"]["status_from"], "reference");
    assert_eq!(r["run"]["status"], "succeeded");
    let r = report(&["--reference", "134.9 billion dollars"]);
    assert_eq!(
        r["run"]["status_from"], "assumed",
        "a different answer settles nothing"
    );
    let text = bin(&["analyze", f]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Outcome: taken as failed"), "{text}");
    let md = bin(&["analyze", "--format", "markdown", f]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("**Outcome**: taken as failed"));
}

#[test]
fn an_import_written_out_loads_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "rag-openinference.json",
        "real/langfuse/langfuse__koog-2025-08-26.trace.json",
        "real/otlp/evilmartians__smol_deep_research_agent.json",
    ] {
        let out = dir.path().join("out.json");
        let o = bin(&[
            "import",
            fixture(name).to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let written = load_path(&out, &LoadOptions::default())
            .unwrap()
            .remove(0)
            .run;
        let direct = load(name).run;
        assert_eq!(written, direct, "{name}");
        assert!(!written.context_units.is_empty());
    }
}
