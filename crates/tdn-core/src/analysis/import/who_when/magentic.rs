//! What a Magentic-One message says beyond its text, for the Who&When importer: the agent an
//! orchestrator's instruction is addressed to (`Orchestrator (-> WebSurfer)`), the team its plan
//! lists, the verdicts of its progress ledger (`Updated Ledger:` and a JSON object), and the page a
//! browsing agent ended on (`Here is a screenshot of [TITLE](URL)`, `Address: URL`).
//!
//! Pure functions over one message's text: no I/O, no panic on any input, linear in the text.

use serde_json::{Map, Value};

/// Most team members read from a plan.
const MAX_TEAM: usize = 32;
/// Most characters of a ledger reason kept.
const MAX_REASON_CHARS: usize = 300;
/// Most characters of a page title or address kept.
const MAX_PAGE_CHARS: usize = 500;

/// The agent a role like `Orchestrator (-> WebSurfer)` addresses.
pub fn addressee(role: &str) -> Option<&str> {
    let at = role.find("(->")?;
    let rest = role.get(at + 3..)?;
    let name = rest.get(..rest.find(')')?)?.trim();
    (!name.is_empty()).then_some(name)
}

/// The members of the team a plan lists: the names before `:` on the lines after
/// `assembled the following team:`, up to the first blank line after them.
pub fn team(text: &str) -> Vec<String> {
    let Some(at) = text.find("assembled the following team:") else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let rest = text.get(at..).unwrap_or_default();
    for line in rest.lines().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        let Some((name, _)) = line.split_once(':') else {
            break;
        };
        let name = name.trim();
        let one_word = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if !one_word {
            break;
        }
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
        if out.len() >= MAX_TEAM {
            break;
        }
    }
    out
}

/// The verdicts of a progress ledger (`Updated Ledger:` then a JSON object whose entries hold an
/// `answer` and a `reason`), in one shape: `satisfied`, `in_loop`, `progress` (booleans, when the
/// ledger gives them) and `reason` (why progress is or is not being made; else why the run is in
/// a loop). `None` for any other text.
pub fn review(text: &str) -> Option<Value> {
    let t = text.trim_start();
    let rest = t.strip_prefix("Updated Ledger:")?;
    let open = rest.find('{')?;
    let body = rest.get(open..)?;
    let ledger: Value = serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    let verdict = |key: &str| ledger.get(key).and_then(|e| e.get("answer"));
    let reason = |key: &str| {
        ledger
            .get(key)
            .and_then(|e| e.get("reason"))
            .and_then(Value::as_str)
            .map(|r| r.chars().take(MAX_REASON_CHARS).collect::<String>())
    };
    let mut out = Map::new();
    for (key, name) in [
        ("is_request_satisfied", "satisfied"),
        ("is_in_loop", "in_loop"),
        ("is_progress_being_made", "progress"),
    ] {
        if let Some(b) = verdict(key).and_then(Value::as_bool) {
            out.insert(name.to_owned(), Value::Bool(b));
        }
    }
    if out.is_empty() {
        return None;
    }
    let stalled = out.get("progress") == Some(&Value::Bool(false));
    let why = if stalled || out.get("in_loop") != Some(&Value::Bool(true)) {
        reason("is_progress_being_made")
    } else {
        reason("is_in_loop")
    };
    if let Some(r) = why {
        out.insert("reason".to_owned(), Value::String(r));
    }
    Some(Value::Object(out))
}

/// The page a browsing agent's message says it ended on: (title, address). A web surfer writes
/// `Here is a screenshot of [TITLE](URL).`; a file surfer starts with `Address: URL` and may add
/// `Title: TITLE`. Only the message's first lines are read.
pub fn page(text: &str) -> Option<(String, String)> {
    const MARK: &str = "screenshot of [";
    let head: String = text.chars().take(4_000).collect();
    if let Some(at) = head.find(MARK) {
        let rest = head.get(at + MARK.len()..)?;
        let close = rest.find("](")?;
        let title = rest.get(..close)?;
        let after = rest.get(close + 2..)?;
        let url = after.get(..after.find(')')?)?;
        return page_of(title, url);
    }
    let mut lines = head.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    let url = first.strip_prefix("Address:")?.trim();
    let title = head
        .lines()
        .take(8)
        .find_map(|l| l.trim().strip_prefix("Title:"))
        .map(str::trim)
        .unwrap_or_default();
    let url = url.split_whitespace().next().unwrap_or(url);
    page_of(title, url)
}

fn page_of(title: &str, url: &str) -> Option<(String, String)> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let cut = |s: &str| s.trim().chars().take(MAX_PAGE_CHARS).collect::<String>();
    Some((cut(title), cut(url)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_instruction_names_its_addressee() {
        assert_eq!(addressee("Orchestrator (-> WebSurfer)"), Some("WebSurfer"));
        assert_eq!(addressee("Orchestrator (thought)"), None);
        assert_eq!(addressee("Orchestrator (-> )"), None);
        assert_eq!(addressee("Orchestrator (-> x"), None);
    }

    #[test]
    fn a_plan_lists_its_team() {
        let plan = "Initial plan:\n\nTo answer this request we have assembled the following team:\n\n\
                    Assistant: A helpful assistant.\nComputerTerminal: runs code: python.\n\
                    WebSurfer: A browser.\n\n\nHere is an initial fact sheet:\n1. FACTS: x";
        assert_eq!(
            team(plan),
            vec!["Assistant", "ComputerTerminal", "WebSurfer"]
        );
        assert!(team("no team here").is_empty());
        assert!(team("assembled the following team:\n\nnot a list of names").is_empty());
    }

    #[test]
    fn a_ledger_gives_its_verdicts_and_the_reason() {
        let text = "Updated Ledger:\n{\n \"is_request_satisfied\": {\"reason\": \"no\", \"answer\": false},\n \
                    \"is_in_loop\": {\"reason\": \"same page again\", \"answer\": true},\n \
                    \"is_progress_being_made\": {\"reason\": \"stuck on an ad\", \"answer\": false},\n \
                    \"next_speaker\": {\"reason\": \"r\", \"answer\": \"WebSurfer\"}\n}\n/usr/lib/x.py:1: UserWarning";
        assert_eq!(
            review(text),
            Some(
                json!({"satisfied": false, "in_loop": true, "progress": false,
                        "reason": "stuck on an ad"})
            )
        );
        let looping = "Updated Ledger: {\"is_in_loop\": {\"reason\": \"again\", \"answer\": true}, \
                       \"is_progress_being_made\": {\"reason\": \"some\", \"answer\": true}}";
        assert_eq!(
            review(looping).and_then(|v| v.get("reason").cloned()),
            Some(json!("again"))
        );
        assert_eq!(review("Updated Ledger: {not json"), None);
        assert_eq!(review("Updated Ledger: {\"x\": 1}"), None);
        assert_eq!(review("Next speaker WebSurfer"), None);
    }

    #[test]
    fn a_browsing_message_names_its_page() {
        let web = "I clicked 'Details'.\n\nHere is a screenshot of [Dojos in New York](https://dojos.info/NY/). The viewport shows 8%";
        assert_eq!(
            page(web),
            Some((
                "Dojos in New York".to_owned(),
                "https://dojos.info/NY/".to_owned()
            ))
        );
        let file = "Address: file:///workspace/a.pdf\nTitle: Error 404\nViewport position: page 1";
        assert_eq!(
            page(file),
            Some(("Error 404".to_owned(), "file:///workspace/a.pdf".to_owned()))
        );
        assert_eq!(page("The answer is 42."), None);
        assert_eq!(page("Here is a screenshot of [broken"), None);
    }
}
