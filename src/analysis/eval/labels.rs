//! Where the right answers come from: the inline Who&When labels an import keeps under
//! `attributes.whowhen` (`mistake_step`, a string holding a 0-based index, and `mistake_agent`),
//! or a labels file for other runs.
//!
//! Steps are compared as integers: "1" is step 1, "01" is step 1, "12" is never step 1, and a
//! value that is not a whole non-negative number is no label at all.

use crate::analysis::model::Run;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The labelled failure of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Label {
    /// The 0-based index of the step that caused the failure.
    pub step: Option<usize>,
    /// The agent that made the mistake.
    pub agent: Option<String>,
}

impl Label {
    /// True when neither part is known.
    pub fn is_empty(&self) -> bool {
        self.step.is_none() && self.agent.is_none()
    }
}

/// Why a labels file could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LabelError(pub String);

/// A step label: a whole non-negative number, or a string holding exactly one.
pub fn parse_step(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|u| usize::try_from(u).ok()),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        }
        _ => None,
    }
}

fn parse_agent(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The label a Who&When import carries, if any.
pub fn inline_label(run: &Run) -> Option<Label> {
    let w = run.attributes.get("whowhen")?;
    let label = Label {
        step: w.get("mistake_step").and_then(parse_step),
        agent: w.get("mistake_agent").and_then(parse_agent),
    };
    (!label.is_empty()).then_some(label)
}

/// A labels file: `{"<key>": {"step": N, "agent": "..."}}` (`mistake_step` and `mistake_agent`
/// are accepted too). A key names a run file as given on the command line, as `<folder>/<file>`,
/// or as `<file>`; a file holding several runs adds `#<index>`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelFile {
    by_key: HashMap<String, Label>,
}

impl LabelFile {
    /// Parses the text of a labels file.
    pub fn parse(text: &str) -> Result<Self, LabelError> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            LabelError(format!(
                "not valid JSON at line {}, column {}: give an object of {{\"file\": {{\"step\": N, \"agent\": \"...\"}}}}",
                e.line(),
                e.column()
            ))
        })?;
        let Value::Object(entries) = v else {
            return Err(LabelError(
                "the labels must be a JSON object: {\"file\": {\"step\": N, \"agent\": \"...\"}}"
                    .to_owned(),
            ));
        };
        let mut by_key = HashMap::with_capacity(entries.len());
        for (key, entry) in entries {
            let pick = |a: &str, b: &str| entry.get(a).or_else(|| entry.get(b));
            let label = Label {
                step: pick("step", "mistake_step").and_then(parse_step),
                agent: pick("agent", "mistake_agent").and_then(parse_agent),
            };
            if label.is_empty() {
                return Err(LabelError(format!(
                    "the entry for '{}' has no usable \"step\" (a whole number) or \"agent\" (a string)",
                    crate::analysis::model::inert_line(&key)
                )));
            }
            by_key.insert(key, label);
        }
        Ok(LabelFile { by_key })
    }

    /// The label for a run: the first of its [`label_keys`] that has an entry.
    pub fn lookup(&self, path: &Path, run_index: Option<usize>) -> Option<&Label> {
        label_keys(path, run_index)
            .iter()
            .find_map(|k| self.by_key.get(k))
    }

    /// How many entries the file holds.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// The keys a run is looked up by, most specific first: the path as given, `<folder>/<file>`,
/// `<file>`; each with `#<index>` when the file holds several runs.
pub fn label_keys(path: &Path, run_index: Option<usize>) -> Vec<String> {
    let mut keys = vec![path.to_string_lossy().into_owned()];
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
    if let Some(f) = &file {
        if let Some(set) = set_name(path) {
            keys.push(format!("{set}/{f}"));
        }
        keys.push(f.clone());
    }
    keys.dedup();
    match run_index {
        Some(i) => keys.into_iter().map(|k| format!("{k}#{i}")).collect(),
        None => keys,
    }
}

/// The set a run file belongs to: the name of its folder (e.g. `Hand-Crafted`).
pub fn set_name(path: &Path) -> Option<String> {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::RunStatus;
    use serde_json::json;

    #[test]
    fn steps_are_whole_numbers_never_substrings() {
        assert_eq!(parse_step(&json!("5")), Some(5));
        assert_eq!(parse_step(&json!(" 12 ")), Some(12));
        assert_eq!(parse_step(&json!(3)), Some(3));
        assert_eq!(parse_step(&json!("1, 2")), None);
        assert_eq!(parse_step(&json!("-1")), None);
        assert_eq!(parse_step(&json!("1.0")), None);
        assert_eq!(parse_step(&json!(2.5)), None);
        assert_eq!(parse_step(&json!("")), None);
    }

    #[test]
    fn inline_labels_come_from_the_whowhen_attributes() {
        let mut run = Run::new("r", RunStatus::Failed);
        assert_eq!(inline_label(&run), None);
        run.attributes.insert(
            "whowhen".into(),
            json!({"mistake_step": "14", "mistake_agent": "Orchestrator"}),
        );
        assert_eq!(
            inline_label(&run),
            Some(Label {
                step: Some(14),
                agent: Some("Orchestrator".into())
            })
        );
    }

    #[test]
    fn a_labels_file_is_looked_up_by_path_folder_and_file() {
        let f = LabelFile::parse(
            r#"{"Hand-Crafted/1.json": {"step": "3", "agent": "WebSurfer"},
                "1.json": {"mistake_step": 7},
                "results.json#2": {"step": 0}}"#,
        )
        .unwrap_or_default();
        assert_eq!(f.len(), 3);
        let hc = f.lookup(Path::new("bench/Hand-Crafted/1.json"), None);
        assert_eq!(hc.and_then(|l| l.step), Some(3));
        let other = f.lookup(Path::new("bench/Other/1.json"), None);
        assert_eq!(other.and_then(|l| l.step), Some(7));
        let many = f.lookup(Path::new("x/results.json"), Some(2));
        assert_eq!(many.and_then(|l| l.step), Some(0));
        assert_eq!(f.lookup(Path::new("x/results.json"), Some(1)), None);
    }

    #[test]
    fn a_bad_labels_file_says_what_to_fix() {
        let e = LabelFile::parse(r#"{"a.json": {"step": "x"}}"#).err();
        assert_eq!(
            e.map(|e| e.0).as_deref(),
            Some(
                "the entry for 'a.json' has no usable \"step\" (a whole number) or \"agent\" (a string)"
            )
        );
        assert!(LabelFile::parse("[1]").is_err());
        assert!(LabelFile::parse("{").is_err());
    }
}
