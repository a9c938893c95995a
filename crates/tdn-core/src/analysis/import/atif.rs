//! ATIF agent trajectories (Harbor, OpenHands, Terminus; `schema_version` `ATIF-v1.x`):
//! `session_id`, `agent` (`name`, `version`, `model_name`, `tool_definitions`), `steps`,
//! `final_metrics`. A step is `{step_id, timestamp, source: "system" | "user" | "agent", message,
//! model_name, reasoning_content, tool_calls: [{tool_call_id, function_name, arguments}],
//! observation: {results: [{source_call_id, content}]}, metrics, extra}`.
//!
//! One step per ATIF step, in order, with the step id as its id (`1`, `2`, ...), then one `tool`
//! step per tool call of the step (`2.1`, `2.2`, ...), below it, whose output is the observation
//! result for that call (by `source_call_id`, else by position when the result names no call);
//! results that answer no call stay on the step (`atif.observation`), as docs/importers.md says.
//! The final answer is
//! read from the last agent step: the argument of its `finish` / `final_answer` / `final_result`
//! call, else its message when it called no tool; a trajectory whose last agent step still called
//! tools ended before answering. Pure; never panics.

use super::spans::status_guess;
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat, keep_fields, run_text, tree};
use crate::analysis::document::Document;
use crate::analysis::model::{FINAL_ANSWER_TOOLS, RUN_FORMAT, value_text};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// The ATIF importer.
pub struct Atif;

fn is_trajectory(v: &Value) -> bool {
    let versioned = v
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("ATIF"));
    versioned
        || (v.get("session_id").is_some()
            && v.get("agent").is_some_and(Value::is_object)
            && v.get("steps").is_some_and(Value::is_array))
}

/// An ATIF trajectory, as the import reads it.
const TRAJECTORY: super::Listing = super::Listing {
    key: "steps",
    is_one: "an ATIF trajectory is one JSON object",
    lists: "an ATIF trajectory lists its steps there",
};

impl Importer for Atif {
    fn format(&self) -> SourceFormat {
        SourceFormat::Atif
    }

    fn looks_for(&self) -> &'static str {
        "an object with \"schema_version\": \"ATIF-v1.x\", or with session_id, an agent object and a steps array"
    }

    fn sniff(&self, doc: &Document) -> bool {
        matches!(doc, Document::One(v) if is_trajectory(v))
    }

    fn import(
        &self,
        doc: Document,
        _index: Option<usize>,
    ) -> Result<Vec<ImportedRun>, ImportError> {
        TRAJECTORY.import(doc, |v, steps| {
            ImportedRun::new(build(v, steps), vec![status_guess()])
        })
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).map(value_text).and_then(|t| chat::non_empty(&t))
}

fn build(v: &Value, atif_steps: &[Value]) -> Value {
    let mut steps: Vec<Value> = Vec::with_capacity(atif_steps.len());
    let mut used = tree::UniqueIds::with_capacity(atif_steps.len());
    let mut task: Option<String> = None;
    let mut answer: Option<String> = None;
    // The tools called, in order of first call.
    let mut called_tools: Vec<String> = Vec::new();
    let mut called: HashSet<String> = HashSet::new();
    for (i, s) in atif_steps.iter().enumerate() {
        let base = s
            .get("step_id")
            .map(value_text)
            .and_then(|t| chat::non_empty(&t))
            .unwrap_or_else(|| (i + 1).to_string());
        let (id, _) = used.claim(&base);
        let source = s.get("source").and_then(Value::as_str).unwrap_or_default();
        let kind = match source {
            "user" => "user",
            "system" => "system",
            "agent" => "llm",
            _ => "event",
        };
        let message = text(s, "message");
        if kind == "user" && task.is_none() {
            task = message
                .as_deref()
                .and_then(|m| run_text::labelled_task(m).or_else(|| run_text::prose(m)));
        }
        let calls: Vec<chat::CallPart> = s
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(chat::call_from).collect())
            .unwrap_or_default();
        let mut step = Map::new();
        step.insert("id".to_owned(), Value::String(id.clone()));
        step.insert("kind".to_owned(), Value::String(kind.to_owned()));
        if kind == "llm" {
            if let Some(out) = chat::assistant_output(message.clone(), &calls) {
                step.insert("output".to_owned(), out);
            }
            if let Some(a) = v.get("agent").and_then(|a| text(a, "name")) {
                step.insert("agent".to_owned(), Value::String(a));
            }
            let final_call = calls
                .iter()
                .rev()
                .find(|c| FINAL_ANSWER_TOOLS.contains(&c.name.as_str()));
            if let Some(c) = final_call {
                answer = run_text::call_answer(&c.arguments).or(answer);
            }
            let calls_other_tools = calls
                .iter()
                .any(|c| !FINAL_ANSWER_TOOLS.contains(&c.name.as_str()));
            if final_call.is_none() {
                answer = if calls_other_tools {
                    None
                } else {
                    message.as_deref().and_then(run_text::prose)
                };
            }
        } else if let Some(m) = &message {
            step.insert("output".to_owned(), Value::String(m.clone()));
        }
        let metrics = s.get("metrics");
        let count = |k: &str| metrics.and_then(|m| m.get(k)).and_then(chat::count);
        let cost = metrics.and_then(|m| m.get("cost_usd")).and_then(chat::cost);
        let usage = chat::usage(count("prompt_tokens"), count("completion_tokens"));
        if let Some(u) = chat::with_cost(usage, cost) {
            step.insert("usage".to_owned(), u);
        }
        if let Some(t) = s.get("timestamp").filter(|t| t.is_string()) {
            step.insert("started_at".to_owned(), t.clone());
        }
        let mut attributes = Map::new();
        keep_fields(
            s,
            &[
                "model_name",
                "reasoning_content",
                "reasoning_effort",
                "extra",
            ],
            "atif",
            &mut attributes,
        );
        let results: &[Value] = s
            .get("observation")
            .and_then(|o| o.get("results"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let (answers, unanswering) = match_results(&calls, results);
        if !unanswering.is_empty() {
            let observed: Vec<String> = unanswering
                .iter()
                .filter_map(|r| text(r, "content"))
                .collect();
            attributes.insert(
                "atif.observation".to_owned(),
                Value::String(observed.join("\n")),
            );
        }
        if !attributes.is_empty() {
            step.insert("attributes".to_owned(), Value::Object(attributes));
        }
        steps.push(Value::Object(step));
        for (n, (call, result)) in calls.iter().zip(answers).enumerate() {
            let (cid, _) = used.claim(&format!("{id}.{}", n + 1));
            let tool = chat::tool_call(
                call.name.clone(),
                Some(call.arguments.clone()),
                call.id.clone(),
            );
            if called.insert(call.name.clone()) {
                called_tools.push(call.name.clone());
            }
            let mut t = Map::new();
            t.insert("id".to_owned(), Value::String(cid));
            t.insert("kind".to_owned(), json!("tool"));
            t.insert("parent".to_owned(), Value::String(id.clone()));
            t.insert("tool".to_owned(), tool);
            if let Some(r) = result {
                let content = r.get("content").cloned().unwrap_or(Value::Null);
                let failed = r.get("is_error").and_then(Value::as_bool) == Some(true);
                if failed {
                    t.insert("error".to_owned(), Value::String(value_text(&content)));
                } else if !content.is_null() {
                    t.insert("output".to_owned(), content);
                }
            }
            steps.push(Value::Object(t));
        }
    }
    let mut run = Map::new();
    run.insert("format".to_owned(), json!(RUN_FORMAT));
    let id = text(v, "session_id").unwrap_or_else(|| "trajectory".to_owned());
    run.insert("id".to_owned(), Value::String(id));
    let agent = v.get("agent");
    if let Some(name) = agent.and_then(|a| text(a, "name")) {
        let title = match agent.and_then(|a| text(a, "version")) {
            Some(ver) => format!("{name} {ver}"),
            None => name,
        };
        run.insert("title".to_owned(), Value::String(title));
    }
    super::outcome::assume_failed(&mut run);
    if let Some(t) = task {
        run.insert("task".to_owned(), Value::String(t));
    }
    if let Some(a) = answer {
        run.insert("final_answer".to_owned(), Value::String(a));
    }
    if let Some(m) = agent.and_then(|a| text(a, "model_name")) {
        run.insert("model".to_owned(), json!({ "name": m }));
    }
    let mut tools: Vec<Value> = agent
        .and_then(|a| a.get("tool_definitions"))
        .and_then(Value::as_array)
        .map(|defs| defs.iter().filter_map(chat::tool_definition).collect())
        .unwrap_or_default();
    let defined: HashSet<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let undefined: Vec<Value> = called_tools
        .into_iter()
        .filter(|name| !defined.contains(name.as_str()))
        .map(|name| json!({ "name": name }))
        .collect();
    tools.extend(undefined);
    if !tools.is_empty() {
        run.insert("tools".to_owned(), Value::Array(tools));
    }
    if let Some(total) = v
        .get("final_metrics")
        .and_then(|m| m.get("total_cost_usd"))
        .and_then(chat::cost)
    {
        run.insert("cost_usd".to_owned(), json!(total));
    }
    let mut attributes = Map::new();
    keep_fields(
        v,
        &["schema_version", "final_metrics", "notes", "extra"],
        "atif",
        &mut attributes,
    );
    if let Some(a) = agent {
        attributes.insert("atif.agent".to_owned(), strip_definitions(a));
    }
    run.insert("attributes".to_owned(), Value::Object(attributes));
    run.insert("steps".to_owned(), Value::Array(steps));
    Value::Object(run)
}

/// Which observation result answers each tool call of a step: the result whose `source_call_id`
/// is the call's id, else the result at the call's position when that result names no call. Each
/// result answers at most one call; the results that answer none come back too, in order, to be
/// kept on the step. Linear in calls and results.
fn match_results<'a>(
    calls: &[chat::CallPart],
    results: &'a [Value],
) -> (Vec<Option<&'a Value>>, Vec<&'a Value>) {
    let names = |r: &'a Value| r.get("source_call_id").and_then(Value::as_str);
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in results.iter().enumerate().rev() {
        if let Some(id) = names(r) {
            by_id.entry(id).or_default().push(i);
        }
    }
    let mut taken = vec![false; results.len()];
    let answers = calls
        .iter()
        .enumerate()
        .map(|(n, call)| {
            let by_call = call
                .id
                .as_deref()
                .and_then(|id| by_id.get_mut(id))
                .and_then(Vec::pop);
            let by_position = || {
                results
                    .get(n)
                    .filter(|r| r.get("source_call_id").is_none_or(Value::is_null))
                    .map(|_| n)
                    .filter(|&i| !taken[i])
            };
            let i = by_call.or_else(by_position)?;
            taken[i] = true;
            results.get(i)
        })
        .collect();
    let rest = results
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(r, _)| r)
        .collect();
    (answers, rest)
}

/// The agent object without its tool definitions (they are the run's `tools`).
fn strip_definitions(agent: &Value) -> Value {
    match agent {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "tool_definitions")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trajectory(last: Value) -> Value {
        json!({"schema_version": "ATIF-v1.5", "session_id": "s-1",
        "agent": {"name": "openhands", "version": "1.1.0", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are an agent."},
            {"step_id": 2, "source": "user", "message": "Create hello.txt."},
            {"step_id": 3, "source": "agent", "message": "Creating it.",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "write_file",
                             "arguments": {"path": "hello.txt"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "written"}]},
             "metrics": {"prompt_tokens": 100, "completion_tokens": 10}},
            last
        ]})
    }

    #[test]
    fn steps_tool_calls_and_the_finish_call_are_read() {
        let v = trajectory(
            json!({"step_id": 4, "source": "agent", "message": "All done!",
            "tool_calls": [{"tool_call_id": "c2", "function_name": "finish",
                            "arguments": {"message": "Created hello.txt."}}]}),
        );
        let doc = Document::One(v);
        assert!(Atif.sniff(&doc));
        let runs = Atif.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        let ids: Vec<&str> = run["steps"]
            .as_array()
            .map(|s| s.iter().filter_map(|x| x["id"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(ids, ["1", "2", "3", "3.1", "4", "4.1"]);
        assert_eq!(run["steps"][3]["parent"], "3");
        assert_eq!(run["steps"][3]["tool"]["name"], "write_file");
        assert_eq!(run["steps"][3]["output"], "written");
        assert_eq!(run["steps"][2]["usage"]["input_tokens"], 100);
        assert_eq!(run["task"], "Create hello.txt.");
        assert_eq!(run["final_answer"], "Created hello.txt.");
        assert_eq!(run["title"], "openhands 1.1.0");
    }

    #[test]
    fn step_costs_and_the_runs_total_are_read() {
        let mut v = trajectory(json!({"step_id": 4, "source": "agent", "message": "Done.",
            "metrics": {"prompt_tokens": 5, "completion_tokens": 1, "cost_usd": 0.00055}}));
        v["final_metrics"] = json!({"total_cost_usd": 0.003905});
        let runs = Atif.import(Document::One(v), None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(run["cost_usd"], 0.003905);
        let last = run["steps"]
            .as_array()
            .and_then(|s| s.iter().find(|x| x["id"] == "4"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(last["usage"]["cost_usd"], 0.00055);
        assert_eq!(last["usage"]["input_tokens"], 5);
        assert!(last["attributes"].get("atif.cost_usd").is_none());
    }

    #[test]
    fn a_last_turn_that_still_calls_tools_has_no_answer_and_a_plain_one_is_the_answer() {
        let busy = trajectory(
            json!({"step_id": 4, "source": "agent", "message": "Sleeping.",
            "tool_calls": [{"tool_call_id": "c3", "function_name": "bash", "arguments": {}}],
            "observation": {"results": [{"content": "slept"}]}}),
        );
        let runs = Atif.import(Document::One(busy), None).unwrap_or_default();
        assert!(runs[0].value.get("final_answer").is_none());
        assert_eq!(
            runs[0].value["steps"][5]["output"], "slept",
            "matched by position"
        );
        let plain = trajectory(
            json!({"step_id": 4, "source": "agent", "message": "Done: hello.txt exists."}),
        );
        let runs = Atif.import(Document::One(plain), None).unwrap_or_default();
        assert_eq!(runs[0].value["final_answer"], "Done: hello.txt exists.");
    }

    #[test]
    fn results_answer_calls_by_id_then_position_and_the_rest_stay_on_the_step() {
        let v = trajectory(
            json!({"step_id": 4, "source": "agent", "message": "Two reads.",
            "tool_calls": [
                {"tool_call_id": "a", "function_name": "read", "arguments": {"path": "x"}},
                {"tool_call_id": "b", "function_name": "read", "arguments": {"path": "y"}},
                {"tool_call_id": "c", "function_name": "read", "arguments": {"path": "z"}}],
            "observation": {"results": [
                {"source_call_id": "b", "content": "Y"},
                {"source_call_id": "zz", "content": "from a call not made"},
                {"content": "Z"},
                {"source_call_id": "a", "content": "X"}]}}),
        );
        let runs = Atif.import(Document::One(v), None).unwrap_or_default();
        let steps = &runs[0].value["steps"];
        assert_eq!(steps[4]["id"], "4");
        assert_eq!(steps[5]["output"], "X", "a by its id, though last");
        assert_eq!(steps[6]["output"], "Y", "b by its id");
        assert_eq!(
            steps[7]["output"], "Z",
            "c by position: its result names no call"
        );
        assert_eq!(
            steps[4]["attributes"]["atif.observation"], "from a call not made",
            "a result that answers no call is kept on the agent step"
        );
    }

    #[test]
    fn repeated_step_ids_get_the_next_free_suffix() {
        let v = json!({"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {},
        "steps": [
            {"step_id": 1, "source": "user", "message": "a"},
            {"step_id": "1-2", "source": "user", "message": "b"},
            {"step_id": 1, "source": "user", "message": "c"},
            {"step_id": 1, "source": "user", "message": "d"}
        ]});
        let runs = Atif.import(Document::One(v), None).unwrap_or_default();
        let ids: Vec<&str> = runs[0].value["steps"]
            .as_array()
            .map(|s| s.iter().filter_map(|x| x["id"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(ids, ["1", "1-2", "1-3", "1-4"]);
    }
}
