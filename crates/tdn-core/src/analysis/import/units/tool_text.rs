//! The texts a tool's result may be fed back to a model as: the forms frameworks write it in.

use crate::analysis::model::value_text;
use hashbrown::HashSet;
use serde_json::Value;

/// The texts a tool step's output is fed back as: the output as text; the `content` of a
/// LangChain tool message; the value an OpenInference `{"output": ...}` wraps; a structured
/// value also as Python's `json.dumps` writes it (`", "` and `": "` between items, non-ASCII
/// escaped, and not), and indented by two.
pub(super) fn tool_texts(output: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |v: &Value| {
        if let Some(c) = v.get("content").and_then(Value::as_str) {
            out.push(c.trim().to_owned());
        }
        out.push(value_text(v).trim().to_owned());
        if v.is_object() || v.is_array() {
            out.push(python_json(v, true));
            out.push(python_json(v, false));
            // Indented by two, as `json.dumps(indent=2)` and JavaScript's `JSON.stringify(v,
            // null, 2)` write it.
            if let Ok(pretty) = serde_json::to_string_pretty(v) {
                out.push(pretty);
            }
        }
    };
    add(output);
    if let Some(inner) = output
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("output"))
    {
        add(inner);
    }
    out.retain(|t| !t.is_empty());
    let mut seen = HashSet::new();
    out.retain(|t| seen.insert(t.clone()));
    out
}

/// A value as Python's `json.dumps` writes it by default (`ascii`: with `ensure_ascii`).
pub(super) fn python_json(v: &Value, ascii: bool) -> String {
    let mut out = String::new();
    write_python_json(v, ascii, &mut out, 0);
    out
}

fn write_python_json(v: &Value, ascii: bool, out: &mut String, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (ascii && !c.is_ascii()) => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(x, ascii, out, depth + 1);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(&Value::String(k.clone()), ascii, out, depth + 1);
                out.push_str(": ");
                write_python_json(x, ascii, out, depth + 1);
            }
            out.push('}');
        }
    }
}
