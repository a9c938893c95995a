//! Reading a native run's steps on several threads (issue 11: at 100,000 steps the load on one
//! core took longer than parsing the whole file into one value).
//!
//! `scan.rs` finds each element of the top-level `"steps"` array in the text; the elements are
//! parsed (with no spare room, `compact.rs`, the payloads apart, `payload.rs`) and built into steps by [`step_from_raw`] in
//! parallel, each with its own position and its own list of warnings; the rest of the file (the
//! array emptied) is read meanwhile by the step-by-step reader's own visitor. The steps are then
//! taken in order on one thread, exactly as the step-by-step reader takes them: the same
//! warnings in the same order, the first unusable or repeated step stops the load, an error in
//! the run's own fields comes first. Anything unexpected (the scan is not sure, or any piece
//! does not parse as one JSON value) gives `None`, and the step-by-step reader reads the file
//! as before, so every message stays what it was.

use super::payload::{RawStep, StepSeed};
use super::scan::find_steps;
use super::step::{Refs, step_from_raw};
use super::stream::{StepSink, Streamed, Top};
use super::{Steps, finish, head, read_units, top_fields};
use crate::analysis::load::error::RunError;
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{Step, StepKind};
use crate::analysis::progress::Progress;
use rayon::prelude::*;
use serde::de::{DeserializeSeed, Deserializer};
use serde_json::{Map, Value};

/// Steps handed to one task at a time: enough to outweigh the hand-over, few enough to share
/// a small run between the threads.
pub(super) const MIN_STEPS_PER_TASK: usize = 64;

/// What became of one element, beside the step built from it (a placeholder when there is
/// none). The steps go straight into the run's own vector, each in its place, so no second
/// vector of steps is held while they are taken in order.
pub(super) enum Side {
    /// A step, with its id (made here, on the thread that built it, for the loader's id
    /// index), its references (`None`: it makes none) and its warnings in order.
    Built(String, Option<Box<Refs>>, Vec<Warning>),
    /// A step that stops the load (boxed: every element has a side, and few such a reason).
    Unusable(Box<RunError>),
    /// Not one JSON value: the step-by-step reader takes the file.
    NotJson,
}

/// Reads `text` as a native run with its steps read in parallel; `None` leaves the file to the
/// step-by-step reader. Counts the steps read in `progress`.
pub fn run_from_text_parallel(text: &str, progress: &Progress) -> Option<Streamed> {
    let at = find_steps(text)?;
    let before = text.get(..at.array.start)?;
    let after = text.get(at.array.end..)?;
    let mut rest = String::with_capacity(before.len() + 2 + after.len());
    rest.push_str(before);
    rest.push_str("[]");
    rest.push_str(after);
    let mut built: Vec<Step> = Vec::new();
    let mut sides: Vec<Side> = Vec::new();
    let (top, ()) = rayon::join(
        || read_top(rest),
        || {
            at.elements
                .par_iter()
                .with_min_len(MIN_STEPS_PER_TASK)
                .enumerate()
                .map(|(index, piece)| {
                    let one = build(text.get(piece.clone()), index);
                    progress.add(1);
                    one
                })
                .unzip_into_vecs(&mut built, &mut sides);
        },
    );
    drop(at);
    let mut obj = top?;
    if sides.iter().any(|s| matches!(s, Side::NotJson)) {
        return None;
    }
    let run = match head(&mut obj) {
        Ok((run, _placeholder)) => run,
        Err(e) => return Some(Streamed::Failed(e)),
    };
    let mut w = Vec::new();
    let run = top_fields(run, &mut obj, &mut w);
    let mut steps = Steps::with_capacity(0);
    steps.steps = built;
    steps.taken.reserve(sides.len());
    for (index, side) in sides.into_iter().enumerate() {
        let taken = match side {
            Side::Built(id, refs, warnings) => steps.taken.take(index, id, refs, warnings),
            Side::Unusable(e) => Err(*e),
            Side::NotJson => return None,
        };
        if let Err(e) = taken {
            return Some(Streamed::Failed(e));
        }
    }
    let units = read_units(&mut obj);
    let (run, w) = finish(run, obj, units, steps, w);
    Some(Streamed::Loaded(Box::new(run), w))
}

/// The run's fields other than its steps, from the text with the steps array emptied: `None`
/// when the step-by-step reader would not take the file, or the emptied array is not the one it
/// reads as `steps`. The text is freed as soon as it is read.
pub(super) fn read_top(rest: String) -> Option<Map<String, Value>> {
    let unused = Progress::new();
    let mut sink = StepSink::new(&unused);
    let mut de = serde_json::Deserializer::from_str(&rest);
    let obj = de.deserialize_map(Top { sink: &mut sink }).ok()??;
    de.end().ok()?;
    sink.saw_no_step().then_some(obj)
}

/// One element parsed and built as the step at `index`.
pub(super) fn build(piece: Option<&str>, index: usize) -> (Step, Side) {
    let placeholder = || Step::new(String::new(), StepKind::Event);
    let Some(raw) = piece.and_then(parse) else {
        return (placeholder(), Side::NotJson);
    };
    let mut w = Vec::new();
    match step_from_raw(raw, index, &mut w) {
        Ok((step, refs)) => {
            let id = step.id.0.clone();
            let refs = (!refs.is_empty()).then(|| Box::new(refs));
            (step, Side::Built(id, refs, w))
        }
        Err(e) => (placeholder(), Side::Unusable(Box::new(e))),
    }
}

/// One JSON value with nothing after it but whitespace.
pub(super) fn parse(piece: &str) -> Option<RawStep> {
    let mut de = serde_json::Deserializer::from_str(piece);
    let raw = StepSeed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(raw)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::stream::step_by_step;
    use super::*;
    use crate::analysis::testutil::{TreeShape, json_tree};
    use proptest::prelude::*;

    /// The parallel reader gives what the step-by-step reader gives, or leaves the file to it;
    /// true when it took the file.
    fn agrees(text: &str) -> Result<bool, TestCaseError> {
        let Some(parallel) = run_from_text_parallel(text, &Progress::new()) else {
            return Ok(false);
        };
        match (parallel, step_by_step(text, &Progress::new())) {
            (Streamed::Loaded(run, w), Streamed::Loaded(run2, w2)) => {
                prop_assert_eq!(run, run2);
                prop_assert_eq!(w, w2);
            }
            (Streamed::Failed(e), Streamed::Failed(e2)) => prop_assert_eq!(e, e2),
            (p, s) => prop_assert!(false, "parallel: {:?}; step by step: {:?}", p, s),
        }
        Ok(true)
    }

    /// Strings that look like the structure the scan tracks: quotes, backslashes, brackets,
    /// commas, colons, the word steps, a control character (written as `\u0001`), non-ASCII.
    fn tricky() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-c\"\\\\\\[\\]{},: \u{1}\u{e9}]{0,8}",
            Just("steps".to_owned()),
            Just("\"steps\": [".to_owned()),
            Just("\\\",".to_owned()),
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e30..1e30_f64).prop_map(Value::from),
            tricky().prop_map(Value::String),
        ];
        json_tree(
            leaf,
            tricky,
            TreeShape {
                depth: 3,
                size: 24,
                branch: 4,
                array: 0..4,
                object: 0..4,
            },
        )
    }

    /// A step with a few of the fields a step may have, each sometimes of the wrong type, ids
    /// from a small pool (so some repeat and some references resolve), and a field nobody knows.
    fn step() -> impl Strategy<Value = Value> {
        let id = prop_oneof![
            8 => (0..12_u8).prop_map(|n| Value::from(format!("s{n}"))),
            1 => json(),
        ];
        let kind = prop_oneof![
            Just("llm"),
            Just("tool"),
            Just("user"),
            Just("retrieval"),
            Just("odd"),
        ];
        let field = prop_oneof![
            Just("name"),
            Just("parent"),
            Just("input"),
            Just("output"),
            Just("error"),
            Just("tool"),
            Just("documents"),
            Just("usage"),
            Just("context"),
            Just("started_at"),
            Just("attributes"),
            Just("extra \"]"),
        ];
        let value = prop_oneof![
            json(),
            (0..12_u8).prop_map(|n| Value::from(format!("s{n}"))),
            tricky().prop_map(|t| serde_json::json!({"name": t, "arguments": {"q": t}})),
            tricky().prop_map(|t| serde_json::json!([{"id": 1, "text": t}, 2])),
        ];
        (
            prop::option::weighted(0.95, id),
            prop::option::weighted(0.95, kind),
            prop::collection::vec((field, value), 0..5),
            0..20_u8,
        )
            .prop_map(|(id, kind, fields, shape)| {
                if shape == 0 {
                    return Value::from("not a step");
                }
                let mut o = Map::new();
                if let Some(id) = id {
                    o.insert("id".to_owned(), id);
                }
                if let Some(kind) = kind {
                    o.insert("kind".to_owned(), Value::from(kind));
                }
                for (k, v) in fields {
                    o.insert(k.to_owned(), v);
                }
                Value::Object(o)
            })
    }

    /// A run's text: the format first, then the run's fields, the steps and fields nobody knows
    /// in an order drawn, written compactly or pretty-printed.
    pub(in super::super) fn run_text() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(step(), 0..24),
            prop::collection::vec((0..6_u8, json()), 0..5),
            0..4_usize,
            any::<bool>(),
        )
            .prop_map(|(steps, fields, steps_at, pretty)| {
                let mut o = Map::new();
                o.insert("format".to_owned(), Value::from("tdn.run/1"));
                let mut rest: Vec<(String, Value)> = vec![
                    ("id".to_owned(), Value::from("r")),
                    ("status".to_owned(), Value::from("failed")),
                ];
                for (n, v) in fields {
                    let key =
                        ["title", "task", "context_units", "zz", "id", "status"][usize::from(n)];
                    rest.push((key.to_owned(), v));
                }
                rest.insert(
                    steps_at.min(rest.len()),
                    ("steps".to_owned(), Value::Array(steps)),
                );
                for (k, v) in rest {
                    o.insert(k, v);
                }
                let v = Value::Object(o);
                if pretty {
                    serde_json::to_string_pretty(&v).unwrap_or_default()
                } else {
                    v.to_string()
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_parallel_reader_reads_every_run_as_the_step_by_step_one(text in run_text()) {
            prop_assert!(agrees(&text)?, "{}", text);
        }

        #[test]
        fn a_damaged_run_reads_the_same_or_is_left_to_the_step_by_step_reader(
            text in run_text(),
            at in any::<prop::sample::Index>(),
            cut in any::<bool>(),
            insert in prop_oneof![Just("\""), Just("\\"), Just("]"), Just(","), Just("}"), Just("[")],
        ) {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let damaged = if cut {
                text[..at].to_owned()
            } else {
                format!("{}{insert}{}", &text[..at], &text[at..])
            };
            agrees(&damaged)?;
        }
    }

    #[test]
    fn escapes_the_scan_does_not_read_leave_the_file_to_the_step_by_step_reader_or_agree() {
        for text in [
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a\u0022]","kind":"llm"},{"id":"b\\","kind":"llm","parent":"a\"]"}]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","st\u0065ps":[{"id":"a","kind":"llm"}]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"}],"st\u0065ps":[]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"}],"steps":[]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"}]} {"x":1}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"} {"id":"b","kind":"llm"}]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"}],"x":[1,}"#,
            r#"{"format":"tdn.run/1","id":7,"status":"failed","steps":[{"kind":"llm"}]}"#,
            r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"id":"a","kind":"llm"},{"id":"c"}]}"#,
        ] {
            agrees(text).unwrap();
        }
    }

    #[test]
    fn steps_nested_near_serde_jsons_limit_are_left_to_the_step_by_step_reader() {
        for depth in [60, 125, 126, 127, 128, 200] {
            let text = format!(
                r#"{{"format":"tdn.run/1","id":"r","status":"failed","steps":[{{"id":"a","kind":"llm","input":{}1{}}}]}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let took = agrees(&text).unwrap();
            assert_eq!(took, depth + 3 <= super::super::scan::MAX_DEPTH, "{depth}");
        }
    }

    #[test]
    fn a_run_it_takes_counts_every_step_and_one_it_leaves_is_counted_once() {
        let p = Progress::new();
        let text = r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"id":"b","kind":"llm"},{"id":"c","kind":"llm"}]}"#;
        assert!(matches!(
            run_from_text_parallel(text, &p),
            Some(Streamed::Loaded(..))
        ));
        assert_eq!(p.snapshot().done, 3);
        let q = Progress::new();
        let broken = text.replace("}]}", "},]}");
        assert!(matches!(
            super::super::run_from_text(&broken, &q),
            Streamed::NotHere
        ));
        // the step-by-step reader read the three steps before the stray comma; the parallel
        // reader's count was taken back when it left the file
        assert_eq!(q.snapshot().done, 3);
    }
}
