//! Parsing a file into its raw JSON ([`Document`]).

use super::error::LoadError;
use crate::analysis::document::Document;
use serde_json::Value;
use std::path::Path;

/// Parses `text` as one JSON value, or as several values one after another: JSON lines (the
/// collector's file exporter) or pretty-printed values written in a row. Errors name the file, line
/// and column; a file with no value at all says it is empty.
pub fn parse_document(text: &str, path: &Path) -> Result<Document, LoadError> {
    let mut values = Vec::new();
    for v in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        values.push(v.map_err(|e| json_error(path, &e))?);
    }
    match values.len() {
        0 => Err(LoadError::Json {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "the file is empty; a run file holds a JSON object".to_owned(),
        }),
        1 => Ok(Document::One(values.swap_remove(0))),
        _ => Ok(Document::Lines(values)),
    }
}

fn json_error(path: &Path, e: &serde_json::Error) -> LoadError {
    let text = e.to_string();
    // serde_json appends " at line L column C"; the location is carried separately.
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    };
    LoadError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}
