//! The raw JSON of a file: one value, or JSON lines (the OpenTelemetry collector's file exporter).

use super::error::LoadError;
use serde_json::Value;
use std::path::Path;

/// A parsed file before any format is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    /// The whole file is one JSON value.
    One(Value),
    /// The file holds one JSON value per non-empty line.
    Lines(Vec<Value>),
}

impl Document {
    /// The values of the document, in order.
    pub fn values(&self) -> &[Value] {
        match self {
            Document::One(v) => std::slice::from_ref(v),
            Document::Lines(vs) => vs,
        }
    }

    /// Moves the values out.
    pub fn into_values(self) -> Vec<Value> {
        match self {
            Document::One(v) => vec![v],
            Document::Lines(vs) => vs,
        }
    }
}

/// Parses `text` as one JSON value, or, when that fails only because more values follow, as JSON
/// lines. Errors name the file, line and column.
pub fn parse_document(text: &str, path: &Path) -> Result<Document, LoadError> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(Document::One(v)),
        Err(first) => {
            if !first.to_string().contains("trailing characters") {
                return Err(json_error(path, &first, 0));
            }
            let mut values = Vec::new();
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v = serde_json::from_str::<Value>(line).map_err(|e| json_error(path, &e, n))?;
                values.push(v);
            }
            Ok(Document::Lines(values))
        }
    }
}

fn json_error(path: &Path, e: &serde_json::Error, line_offset: usize) -> LoadError {
    let text = e.to_string();
    // serde_json appends " at line L column C"; the location is carried separately.
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    };
    LoadError::Json {
        path: path.to_path_buf(),
        line: e.line() + line_offset,
        column: e.column(),
        message,
    }
}
