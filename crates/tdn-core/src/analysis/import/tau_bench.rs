//! τ-bench result records (`task_id`, `trial`, `reward`, `info`, `traj`): a results file (an
//! array of records, one run each, `--index` picks one by its position), a single record, or JSON
//! lines of records.
//!
//! Exactly one step per `traj` message, in order: system, user, assistant (`llm`, with its tool
//! calls in the output) and tool messages (`tool`, named and given the parsed arguments of the
//! call they answer; a result starting with "Error:" is the step's error). Pure: no I/O, no panic
//! on any input.

use super::{ImportError, ImportedRun, Importer, SourceFormat, chat};
use crate::analysis::document::Document;
use crate::analysis::model::{RUN_FORMAT, value_text};
use crate::analysis::warning::Warning;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// The τ-bench importer.
pub struct TauBench;

fn is_record(v: &Value) -> bool {
    v.get("traj").is_some_and(Value::is_array)
}

fn records(doc: &Document) -> &[Value] {
    match doc {
        Document::One(Value::Array(items)) => items,
        Document::One(v) => std::slice::from_ref(v),
        Document::Lines(vs) => vs,
    }
}

impl Importer for TauBench {
    fn format(&self) -> SourceFormat {
        SourceFormat::TauBench
    }

    fn looks_for(&self) -> &'static str {
        "records with a \"traj\" array (alone, in an array, or as JSON lines)"
    }

    fn sniff(&self, doc: &Document) -> bool {
        records(doc).first().is_some_and(is_record)
    }

    fn count(&self, doc: &Document) -> usize {
        records(doc).len()
    }

    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError> {
        let all = records(&doc);
        super::pick(all.iter().enumerate().collect(), index, "record(s)")?
            .into_iter()
            .map(|(i, r)| {
                if is_record(r) {
                    Ok(build_run(i, r))
                } else {
                    Err(ImportError(format!(
                        "record {i} has no \"traj\" array; a τ-bench record lists its messages there"
                    )))
                }
            })
            .collect()
    }
}

/// The steps of a list of OpenAI-style chat messages, one per message in order, and what the run
/// gathers from them. Shared with the importer of bare message lists (`messages`).
pub(super) struct Conversation {
    /// The steps, ids `<prefix>0`, `<prefix>1`, ...
    pub steps: Vec<Value>,
    /// Tools called, in order of first call.
    pub tool_order: Vec<String>,
    /// The last assistant text.
    pub final_answer: Option<String>,
    /// The first user message.
    pub first_user: Option<String>,
    /// The system prompts, as instruction units.
    pub units: Vec<Value>,
    /// Tool results whose call is not in the list.
    pub warnings: Vec<Warning>,
}

/// Reads OpenAI-style chat messages: `system` (also `developer`), `user` (also `human`),
/// `assistant` (also `ai`) with `tool_calls`, and `tool` (also `function`) results matched to
/// their call by `tool_call_id`. Content given as a list of parts is read as its text.
pub(super) fn conversation(traj: &[Value], prefix: &str) -> Conversation {
    let mut warnings = Vec::new();
    let mut calls: HashMap<String, chat::CallPart> = HashMap::new();
    let mut tool_order: Vec<String> = Vec::new();
    let mut tool_seen: HashSet<String> = HashSet::new();
    let mut steps = Vec::with_capacity(traj.len());
    let mut final_answer: Option<String> = None;
    let mut first_user: Option<String> = None;
    let mut units: Vec<Value> = Vec::new();
    for (i, m) in traj.iter().enumerate() {
        let id = format!("{prefix}{i}");
        let role = chat::message_role(m).unwrap_or_default();
        let content = match m.get("content") {
            Some(c @ Value::Array(_)) => chat::message_text(c).unwrap_or_default(),
            Some(c) => value_text(c),
            None => String::new(),
        };
        let mut step = Map::new();
        step.insert("id".to_owned(), json!(id));
        match role {
            "system" | "user" => {
                step.insert("kind".to_owned(), json!(role));
                step.insert("output".to_owned(), Value::String(content.clone()));
                if role == "user" && first_user.is_none() {
                    first_user = chat::non_empty(&content);
                }
                if role == "system" {
                    // The policy the agent was given: context an experiment can remove.
                    units.push(
                        json!({"id": format!("system_prompt:{id}"), "kind": "instruction",
                                      "text": content, "produced_by": id}),
                    );
                }
            }
            "assistant" => {
                step.insert("kind".to_owned(), json!("llm"));
                let found = chat::message_calls(m);
                for c in &found {
                    if tool_seen.insert(c.name.clone()) {
                        tool_order.push(c.name.clone());
                    }
                    if let Some(id) = &c.id {
                        calls.insert(id.clone(), c.clone());
                    }
                }
                let text = chat::non_empty(&content);
                if let Some(t) = &text {
                    final_answer = Some(t.clone());
                }
                if let Some(out) = chat::assistant_output(text, &found) {
                    step.insert("output".to_owned(), out);
                }
            }
            "tool" => {
                step.insert("kind".to_owned(), json!("tool"));
                let call_id = chat::str_at(m, "tool_call_id").map(str::to_owned);
                let call = call_id.as_ref().and_then(|id| calls.get(id));
                let name = chat::str_at(m, "name")
                    .map(str::to_owned)
                    .or_else(|| call.map(|c| c.name.clone()))
                    .unwrap_or_else(|| "tool".to_owned());
                let mut tool = Map::new();
                tool.insert("name".to_owned(), Value::String(name));
                if let Some(c) = call {
                    tool.insert("arguments".to_owned(), c.arguments.clone());
                } else {
                    warnings.push(Warning::step(
                        &id,
                        i,
                        "tool",
                        format!(
                            "step '{id}' (position {}): no earlier assistant message made the call this result answers; its arguments are unknown",
                            i + 1
                        ),
                    ));
                }
                if let Some(id) = call_id {
                    tool.insert("call_id".to_owned(), Value::String(id));
                }
                step.insert("tool".to_owned(), Value::Object(tool));
                if content.trim_start().starts_with("Error:") {
                    step.insert("error".to_owned(), Value::String(content.clone()));
                } else {
                    step.insert("output".to_owned(), Value::String(content.clone()));
                }
            }
            other => {
                step.insert("kind".to_owned(), json!("event"));
                if !other.is_empty() {
                    step.insert("name".to_owned(), json!(other));
                }
                step.insert("output".to_owned(), Value::String(content.clone()));
            }
        }
        steps.push(Value::Object(step));
    }

    Conversation {
        steps,
        tool_order,
        final_answer,
        first_user,
        units,
        warnings,
    }
}

fn build_run(position: usize, r: &Value) -> ImportedRun {
    let traj = r
        .get("traj")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Conversation {
        steps,
        tool_order,
        final_answer,
        first_user,
        units,
        mut warnings,
    } = conversation(traj, "t");
    let info = r.get("info");
    let task_info = info.and_then(|i| i.get("task"));
    let task_id = r.get("task_id").map(value_text);
    let trial = r.get("trial").map(value_text);
    let mut run = Map::new();
    run.insert("format".to_owned(), json!(RUN_FORMAT));
    let id = match (&task_id, &trial) {
        (Some(t), Some(n)) => format!("task-{t}-trial-{n}"),
        (Some(t), None) => format!("task-{t}"),
        _ => format!("record-{position}"),
    };
    run.insert("id".to_owned(), json!(id));
    if let Some(t) = &task_id {
        let title = match &trial {
            Some(n) => format!("τ-bench task {t}, trial {n}"),
            None => format!("τ-bench task {t}"),
        };
        run.insert("title".to_owned(), json!(title));
    }
    let reward = r.get("reward").and_then(Value::as_f64);
    match reward {
        Some(x) => {
            let status = if x >= 1.0 { "succeeded" } else { "failed" };
            super::outcome::Said::new(status, format!("τ-bench reward {x}")).write(&mut run);
        }
        None => {
            warnings.push(Warning::run(
                Some("status"),
                "the record has no numeric \"reward\"; the run is taken as failed (give --outcome succeeded, or a reference answer, if it was right)",
            ));
            super::outcome::assume_failed(&mut run);
        }
    }
    let instruction = task_info
        .and_then(|t| t.get("instruction"))
        .map(value_text)
        .and_then(|s| chat::non_empty(&s));
    // The agent only sees the conversation: its task is the user's first message. The simulated
    // user's hidden instruction is kept in the attributes for a person reading the run.
    if let Some(t) = first_user {
        run.insert("task".to_owned(), json!(t));
    }
    if let Some(a) = final_answer {
        run.insert("final_answer".to_owned(), json!(a));
    }
    let outputs: Vec<String> = task_info
        .and_then(|t| t.get("outputs"))
        .and_then(Value::as_array)
        .map(|o| {
            o.iter()
                .map(value_text)
                .filter(|s| !s.trim().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if !outputs.is_empty() {
        run.insert("reference_answer".to_owned(), json!(outputs.join("\n")));
    }
    // Which of them change things is read from their names by the analysis (an action verb
    // first: `cancel_pending_order`), not from a list of this benchmark's tools.
    let tools: Vec<Value> = tool_order
        .iter()
        .map(|name| json!({"name": name}))
        .collect();
    if !tools.is_empty() {
        run.insert("tools".to_owned(), Value::Array(tools));
    }
    if !units.is_empty() {
        run.insert("context_units".to_owned(), Value::Array(units));
    }
    let mut kept = Map::new();
    for key in ["task_id", "trial", "reward"] {
        if let Some(v) = r.get(key) {
            kept.insert(key.to_owned(), v.clone());
        }
    }
    if let Some(i) = instruction {
        kept.insert("user_instruction".to_owned(), json!(i));
    }
    if let Some(t) = task_info {
        for (from, to) in [("user_id", "user_id"), ("actions", "expected_actions")] {
            if let Some(v) = t.get(from) {
                kept.insert(to.to_owned(), v.clone());
            }
        }
    }
    if let Some(ri) = info
        .and_then(|i| i.get("reward_info"))
        .and_then(|ri| ri.get("info"))
    {
        kept.insert("reward_info".to_owned(), ri.clone());
    }
    run.insert("attributes".to_owned(), json!({ "taubench": kept }));
    run.insert("steps".to_owned(), Value::Array(steps));
    ImportedRun::new(Value::Object(run), warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_sniffed_in_a_list_alone_or_as_lines() {
        let rec = json!({"task_id": 1, "reward": 0.0, "traj": []});
        assert!(TauBench.sniff(&Document::One(json!([rec.clone()]))));
        assert!(TauBench.sniff(&Document::One(rec.clone())));
        assert!(TauBench.sniff(&Document::Lines(vec![rec.clone(), rec])));
        assert!(!TauBench.sniff(&Document::One(json!([{"history": []}]))));
        assert!(!TauBench.sniff(&Document::One(json!([]))));
    }

    #[test]
    fn a_record_without_traj_is_refused_by_position() {
        let doc = Document::One(json!([{"traj": []}, {"nope": 1}]));
        assert_eq!(TauBench.count(&doc), 2);
        let e = TauBench.import(doc, Some(1)).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some("record 1 has no \"traj\" array; a τ-bench record lists its messages there")
        );
    }

    #[test]
    fn reward_decides_the_status() {
        let run = |reward: Value| {
            build_run(
                0,
                &json!({"task_id": 3, "trial": 1, "reward": reward, "traj": []}),
            )
            .value
        };
        assert_eq!(run(json!(0.0))["status"], "failed");
        assert_eq!(run(json!(1.0))["status"], "succeeded");
        assert_eq!(run(json!(1))["id"], "task-3-trial-1");
        let missing = build_run(4, &json!({"traj": []}));
        assert_eq!(missing.value["status"], "failed");
        assert_eq!(missing.value["id"], "record-4");
        assert_eq!(missing.warnings.len(), 1);
    }

    #[test]
    fn the_task_is_what_the_agent_was_told_not_the_hidden_instruction() {
        let rec = json!({
            "task_id": 7, "reward": 0.0,
            "info": {"task": {"instruction": "You are Ann; only cancel if the fee is under $20."}},
            "traj": [
                {"role": "system", "content": "You are a retail agent."},
                {"role": "user", "content": "Hi, I want to cancel order #W1."},
                {"role": "assistant", "content": "Sure, which reason?"},
                {"role": "user", "content": "No longer needed."}
            ]
        });
        let run = build_run(0, &rec).value;
        assert_eq!(run["task"], "Hi, I want to cancel order #W1.");
        assert_eq!(
            run["attributes"]["taubench"]["user_instruction"],
            "You are Ann; only cancel if the fee is under $20."
        );
        let silent = build_run(
            0,
            &json!({"info": {"task": {"instruction": "x"}}, "traj": []}),
        );
        assert!(silent.value.get("task").is_none());
    }
}
