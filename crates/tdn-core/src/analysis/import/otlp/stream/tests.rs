//! The streaming reader against the parsed-document reader: the same spans, resources and
//! counts from the same text, whatever the envelope holds, and the same choice of format.

use super::*;
use crate::analysis::import::{self, SourceFormat};
use crate::analysis::load::{Document, parse_document};
use proptest::prelude::*;
use serde_json::json;
use std::path::Path;

/// What the parsed-document reader decodes of `text`, and the format it sniffs.
fn by_tree(text: &str) -> (Decoded, Option<SourceFormat>) {
    let doc = parse_document(text, Path::new("t.json")).expect("valid JSON");
    let format = import::sniff(&doc);
    let requests = match doc {
        Document::One(Value::Array(items)) => items,
        Document::One(v) => vec![v],
        Document::Lines(vs) => vs,
    };
    (wire::decode(requests), format)
}

/// Checks the streaming reader against the tree reader on `text`.
fn same(text: &str) {
    let (tree, format) = by_tree(text);
    assert_eq!(decode_text(text, true).as_ref(), Some(&tree), "{text}");
    let sniffed = decode_text(text, false);
    assert_eq!(
        sniffed.is_some(),
        format == Some(SourceFormat::Otlp),
        "{text}"
    );
    if let Some(s) = sniffed {
        assert_eq!(s, tree, "{text}");
    }
}

fn span(id: &str) -> Value {
    json!({"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": id, "name": format!("s{id}"),
           "kind": 3, "startTimeUnixNano": "1700000000000000000",
           "status": {"code": 2, "message": "bad"},
           "events": [{"name": "exception", "attributes": [
               {"key": "exception.message", "value": {"stringValue": "boom"}}]}, 7],
           "attributes": [
               {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
               {"key": "n", "value": {"intValue": "12"}},
               {"key": "l", "value": {"arrayValue": {"values": [{"doubleValue": "0.5"}]}}},
               {"key": "m", "value": {"kvlistValue": {"values": [
                   {"key": "k", "value": {"boolValue": true}}]}}},
               {"nokey": 1}, 5]})
}

#[test]
fn every_envelope_reads_the_same_spans() {
    let a = span("b7ad6b7169203331");
    let b = span("00f067aa0ba902b7");
    let docs = [
        json!({"resourceSpans": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "svc"}}]},
            "scopeSpans": [{"spans": [a, "junk", b]}]}]}),
        // The resource after its spans, snake_case names, an entry that is no object.
        json!({"resource_spans": [{"scope_spans": [{"spans": [a]}],
            "resource": {"attributes": [{"key": "r", "value": {"intValue": 1}}]}}, 3, {}]}),
        // The first present name is read, even when it is not a list.
        json!({"resourceSpans": null, "batches": [{"scopeSpans": [{"spans": [a]}]}]}),
        json!({"batches": [{"instrumentationLibrarySpans": [{"spans": [b]}],
            "scopeSpans": "x"}], "resourceSpans": [{"scopeSpans": [{"spans": [a]}]}]}),
        json!([{"resourceSpans": [{"scopeSpans": [{"spans": [a]}, "x", {"spans": 4}]}]},
            {"resourceLogs": []}, 1, [2]]),
        json!([{"resourceLogs": []}, {"resourceSpans": [{"scopeSpans": [{"spans": [a]}]}]}]),
        json!({"format": "tdn.run/1", "resourceSpans": [{"scopeSpans": [{"spans": [a]}]}]}),
        json!({"resourceSpans": "none"}),
        json!({"other": 1}),
        json!("resourceSpans"),
    ];
    for d in &docs {
        same(&d.to_string());
    }
    // JSON lines: a logs line, an array line, a request line.
    let lines = [
        json!({"resourceLogs": [{"scopeLogs": []}]}).to_string(),
        json!([{"resourceSpans": [{"scopeSpans": [{"spans": [a]}]}]}]).to_string(),
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [b]}]}]}).to_string(),
    ];
    same(&lines.join("\n"));
    same(&format!("{}\n{}", json!({"format": "x"}), lines[2]));
    // Two equal keys: the last wins, as in a parsed object.
    same(
        r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}]}]}],
             "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "2", "name": "x", "name": "y"}]}]}]}"#,
    );
}

#[test]
fn text_that_is_not_json_is_left_to_the_general_reader() {
    assert_eq!(decode_text("{\"resourceSpans\": [", true), None);
    assert_eq!(decode_text("", true), None);
    assert_eq!(decode_text("   ", false), None);
}

#[test]
fn the_runs_match_the_parsed_documents_runs_and_index_checks() {
    let text = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("b7ad6b7169203331"),
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
         "name": "execute_tool", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}]}]}]}]})
    .to_string();
    let doc = parse_document(&text, Path::new("t.json")).expect("valid JSON");
    for index in [None, Some(0), Some(1), Some(2)] {
        let streamed = import::stream(&text, None).expect("an OTLP export");
        let by_stream = import::import_streamed(streamed, index);
        let by_doc = import::to_native_values(SourceFormat::Otlp, doc.clone(), index);
        match (by_stream, by_doc) {
            (Ok(a), Ok(b)) => {
                let values = |v: Vec<import::ImportedRun>| {
                    v.into_iter()
                        .map(|r| (r.value, format!("{:?}", r.warnings)))
                        .collect::<Vec<_>>()
                };
                assert_eq!(values(a), values(b));
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("{index:?}: {a:?} against {b:?}"),
        }
    }
}

/// JSON whose keys are mostly the envelope's and the span's, so that random documents reach
/// every level of the envelope with values of every type in every place.
fn otlp_like() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-f0-9]{0,16}".prop_map(Value::from),
        Just(json!("AQIDBAUGBwg=")),
        Just(json!("SPAN_KIND_CLIENT")),
    ];
    leaf.prop_recursive(7, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("resourceSpans"),
                        Just("resource_spans"),
                        Just("batches"),
                        Just("format"),
                        Just("resource"),
                        Just("scopeSpans"),
                        Just("scope_spans"),
                        Just("instrumentationLibrarySpans"),
                        Just("spans"),
                        Just("traceId"),
                        Just("trace_id"),
                        Just("spanId"),
                        Just("parentSpanId"),
                        Just("name"),
                        Just("kind"),
                        Just("startTimeUnixNano"),
                        Just("attributes"),
                        Just("events"),
                        Just("status"),
                        Just("code"),
                        Just("message"),
                        Just("key"),
                        Just("value"),
                        Just("stringValue"),
                        Just("intValue"),
                        Just("arrayValue"),
                        Just("kvlistValue"),
                        Just("values"),
                        Just("x"),
                    ]
                    .prop_map(str::to_owned),
                    inner,
                ),
                0..5,
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_envelopes_read_the_same(v in otlp_like(), w in otlp_like()) {
        let one = json!({"resourceSpans": [{"scopeSpans": [{"spans": [v.clone()]}]}, w.clone()]});
        same(&one.to_string());
        same(&json!([v.clone(), w.clone()]).to_string());
        same(&format!("{v}\n{w}"));
        same(&v.to_string());
    }
}
