//! Reading a sample's answer from its stdout (docs/experiments.md, "The answer"): the last line
//! that parses as a JSON object, which must hold a string `output` and may hold `cost {loops,
//! tokens}` and `replayed_call` (the step of the one model call it re-sent); else, when no line parses as a JSON object, all of stdout as plain text.
//!
//! Stdout is untrusted: any bytes at all must give an answer or a reason, never a panic.

use super::{Answer, Cost};
use serde_json::{Map, Value};

/// The most stdout a sample may print (1 MiB); more kills its group and errors the sample.
pub const MAX_STDOUT: usize = 1 << 20;
/// How much of a sample's stderr is kept for the user (the last 4 KiB).
pub const STDERR_TAIL: usize = 4 << 10;

/// The answer in `stdout`, or why it cannot be read (one sentence).
pub fn parse_answer(stdout: &[u8]) -> Result<Answer, String> {
    if let Some(obj) = last_json_object(stdout) {
        return match obj.get("output") {
            Some(Value::String(s)) => Ok(Answer {
                output: s.clone(),
                cost: cost_of(obj.get("cost")),
                replayed_call: obj
                    .get("replayed_call")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
            Some(other) => Err(format!(
                "the last JSON line of stdout has 'output' as {}, not a string",
                crate::analysis::load::json_type_name(other)
            )),
            None => Err("the last JSON line of stdout has no string 'output'".to_owned()),
        };
    }
    let text = std::str::from_utf8(stdout)
        .map_err(|_| "stdout is not UTF-8 and holds no JSON answer line".to_owned())?;
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "stdout is empty: print the answer, or a JSON line {\"output\": ...}".to_owned(),
        );
    }
    if let Some(c) = text
        .chars()
        .find(|&c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
    {
        return Err(format!(
            "stdout holds the control character U+{:04X} and no JSON answer line",
            u32::from(c)
        ));
    }
    Ok(Answer {
        output: text.to_owned(),
        cost: Cost::default(),
        replayed_call: None,
    })
}

/// The last line (split on `\n`) that parses as a JSON object.
fn last_json_object(stdout: &[u8]) -> Option<Map<String, Value>> {
    stdout.split(|&b| b == b'\n').rev().find_map(|line| {
        let line = line.trim_ascii();
        if line.first() != Some(&b'{') {
            return None;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    })
}

fn cost_of(v: Option<&Value>) -> Cost {
    let Some(Value::Object(m)) = v else {
        return Cost::default();
    };
    let member = |k: &str| {
        m.get(k)
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    Cost {
        loops: member("loops"),
        tokens: member("tokens"),
        usd: member("usd"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_json_object_line_wins_and_carries_cost() {
        let out = b"thinking...\n{\"output\": \"first\"}\n{\"output\": \"$80\", \"cost\": {\"loops\": 3, \"tokens\": 1840, \"usd\": 0.0045}}\n[1,2]\n";
        let a = parse_answer(out).unwrap();
        assert_eq!(a.output, "$80");
        assert_eq!(a.cost.loops, Some(3.0));
        assert_eq!(a.cost.tokens, Some(1840.0));
        assert_eq!(a.cost.usd, Some(0.0045));
    }

    #[test]
    fn cost_members_that_are_not_non_negative_numbers_are_not_reported() {
        let a =
            parse_answer(br#"{"output": "x", "cost": {"loops": -1, "tokens": "many"}}"#).unwrap();
        assert!(a.cost.is_empty());
        let a = parse_answer(br#"{"output": "x", "cost": 7}"#).unwrap();
        assert!(a.cost.is_empty());
        let a = parse_answer(br#"{"output": "x", "cost": {"loops": 0.5}}"#).unwrap();
        assert_eq!(a.cost.loops, Some(0.5));
        assert_eq!(a.cost.tokens, None);
    }

    #[test]
    fn a_json_answer_without_a_string_output_is_unreadable() {
        assert!(parse_answer(br#"{"answer": "x"}"#).is_err());
        assert!(parse_answer(br#"{"output": 3}"#).is_err());
    }

    #[test]
    fn plain_text_is_trimmed_and_checked() {
        assert_eq!(parse_answer(b"  $120\r\n").unwrap().output, "$120");
        assert_eq!(
            parse_answer(b"line one\n\tline two\n").unwrap().output,
            "line one\n\tline two"
        );
        assert!(parse_answer(b"").is_err());
        assert!(parse_answer(b" \n\t ").is_err());
        assert!(parse_answer(b"\xff\xfe answer").is_err());
        assert!(parse_answer(b"a\x1b[2Jb").is_err());
        assert!(parse_answer("a\u{85}b".as_bytes()).is_err());
    }

    #[test]
    fn a_json_line_is_found_among_non_utf8_lines() {
        let a = parse_answer(b"\xff\xff\n{\"output\": \"ok\"}\n").unwrap();
        assert_eq!(a.output, "ok");
    }
}
