//! A bare JSON array of chat messages is a run whose steps are the messages: exactly one step per
//! message, in order, so a label that indexes the array names the step at that position.
//!
//! Two kinds of list, told apart by their roles:
//! - a conversation (every role is `system`, `developer`, `user`, `human`, `assistant`, `ai`,
//!   `tool` or `function`), read as OpenAI-style messages with `tool_calls` and `tool_call_id`
//!   (shared with the τ-bench importer); ids `m0`, `m1`, ...;
//! - a multi-agent log (any other role names an agent: Magentic-One's `Orchestrator (thought)`,
//!   `WebSurfer`), read as the Who&When importer reads the same histories (agents, instructions,
//!   progress reviews, pages, the team); ids `h0`, `h1`, ...
//!
//! The file says nothing of the outcome: the run is taken as failed, with a warning. A tool result
//! whose call is not in the list is warned about at its step, as in a τ-bench record. Pure; never
//! panics.

use super::spans::status_guess;
use super::{ImportError, ImportedRun, Importer, SourceFormat, chat, tau_bench, who_when};
use crate::analysis::document::Document;
use crate::analysis::model::RUN_FORMAT;
use crate::analysis::warning::Warning;
use serde_json::{Map, Value, json};

/// The chat-message-list importer.
pub struct Messages;

fn is_message(v: &Value) -> bool {
    v.get("role").is_some_and(Value::is_string)
        && (v.get("content").is_some() || v.get("tool_calls").is_some())
}

fn list(doc: &Document) -> Option<&[Value]> {
    match doc {
        Document::One(Value::Array(items)) if !items.is_empty() && items.iter().all(is_message) => {
            Some(items)
        }
        _ => None,
    }
}

impl Importer for Messages {
    fn format(&self) -> SourceFormat {
        SourceFormat::Messages
    }

    fn looks_for(&self) -> &'static str {
        "an array whose every item is a message with a string \"role\" and a \"content\" (or \"tool_calls\")"
    }

    fn sniff(&self, doc: &Document) -> bool {
        list(doc).is_some()
    }

    fn import(
        &self,
        doc: Document,
        _index: Option<usize>,
    ) -> Result<Vec<ImportedRun>, ImportError> {
        let Some(items) = list(&doc) else {
            return Err(ImportError(
                "a message list is a JSON array whose every item has a string \"role\" and a \"content\"".to_owned(),
            ));
        };
        let conversation = items.iter().all(|m| {
            matches!(
                chat::message_role(m),
                Some("system" | "user" | "assistant" | "tool")
            )
        });
        let (mut value, mut warnings) = if conversation {
            conversation_run(items)
        } else {
            (who_when::history_run(items, "messages"), Vec::new())
        };
        if let Some(run) = value.as_object_mut() {
            super::outcome::assume_failed(run);
        }
        warnings.push(status_guess());
        Ok(vec![ImportedRun::new(value, warnings)])
    }
}

/// The run of a conversation, and the warnings reading it gave (tool results whose call is not in
/// the list), which the τ-bench importer keeps too.
fn conversation_run(items: &[Value]) -> (Value, Vec<Warning>) {
    let c = tau_bench::conversation(items, "m");
    let mut run = Map::new();
    run.insert("format".to_owned(), json!(RUN_FORMAT));
    run.insert("id".to_owned(), json!("messages"));
    run.insert("status".to_owned(), json!("failed"));
    if let Some(t) = c.first_user {
        run.insert("task".to_owned(), json!(t));
    }
    if let Some(a) = c.final_answer {
        run.insert("final_answer".to_owned(), json!(a));
    }
    let tools: Vec<Value> = c.tool_order.iter().map(|n| json!({ "name": n })).collect();
    if !tools.is_empty() {
        run.insert("tools".to_owned(), Value::Array(tools));
    }
    // What the last model call was sent is recorded: every message before it, as listed. It
    // becomes that call's input, so its messages and context units are found as for any import
    // of model calls (and the built-in chat runner can re-send it). Earlier calls keep none:
    // each would hold its own copy of the history, which grows with the square of the list.
    let mut steps: Vec<Map<String, Value>> = c
        .steps
        .into_iter()
        .filter_map(|s| match s {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect();
    let last_call = steps
        .iter()
        .rposition(|s| s.get("kind").and_then(Value::as_str) == Some("llm"));
    let attached = match last_call {
        Some(i) if i > 0 && i <= items.len() => {
            steps[i].insert("input".to_owned(), Value::Array(items[..i].to_vec()));
            super::units::attach(&mut steps)
        }
        _ => super::units::Attached::default(),
    };
    let units = if attached.units.is_empty() {
        c.units
    } else {
        attached.units
    };
    if !units.is_empty() {
        run.insert("context_units".to_owned(), Value::Array(units));
    }
    run.insert(
        "steps".to_owned(),
        Value::Array(steps.into_iter().map(Value::Object).collect()),
    );
    (Value::Object(run), c.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds of an imported run's steps, in order.
    fn step_kinds(run: &Value) -> Vec<&str> {
        run["steps"]
            .as_array()
            .map(|s| s.iter().filter_map(|x| x["kind"].as_str()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn an_openai_conversation_gives_one_step_per_message_with_tools_matched() {
        let doc = Document::One(json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "4C, rain"},
            {"role": "assistant", "content": "4C and rain in Oslo."}
        ]));
        assert!(Messages.sniff(&doc));
        let runs = Messages.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(step_kinds(run), ["system", "user", "llm", "tool", "llm"]);
        assert_eq!(
            run["steps"][3]["tool"]["arguments"],
            json!({"city": "Oslo"})
        );
        assert_eq!(run["task"], "Weather in Oslo?");
        assert_eq!(run["final_answer"], "4C and rain in Oslo.");
        assert_eq!(runs[0].warnings.len(), 1, "the outcome is a guess");
    }

    #[test]
    fn the_last_model_call_is_sent_the_messages_before_it_as_context_units() {
        let doc = Document::One(json!([
            {"role": "system", "content": "Answer from the tool only."},
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "4C, rain"},
            {"role": "assistant", "content": "4C and rain in Oslo."}
        ]));
        let runs = Messages.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        let last = &run["steps"][4];
        let sent = last["messages"].as_array().cloned().unwrap_or_default();
        assert_eq!(sent.len(), 4, "{last}");
        assert!(
            run["steps"][2].get("messages").is_none(),
            "an earlier call keeps no copy of the history"
        );
        let units = run["context_units"].as_array().cloned().unwrap_or_default();
        let kind_of = |text: &str| {
            units
                .iter()
                .find(|u| u["text"] == text)
                .map(|u| u["kind"].as_str().unwrap_or_default().to_owned())
        };
        assert_eq!(
            kind_of("Answer from the tool only.").as_deref(),
            Some("instruction")
        );
        assert_eq!(kind_of("Weather in Oslo?").as_deref(), Some("user"));
        assert_eq!(kind_of("4C, rain").as_deref(), Some("tool_result"));
        let result = units.iter().find(|u| u["text"] == "4C, rain").unwrap();
        assert_eq!(result["at"][0]["step"], "m4", "{result}");
        assert_eq!(result["at"][0]["message"], 3, "{result}");
        let sent_ids = last["context"]["sent"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(sent_ids.contains(&result["id"]), "{last}");
    }

    #[test]
    fn every_other_name_of_a_chat_role_is_read_as_that_role() {
        let doc = Document::One(json!([
            {"role": "developer", "content": "Be brief."},
            {"role": "human", "content": "Capital of Peru?"},
            {"role": "model", "content": "Lima."},
            {"role": "function", "name": "lookup", "content": "Lima"},
            {"role": "ai", "content": "Lima, as looked up."}
        ]));
        let runs = Messages.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        assert_eq!(step_kinds(run), ["system", "user", "llm", "tool", "llm"]);
        assert_eq!(run["task"], "Capital of Peru?");
        assert_eq!(run["final_answer"], "Lima, as looked up.");
    }

    #[test]
    fn a_tool_result_without_its_call_is_warned_about_at_its_step() {
        let doc = Document::One(json!([
            {"role": "user", "content": "Refund order 7"},
            {"role": "tool", "tool_call_id": "gone", "name": "refund", "content": "ok"},
            {"role": "assistant", "content": "Refunded."}
        ]));
        let runs = Messages.import(doc, None).unwrap_or_default();
        let warnings = &runs[0].warnings;
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.message.contains("step 'm1'")
                    && w.message.contains("arguments are unknown")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_magentic_one_log_is_read_as_who_and_when_reads_it() {
        let doc = Document::One(json!([
            {"role": "human", "content": "Which river?"},
            {"role": "Orchestrator (thought)", "content": "Initial plan:\nwe have assembled the following team:\n\nAssistant: helps.\nWebSurfer: browses.\n\nPlan: search."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Search for it."},
            {"role": "WebSurfer", "content": "I typed 'river' into the search bar.\n\nHere is a screenshot of [river - Search](https://bing.com/?q=river). The viewport"},
            {"role": "Orchestrator (termination condition)", "content": "FINAL ANSWER: Rhine"}
        ]));
        assert!(Messages.sniff(&doc));
        let runs = Messages.import(doc, None).unwrap_or_default();
        let run = &runs[0].value;
        let steps = run["steps"].as_array().cloned().unwrap_or_default();
        assert_eq!(steps.len(), 5);
        assert_eq!(steps[2]["agent"], "Orchestrator");
        assert_eq!(steps[2]["attributes"]["to"], "WebSurfer");
        assert_eq!(steps[3]["attributes"]["url"], "https://bing.com/?q=river");
        assert_eq!(
            run["attributes"]["agents"],
            json!(["Assistant", "WebSurfer"])
        );
        assert_eq!(run["task"], "Which river?");
        assert_eq!(run["final_answer"], "Rhine");
        assert!(
            run["attributes"].get("whowhen").is_none(),
            "no labels in a bare log"
        );
    }

    #[test]
    fn other_arrays_are_not_message_lists() {
        assert!(!Messages.sniff(&Document::One(json!([]))));
        assert!(!Messages.sniff(&Document::One(json!([{"role": "user", "content": "x"}, 3]))));
        assert!(!Messages.sniff(&Document::One(json!([{"traj": []}]))));
        assert!(!Messages.sniff(&Document::One(json!({"role": "user", "content": "x"}))));
    }
}
