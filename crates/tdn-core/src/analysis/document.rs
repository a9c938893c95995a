//! The raw JSON of a file before any format is known: one value, or several in a row (JSON lines,
//! as the OpenTelemetry collector's file exporter writes them). The loader parses it
//! (`load::parse_document`); the importers read it.

use serde_json::Value;

/// A parsed file before any format is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    /// The whole file is one JSON value.
    One(Value),
    /// The file holds several JSON values one after another (JSON lines, or pretty-printed values).
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

/// A JSON value's type in words ("an object", "a string", ...), for messages.
pub fn json_type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
