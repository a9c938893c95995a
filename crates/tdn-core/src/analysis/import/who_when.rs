//! Who&When benchmark files (multi-agent failure attribution): `question`, `ground_truth`,
//! `history` (`content`, `role`, and in the Algorithm-Generated set `name`), the failure labels
//! `mistake_agent`, `mistake_step` (a string holding a 0-based index into `history`) and
//! `mistake_reason`.
//!
//! Exactly one step per history message, in order, so a step's `index` is the label's position.
//! The labels are kept under `attributes.whowhen` for `eval` and are never read by the analysis.
//! Pure: no I/O, no panic on any input.

mod magentic;

use super::{ImportError, ImportedRun, Importer, SourceFormat, chat};
use crate::analysis::document::Document;
use crate::analysis::model::{RUN_FORMAT, value_text};
use serde_json::{Map, Value, json};

/// The Who&When importer.
pub struct WhoWhen;

/// The name given to the tool of a code-execution step.
pub const CODE_TOOL: &str = "execute_code";
/// Dataset fields kept under `attributes.whowhen`.
const KEPT: &[&str] = &[
    "question_ID",
    "level",
    "is_correct",
    "is_corrected",
    "mistake_agent",
    "mistake_step",
    "mistake_reason",
    "mistake_type",
    "labels",
];
const MAX_ERROR_CHARS: usize = 300;
const MAX_TITLE_CHARS: usize = 80;

/// A Who&When file, as the import reads it.
const WHO_WHEN: super::Listing = super::Listing {
    key: "history",
    is_one: "a Who&When file holds one JSON object",
    lists: "a Who&When file lists its messages there",
};

impl Importer for WhoWhen {
    fn format(&self) -> SourceFormat {
        SourceFormat::WhoWhen
    }

    fn looks_for(&self) -> &'static str {
        "an object with a \"history\" array and one of question, ground_truth, mistake_step, mistake_agent"
    }

    fn sniff(&self, doc: &Document) -> bool {
        match doc {
            Document::One(v @ Value::Object(o)) => {
                v.get("history").is_some_and(Value::is_array)
                    && ["question", "ground_truth", "mistake_step", "mistake_agent"]
                        .iter()
                        .any(|k| o.contains_key(*k))
            }
            _ => false,
        }
    }

    fn import(
        &self,
        doc: Document,
        _index: Option<usize>,
    ) -> Result<Vec<ImportedRun>, ImportError> {
        WHO_WHEN.import(doc, |v, history| {
            ImportedRun::new(build_run(v, history), Vec::new())
        })
    }
}

/// How one message is read.
struct Message {
    text: String,
    role: String,
    agent: Option<String>,
    kind: &'static str,
    /// The message carries a `name` (an AutoGen group chat).
    named: bool,
}

fn read_message(m: &Value) -> Message {
    let text = m.get("content").map(value_text).unwrap_or_default();
    let role = chat::str_at(m, "role").unwrap_or_default().to_owned();
    let name = chat::str_at(m, "name").and_then(chat::non_empty);
    // "Orchestrator (thought)" and "Orchestrator (-> WebSurfer)" are the Orchestrator speaking.
    let from_role = role.split(" (").next().and_then(chat::non_empty);
    let is_user = name.is_none() && chat::message_role(m) == Some("user");
    let agent = if is_user { None } else { name.or(from_role) };
    let terminal = agent
        .as_deref()
        .is_some_and(|a| a.to_ascii_lowercase().contains("terminal"));
    let kind = if is_user {
        "user"
    } else if role == "system" || role.contains("(termination condition)") {
        "system"
    } else if text.trim_start().starts_with("exitcode:") {
        "tool"
    } else if terminal {
        if nothing_ran(&text) { "system" } else { "tool" }
    } else {
        "agent"
    };
    Message {
        text,
        role,
        agent,
        kind,
        named: chat::str_at(m, "name").and_then(chat::non_empty).is_some(),
    }
}

/// The exit code an execution result reports: AutoGen's `exitcode: N` or Magentic-One's
/// `exited with Unix exit code: N`, on the first line. A message is taken as an execution result
/// only when it starts with `exitcode:` or comes from an agent named like a terminal.
fn exit_code(text: &str) -> Option<i64> {
    let first = text.trim_start().lines().next()?;
    let after = if let Some(rest) = first.strip_prefix("exitcode:") {
        rest
    } else {
        let at = first.find("exit code:")?;
        first.get(at + "exit code:".len()..)?
    };
    let digits: String = after
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// An executor saying there was no code to run.
fn nothing_ran(text: &str) -> bool {
    let t = text.trim_start().to_ascii_lowercase();
    t.starts_with("there is no code") || t.starts_with("no code block")
}

/// The error of an execution result: a non-zero exit code, or a traceback without one.
fn execution_error(text: &str) -> Option<String> {
    let failed = match exit_code(text) {
        Some(code) => code != 0,
        None => text.contains("Traceback (most recent call last)"),
    };
    if !failed {
        return None;
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let line = lines
        .iter()
        .rev()
        .find(|l| l.contains("Error") || l.contains("Exception") || l.contains("error"))
        .or(lines.last())
        .copied()
        .unwrap_or("the code failed");
    let mut msg = match exit_code(text) {
        Some(code) => format!("exit code {code}: {line}"),
        None => line.to_owned(),
    };
    if let Some((cut, _)) = msg.char_indices().nth(MAX_ERROR_CHARS) {
        msg.truncate(cut);
        msg.push('…');
    }
    Some(msg)
}

/// The bodies of the fenced code blocks of a message, without their language line.
fn code_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find("```") {
        let after = rest.get(a + 3..).unwrap_or_default();
        let Some(b) = after.find("```") else { break };
        let block = after.get(..b).unwrap_or_default();
        let body = match block.find('\n') {
            Some(nl) if !block.get(..nl).unwrap_or_default().trim().contains(' ') => {
                block.get(nl + 1..).unwrap_or_default()
            }
            _ => block,
        };
        if !body.trim().is_empty() {
            out.push(body);
        }
        rest = after.get(b + 3..).unwrap_or_default();
    }
    out
}

/// The search a browsing agent reports on its first line: `I typed 'QUERY' into …` (Magentic-One's
/// web surfer) or `Address: bing: QUERY` (a text browser's search page).
fn typed_query(text: &str) -> Option<&str> {
    let first = text.trim_start().lines().next()?;
    let q = if let Some(rest) = first.strip_prefix("I typed '") {
        rest.get(..rest.rfind("' into")?)?
    } else {
        first.strip_prefix("Address: bing: ")?
    };
    let q = q.trim();
    (!q.is_empty()).then_some(q)
}

fn step_id(i: usize) -> String {
    format!("h{i}")
}

fn build_run(v: &Value, history: &[Value]) -> Value {
    let messages: Vec<Message> = history.iter().map(read_message).collect();
    let mut steps = Vec::with_capacity(messages.len());
    // Where the last execution result sits, so each looks back only to the one before it.
    let mut last_tool: Option<usize> = None;
    for (i, m) in messages.iter().enumerate() {
        let mut step = Map::new();
        step.insert("id".to_owned(), Value::String(step_id(i)));
        step.insert("kind".to_owned(), Value::String(m.kind.to_owned()));
        if let Some(a) = &m.agent {
            step.insert("agent".to_owned(), Value::String(a.clone()));
            if !m.role.is_empty() && m.role != *a && m.role.starts_with(a.as_str()) {
                step.insert("name".to_owned(), Value::String(m.role.clone()));
            }
        }
        step.insert("output".to_owned(), Value::String(m.text.clone()));
        let mut attributes = Map::new();
        attributes.insert("role".to_owned(), Value::String(m.role.clone()));
        if m.kind == "agent" {
            read_magentic(m, &mut attributes);
        }
        if m.kind == "tool" {
            let from = (last_tool.map_or(0, |t| t + 1)..i).rev().find(|&j| {
                messages
                    .get(j)
                    .is_some_and(|p| p.kind != "tool" && !code_blocks(&p.text).is_empty())
            });
            let mut tool = Map::new();
            tool.insert("name".to_owned(), Value::String(CODE_TOOL.to_owned()));
            if let Some(j) = from
                && let Some(p) = messages.get(j)
            {
                let code = code_blocks(&p.text).join("\n");
                tool.insert("arguments".to_owned(), json!({ "code": code }));
                attributes.insert("code_from".to_owned(), Value::String(step_id(j)));
            }
            step.insert("tool".to_owned(), Value::Object(tool));
            if let Some(e) = execution_error(&m.text) {
                step.insert("error".to_owned(), Value::String(e));
            }
            last_tool = Some(i);
        }
        step.insert("attributes".to_owned(), Value::Object(attributes));
        steps.push(Value::Object(step));
    }

    let mut run = Map::new();
    run.insert("format".to_owned(), Value::String(RUN_FORMAT.to_owned()));
    let id = v
        .get("question_ID")
        .map(value_text)
        .and_then(|s| chat::non_empty(&s))
        .unwrap_or_else(|| "whowhen".to_owned());
    run.insert("id".to_owned(), Value::String(id));
    let question = v
        .get("question")
        .map(value_text)
        .and_then(|s| chat::non_empty(&s));
    if let Some(q) = &question {
        let first = q.lines().next().unwrap_or_default();
        let mut title: String = first.chars().take(MAX_TITLE_CHARS).collect();
        if first.chars().nth(MAX_TITLE_CHARS).is_some() {
            title.push('…');
        }
        run.insert("title".to_owned(), Value::String(title));
    }
    let why = match v.get("is_correct").and_then(Value::as_bool) {
        Some(false) => "the record says is_correct: false",
        _ => "every run of the Who&When benchmark failed",
    };
    super::outcome::Said::new("failed", why).write(&mut run);
    if let Some(q) = question {
        run.insert("task".to_owned(), Value::String(q));
    }
    if let Some(a) = final_answer(&messages) {
        run.insert("final_answer".to_owned(), Value::String(a));
    }
    if let Some(gt) = v
        .get("ground_truth")
        .map(value_text)
        .and_then(|s| chat::non_empty(&s))
    {
        run.insert("reference_answer".to_owned(), Value::String(gt));
    }
    if let Some(Value::Object(prompts)) = v.get("system_prompt") {
        let units: Vec<Value> = prompts
            .iter()
            .map(|(agent, text)| {
                json!({"id": format!("system_prompt:{agent}"), "kind": "instruction",
                       "text": value_text(text)})
            })
            .collect();
        run.insert("context_units".to_owned(), Value::Array(units));
    }
    let team = messages
        .iter()
        .filter(|m| m.kind == "agent")
        .map(|m| magentic::team(&m.text))
        .find(|t| t.len() >= 2);
    let mut labels = Map::new();
    for key in KEPT {
        if let Some(x) = v.get(*key) {
            labels.insert((*key).to_owned(), x.clone());
        }
    }
    let mut attributes = Map::new();
    if !labels.is_empty() {
        attributes.insert("whowhen".to_owned(), Value::Object(labels));
    }
    if let Some(team) = team {
        attributes.insert(
            "agents".to_owned(),
            Value::Array(team.into_iter().map(Value::String).collect()),
        );
    }
    run.insert("attributes".to_owned(), Value::Object(attributes));
    run.insert("steps".to_owned(), Value::Array(steps));
    Value::Object(run)
}

/// A multi-agent log given as a bare list of messages (Magentic-One writes `[{"role":
/// "Orchestrator (thought)", "content": ...}]`), read exactly as a Who&When history is: one step
/// per message, agents from the roles, reviews, pages, the team. The task is the first message
/// from `human` or `user`; the run's id is `id`.
pub(super) fn history_run(history: &[Value], id: &str) -> Value {
    let question = history
        .iter()
        .find(|m| chat::message_role(m) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(value_text)
        .unwrap_or_default();
    let mut run = build_run(&json!({ "question": question }), history);
    if let Some(o) = run.as_object_mut() {
        o.insert("id".to_owned(), Value::String(id.to_owned()));
    }
    run
}

/// What an agent message of a Magentic-One log says beyond its text, kept in `attributes`: the
/// search it typed (`query`), the agent an instruction addresses (`to`), the verdicts of a
/// progress ledger (`review`), and the page a browsing agent ended on (`url`, `page_title`).
fn read_magentic(m: &Message, attributes: &mut Map<String, Value>) {
    if let Some(q) = typed_query(&m.text) {
        attributes.insert("query".to_owned(), Value::String(q.to_owned()));
    }
    if let Some(to) = magentic::addressee(&m.role) {
        attributes.insert("to".to_owned(), Value::String(to.to_owned()));
    }
    if let Some(r) = magentic::review(&m.text) {
        attributes.insert("review".to_owned(), r);
    }
    if let Some((title, url)) = magentic::page(&m.text) {
        attributes.insert("url".to_owned(), Value::String(url));
        if !title.is_empty() {
            attributes.insert("page_title".to_owned(), Value::String(title));
        }
    }
}

/// The answer the system gave: the text after the last `FINAL ANSWER:` (Magentic-One's
/// convention), else, in an AutoGen group chat (messages carry `name`), the last agent message
/// with `TERMINATE` removed that still says something (letters or digits). A log of roles only (Magentic-One) that never wrote `FINAL ANSWER:`
/// stopped before answering: it has no final answer.
fn final_answer(messages: &[Message]) -> Option<String> {
    const MARK: &str = "FINAL ANSWER:";
    let marked = messages.iter().rev().find_map(|m| {
        let at = m.text.rfind(MARK)?;
        let after = m.text.get(at + MARK.len()..)?;
        chat::non_empty(after.lines().next().unwrap_or_default())
    });
    marked.or_else(|| {
        messages
            .iter()
            .rev()
            .filter(|m| m.kind == "agent" && m.named)
            .find_map(|m| {
                // "**TERMINATE**" leaves markup, not an answer.
                chat::non_empty(&m.text.replace("TERMINATE", ""))
                    .filter(|t| t.chars().any(char::is_alphanumeric))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_read_from_both_executors() {
        assert_eq!(
            exit_code("exitcode: 1 (execution failed)\nCode output: x"),
            Some(1)
        );
        assert_eq!(exit_code("exitcode: 0 (execution succeeded)"), Some(0));
        assert_eq!(
            exit_code("The script ran, then exited with Unix exit code: 2\nIts output was:"),
            Some(2)
        );
        assert_eq!(exit_code("I ran the numbers: exit code: soon"), None);
        assert_eq!(exit_code("plain text"), None);
    }

    #[test]
    fn execution_errors_name_the_exit_code_and_the_error_line() {
        let t = "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n  File \"x.py\", line 1\nNameError: name 'Image' is not defined\n";
        assert_eq!(
            execution_error(t).as_deref(),
            Some("exit code 1: NameError: name 'Image' is not defined")
        );
        assert_eq!(
            execution_error("exitcode: 0 (execution succeeded)\nCode output: 42"),
            None
        );
        assert_eq!(
            execution_error("Traceback (most recent call last):\nKeyError: 'a'").as_deref(),
            Some("KeyError: 'a'")
        );
    }

    #[test]
    fn code_blocks_drop_their_language_line() {
        let t = "Run this:\n```python\nprint(1)\n```\nthen\n```sh\nls\n```\n```\nraw\n```";
        assert_eq!(code_blocks(t), vec!["print(1)\n", "ls\n", "raw\n"]);
        assert!(code_blocks("no fences ``` here").is_empty());
    }

    #[test]
    fn a_browsing_agent_s_search_is_read_from_its_first_line() {
        assert_eq!(
            typed_query("I typed 'gyms near the park' into '0 characters out of 2000'.\nHere is"),
            Some("gyms near the park")
        );
        assert_eq!(
            typed_query(
                "I typed 'Michael Jackson 'Human Nature' lyrics' into the browser search bar."
            ),
            Some("Michael Jackson 'Human Nature' lyrics")
        );
        assert_eq!(
            typed_query("Address: bing: dragon page history\nTitle: x"),
            Some("dragon page history")
        );
        assert_eq!(typed_query("I clicked 'Details'."), None);
        assert_eq!(typed_query("I typed 'x' somewhere"), None);
    }

    #[test]
    fn a_magentic_one_log_keeps_its_team_instructions_reviews_and_pages() {
        let v = json!({"question": "q", "history": [
            {"role": "human", "content": "q"},
            {"role": "Orchestrator (thought)", "content": "Initial plan:\nwe have assembled the following team:\n\nAssistant: helps.\nWebSurfer: browses.\n\nPlan: search."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Please search for q."},
            {"role": "WebSurfer", "content": "I typed 'q' into the search bar.\n\nHere is a screenshot of [q - Search](https://bing.com/?q=q). The viewport"},
            {"role": "Orchestrator (thought)", "content": "Updated Ledger:\n{\"is_progress_being_made\": {\"reason\": \"nothing new\", \"answer\": false}}"},
            {"role": "WebSurfer", "content": "Error processing publish message\nTraceback (most recent call last):"}
        ]});
        let run = build_run(
            &v,
            v["history"].as_array().map_or(&[][..], |h| h.as_slice()),
        );
        assert_eq!(
            run["attributes"]["agents"],
            json!(["Assistant", "WebSurfer"])
        );
        let steps = &run["steps"];
        assert_eq!(steps[2]["attributes"]["to"], "WebSurfer");
        assert_eq!(steps[3]["attributes"]["url"], "https://bing.com/?q=q");
        assert_eq!(steps[3]["attributes"]["page_title"], "q - Search");
        assert_eq!(
            steps[4]["attributes"]["review"],
            json!({"progress": false, "reason": "nothing new"})
        );
        // A log of roles only that never wrote FINAL ANSWER stopped before answering.
        assert!(run.get("final_answer").is_none());
    }

    #[test]
    fn a_group_chat_answers_with_its_last_named_message() {
        let v = json!({"question": "q", "history": [
            {"name": "Expert", "role": "user", "content": "It is 42. TERMINATE"}
        ]});
        let run = build_run(
            &v,
            v["history"].as_array().map_or(&[][..], |h| h.as_slice()),
        );
        assert_eq!(run["final_answer"], "It is 42.");
        assert!(run["attributes"].get("agents").is_none());
    }

    #[test]
    fn a_closing_message_of_markup_only_is_not_the_answer() {
        let v = json!({"question": "q", "history": [
            {"name": "Expert", "role": "user", "content": "It is 42. TERMINATE"},
            {"name": "Expert", "role": "user", "content": "**TERMINATE**"}
        ]});
        let run = build_run(
            &v,
            v["history"].as_array().map_or(&[][..], |h| h.as_slice()),
        );
        assert_eq!(run["final_answer"], "It is 42.");
    }

    #[test]
    fn roles_map_to_agents_and_kinds() {
        let m = read_message(&json!({"role": "Orchestrator (-> WebSurfer)", "content": "go"}));
        assert_eq!(
            (m.agent.as_deref(), m.kind),
            (Some("Orchestrator"), "agent")
        );
        let m = read_message(&json!({"role": "human", "content": "q"}));
        assert_eq!((m.agent, m.kind), (None, "user"));
        let m = read_message(&json!({"name": "Computer_terminal", "role": "user",
            "content": "There is no code from the last 1 message for me to execute."}));
        assert_eq!(m.kind, "system");
        let m = read_message(&json!({"name": "Expert", "role": "user", "content": null}));
        assert_eq!((m.kind, m.text.as_str()), ("agent", ""));
    }
}
