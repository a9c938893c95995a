//! The compact JSON text of a value, written straight into a string: the bytes
//! `serde_json::to_string` writes (issue 11: a JSON value is written as text to be numbered and
//! embedded, and serde_json's writer, through an `io::Write` and a UTF-8 check of the result,
//! cost more than the embedding of the text). Numbers are still written by serde_json; strings
//! are escaped as serde_json escapes them: `"` and `\` with a backslash, the control characters
//! `\b \t \n \f \r` by name and the others as `\u00xx` (lowercase hex), everything else as is.

use crate::analysis::model::Json;
use crate::analysis::model::json_string::write_json_string as write_string;

/// Appends the compact JSON of `v` to `out`; `number` is scratch for writing a number.
pub(super) fn write_compact(v: &Json, out: &mut String, number: &mut Vec<u8>) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(n) => {
            number.clear();
            if serde_json::to_writer(&mut *number, n).is_ok()
                && let Ok(s) = std::str::from_utf8(number)
            {
                out.push_str(s);
            }
        }
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_compact(item, out, number);
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (k, (key, value)) in map.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_compact(value, out, number);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::json_string::tests::string;
    use crate::analysis::testutil::{TreeShape, json_tree};
    use proptest::prelude::*;
    use serde_json::Value;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop::sample::select(vec![0.0, -0.0, 1e300, 2.5e-308, 0.1, 1e21, 123456789.0])
                .prop_map(Value::from),
            string().prop_map(Value::String),
        ];
        json_tree(
            leaf,
            string,
            TreeShape {
                depth: 3,
                size: 24,
                branch: 5,
                array: 0..5,
                object: 0..5,
            },
        )
    }

    proptest! {
        #[test]
        fn the_text_is_what_serde_json_writes(v in value()) {
            let j = Json::from(v.clone());
            let (mut out, mut number) = (String::from("kept "), Vec::new());
            write_compact(&j, &mut out, &mut number);
            let want = format!("kept {}", serde_json::to_string(&v).unwrap());
            prop_assert_eq!(out, want);
        }
    }
}
