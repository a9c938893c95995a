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
    use crate::analysis::model::json_string::needs_escape;
    use crate::analysis::testutil::{TreeShape, json_tree};
    use proptest::prelude::*;
    use serde_json::Value;

    /// Strings with every kind of byte serde_json treats apart: controls, quotes,
    /// backslashes, DEL, non-ASCII letters and emoji.
    fn string() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => (0x20u8..0x7f).prop_map(char::from),
                2 => (0u8..0x20).prop_map(char::from),
                1 => prop::sample::select(vec!['"', '\\', '\u{7f}', '\u{e9}', '\u{2028}', '\u{1f600}', '/']),
            ],
            0..40,
        )
        .prop_map(|c| c.into_iter().collect())
    }

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

    proptest! {
        /// Long strings too, with the bytes that need an escape anywhere in a word of eight.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(s in string(), pad in 0usize..9) {
            let s = format!("{}{s}{}", "p".repeat(pad), "q".repeat(pad));
            let mut out = String::new();
            write_string(&s, &mut out);
            prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }

        /// The word test is the byte test on any eight bytes.
        #[test]
        fn a_word_needs_an_escape_when_one_of_its_bytes_does(word in any::<[u8; 8]>(), at in 0usize..8, b in any::<u8>()) {
            let mut word = word;
            word[at] = b;
            let want = word.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
            prop_assert_eq!(needs_escape(u64::from_le_bytes(word)), want);
        }
    }

    #[test]
    fn every_control_character_and_the_quotes_are_escaped_as_serde_json_does() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let mut out = String::new();
        write_string(&all, &mut out);
        assert_eq!(out, serde_json::to_string(&all).unwrap());
        assert!(out.contains("\\u001b") && out.contains("\\n") && out.contains("\\\""));
    }
}
