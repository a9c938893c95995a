//! Every importer on hostile input: arbitrary JSON placed where each format expects its fields
//! must give runs or an `ImportError`, never a panic, and what comes out must pass the loader.

use super::*;
use crate::analysis::load::run_from_value;
use proptest::prelude::*;
use serde_json::json;

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z_.0-9]{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("exitcode: 1"),
            Just("Error: x"),
            Just("{\"a\": [1]}"),
            Just("FINAL ANSWER:"),
            Just("```py\nx\n```"),
            Just("ERROR"),
            Just("{'query': ['x', (1, None)]}"),
            Just("Message(role='user', content='hi')"),
            Just("final_answer(\"\"\"done\"\"\")"),
            Just("\"{\\\"a\\\": 1}\""),
            Just("PT1M3.5S"),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("role".to_owned()),
                        Just("content".to_owned()),
                        Just("name".to_owned()),
                        Just("id".to_owned()),
                        Just("type".to_owned()),
                        Just("parentObservationId".to_owned()),
                        Just("tool_calls".to_owned()),
                        Just("key".to_owned()),
                        Just("value".to_owned()),
                        Just("spans".to_owned()),
                        Just("scopeSpans".to_owned()),
                        Just("attributes".to_owned()),
                        Just("spanId".to_owned()),
                        Just("parentSpanId".to_owned()),
                        Just("stringValue".to_owned()),
                        Just("gen_ai.prompt.0.content".to_owned()),
                        Just("llm.input_messages.1.message.role".to_owned()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                ),
                0..6,
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn shapes(v: Value) -> Vec<Document> {
    vec![
        Document::One(json!({"resourceSpans": [{"scopeSpans": [{"spans": v.clone()}]}]})),
        Document::One(json!({"resourceSpans": v.clone()})),
        Document::Lines(vec![json!({"batches": v.clone()}), v.clone()]),
        Document::One(json!({"id": "t", "observations": v.clone()})),
        Document::One(
            json!({"trace": v.clone(), "name": v.clone(), "observations": [
            {"type": "GENERATION", "id": "g", "traceId": v.clone(), "input": v.clone(),
             "metadata": {"resourceAttributes": {"service.name": "a"}, "attributes": v.clone()}},
            v.clone(), {"type": v.clone(), "startTime": v.clone(), "output": v.clone()}]}),
        ),
        Document::One(
            json!({"data": [{"type": "SPAN", "traceId": "a", "startTime": v.clone(),
            "metadata": {"resourceAttributes": {"k": v.clone()}}}, v.clone(),
            {"type": "TOOL", "traceId": v.clone(), "parentObservationId": "x", "input": v.clone(),
             "metadata": {"resourceAttributes": {"k": "b"}}}, {"type": "SPAN", "traceId": "a"}],
            "observations": v.clone(), "meta": v.clone()}),
        ),
        Document::One(json!([{"type": "SPAN", "traceId": v.clone()}, v.clone()])),
        Document::One(json!({"question": v.clone(), "history": [v.clone(), v.clone()]})),
        Document::One(json!({"history": v.clone(), "ground_truth": v.clone()})),
        Document::One(json!([{"traj": [v.clone(), v.clone()], "reward": v.clone()}, v.clone()])),
        Document::One(json!({"traj": v.clone(), "info": v.clone()})),
        Document::One(json!({"trace_id": v.clone(), "spans": [
            {"span_id": "a", "span_name": v.clone(), "span_attributes": v.clone(),
             "timestamp": v.clone(), "duration": v.clone(), "events": v.clone(),
             "child_spans": [v.clone(), {"span_id": "b", "span_name": "x", "parent_span_id": "a",
                "span_attributes": {"openinference.span.kind": "TOOL", "input.value": v.clone()}}]}]})),
        Document::One(json!({"meta": v.clone(), "data": [
            {"TraceId": "t", "SpanId": "a", "SpanName": v.clone(), "ResourceAttributes": v.clone(),
             "SpanAttributes": v.clone(), "Duration": v.clone(), "Timestamp": v.clone()},
            v.clone(),
            {"TraceId": v.clone(), "SpanId": "b", "SpanName": "n", "ParentSpanId": "a",
             "ResourceAttributes": {"service.name": v.clone()}, "child_spans": [v.clone()]},
            {"trace_id": "u", "span_id": "c", "span_name": "m", "resource_attributes": {"k": "x"}}]})),
        Document::One(
            json!([{"trace_id": "t", "spans": [{"span_id": "a", "span_name": "n",
            "child_spans": v.clone()}]}, v.clone(), {"span_id": "b", "span_name": v.clone(),
            "trace_id": v.clone(), "resource_attributes": v.clone()}]),
        ),
        Document::Lines(vec![
            json!({"TraceId": "t", "SpanId": v.clone(), "SpanName": v.clone(),
            "Events.Name": v.clone(), "Events.Attributes": v.clone()}),
            v.clone(),
        ]),
        Document::One(
            json!([{"name": "n", "context": {"span_id": "s", "trace_id": v.clone()},
            "span_kind": v.clone(), "attributes": v.clone(), "events": v.clone(),
            "parent_id": v.clone()}, v.clone()]),
        ),
        Document::One(json!({"traces": [{"trace_id": "t", "spans": [{"name": "n",
            "context": {"span_id": "s"}, "status": v.clone(), "start_time": v.clone(),
            "attributes": v.clone()}]}]})),
        Document::One(json!({"traces": [{"object": "trace", "spans": [
            {"span_data": {"type": "function", "input": v.clone(), "output": v.clone()}, "id": v.clone()},
            {"span_data": {"type": "response"}, "response": v.clone(), "error": v.clone()},
            {"span_data": v.clone(), "parent_id": v.clone()}]}]})),
        Document::One(
            json!({"schema_version": "ATIF-v1.5", "session_id": v.clone(), "agent": {},
            "steps": [{"step_id": v.clone(), "source": "agent", "message": v.clone(),
                "tool_calls": v.clone(), "observation": v.clone()}, v.clone()]}),
        ),
        Document::One(json!([{"role": "user", "content": v.clone()},
            {"role": "assistant", "content": v.clone(), "tool_calls": v.clone()},
            {"role": "tool", "tool_call_id": v.clone(), "content": v.clone()}])),
        Document::One(
            json!([{"role": "Orchestrator (thought)", "content": v.clone()},
            {"role": "WebSurfer", "content": v}]),
        ),
    ]
}

fn check(doc: Document) {
    let Some(format) = sniff(&doc) else { return };
    let count = importer(format).map(|i| i.count(&doc)).unwrap_or(0);
    for index in [
        None,
        Some(0),
        Some(count.saturating_sub(1)),
        Some(count + 3),
    ] {
        if let Ok(runs) = to_native_values(format, doc.clone(), index) {
            for r in runs {
                // Native input may be anything; an import must always be a loadable run.
                let loaded = run_from_value(r.value, format);
                if format != SourceFormat::Native {
                    assert!(
                        loaded.is_ok(),
                        "{format} made an unloadable run: {loaded:?}"
                    );
                }
            }
        }
        same_built_as_written(format, &doc, index);
        same_streamed(format, &doc, index);
    }
}

/// A file read as its text is parsed (when it is read that way) gives the runs, warnings and
/// errors of the parsed document, sniffed or forced with `--from`.
fn same_streamed(format: SourceFormat, doc: &Document, index: Option<usize>) {
    let text = match doc {
        Document::One(v) => v.to_string(),
        Document::Lines(vs) => vs
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let runs = |r: Result<Vec<ImportedRun>, ImportError>| {
        r.map(|runs| {
            runs.into_iter()
                .map(|r| (r.value, format!("{:?}", r.warnings)))
                .collect::<Vec<_>>()
        })
    };
    if let Some(streamed) = stream(&text, None) {
        assert_eq!(streamed.format(), format, "{text}");
        let by_doc = runs(to_native_values(format, doc.clone(), index));
        assert_eq!(runs(import_streamed(streamed, index)), by_doc, "{text}");
    }
    for forced in [
        SourceFormat::Otlp,
        SourceFormat::SpanRows,
        SourceFormat::Langfuse,
    ] {
        if let Some(streamed) = stream(&text, Some(forced)) {
            assert_eq!(streamed.format(), forced);
            let by_doc = runs(to_native_values(forced, doc.clone(), index));
            assert_eq!(runs(import_streamed(streamed, index)), by_doc, "{text}");
        }
    }
}

/// The runs as loading builds them (a span format's steps and units straight into the run
/// model) are the runs the loader reads from the run JSON `import` writes, with the same
/// warnings, or the import fails the same way. True when the steps were built in the model.
fn same_built_as_written(format: SourceFormat, doc: &Document, index: Option<usize>) -> bool {
    let span_format = matches!(
        format,
        SourceFormat::Otlp
            | SourceFormat::SpanRows
            | SourceFormat::Langfuse
            | SourceFormat::Phoenix
            | SourceFormat::OtelConsole
            | SourceFormat::Jaeger
            | SourceFormat::OpenAiAgents
    );
    let written = to_native_values(format, doc.clone(), index);
    let built = to_native_values_into(
        format,
        doc.clone(),
        index,
        crate::analysis::load::MODEL_STEPS,
    );
    let (written, built) = match (written, built) {
        (Ok(w), Ok(b)) => (w, b),
        (w, b) => {
            assert_eq!(w.err(), b.err(), "{format}");
            return span_format;
        }
    };
    assert_eq!(written.len(), built.len(), "{format}");
    for (w, b) in written.into_iter().zip(built) {
        assert!(w.built.is_none(), "{format}");
        assert_eq!(b.built.is_some(), span_format, "{format}");
        assert_eq!(format!("{:?}", w.warnings), format!("{:?}", b.warnings));
        let from_json = crate::analysis::load::run_from_imported(w.value, w.messages, None);
        let from_model = crate::analysis::load::run_from_imported(b.value, b.messages, b.built);
        match (from_json, from_model) {
            (Ok((w, ww)), Ok((b, bw))) => {
                assert_eq!(w, b, "{format}");
                assert_eq!(format!("{ww:?}"), format!("{bw:?}"), "{format}");
            }
            (w, b) => assert_eq!(
                w.err().map(|e| e.to_string()),
                b.err().map(|e| e.to_string()),
                "{format}"
            ),
        }
    }
    span_format
}

/// Every span-format trace among the importers' fixtures and the real exports kept as tests
/// loads into the same run, with the same warnings, whether its steps are built in the run model
/// or read back from the run JSON `import` writes (by the parsed file, and by the OTLP reader
/// that decodes the text as it parses it).
#[test]
fn span_formats_built_in_the_model_load_as_their_run_json_does() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "json" || e == "jsonl")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut compared = 0;
    let mut streamed = 0;
    let mut langfuse = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(doc) = crate::analysis::load::parse_document(&text, path) else {
            continue;
        };
        let Some(format) = sniff(&doc) else { continue };
        if same_built_as_written(format, &doc, None) {
            compared += 1;
        }
        same_streamed(format, &doc, None);
        if stream(&text, None).is_some_and(|s| s.format() == SourceFormat::Langfuse) {
            langfuse += 1;
        }
        if let (Some(a), Some(b)) = (stream(&text, None), stream(&text, None)) {
            let w = import_streamed(a, None).unwrap();
            let b = import_streamed_into(b, None, crate::analysis::load::MODEL_STEPS).unwrap();
            for (w, b) in w.into_iter().zip(b) {
                assert!(b.built.is_some());
                let (w, _) = run_from_value(w.value, format).unwrap();
                let (b, _) =
                    crate::analysis::load::run_from_imported(b.value, b.messages, b.built).unwrap();
                assert_eq!(w, b, "{}", path.display());
            }
            streamed += 1;
        }
    }
    assert!(
        compared >= 15,
        "{compared} span-format files of {}",
        files.len()
    );
    assert!(
        streamed >= 5,
        "{streamed} OTLP and Langfuse files read as they are parsed"
    );
    assert!(
        langfuse >= 3,
        "{langfuse} Langfuse files read as they are parsed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn importers_never_panic_and_always_make_loadable_runs(v in any_json()) {
        for doc in shapes(v) {
            check(doc);
        }
    }
}

#[test]
fn extreme_indices_and_ids_are_handled() {
    let attrs = json!([
        {"key": "gen_ai.prompt.18446744073709551615.content", "value": {"stringValue": "x"}},
        {"key": "gen_ai.prompt.99999999999999999999999.role", "value": {"stringValue": "y"}},
        {"key": "gen_ai.prompt..", "value": {"intValue": "not a number"}},
        {"key": "llm.input_messages.0", "value": {"arrayValue": {"values": [{"kvlistValue": {}}]}}}
    ]);
    let doc = Document::One(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "AA", "spanId": "s", "parentSpanId": "s", "attributes": attrs,
         "status": {"code": 99}, "kind": -4, "startTimeUnixNano": "1e30"},
        {"traceId": "AA", "spanId": "s", "parentSpanId": "s"}
    ]}]}]}));
    check(doc.clone());
    let runs = to_native_values(SourceFormat::Otlp, doc, None).unwrap_or_default();
    let steps = runs[0].value["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        steps.len(),
        2,
        "a span whose parent is itself is a root; repeats get new ids"
    );
    assert_eq!(steps[1]["id"], "s-2");
}

#[test]
fn pick_gives_the_indexed_item_or_all_and_names_what_the_file_holds() {
    assert_eq!(
        super::pick(vec![10, 20, 30], Some(1), "trace(s)").unwrap(),
        vec![20]
    );
    assert_eq!(
        super::pick(vec![10, 20], None, "trace(s)").unwrap(),
        vec![10, 20]
    );
    let e = super::pick(vec![10, 20, 30], Some(3), "record(s)").unwrap_err();
    assert_eq!(
        e.0,
        "--index 3 is out of range: the file holds 3 record(s), numbered from 0"
    );
}

#[test]
fn an_unknown_file_lists_every_format_tried_one_line_each() {
    let why = why_unknown(&Document::One(json!([{"a": 1}, {"b": 2}])));
    let lines: Vec<&str> = why.lines().collect();
    assert_eq!(
        lines[0],
        "the file holds a JSON array of 2 item(s) that matches no known trace format; tried, in order:"
    );
    assert_eq!(lines.len(), IMPORTERS.len() + 1);
    for (line, imp) in lines[1..].iter().zip(IMPORTERS) {
        assert!(
            line.starts_with(&format!("  {}: ", imp.format().name())),
            "{line}"
        );
    }
    assert!(!why.contains("must be a JSON object"));
    assert!(
        why_unknown(&Document::One(json!(5)))
            .starts_with("the file holds a number, which no trace format is")
    );
}

/// Span formats keep a model call's messages apart from the run JSON (issue 28): loaded that way
/// the run is the one the JSON with its messages written in gives, and the system prompt every
/// call was sent is one text in memory, whichever way it was loaded.
#[test]
fn messages_kept_apart_load_as_the_written_ones_and_equal_texts_are_held_once() {
    let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
    let input = |said: &str| {
        json!([
            {"role": "system", "parts": [{"type": "text", "content": "Be brief and polite."}]},
            {"role": "user", "parts": [{"type": "text", "content": said}]}
        ])
        .to_string()
    };
    let chat = |id: &str, said: &str| {
        json!({"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": id, "name": "chat",
               "startTimeUnixNano": "1767225600000000000",
               "attributes": [attr("gen_ai.operation.name", "chat"),
                              attr("gen_ai.input.messages", &input(said))]})
    };
    let doc = Document::One(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        chat("0000000000000001", "Where is order 7?"),
        chat("0000000000000002", "And order 8?")
    ]}]}]}));
    let written = to_native_values(SourceFormat::Otlp, doc.clone(), None)
        .unwrap()
        .remove(0);
    let apart = to_native_values_apart(SourceFormat::Otlp, doc, None)
        .unwrap()
        .remove(0);
    assert!(written.messages.is_empty());
    assert_eq!(apart.messages.len(), 2);
    for (step, msgs) in &apart.messages {
        assert!(apart.value["steps"][*step]["messages"].is_null());
        assert_eq!(
            written.value["steps"][*step]["messages"],
            serde_json::to_value(msgs).unwrap()
        );
    }
    let (from_json, w1) = run_from_value(written.value, SourceFormat::Otlp).unwrap();
    let (from_apart, w2) =
        crate::analysis::load::run_from_imported(apart.value, apart.messages, None).unwrap();
    assert_eq!(from_json, from_apart);
    assert_eq!(format!("{w1:?}"), format!("{w2:?}"));
    for run in [&from_json, &from_apart] {
        let calls: Vec<_> = run
            .steps
            .iter()
            .filter(|s| !s.messages().is_empty())
            .collect();
        assert_eq!(calls.len(), 2);
        let (a, b) = (
            &calls[0].messages()[0].content,
            &calls[1].messages()[0].content,
        );
        assert_eq!(*a, "Be brief and polite.");
        assert!(a.same_place(b), "the system prompt is held once");
        assert_ne!(
            calls[0].messages()[1].content,
            calls[1].messages()[1].content
        );
    }
}

#[test]
fn clickhouse_output_and_langfuse_lists_are_read_as_they_are_parsed_and_other_shapes_are_not() {
    let row = |trace: &str, id: &str, service: &str| {
        json!({"TraceId": trace, "SpanId": id, "SpanName": "chat",
            "ResourceAttributes": {"service.name": service},
            "SpanAttributes": {"gen_ai.operation.name": "chat"}})
    };
    let rows = json!({"meta": [{"name": "TraceId"}],
        "data": [row("t2", "a", "x"), row("t1", "b", "y"), row("t2", "c", "y"), row("t1", "d", "z")],
        "rows": 4});
    let observation = |trace: &str, id: &str| {
        json!({"type": "SPAN", "id": id, "traceId": trace, "startTime": "2025-01-01T00:00:00Z",
            "metadata": {"resourceAttributes": {"service.name": id}}})
    };
    let bare =
        json!({"data": [observation("t", "a"), observation("u", "b"), observation("t", "c")]});
    let trace = json!({"id": "t", "name": "n", "observations": [observation("t", "a")]});
    for (v, format) in [
        (&rows, SourceFormat::SpanRows),
        (&bare, SourceFormat::Langfuse),
        (&trace, SourceFormat::Langfuse),
    ] {
        let text = v.to_string();
        let streamed = stream(&text, None).map(|s| s.format());
        assert_eq!(streamed, Some(format), "{text}");
        for index in [None, Some(0), Some(1), Some(2)] {
            same_streamed(format, &Document::One(v.clone()), index);
        }
    }
    // A Patronus trace object, JSON lines of rows: the general reader's.
    let lines = format!("{}\n{}", row("t", "a", "x"), row("t", "b", "x"));
    let patronus = json!({"trace_id": "t", "spans": [{"span_id": "a", "span_name": "n"}]});
    assert!(stream(&lines, None).is_none());
    assert!(stream(&patronus.to_string(), None).is_none());
}
