//! Reading a native run straight from the file's text, one step at a time (issue 11): each step
//! is parsed and built before the next is read, so the whole file never sits in memory as one
//! `serde_json::Value` beside the run built from it.
//!
//! Taken only for a file whose first key is `"format": "tdn.run/1"` and that holds one JSON
//! value; the rules, messages and warnings are those of [`super::run_from_value`] (the same
//! functions, in the same order). Anything else (another format, several values, a syntax
//! error, `steps` that are not an array) is left to the general reader, which then says what is
//! wrong exactly as before. Values are read with no spare room (`compact.rs`), a step's payloads
//! straight into their own type (`payload.rs`).

use super::compact::Compact;
use super::parallel::run_from_text_parallel;
use super::payload::StepSeed;
use super::{Steps, finish, head, read_units, top_fields};
use crate::analysis::load::error::RunError;
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{RUN_FORMAT, Run};
use crate::analysis::progress::Progress;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// What reading a native run from text gave.
pub enum Streamed {
    /// The run and its warnings.
    Loaded(Box<Run>, Vec<Warning>),
    /// A native run that breaks a rule.
    Failed(RunError),
    /// Not for this reader: the general reader takes the file.
    NotHere,
}

/// Reads `text` as a native run, counting the steps read in `progress`: its steps in parallel
/// when `parallel.rs` takes the file, else one by one.
pub fn run_from_text(text: &str, progress: &Progress) -> Streamed {
    run_from_text_parallel(text, progress).unwrap_or_else(|| {
        progress.done(0);
        step_by_step(text, progress)
    })
}

/// Reads `text` as a native run one step at a time.
pub(super) fn step_by_step(text: &str, progress: &Progress) -> Streamed {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut steps = StepSink::new(progress);
    let obj = match de.deserialize_map(Top { sink: &mut steps }) {
        Ok(Some(obj)) => obj,
        Ok(None) | Err(_) => return Streamed::NotHere,
    };
    if de.end().is_err() {
        return Streamed::NotHere;
    }
    let mut obj = obj;
    let run = match head(&mut obj) {
        Ok((run, _placeholder)) => run,
        Err(e) => return Streamed::Failed(e),
    };
    let mut w = Vec::new();
    let run = top_fields(run, &mut obj, &mut w);
    if let Some(e) = steps.error {
        return Streamed::Failed(e);
    }
    let units = read_units(&mut obj);
    let (run, w) = finish(run, obj, units, steps.steps, w);
    Streamed::Loaded(Box::new(run), w)
}

/// Where steps go as they are read.
pub(super) struct StepSink<'p> {
    steps: Steps,
    /// The first step that stopped the load; later steps are only checked for syntax.
    error: Option<RunError>,
    progress: &'p Progress,
}

impl<'p> StepSink<'p> {
    pub(super) fn new(progress: &'p Progress) -> StepSink<'p> {
        StepSink {
            steps: Steps::default(),
            error: None,
            progress,
        }
    }

    /// True when no element of a `steps` array came in.
    pub(super) fn saw_no_step(&self) -> bool {
        self.steps.steps.is_empty() && self.error.is_none()
    }
}

/// The top-level object: `Some(fields)` without `steps` (a placeholder keeps its place, so the
/// fields left over keep the order the general reader gives them), or `None` when the file is
/// not for this reader.
pub(super) struct Top<'s, 'p> {
    pub(super) sink: &'s mut StepSink<'p>,
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a run object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut obj = Map::new();
        if map.next_key::<String>()?.as_deref() != Some("format") {
            return Ok(None);
        }
        let format: Value = map.next_value()?;
        if format.as_str() != Some(RUN_FORMAT) {
            return Ok(None);
        }
        obj.insert("format".to_owned(), format);
        let mut steps_seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "steps" {
                if steps_seen {
                    return Ok(None);
                }
                steps_seen = true;
                obj.insert(key, Value::Array(Vec::new()));
                map.next_value_seed(StepsSeed {
                    sink: &mut *self.sink,
                })?;
            } else {
                let v = map.next_value_seed(Compact)?;
                obj.insert(key, v);
            }
        }
        Ok(Some(obj))
    }
}

struct StepsSeed<'s, 'p> {
    sink: &'s mut StepSink<'p>,
}

impl<'de> DeserializeSeed<'de> for StepsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for StepsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of steps")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sink = self.sink;
        loop {
            if sink.error.is_some() {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    return Ok(());
                }
                continue;
            }
            let Some(raw) = seq.next_element_seed(StepSeed)? else {
                return Ok(());
            };
            if let Err(e) = sink.steps.push_raw(raw) {
                sink.error = Some(e);
            }
            sink.progress.add(1);
        }
    }
}

impl fmt::Debug for Streamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Streamed::Loaded(run, w) => {
                write!(f, "Loaded({} steps, {} warnings)", run.steps.len(), w.len())
            }
            Streamed::Failed(e) => write!(f, "Failed({e})"),
            Streamed::NotHere => f.write_str("NotHere"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::import::SourceFormat;
    use crate::analysis::load::native::run_from_value;

    /// The step-by-step reader gives what the general reader gives, or leaves the file to it.
    fn same_as_general(text: &str) -> Streamed {
        let streamed = run_from_text(text, &Progress::new());
        let general =
            serde_json::from_str::<Value>(text).map(|v| run_from_value(v, SourceFormat::Native));
        match (&streamed, general) {
            (Streamed::Loaded(run, w), Ok(Ok((r2, w2)))) => {
                assert_eq!(**run, r2);
                assert_eq!(w, &w2);
            }
            (Streamed::Failed(e), Ok(Err(e2))) => assert_eq!(e, &e2),
            (Streamed::NotHere, _) => {}
            (s, g) => panic!("step by step: {s:?}; general: {g:?}"),
        }
        streamed
    }

    #[test]
    fn every_sample_run_reads_the_same_step_by_step() {
        let mut read = 0;
        for path in crate::analysis::testutil::sample_runs() {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.trim_start().starts_with("{\n  \"format\"") {
                assert!(
                    matches!(same_as_general(&text), Streamed::Loaded(..)),
                    "{path:?}"
                );
                read += 1;
            }
        }
        assert!(read >= 10, "{read}");
    }

    #[test]
    fn warnings_errors_and_leftover_fields_match_the_general_reader() {
        let cases = [
            // unknown fields around the steps keep their order; warnings in the same order
            r#"{"format":"tdn.run/1","zz":1,"steps":[{"id":"a","kind":"odd","usage":{"input_tokens":"x"}},{"id":"b","kind":"llm","parent":"c"}],"id":"r","title":7,"status":"failed","aa":[2],"context_units":[{"id":"u","kind":"document","text":"t","produced_by":"nope"}]}"#,
            // a bad step, then a missing id: the run-level error wins, as in the general reader
            r#"{"format":"tdn.run/1","steps":[{"kind":"llm"}],"status":"failed"}"#,
            // a bad step alone
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"kind":"llm"},{"id":"c"}]}"#,
            // two steps with one id
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"id":"a","kind":"tool"}]}"#,
            // no steps, empty steps, a later "format" naming another version
            r#"{"format":"tdn.run/1","id":"r","status":"failed"}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"ok","steps":[]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[],"format":"tdn.run/9"}"#,
        ];
        for text in cases {
            assert!(
                !matches!(same_as_general(text), Streamed::NotHere),
                "{text}"
            );
        }
    }

    #[test]
    fn other_files_are_left_to_the_general_reader() {
        for text in [
            r#"{"id":"r","format":"tdn.run/1","status":"failed","steps":[]}"#,
            r#"{"format":"otlp","steps":[]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":{}}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[],"steps":[]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"}]} {"x":1}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"kind":"llm"}, ]}"#,
            r#"[{"format":"tdn.run/1"}]"#,
            "",
        ] {
            assert!(matches!(same_as_general(text), Streamed::NotHere), "{text}");
        }
    }

    #[test]
    fn steps_read_are_counted() {
        let p = Progress::new();
        let text = r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"id":"b","kind":"llm"}]}"#;
        assert!(matches!(run_from_text(text, &p), Streamed::Loaded(..)));
        assert_eq!(p.snapshot().done, 2);
    }
}
