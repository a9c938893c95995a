//! Where an import reads whether the run's outcome was right (docs/importers.md, "Context
//! units, task and outcome"): a framework's success flag in the root output, a score or label
//! the trace carries, a benchmark's reward; a root that failed is an error. What is read is
//! written as the run's `status`, `status_from` and `status_why`; when nothing says, the run is
//! taken as failed (`status_from: assumed`) so that it can be diagnosed, with a warning.
//!
//! Pure; never panics.

use super::decode;
use crate::analysis::warning::Warning;
use serde_json::{Map, Value};

/// What the recording says of the outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    /// `succeeded`, `failed` or `error`.
    pub status: &'static str,
    /// What it was read from, in words.
    pub why: String,
}

impl Said {
    /// The outcome as the recording states it.
    pub fn new(status: &'static str, why: impl Into<String>) -> Said {
        Said {
            status,
            why: why.into(),
        }
    }

    /// Writes it into the run JSON.
    pub fn write(self, run: &mut Map<String, Value>) {
        run.insert("status".to_owned(), Value::String(self.status.to_owned()));
        run.remove("status_from");
        run.insert("status_why".to_owned(), Value::String(self.why));
    }
}

/// Takes the run as failed because nothing recorded whether its outcome was right.
pub fn assume_failed(run: &mut Map<String, Value>) {
    run.insert("status".to_owned(), Value::String("failed".to_owned()));
    run.insert(
        "status_from".to_owned(),
        Value::String("assumed".to_owned()),
    );
    run.insert(
        "status_why".to_owned(),
        Value::String("nothing in the recording says whether the outcome was right".to_owned()),
    );
}

/// True when the run's status was assumed.
pub fn is_assumed(run: &Map<String, Value>) -> bool {
    run.get("status_from").and_then(Value::as_str) == Some("assumed")
}

/// The warning every run whose outcome was assumed carries. It concerns the file (said once for
/// all its runs).
pub fn status_guess() -> Warning {
    Warning::file(
        Some("status"),
        "the file does not record whether the outcome was right; the run is taken as failed so it can be diagnosed (give --outcome succeeded, or a reference answer, if it was right)",
    )
}

/// Keys of a root output whose boolean says whether the run succeeded.
const SUCCESS_KEYS: [&str; 4] = ["success", "succeeded", "is_success", "passed"];

/// A framework's own verdict in a root output: `{"success": true}` (also `succeeded`,
/// `is_success`, `passed`), in the output itself or in text holding it as JSON or a Python
/// literal.
pub fn success_flag(output: &Value) -> Option<Said> {
    let v = match output {
        Value::String(_) => decode::decoded(output.clone()),
        other => other.clone(),
    };
    let o = v.as_object()?;
    SUCCESS_KEYS.iter().find_map(|k| {
        let ok = o.get(*k)?.as_bool()?;
        Some(Said::new(
            if ok { "succeeded" } else { "failed" },
            format!("the root output says \"{k}\": {ok}"),
        ))
    })
}

/// Words in a score's name that make it a score of whether the answer was right.
const OUTCOME_WORDS: [&str; 6] = ["correct", "success", "accura", "pass", "solved", "resolved"];

/// Labels that say the outcome was right, and ones that say it was wrong.
const RIGHT: [&str; 8] = [
    "correct",
    "pass",
    "passed",
    "success",
    "succeeded",
    "true",
    "yes",
    "right",
];
const WRONG: [&str; 9] = [
    "incorrect",
    "fail",
    "failed",
    "failure",
    "false",
    "no",
    "wrong",
    "error",
    "unsolved",
];

/// The outcome the scores (or labels, annotations) of a trace state: those whose name says they
/// judge whether the answer was right (`correctness`, `success`, `accuracy`, `pass`, ...) and
/// whose value decides (1 or 0, true or false, a label such as `correct` / `incorrect`). A score of
/// something else (`hallucination`, `toxicity`) or an undecided value (0.7) says nothing; scores
/// that disagree say nothing. Accepts a list of scores, or text holding one (JSON or a Python
/// literal, as exports write it).
pub fn from_scores(scores: &Value) -> Option<Said> {
    let list = match scores {
        Value::String(_) => decode::decoded(scores.clone()),
        other => other.clone(),
    };
    let mut verdicts: Vec<(bool, String)> = Vec::new();
    for s in list.as_array().into_iter().flatten() {
        let Some(name) = s.get("name").and_then(Value::as_str) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if !OUTCOME_WORDS.iter().any(|w| lower.contains(w)) {
            continue;
        }
        let value = ["value", "stringValue", "label", "score"]
            .iter()
            .filter_map(|k| s.get(*k))
            .find_map(decides);
        if let Some(ok) = value {
            verdicts.push((ok, name.to_owned()));
        }
    }
    let (first, name) = verdicts.first()?.clone();
    if verdicts.iter().any(|(ok, _)| *ok != first) {
        return None;
    }
    Some(Said::new(
        if first { "succeeded" } else { "failed" },
        format!(
            "the trace's score '{}' says the answer was {}",
            crate::analysis::model::inert_line(&name),
            if first { "right" } else { "wrong" }
        ),
    ))
}

/// Whether a score's value decides the outcome: 1 or 0, true or false, a label.
fn decides(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => {
            let x = n.as_f64()?;
            if x == 1.0 {
                Some(true)
            } else if x == 0.0 {
                Some(false)
            } else {
                None
            }
        }
        Value::String(s) => {
            let t = s.trim().to_ascii_lowercase();
            if RIGHT.contains(&t.as_str()) {
                Some(true)
            } else if WRONG.contains(&t.as_str()) {
                Some(false)
            } else {
                match t.parse::<f64>() {
                    Ok(x) => decides(&Value::from(x)),
                    Err(_) => None,
                }
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_success_flag_in_the_root_output_decides() {
        let said = success_flag(&json!({"success": true, "result": "done"}));
        assert_eq!(said.map(|s| s.status), Some("succeeded"));
        assert_eq!(
            success_flag(&json!("{\"success\": false}")).map(|s| s.status),
            Some("failed")
        );
        assert_eq!(
            success_flag(&json!("{'passed': True}")).map(|s| s.status),
            Some("succeeded")
        );
        assert_eq!(success_flag(&json!({"success": "yes"})), None);
        assert_eq!(success_flag(&json!("success")), None);
    }

    #[test]
    fn scores_of_correctness_decide_and_others_do_not() {
        let real =
            json!("[{'name': 'hallucination', 'value': 0.2}, {'name': 'toxicity', 'value': 0}]");
        assert_eq!(from_scores(&real), None);
        let right = json!([{"name": "correctness", "value": 1, "dataType": "NUMERIC"}]);
        assert_eq!(from_scores(&right).map(|s| s.status), Some("succeeded"));
        let label = json!([{"name": "Answer correct?", "stringValue": "Incorrect", "dataType": "CATEGORICAL"}]);
        assert_eq!(from_scores(&label).map(|s| s.status), Some("failed"));
        let undecided = json!([{"name": "accuracy", "value": 0.7}]);
        assert_eq!(from_scores(&undecided), None);
        let disagree =
            json!([{"name": "correctness", "value": 1}, {"name": "task_success", "value": false}]);
        assert_eq!(from_scores(&disagree), None);
        assert_eq!(from_scores(&json!("not scores")), None);
    }
}
