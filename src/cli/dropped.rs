//! `dropped`: available-but-unsent context, JSON in and out (influence.md §10). Reads no config
//! file; exit 0 on success, 2 for bad input.

use super::args::DroppedArgs;
use super::toolbox::{array, kind, print_json, read_input, string};
use crate::analysis::influence::find_dropped_context;
use serde_json::{Map, Value, json};
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &DroppedArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(args.file.as_deref())?;
    let available = units(&input, "available")?;
    let sent = units(&input, "sent")?;
    let diff = find_dropped_context(available.iter().map(|u| u.0), sent.iter().map(|u| u.0));
    let dropped: Vec<Value> = diff
        .dropped
        .iter()
        .filter_map(|&i| available.get(i))
        .map(|(id, content)| {
            let mut m = Map::new();
            m.insert("id".to_owned(), json!(id));
            if let Some(c) = content {
                m.insert("content".to_owned(), (*c).clone());
            }
            Value::Object(m)
        })
        .collect();
    print_json(&json!({
        "dropped": dropped,
        "available_count": diff.available_count,
        "sent_count": diff.sent_count,
        "any_dropped": diff.any_dropped,
        "reason": diff.reason,
    }))?;
    Ok(ExitCode::SUCCESS)
}

/// `(id, content)` of each entry of a list: `{"id", "content"?}` or a bare string id. Content,
/// when the key is present, is carried through as given.
fn units<'a>(
    input: &'a Map<String, Value>,
    key: &str,
) -> anyhow::Result<Vec<(&'a str, Option<&'a Value>)>> {
    array(input, key, "")?
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(id) => Ok((id.as_str(), None)),
            Value::Object(m) => Ok((string(m, "id", &format!("{key}[{i}]."))?, m.get("content"))),
            other => anyhow::bail!(
                "{key}[{i}] must be an object {{\"id\", \"content\"?}} or a string id, not {}",
                kind(other)
            ),
        })
        .collect()
}
