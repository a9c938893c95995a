//! docs/influence.md §10, beyond the parity fixtures: FILE, `-` and stdin; non-finite strings;
//! duplicate ids; option validation (`--margin` with `--ratio`, `-0`, `Infinity`, NaN);
//! validation order of the scorers; embedder failures; huge inputs; no config file read.

use super::support::{fails, ok_json, run, run_stdin, write};
use serde_json::{Value, json};
use std::process::Output;

fn toolbox(args: &[&str], input: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    run_stdin(dir.path(), args, input.as_bytes())
}

#[test]
fn the_confidence_toolbox_beyond_the_fixtures() {
    let two = r#"{"scores": [{"id": "a", "score": 0.9}, {"id": "b", "score": 0.5}]}"#;
    // FILE, '-' and stdin give the same answer.
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "in.json", two);
    let from_file = ok_json(&run(&["confidence", &f]));
    assert_eq!(ok_json(&toolbox(&["confidence", "-"], two)), from_file);
    assert_eq!(ok_json(&toolbox(&["confidence"], two)), from_file);
    assert_eq!(from_file["strategy"], "margin>=0.05");
    // Duplicate ids are allowed; non-finite strings rank last.
    let v = ok_json(&toolbox(
        &["confidence"],
        r#"{"scores": [{"id": "a", "score": "NaN"}, {"id": "a", "score": 0.2},
                       {"id": "c", "score": "Infinity"}, {"id": "d", "score": "-Infinity"}]}"#,
    ));
    assert_eq!(
        (&v["lead"], &v["clear_winner"]),
        (&json!("a"), &json!(true))
    );
    assert_eq!(
        v["margin"],
        Value::Null,
        "the runner-up has no usable score"
    );
    // Other strings, null and missing scores are exit 2 naming the entry.
    for bad in [r#""0.5""#, "null", "true", r#""nan""#, r#""inf""#] {
        let input = format!(r#"{{"scores": [{{"id": "a", "score": {bad}}}]}}"#);
        fails(&toolbox(&["confidence"], &input), 2, "scores[0]");
    }
    fails(
        &toolbox(&["confidence"], r#"{"scores": [{"id": "a"}]}"#),
        2,
        "scores[0]",
    );
    fails(&toolbox(&["confidence"], r#"{"score": []}"#), 2, "scores");
    fails(&toolbox(&["confidence"], "[]"), 2, "object");
    fails(&toolbox(&["confidence"], ""), 2, "JSON");
    // Options: both strategies is exit 2; negative or NaN values reach validation, even with no
    // scores; -0 and Infinity are values.
    let empty = r#"{"scores": []}"#;
    fails(
        &toolbox(&["confidence", "--margin", "0.1", "--ratio", "0.1"], empty),
        2,
        "--margin",
    );
    fails(
        &toolbox(&["confidence", "--margin", "-1"], empty),
        2,
        "--margin",
    );
    fails(
        &toolbox(&["confidence", "--ratio", "NaN"], empty),
        2,
        "--ratio",
    );
    fails(
        &toolbox(&["confidence", "--band", "-0.5"], empty),
        2,
        "--band",
    );
    fails(
        &toolbox(&["confidence", "--band", "wide"], empty),
        2,
        "--band",
    );
    let v = ok_json(&toolbox(
        &["confidence", "--band", "-0", "--margin", "-0"],
        two,
    ));
    assert_eq!(v["strategy"], "margin>=0");
    assert_eq!(v["shortlist"], json!(["a"]), "band 0 keeps only the lead");
    let v = ok_json(&toolbox(&["confidence", "--ratio", "inf"], two));
    assert_eq!(
        (&v["strategy"], &v["clear_winner"]),
        (&json!("ratio>=Infinity"), &json!(false))
    );
    let v = ok_json(&toolbox(&["confidence", "--margin", "0.0000001"], two));
    assert_eq!(v["strategy"], "margin>=1e-7");
    let v = ok_json(&toolbox(&["confidence", "--band", "Infinity"], two));
    assert_eq!(v["shortlist"], json!(["a", "b"]));
    // Unknown fields are ignored, so influence output can be piped in.
    let v = ok_json(&toolbox(
        &["confidence"],
        r#"{"ranked_by": "x", "scores": [{"id": "a", "score": 1, "signals": {}}], "extra": 1}"#,
    ));
    assert_eq!(v["lead"], "a");
    // 100,000 scores.
    let many: Vec<Value> = (0..100_000)
        .map(|i| json!({"id": format!("u{i}"), "score": f64::from(i % 997) / 997.0}))
        .collect();
    let v = ok_json(&toolbox(
        &["confidence"],
        &json!({"scores": many}).to_string(),
    ));
    assert_eq!(v["lead"], "u996");
}

#[test]
fn the_influence_and_dropped_toolbox_beyond_the_fixtures() {
    let dup_and_bad_weight = r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
        "weights": {"fa": "NaN", "avg": 0, "persist": 0, "depth": 0}}"#;
    // Semantic checks weights first; contrastive checks ids first.
    fails(&toolbox(&["influence"], dup_and_bad_weight), 2, "fa");
    let with_ref = dup_and_bad_weight.replacen("\"answer\"", "\"reference\": \"r\", \"answer\"", 1);
    fails(&toolbox(&["influence"], &with_ref), 2, "'a'");
    for w in [r#""Infinity""#, r#""-Infinity""#, "-0.5", r#""0.4""#] {
        let input = format!(
            r#"{{"answer": "x", "evidence": [{{"id": "a", "text": "x"}}],
                "weights": {{"fa": 0.4, "avg": 0.3, "persist": {w}, "depth": 0.1}}}}"#
        );
        fails(&toolbox(&["influence"], &input), 2, "persist");
    }
    fails(
        &toolbox(
            &["influence"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}], "weights": {"fa": 1, "avg": 0, "persist": 0}}"#,
        ),
        2,
        "depth",
    );
    fails(
        &toolbox(
            &["influence", "--scorer", "contrastive"],
            r#"{"answer": "x", "evidence": []}"#,
        ),
        2,
        "reference",
    );
    fails(&toolbox(&["influence"], r#"{"evidence": []}"#), 2, "answer");
    fails(
        &toolbox(
            &["influence", "--margin", "1", "--ratio", "1"],
            r#"{"answer": "x", "evidence": []}"#,
        ),
        2,
        "--ratio",
    );
    fails(
        &toolbox(
            &["influence", "--embedder", "bogus"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "x"}]}"#,
        ),
        2,
        "--embedder",
    );
    // An embedder that fails is exit 1.
    fails(
        &toolbox(
            &["influence", "--embedder", "cmd:echo broken >&2; exit 3"],
            r#"{"answer": "x", "evidence": [{"id": "a", "text": "y"}]}"#,
        ),
        1,
        "broken",
    );
    // Any persistence threshold is accepted; the lexical scorer ignores --embedder.
    let v = ok_json(&toolbox(
        &["influence", "--scorer", "lexical", "--embedder", "bogus"],
        r#"{"answer": "refund policy", "evidence": [{"id": "a", "text": "refund policy", "ancestors": ["refund"]}],
            "persistence_threshold": -5}"#,
    ));
    assert_eq!(
        (&v["ranked_by"], &v["embedder"]),
        (&json!("lexical"), &Value::Null)
    );
    assert_eq!(v["scores"][0]["signals"]["persist"], 1.0);
    // `--scorer semantic --embedder lexical` equals `--scorer lexical` (influence.md §1).
    let input = r#"{"answer": "The office opens at 9:00 on weekdays", "evidence": [
        {"id": "a", "text": "Berlin office opens at 9:00", "ancestors": ["The office opens at nine"]},
        {"id": "b", "text": "Parking is free on weekdays", "ancestors": []}]}"#;
    let lex = ok_json(&toolbox(&["influence", "--scorer", "lexical"], input));
    let sem = ok_json(&toolbox(
        &["influence", "--scorer", "semantic", "--embedder", "lexical"],
        input,
    ));
    for (a, b) in lex["scores"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sem["scores"].as_array().unwrap())
    {
        assert_eq!(a["id"], b["id"]);
        assert!((a["score"].as_f64().unwrap() - b["score"].as_f64().unwrap()).abs() < 1e-12);
    }
    // Huge input: 2,000 items with 5 ancestors each.
    let ev: Vec<Value> = (0..2_000)
        .map(|i| {
            json!({"id": format!("e{i}"), "text": format!("evidence {i} about refunds"),
                        "ancestors": ["a", "b", "c", "d", format!("e {i}")]})
        })
        .collect();
    let v = ok_json(&toolbox(
        &["influence", "--embedder", "mock"],
        &json!({"answer": "refunds", "evidence": ev}).to_string(),
    ));
    assert_eq!(v["scores"].as_array().unwrap().len(), 2_000);
    // dropped: first occurrence wins, sent-only ids count, bare strings are ids.
    let v = ok_json(&toolbox(
        &["dropped"],
        r#"{"available": ["a", {"id": "b", "content": "B"}, {"id": "a", "content": "A2"}, {"id": "c", "content": "C"}],
            "sent": ["b", {"id": "extra"}], "note": 1}"#,
    ));
    assert_eq!(
        v["dropped"],
        json!([{"id": "a"}, {"id": "c", "content": "C"}])
    );
    assert_eq!(
        (&v["available_count"], &v["sent_count"]),
        (&json!(3), &json!(2))
    );
    fails(
        &toolbox(&["dropped"], r#"{"available": [5], "sent": []}"#),
        2,
        "available[0]",
    );
}

#[test]
fn the_toolbox_reads_no_config_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tdn.toml"),
        "[embedder]\nname = \"mock\"\n[confidence]\nstrategy = \"ratio:0.5\"\nband = 5\n",
    )
    .unwrap();
    let v = ok_json(&run_stdin(
        dir.path(),
        &["influence"],
        br#"{"answer": "refund policy", "evidence": [{"id": "a", "text": "refund"}]}"#,
    ));
    assert_eq!(v["embedder"], "hashed");
    assert_eq!(v["confidence"]["strategy"], "margin>=0.05");
    let v = ok_json(&run_stdin(
        dir.path(),
        &["confidence"],
        br#"{"scores": [{"id": "a", "score": 1}, {"id": "b", "score": 0.5}]}"#,
    ));
    assert_eq!(
        (&v["strategy"], &v["shortlist"]),
        (&json!("margin>=0.05"), &json!(["a"]))
    );
}
