//! The task a run's input states and the answer its output states, as prose. Inputs and outputs
//! come in every shape: text, JSON encoded once or twice, Python literals and reprs, chat
//! messages of any provider, LangChain chain and graph envelopes (`{"input"}`, `{"output"}`,
//! `{"messages": [...]}`), provider responses (`choices`, `candidates`, the Responses API's
//! `output`), structured outputs (`{"response": {"comment": "..."}}`). What is read is text a
//! person wrote or a model said; a value that is still a serialised structure after decoding is
//! never a task or an answer (`None`), so the claim check never splits JSON into claims.
//!
//! Pure; bounded in depth; never panics.

use super::chat::{message_role, message_text};
use super::{decode, pyliteral};
use serde_json::{Map, Value};
use std::borrow::Cow;

const MAX_DEPTH: usize = 6;

/// Keys of an input object that hold the task, in the order they are tried.
const TASK_KEYS: [&str; 13] = [
    "task",
    "input",
    "inputs",
    "question",
    "query",
    "prompt",
    "messages",
    "new_message",
    "user_message",
    "message",
    "contents",
    "request",
    "args",
];

/// Keys of an output object that hold the answer, in the order they are tried.
const ANSWER_KEYS: [&str; 12] = [
    "final_answer",
    "answer",
    "output",
    "outputs",
    "result",
    "response",
    "content",
    "text",
    "message",
    "comment",
    "summary",
    "args",
];

/// A prompt template this long or longer may hold the user's task under a label.
const TEMPLATE_CHARS: usize = 400;

/// Labels under which a filled prompt template puts what the user asked, as agent harnesses
/// write them (compared without case, at the start of a line).
const TASK_LABELS: [&str; 7] = [
    "new task:",
    "task description:",
    "task:",
    "user request:",
    "user question:",
    "question:",
    "request:",
];

/// The user's task in a filled prompt template: the text under the last line that opens with a
/// task label (`Task Description:`, `Task:`, `Question:`, ...), up to the next blank line. Only
/// for a long text (a short one is the task itself); `None` when no line holds such a label.
pub fn labelled_task(text: &str) -> Option<String> {
    if text.chars().count() < TEMPLATE_CHARS {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let (at, rest) = lines.iter().enumerate().rev().find_map(|(i, line)| {
        let t = line.trim_start();
        let lower = t.to_lowercase();
        TASK_LABELS
            .iter()
            .find(|l| lower.starts_with(*l))
            .map(|l| (i, t.get(l.len()..).unwrap_or("").trim().to_owned()))
    })?;
    let mut out = rest;
    for line in lines.iter().skip(at + 1) {
        if line.trim().is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    prose(&out)
}

/// Text that reads as prose: non-empty, and not a serialised structure.
pub fn prose(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty() && !decode::serialised(t)).then(|| t.to_owned())
}

/// A value with the text it holds decoded, when it is text (JSON encoded once or twice, a
/// Python literal); any other value as it is.
fn undone(v: &Value) -> Cow<'_, Value> {
    match v {
        Value::String(_) => Cow::Owned(decode::decoded(v.clone())),
        _ => Cow::Borrowed(v),
    }
}

/// The task an input states: the last user message of a list of messages (also under
/// `messages`, as LangGraph records its state), the `task`, `input`, `question`, `query` or
/// `prompt` of an object, a user message, or the input itself when it is prose.
pub fn task_text(v: &Value) -> Option<String> {
    task_in(v, 0)
}

fn task_in(v: &Value, depth: usize) -> Option<String> {
    TASK.find(v, depth)
}

/// The search for a task.
const TASK: Search = Search {
    messages: |items, _| {
        items
            .iter()
            .rev()
            .filter(|m| message_role(m) == Some("user"))
            .find_map(|m| message_text(m).and_then(|t| prose(&t)))
    },
    list: |_, items, _| {
        items.iter().find_map(|i| match i {
            Value::String(s) => prose(s),
            _ => None,
        })
    },
    object: |v, o, depth| {
        if message_role(v) == Some("user") {
            return message_text(v).and_then(|t| prose(&t));
        }
        TASK.under(o, &TASK_KEYS, depth)
    },
};

/// One search for a text through a value, the same descent for the task and the answer: a
/// string read as prose (decoded first when it holds JSON or a Python literal), a LangChain
/// object unwrapped, and what the search reads in a list of chat messages, another list and an
/// object; nothing deeper than [`MAX_DEPTH`].
struct Search {
    messages: fn(&[Value], usize) -> Option<String>,
    list: fn(&Value, &[Value], usize) -> Option<String>,
    object: fn(&Value, &Map<String, Value>, usize) -> Option<String>,
}

impl Search {
    fn find(&self, v: &Value, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let undone = undone(v);
        let v = undone.as_ref();
        match v {
            Value::String(s) => prose(s),
            Value::Array(items) if items.iter().any(|m| message_role(m).is_some()) => {
                (self.messages)(items, depth)
            }
            Value::Array(items) => (self.list)(v, items, depth),
            Value::Object(o) => match decode::unwrap_lc(v) {
                Some(kwargs) => self.find(&Value::Object(kwargs), depth + 1),
                None => (self.object)(v, o, depth),
            },
            _ => None,
        }
    }

    /// The first text found under `keys` of `o`, in that order, else under its only key.
    fn under(&self, o: &Map<String, Value>, keys: &[&str], depth: usize) -> Option<String> {
        keys.iter()
            .filter_map(|k| o.get(*k))
            .find_map(|x| self.find(x, depth + 1))
            .or_else(|| sole_value(o).and_then(|x| self.find(x, depth + 1)))
    }
}

/// The answer an output states: the text of the last assistant message of a list (also under
/// `messages`), of a provider response (`choices`, `candidates`, Responses API `output`), the
/// `final_answer`, `answer`, `output`, `result`, `response`, `content` or `text` of an object, or
/// the output itself when it is prose. A list of tool calls states no answer.
pub fn answer_text(v: &Value) -> Option<String> {
    answer_in(v, 0)
}

fn answer_in(v: &Value, depth: usize) -> Option<String> {
    ANSWER.find(v, depth)
}

/// The search for an answer.
const ANSWER: Search = Search {
    messages: |items, depth| {
        let said =
            |m: &&Value| message_text(m).and_then(|t| answer_in(&Value::String(t), depth + 1));
        let from = |role: Option<&str>| {
            items
                .iter()
                .rev()
                .filter(|m| role.is_none_or(|r| message_role(m) == Some(r)))
                .find_map(|m| said(&m))
        };
        from(Some("assistant")).or_else(|| from(None))
    },
    list: |v, items, _| {
        if items
            .iter()
            .any(|i| i.get("type").and_then(Value::as_str) == Some("message"))
        {
            return message_text(v).and_then(|t| prose(&t));
        }
        let texts: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Value::String(t) => prose(t),
                Value::Object(o) => fields_text(o),
                _ => None,
            })
            .collect();
        let sep = if items.iter().all(Value::is_string) {
            "\n"
        } else {
            "\n\n"
        };
        (!texts.is_empty() && texts.len() == items.len()).then(|| texts.join(sep))
    },
    object: answer_of_object,
};

fn answer_of_object(v: &Value, o: &Map<String, Value>, depth: usize) -> Option<String> {
    if let Some(m) = o.get("messages").filter(|m| m.is_array()) {
        return answer_in(m, depth + 1);
    }
    let provider = o
        .get("choices")
        .or_else(|| o.get("candidates"))
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .or_else(|| {
            (o.get("object").and_then(Value::as_str) == Some("response"))
                .then(|| o.get("output"))
                .flatten()
        });
    if let Some(p) = provider {
        return message_text(p).and_then(|t| answer_in(&Value::String(t), depth + 1));
    }
    if message_role(v).is_some() {
        return message_text(v).and_then(|t| answer_in(&Value::String(t), depth + 1));
    }
    ANSWER
        .under(o, &ANSWER_KEYS, depth)
        .or_else(|| fields_text(o))
}

/// At most this many fields of a structured answer are written out.
const MAX_FIELDS: usize = 32;

/// A structured output (a Pydantic model, a JSON object a model was asked for) written as
/// `key: value` lines: its text, number and boolean fields, lists of those joined by commas.
/// Only when at least one field is a sentence (prose with a space in it), so a record of ids, a
/// status object or a tool call is not taken for an answer.
fn fields_text(o: &Map<String, Value>) -> Option<String> {
    let mut lines = Vec::new();
    let mut sentence = false;
    for (k, v) in o.iter().take(MAX_FIELDS) {
        if k == pyliteral::CLASS_KEY {
            continue;
        }
        let text = match v {
            Value::String(t) => {
                let Some(p) = prose(t) else { continue };
                sentence |= p.contains(' ');
                p
            }
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Array(items) if items.iter().all(|i| i.is_string() || i.is_number()) => items
                .iter()
                .map(crate::analysis::model::value_text)
                .collect::<Vec<_>>()
                .join(", "),
            _ => continue,
        };
        lines.push(format!("{k}: {text}"));
    }
    (sentence && !lines.is_empty()).then(|| lines.join("\n"))
}

/// The value of an object with one key (apart from a repr's class name).
fn sole_value(o: &Map<String, Value>) -> Option<&Value> {
    let mut values = o
        .iter()
        .filter(|(k, _)| k.as_str() != pyliteral::CLASS_KEY)
        .map(|(_, v)| v);
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// The answer a final-answer call gives: its `answer`, `message`, `final_answer`, `result`,
/// `output` or `content` argument, its first positional argument, or the arguments as an answer.
pub fn call_answer(arguments: &Value) -> Option<String> {
    let args = decode::decoded(arguments.clone());
    if let Value::Object(o) = &args {
        for key in [
            "answer",
            "message",
            "final_answer",
            "result",
            "output",
            "content",
        ] {
            if let Some(a) = o.get(key).and_then(|x| answer_in(x, 1)) {
                return Some(a);
            }
        }
        if let Some(first) = o
            .get("args")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return answer_in(first, 1);
        }
    }
    answer_in(&args, 0)
}

/// The answer a model's code hands over: the literal argument of the last
/// `final_answer(...)` call written in the text (smolagents' CodeAgent ends that way). `None` when
/// there is no such call or its argument is not a literal (a variable, an f-string).
pub fn code_final_answer(text: &str) -> Option<String> {
    const CALL: &str = "final_answer(";
    let at = text.rfind(CALL)?;
    // A method or another function ending in the same name is not the call.
    let before = text.get(..at)?.chars().next_back();
    if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
        return None;
    }
    let (call, _) = pyliteral::parse_prefix(text.get(at..)?)?;
    call_answer(&call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_and_answer_are_read_from_chain_and_graph_envelopes() {
        let chain_in = json!({"input": "How many refunds?", "chat_history": []});
        let chain_out = json!({"input": "How many refunds?", "output": "12 refunds."});
        assert_eq!(task_text(&chain_in).as_deref(), Some("How many refunds?"));
        assert_eq!(answer_text(&chain_out).as_deref(), Some("12 refunds."));
        let graph = json!({"messages": [
            {"type": "human", "content": "Refund order 7"},
            {"type": "ai", "content": "Checking."},
            {"type": "ai", "content": "Order 7 refunded."}]});
        assert_eq!(task_text(&graph).as_deref(), Some("Refund order 7"));
        assert_eq!(answer_text(&graph).as_deref(), Some("Order 7 refunded."));
        // OpenLLMetry writes a LangChain chain's input and output in an envelope.
        let entity_in = json!({"inputs": {"question": "What was Meta's revenue in 2023?"},
            "tags": [], "metadata": {"ls_run": 1}, "kwargs": {"name": "RetrievalQA"}});
        assert_eq!(
            task_text(&entity_in).as_deref(),
            Some("What was Meta's revenue in 2023?")
        );
        let entity_out = json!({"outputs": {"result": "134.90 billion dollars."}, "kwargs": {}});
        assert_eq!(
            answer_text(&entity_out).as_deref(),
            Some("134.90 billion dollars.")
        );
        let msgs = json!([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]);
        assert_eq!(task_text(&msgs).as_deref(), Some("q"));
        assert_eq!(answer_text(&json!("plain")).as_deref(), Some("plain"));
    }

    #[test]
    fn a_filled_template_gives_the_task_under_its_label() {
        let template = format!(
            "You are an AI assistant tasked with solving command-line tasks.\n{}\n\nTask Description:\nCreate a file called hello.txt.\n\nCurrent terminal state:\n$",
            "Format your response as JSON. ".repeat(20)
        );
        assert_eq!(
            labelled_task(&template).as_deref(),
            Some("Create a file called hello.txt.")
        );
        let inline = format!(
            "{}\nQuestion: What was the revenue?",
            "Context. ".repeat(60)
        );
        assert_eq!(
            labelled_task(&inline).as_deref(),
            Some("What was the revenue?")
        );
        assert_eq!(labelled_task("Task: short, so it is the task itself"), None);
        assert_eq!(labelled_task(&"no label here. ".repeat(40)), None);
    }

    #[test]
    fn text_encoded_twice_and_python_reprs_are_read() {
        assert_eq!(
            task_text(&json!("\"What is Langfuse?\"")).as_deref(),
            Some("What is Langfuse?")
        );
        let twice = json!(
            "\"{\\\"messages\\\":[{\\\"type\\\":\\\"human\\\",\\\"content\\\":\\\"hi\\\"}]}\""
        );
        assert_eq!(task_text(&twice).as_deref(), Some("hi"));
        let repr = json!("{'role': 'assistant', 'text': \"Barcelona is vibrant.\"}");
        assert_eq!(answer_text(&repr).as_deref(), Some("Barcelona is vibrant."));
        let lc = json!({"messages": [{"lc": 1, "type": "constructor",
            "id": ["langchain", "schema", "messages", "AIMessage"],
            "kwargs": {"content": "Done."}}]});
        assert_eq!(answer_text(&lc).as_deref(), Some("Done."));
    }

    #[test]
    fn provider_responses_and_structured_outputs_give_their_text() {
        let gemini = json!({"candidates": [{"content": {"role": "model",
            "parts": [{"text": "Langfuse is a platform."}]}}], "usage_metadata": {}});
        assert_eq!(
            answer_text(&gemini).as_deref(),
            Some("Langfuse is a platform.")
        );
        let adk = json!({"content": {"parts": [{"text": "Hello!"}], "role": "model"},
            "finish_reason": "STOP"});
        assert_eq!(answer_text(&adk).as_deref(), Some("Hello!"));
        let responses = json!({"object": "response", "output": [
            {"type": "function_call", "name": "f", "arguments": "{}"},
            {"type": "message", "content": [{"type": "output_text", "text": "Sunny."}]}]});
        assert_eq!(answer_text(&responses).as_deref(), Some("Sunny."));
        let structured = json!("{\"response\": {\"comment\": \"No data for the period.\"}}");
        assert_eq!(
            answer_text(&structured).as_deref(),
            Some("No data for the period.")
        );
        let gemini_in = json!({"model": "gemini-2.5-flash", "contents": "What is Langfuse?"});
        assert_eq!(task_text(&gemini_in).as_deref(), Some("What is Langfuse?"));
    }

    #[test]
    fn a_structured_output_is_written_as_fields() {
        let out = json!(
            "{\"response\": [{\"criteria\": \"Participants can name the duties.\", \"rating\": 9}, {\"criteria\": \"They can draft a clause.\", \"rating\": 8}]}"
        );
        assert_eq!(
            answer_text(&out).as_deref(),
            Some(
                "criteria: Participants can name the duties.\nrating: 9\n\ncriteria: They can draft a clause.\nrating: 8"
            )
        );
        assert_eq!(
            answer_text(&json!({"id": "resp_1", "status": "done"})),
            None,
            "no sentence, no answer"
        );
    }

    #[test]
    fn serialised_values_and_tool_calls_are_no_answer() {
        let calls =
            json!("[{\"toolCallId\": \"c\", \"toolName\": \"getWeather\", \"input\": \"{}\"}]");
        assert_eq!(answer_text(&calls), None);
        assert_eq!(answer_text(&json!({"status": "ok", "count": 3})), None);
        assert_eq!(
            task_text(&json!("RunResponse(content=None, model='m')")),
            None
        );
        assert_eq!(answer_text(&json!("{\"cut\": \"sho")), None);
    }

    #[test]
    fn final_answer_calls_give_their_argument() {
        assert_eq!(
            call_answer(&json!({"answer": "Marek"})).as_deref(),
            Some("Marek")
        );
        assert_eq!(
            call_answer(&json!({"message": "Task complete."})).as_deref(),
            Some("Task complete.")
        );
        assert_eq!(
            call_answer(&json!({"args": ["42"], "kwargs": {}})).as_deref(),
            Some("42")
        );
        let code =
            "Thought: done.\nCode:\n```py\nfinal_answer(\"\"\"### 1. Outcome:\nParis\"\"\")\n```";
        assert_eq!(
            code_final_answer(code).as_deref(),
            Some("### 1. Outcome:\nParis")
        );
        assert_eq!(code_final_answer("final_answer(result)"), None);
        assert_eq!(code_final_answer("agent.my_final_answer('x')"), None);
    }
}
