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

/// [`parse_document`], also reading JSON values written with lines of other text between them,
/// as a program's output captured with the OpenTelemetry console exporter's spans holds its own
/// prints: when the strict reading fails, each line outside a value that does not open one
/// (`{` or `[` first) is skipped, and the values are read as if those lines were not there.
/// Gives the document and how many lines of text were skipped (0 when the strict reading
/// succeeded); a value that is itself broken still fails with the strict reading's error.
/// Linear in the text.
pub fn parse_document_skipping_text(
    text: &str,
    path: &Path,
) -> Result<(Document, usize), LoadError> {
    let strict = match parse_document(text, path) {
        Ok(doc) => return Ok((doc, 0)),
        Err(e) => e,
    };
    match values_between_lines(text) {
        Some((mut values, skipped)) if skipped > 0 && !values.is_empty() => {
            let doc = if values.len() == 1 {
                Document::One(values.swap_remove(0))
            } else {
                Document::Lines(values)
            };
            Ok((doc, skipped))
        }
        _ => Err(strict),
    }
}

/// The warning for `skipped` lines of text left out by [`parse_document_skipping_text`].
pub fn skipped_text_warning(skipped: usize) -> String {
    format!(
        "{} line(s) of text between the JSON values are not JSON (a program's own output, captured with its spans?); they were skipped",
        skipped
    )
}

/// The JSON values of `text` read line by line: a line whose first character (after white
/// space) opens an object or an array starts a value, read whole; any other line outside a value
/// is skipped and counted. `None` when a value fails to parse.
fn values_between_lines(text: &str) -> Option<(Vec<Value>, usize)> {
    let mut values = Vec::new();
    let mut skipped = 0;
    let mut at = 0;
    while let Some(rest) = text.get(at..).filter(|r| !r.is_empty()) {
        let line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let line = rest.get(..line_end).unwrap_or(rest).trim();
        if line.starts_with('{') || line.starts_with('[') {
            let start = rest.len() - rest.trim_start().len();
            let from = rest.get(start..)?;
            let mut stream = serde_json::Deserializer::from_str(from).into_iter::<Value>();
            values.push(stream.next()?.ok()?);
            at += start + stream.byte_offset();
        } else {
            if !line.is_empty() {
                skipped += 1;
            }
            at += line_end;
        }
    }
    Some((values, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_console_capture_with_prints_between_the_spans_reads_the_spans() {
        let text = " \nSYNC\n{\"name\": \"a\",\n \"x\": [1, 2]}\nDONE ok\n\n{\"name\": \"b\"} trailing\n[3]\n";
        let (doc, skipped) = parse_document_skipping_text(text, Path::new("f.json")).unwrap();
        assert_eq!(
            skipped, 3,
            "SYNC, DONE ok and the text after a value on its line"
        );
        let Document::Lines(values) = doc else {
            panic!("three values")
        };
        let names: Vec<&str> = values.iter().filter_map(|v| v["name"].as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(values.len(), 3);
    }

    #[test]
    fn clean_files_broken_values_and_text_alone_are_read_strictly() {
        let path = Path::new("f.json");
        let (_, skipped) = parse_document_skipping_text("{\"a\": 1}\n{\"b\": 2}\n", path).unwrap();
        assert_eq!(skipped, 0);
        // A value cut off is an error, whatever text surrounds it, with the strict error's place.
        let broken = "note\n{\"a\": 1,\n\"b\": \n";
        let strict = parse_document(broken, path).unwrap_err().to_string();
        let lenient = parse_document_skipping_text(broken, path)
            .unwrap_err()
            .to_string();
        assert_eq!(strict, lenient);
        // No value at all: the strict error.
        assert!(parse_document_skipping_text("just words\nmore\n", path).is_err());
        // A hostile size stays linear: many short lines of text around one value.
        let big = format!("{}{{\"a\": 1}}\n", "x\n".repeat(200_000));
        let (_, skipped) = parse_document_skipping_text(&big, path).unwrap();
        assert_eq!(skipped, 200_000);
    }
}
