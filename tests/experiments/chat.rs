//! The built-in chat runner (`tdn-tui runner chat`) against a stand-in OpenAI-compatible
//! endpoint: a small HTTP server on 127.0.0.1, started inside the test, that answers from what
//! the prompt holds (the revenue figure of the last document pasted into it, or "I don't know"
//! without one) and records every request. No network. Also: its one-line errors, and the
//! run a runner gets for an imported trace (`tdn.run/1`, converted).

use crate::support::Scenario;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

const RAG: &str = "rag-revenue.json";
const KEY: &str = "sk-test-5ecret-do-not-print";

/// How the stand-in answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A chat completion answering from the prompt.
    Answer,
    /// 401, as an endpoint refusing the key does (echoing part of it, as some do).
    RefuseKey,
    /// 200 with an HTML page (a base URL that is not the API).
    Html,
    /// A chat completion that says `answer` when some message of the prompt holds `fact`, else
    /// "I don't know.": a model that answers from what it was sent.
    Knows {
        fact: &'static str,
        answer: &'static str,
    },
}

/// The stand-in endpoint: its base URL and the requests it received (body and headers).
struct Endpoint {
    url: String,
    seen: Arc<Mutex<Vec<(Value, String)>>>,
}

impl Endpoint {
    fn start(mode: Mode) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let log = Arc::clone(&log);
                std::thread::spawn(move || serve(stream, mode, &log));
            }
        });
        Endpoint { url, seen }
    }

    fn requests(&self) -> Vec<(Value, String)> {
        self.seen.lock().unwrap().clone()
    }
}

/// The revenue figure of the last "$N billion" in the prompt's user messages, else of the last
/// "revenue of N billion dollars" (as the imported RAG trace writes it).
fn figure(body: &Value) -> Option<String> {
    let text: String = body["messages"]
        .as_array()?
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let dollars = text
        .rfind(" billion")
        .and_then(|end| Some((text[..end].rfind('$')?, end)));
    if let Some((start, end)) = dollars {
        return Some(text[start..end + " billion".len()].to_owned());
    }
    let start = text.rfind("revenue of ")? + "revenue of ".len();
    let end = start + text[start..].find(" billion dollars")?;
    Some(text[start..end + " billion dollars".len()].to_owned())
}

/// A chat completion whose one choice says `content`, with a fixed token count.
fn completion(content: &str) -> String {
    json!({"id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}})
    .to_string()
}

fn serve(stream: TcpStream, mode: Mode, log: &Mutex<Vec<(Value, String)>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        headers.push_str(&line);
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.lock().unwrap().push((body.clone(), headers));
    let (status, content_type, reply) = match mode {
        Mode::RefuseKey => (
            "401 Unauthorized",
            "application/json",
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string(),
        ),
        Mode::Html => (
            "200 OK",
            "text/html",
            "<html><body>Welcome</body></html>".to_owned(),
        ),
        Mode::Knows { fact, answer } => {
            let content = if body["messages"].to_string().contains(fact) {
                answer.to_owned()
            } else {
                "I don't know.".to_owned()
            };
            ("200 OK", "application/json", completion(&content))
        }
        Mode::Answer => {
            let content = match figure(&body) {
                Some(f) => format!("Meta's revenue in 2023 was {f}."),
                None => "I don't know.".to_owned(),
            };
            ("200 OK", "application/json", completion(&content))
        }
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
        reply.len()
    );
}

/// A scenario folder holding the RAG run, with `tdn-tui` on the PATH (as a user's shell has it)
/// and the chat runner pointed at `url`.
fn scenario() -> Scenario {
    let s = Scenario::new();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/experiments");
    std::fs::copy(fixtures.join(RAG), s.path(RAG)).unwrap();
    s
}

fn with_chat_env(c: &mut Command, url: Option<&str>) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_tdn-tui"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.env("PATH", path)
        .env_remove("OPENAI_API_KEY")
        .env_remove("TDN_CHAT_MODEL")
        .env_remove("TDN_CHAT_TEMPERATURE");
    for p in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        c.env_remove(p);
    }
    match url {
        Some(u) => c.env("TDN_CHAT_URL", u).env("TDN_CHAT_KEY", KEY),
        None => c.env_remove("TDN_CHAT_URL").env_remove("TDN_CHAT_KEY"),
    };
}

fn experiment(s: &Scenario, url: &str, args: &[&str]) -> (i32, Value, String) {
    experiment_on(s, RAG, url, args)
}

fn experiment_on(s: &Scenario, run: &str, url: &str, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec![
        "experiment",
        run,
        "--runner",
        "tdn-tui runner chat",
        "--yes",
        "--json",
    ];
    all.extend_from_slice(args);
    let mut c = s.command(&all);
    with_chat_env(&mut c, Some(url));
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let j = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {err}"));
    (out.status.code().unwrap_or(-1), j, err)
}

fn holds_figure(body: &Value, f: &str) -> bool {
    body["messages"].to_string().contains(f)
}

#[test]
fn ablating_the_document_the_answer_quotes_is_a_confirmed_cause_of_that_calls_output() {
    let s = scenario();
    let ep = Endpoint::start(Mode::Answer);
    let (code, j, err) = experiment(&s, &ep.url, &["--ablate", "doc-2022"]);
    assert_eq!(code, 0, "{err}\n{j}");
    assert_eq!(j["verdict"], "confirmed", "{j}");
    assert_eq!(j["baseline"]["stable"], true, "{j}");
    assert_eq!(j["replayed_call"], "s3");
    let claim = j["claim"].as_str().unwrap();
    assert!(
        claim.starts_with(
            "CAUSAL: removing 'doc-2022' changed the output of model call 's3' in 3/3 re-sends"
        ) && claim.contains("not about the whole run's answer"),
        "{claim}"
    );
    assert_eq!(j["attributions"][0]["disposition"], "harmful", "{j}");
    // The endpoint saw the baseline calls with the document and the ablated ones without it,
    // each with the recorded model, the sample's seed and the key as a Bearer token.
    let seen = ep.requests();
    assert_eq!(seen.len(), 6);
    let with: Vec<&Value> = seen
        .iter()
        .map(|(b, _)| b)
        .filter(|b| holds_figure(b, "$116.6 billion"))
        .collect();
    assert_eq!(with.len(), 3, "three baseline calls hold the document");
    let mut seeds: Vec<u64> = with.iter().map(|b| b["seed"].as_u64().unwrap()).collect();
    seeds.sort_unstable();
    assert_eq!(seeds, [0, 1, 2]);
    for (b, headers) in &seen {
        assert_eq!(b["model"], "gpt-4o-mini");
        assert!(
            b["messages"]
                .to_string()
                .contains("What was Meta's revenue in 2023?")
        );
        assert!(
            headers.to_ascii_lowercase().contains(&format!(
                "authorization: bearer {}",
                KEY.to_ascii_lowercase()
            )),
            "{headers}"
        );
    }
    // Restoring the dropped 2023 filing moves the answer to its figure: confirmed too, under a
    // flip rule on the figure (the two answers differ in it alone, which the default wording
    // similarity does not see: docs/experiments.md, "When is a sample a flip?").
    let (code, j, err) = experiment(
        &s,
        &ep.url,
        &["--restore", "doc-2023", "--flip", "contains:$116.6"],
    );
    assert_eq!(
        (code, &j["verdict"]),
        (0, &json!("confirmed")),
        "{err}\n{j}"
    );
    let restored = ep.requests();
    assert!(
        restored[6..]
            .iter()
            .filter(|(b, _)| holds_figure(b, "$134.9 billion"))
            .count()
            == 3
    );
    // The ledger verifies and nowhere holds the key.
    let out = s.tdn(&["ledger", "verify", "rag-revenue.ledger.jsonl"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let ledger = std::fs::read_to_string(s.path("rag-revenue.ledger.jsonl")).unwrap();
    assert!(!ledger.contains(KEY) && !err.contains(KEY));
}

/// `tdn-tui runner chat` alone, as tdn-tui starts it: the spec on stdin.
fn runner(s: &Scenario, url: Option<&str>, run: &str, kind: &str) -> Output {
    let spec = json!({"run": s.path(run).display().to_string(), "run_id": "r", "experiment": kind,
        "remove": if kind == "ablate" { json!(["doc-2022"]) } else { json!([]) },
        "restore": [], "from_step": null, "patch": null, "seed": 1, "sample": 1});
    let mut c = s.command(&["runner", "chat"]);
    with_chat_env(&mut c, url);
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn one_line_error(out: &Output, code: i32, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(out.stdout.is_empty(), "no answer on an error");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tdn-tui runner chat: ") && err.contains(says),
        "{err}"
    );
    assert!(!err.contains(KEY), "the key is never printed: {err}");
}

#[test]
fn the_chat_runner_says_in_one_line_why_it_has_no_answer() {
    let s = scenario();
    let ok = Endpoint::start(Mode::Answer);
    let out = runner(&s, Some(&ok.url), RAG, "ablate");
    assert_eq!(out.status.code(), Some(0));
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        a,
        json!({"output": "I don't know.", "cost": {"tokens": 49.0}, "replayed_call": "s3"})
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut unit 'doc-2022' out of call 's3'"));

    one_line_error(
        &runner(&s, None, RAG, "baseline"),
        2,
        "no chat endpoint: set TDN_CHAT_URL",
    );
    let refused = Endpoint::start(Mode::RefuseKey);
    one_line_error(
        &runner(&s, Some(&refused.url), RAG, "baseline"),
        1,
        "refused the key (HTTP 401)",
    );
    let html = Endpoint::start(Mode::Html);
    one_line_error(&runner(&s, Some(&html.url), RAG, "baseline"), 1, "not JSON");
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    one_line_error(
        &runner(&s, Some(&closed), RAG, "baseline"),
        1,
        "cannot reach the chat endpoint",
    );
    // The refund run records no call's messages: nothing to replay, whatever the endpoint.
    one_line_error(
        &runner(&s, Some(&ok.url), crate::support::RUN, "baseline"),
        2,
        "no recorded call to replay",
    );
}

#[test]
fn a_runner_gets_an_imported_trace_as_a_tdn_run_file_and_the_export_as_source() {
    if !crate::support::python() {
        eprintln!("python3 is not installed: skipping");
        return;
    }
    let s = Scenario::new();
    s.write(
        "chat.json",
        r#"[{"role": "user", "content": "What is 6 x 7?"}, {"role": "assistant", "content": "42"}]"#,
    );
    // The skeleton of docs/experiments.md: read the spec, open spec["run"], answer.
    s.write(
        "skeleton.py",
        "import json, sys\nspec = json.load(sys.stdin)\nrun = json.load(open(spec['run']))\nassert run['format'] == 'tdn.run/1', run.get('format')\nassert spec['source'].endswith('chat.json'), spec['source']\nprint(json.dumps({'output': run['final_answer']}))\n",
    );
    let out = s.tdn(&[
        "experiment",
        "chat.json",
        "--runner",
        "python3 skeleton.py",
        "--baseline",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&j["completed"], &j["baseline"]["stable"]),
        (&json!(3), &json!(true)),
        "{j}"
    );
}

#[test]
fn on_an_imported_rag_trace_the_chat_runner_proves_which_document_the_answer_came_from() {
    // An OpenInference export, as LangChain writes it: the retriever returned three filings, two
    // were pasted into the prompt, the answer quotes the revenue one. Its units come from the
    // import (the documents by their ids); nothing was written for tdn-tui.
    let s = Scenario::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    std::fs::copy(
        fixtures.join("rag-openinference.json"),
        s.path("rag.otlp.json"),
    )
    .unwrap();
    let ep = Endpoint::start(Mode::Answer);
    let (code, j, err) = experiment_on(&s, "rag.otlp.json", &ep.url, &["--ablate", "doc-meta-10k"]);
    assert_eq!(code, 0, "{err}\n{j}");
    assert_eq!(j["baseline"]["stable"], true, "{j}");
    assert_eq!(j["verdict"], "confirmed", "{j}");
    assert_eq!(j["replayed_call"], "a000000000000003", "{j}");
    let seen = ep.requests();
    assert_eq!(seen.len(), 6, "three baseline and three ablated re-sends");
    let holding = |f: &str| seen.iter().filter(|(b, _)| holds_figure(b, f)).count();
    // The cut took out the revenue filing alone: the other pasted filing and the question stay.
    assert_eq!(holding("134.90 billion"), 3);
    assert_eq!(holding("16.12 billion"), 6);
    assert_eq!(holding("What was Meta's revenue in 2023?"), 6);
    for (b, _) in &seen {
        assert_eq!(b["model"], "gpt-4o-mini", "the recorded call's model");
    }
    // Restoring the filing the retriever found but the prompt never got does not move this
    // answer: the verdict says the restoration changed nothing, not that it is a cause.
    let (code, j, err) = experiment_on(
        &s,
        "rag.otlp.json",
        &ep.url,
        &["--restore", "doc-meta-buyback"],
    );
    assert_eq!(code, 0, "{err}\n{j}");
    assert_ne!(j["verdict"], "confirmed", "{j}");
    let claim = j["claim"].as_str().unwrap();
    assert!(
        claim.starts_with(
            "NOT CONFIRMED: restoring 'doc-meta-buyback' did not change the output of model call"
        ) && claim.contains("neither shown to matter nor ruled out"),
        "{claim}"
    );
    let restored = &ep.requests()[6..];
    assert_eq!(restored.len(), 6);
    assert_eq!(
        restored
            .iter()
            .filter(|(b, _)| holds_figure(b, "repurchased 20.02 billion dollars"))
            .count(),
        3,
        "the restored re-sends hold the dropped filing"
    );
    // In words, what was spent is re-sends of that call, not runs of the agent.
    let mut c = s.command(&[
        "experiment",
        "rag.otlp.json",
        "--runner",
        "tdn-tui runner chat",
        "--yes",
        "--ablate",
        "doc-meta-10k",
        "--samples",
        "2",
    ]);
    with_chat_env(&mut c, Some(&ep.url));
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(" over 4 re-sends of model call 'ChatOpenAI' (position 3)")
            && !text.contains("model call 'a000000000000003'")
            && !text.contains("of your agent"),
        "{text}"
    );
    let out = s.tdn(&["ledger", "verify", "rag.otlp.ledger.jsonl"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn on_a_real_langfuse_export_ablating_the_tool_result_the_answer_rests_on_is_confirmed() {
    // The OpenAI Agents SDK's trace as Langfuse exports it: the model called get_weather, the
    // tool said "sunny", the model answered from it. Nothing was written for tdn-tui.
    let s = Scenario::new();
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/real/langfuse/langfuse__openai-agents-2025-09-30.trace.json");
    std::fs::copy(&real, s.path("agents.json")).unwrap();
    let out = s.tdn(&["analyze", "agents.json", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The answer the recorded call gave, which a stand-in that knows the fact gives again.
    let out = s.tdn(&["import", "agents.json", "-o", "converted.json"]);
    assert_eq!(out.status.code(), Some(0));
    let converted: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("converted.json")).unwrap()).unwrap();
    let answer: &'static str = Box::leak(
        converted["final_answer"]
            .as_str()
            .expect("the export records an answer")
            .to_owned()
            .into_boxed_str(),
    );
    let unit = report["influence"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["unit"].as_str())
        .find(|u| u.starts_with("tool_result-"))
        .expect("the tool's result is a context unit")
        .to_owned();
    let ep = Endpoint::start(Mode::Knows {
        fact: "sunny",
        answer,
    });
    let mut c = s.command(&[
        "experiment",
        "agents.json",
        "--runner",
        "tdn-tui runner chat",
        "--yes",
        "--json",
        "--ablate",
        &unit,
    ]);
    with_chat_env(&mut c, Some(&ep.url));
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let j: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {err}"));
    assert_eq!(j["baseline"]["stable"], true, "{err}\n{j}");
    assert_eq!(j["verdict"], "confirmed", "{err}\n{j}");
    let seen = ep.requests();
    assert_eq!(seen.len(), 6);
    for (b, _) in &seen {
        assert_eq!(
            b["model"], "gpt-4.1-2025-04-14",
            "the recorded call's model"
        );
    }
    let holding = seen
        .iter()
        .filter(|(b, _)| b["messages"].to_string().contains("sunny"))
        .count();
    assert_eq!(
        holding, 3,
        "the baseline re-sends hold the result, the ablated ones do not"
    );
    for (b, _) in &seen {
        assert!(
            b["messages"].to_string().contains("Tokyo"),
            "the question stays: {b}"
        );
    }
}
