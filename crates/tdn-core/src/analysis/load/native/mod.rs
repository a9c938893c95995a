//! Validating a `tdn.run/1` JSON value into a [`Run`], by the rules of docs/run-format.md.
//!
//! Errors stop the load; warnings drop or ignore the offending part and keep going. Linear in the
//! size of the run: ids are looked up in hash maps, never by scanning. `top.rs` reads the optional
//! top-level parts, `step.rs` one step, `refs.rs` the references between steps and units once all
//! are known, and `stream.rs` reads a native file's steps one by one straight from its text,
//! or `parallel.rs` in parallel where `scan.rs` can find them; `file.rs` reads them in parallel
//! straight from the file, a block at a time, where `split.rs` (the scan, resumable) finds them.

mod bubbled;
mod compact;
mod file;
mod messages;
mod parallel;
mod payload;
mod refs;
mod scan;
mod split;
mod step;
mod stream;
mod top;
mod units;

use super::error::{RunError, json_type, quoted};
use super::warning::Warning;
use crate::analysis::import::SourceFormat;
use crate::analysis::import::built::{Build, Built, ModelSteps};
use crate::analysis::model::{Json, Message, RUN_FORMAT, Run, RunStatus, StatusFrom, Step};
pub use file::{SIZES, run_from_file};
use hashbrown::{HashMap, HashSet};
use payload::RawStep;
use rayon::prelude::*;
use refs::resolve_refs;
use serde_json::{Map, Value};
use step::{Refs, step_from_raw, step_from_value};
pub use stream::{Streamed, run_from_text};
use top::{limits, model_info, tools};
use units::{PendingUnits, read_units};

const TOP_FIELDS: &[&str] = &[
    "format",
    "id",
    "title",
    "status",
    "status_from",
    "status_why",
    "error",
    "task",
    "final_answer",
    "reference_answer",
    "cost_usd",
    "model",
    "limits",
    "tools",
    "context_units",
    "steps",
    "attributes",
];

/// Validates one run. `source` only decides whether `format` must already say `tdn.run/1`
/// (importers write it themselves, so it is checked for every run).
pub fn run_from_value(value: Value, source: SourceFormat) -> Result<(Run, Vec<Warning>), RunError> {
    let _ = source;
    run_from_imported(value, Vec::new(), None)
}

/// Span formats build their steps straight into the run model with the loader's own reading of
/// a step (see [`ModelSteps`]).
pub(crate) const MODEL_STEPS: Build = Build::Model(model_steps);

fn model_steps(n: usize) -> Box<dyn ModelSteps> {
    Box::new(Prebuilt {
        steps: Steps::with_capacity(n),
        error: None,
    })
}

/// Steps an importer hands over one at a time, each read as a native file's step is.
struct Prebuilt {
    steps: Steps,
    /// The first step refused: the load stops with it (no step is read after it).
    error: Option<RunError>,
}

impl ModelSteps for Prebuilt {
    fn push(&mut self, step: Map<String, Value>) {
        if self.error.is_none()
            && let Err(e) = self.steps.push(Value::Object(step))
        {
            self.error = Some(e);
        }
    }

    fn steps(&self) -> &[Step] {
        &self.steps.steps
    }

    fn step_mut(&mut self, i: usize) -> Option<&mut Step> {
        self.steps.steps.get_mut(i)
    }

    fn set_context(&mut self, i: usize, context: Value) {
        if let Some(slot) = self.steps.taken.pending.get_mut(i) {
            let refs = slot.get_or_insert_with(Box::default);
            refs.context = (!context.is_null()).then(|| Json::from(context));
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// [`run_from_value`] on an imported run whose model calls' messages were kept apart
/// (`ImportedRun::messages`): each list is set on the step at its position once the steps are
/// built, before the context units' places in them are checked.
///
/// With `built`, the steps and units an importer built in the run model (see [`Built`]) are
/// taken as they are, and `value`'s `steps` and `context_units` are not read.
pub(crate) fn run_from_imported(
    value: Value,
    messages: Vec<(usize, Vec<Message>)>,
    built: Option<Built>,
) -> Result<(Run, Vec<Warning>), RunError> {
    let Value::Object(mut obj) = value else {
        return Err(RunError::NotObject {
            found: json_type(&value),
        });
    };
    let (run, raw_steps) = head(&mut obj)?;
    let mut w = Vec::new();
    let run = top_fields(run, &mut obj, &mut w);
    let (mut steps, units) = match built {
        Some(Built { steps, units }) => {
            let Ok(given) = steps.into_any().downcast::<Prebuilt>() else {
                return Err(missing_top("steps", "give the steps as an array"));
            };
            if let Some(e) = given.error {
                return Err(e);
            }
            obj.remove("context_units");
            (given.steps, PendingUnits::given(units))
        }
        None => {
            let mut steps = Steps::with_capacity(raw_steps.len());
            for raw in raw_steps {
                steps.push(raw)?;
            }
            (steps, read_units(&mut obj))
        }
    };
    for (position, list) in messages {
        if let Some(step) = steps.steps.get_mut(position)
            && !list.is_empty()
        {
            step.call_mut().messages = list;
        }
    }
    Ok(finish(run, obj, units, steps, w))
}

/// The required top-level fields, checked (and taken out, in this order) as the format lists
/// them: `format`, `id`, `status`, then `steps`, which must be an array.
pub(super) fn head(obj: &mut Map<String, Value>) -> Result<(Run, Vec<Value>), RunError> {
    match obj.get("format") {
        None => return Err(RunError::FormatMissing),
        Some(Value::String(s)) if s == RUN_FORMAT => {}
        Some(Value::String(s)) => return Err(RunError::FormatUnknown { found: quoted(s) }),
        Some(other) => {
            return Err(RunError::FormatUnknown {
                found: json_type(other).to_owned(),
            });
        }
    }
    let id = match obj.remove("id") {
        Some(Value::String(s)) => s,
        Some(other) => return Err(wrong_top("id", &other, "give the run's id as a string")),
        None => return Err(missing_top("id", "give the run's id as a string")),
    };
    let status = match obj.remove("status") {
        Some(Value::String(s)) => RunStatus::parse(&s).ok_or_else(|| RunError::Field {
            field: "status",
            problem: format!("'{}'", quoted(&s)),
            fix: "use one of \"failed\", \"succeeded\", \"error\", \"unfinished\"",
        })?,
        Some(other) => {
            return Err(wrong_top(
                "status",
                &other,
                "use one of \"failed\", \"succeeded\", \"error\", \"unfinished\"",
            ));
        }
        None => {
            return Err(missing_top(
                "status",
                "use one of \"failed\", \"succeeded\", \"error\", \"unfinished\"",
            ));
        }
    };
    let raw_steps = match obj.remove("steps") {
        Some(Value::Array(a)) => a,
        Some(other) => return Err(wrong_top("steps", &other, "give the steps as an array")),
        None => {
            return Err(missing_top(
                "steps",
                "give the steps as an array (it may be empty)",
            ));
        }
    };
    Ok((Run::new(id, status), raw_steps))
}

/// The optional top-level fields, each with a warning when it is of the wrong type.
pub(super) fn top_fields(mut run: Run, obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Run {
    run.title = opt_string(obj, "title", w);
    match obj.remove("status_from") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => match StatusFrom::parse(&s) {
            Some(f) => run.status_from = f,
            None => w.push(Warning::run(
                Some("status_from"),
                format!(
                    "\"status_from\" is '{}', not one of \"recorded\", \"assumed\", \"given\", \"reference\"; it was ignored",
                    quoted(&s)
                ),
            )),
        },
        Some(other) => w.push(Warning::run(
            Some("status_from"),
            ignored("status_from", &other, "a string"),
        )),
    }
    run.status_why = opt_string(obj, "status_why", w);
    run.error = opt_string(obj, "error", w);
    run.task = opt_string(obj, "task", w);
    run.final_answer = opt_string(obj, "final_answer", w);
    run.reference_answer = opt_string(obj, "reference_answer", w);
    run.cost_usd = match obj.remove("cost_usd") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
            Some(x) => Some(x),
            None => {
                w.push(Warning::run(
                    Some("cost_usd"),
                    ignored("cost_usd", &v, "a number >= 0"),
                ));
                None
            }
        },
    };
    run.model = model_info(obj, w);
    run.limits = limits(obj, w);
    run.tools = tools(obj, w);
    run.attributes = opt_object(obj, "attributes", w);
    run
}

/// The steps read so far: each built as it comes, with what is kept of them to check later.
#[derive(Default)]
pub(super) struct Steps {
    steps: Vec<Step>,
    taken: Taken,
}

/// What the loader keeps of the steps taken so far besides the steps themselves: the id index
/// later references need, each step's references and the warnings in step order. Apart from
/// the vector of steps, so that the steps of one batch can be taken while the next batch is
/// built into that vector (issue 11).
#[derive(Default)]
pub(super) struct Taken {
    seen: HashMap<String, usize>,
    /// Each step's references (`None`: it makes none).
    pending: Vec<Option<Box<Refs>>>,
    warnings: Vec<Warning>,
}

impl Steps {
    pub(super) fn with_capacity(n: usize) -> Steps {
        Steps {
            steps: Vec::with_capacity(n),
            taken: Taken {
                seen: HashMap::with_capacity(n),
                pending: Vec::with_capacity(n),
                warnings: Vec::new(),
            },
        }
    }

    /// Builds the next step; a step that is unusable, or repeats an id, stops the load.
    pub(super) fn push(&mut self, raw: Value) -> Result<(), RunError> {
        let index = self.steps.len();
        let (step, refs) = step_from_value(raw, index, &mut self.taken.warnings)?;
        self.push_built(step, refs)
    }

    /// Builds the next step from what `payload.rs` read (see [`Steps::push`]).
    pub(super) fn push_raw(&mut self, raw: RawStep) -> Result<(), RunError> {
        let index = self.steps.len();
        let (step, refs) = step_from_raw(raw, index, &mut self.taken.warnings)?;
        self.push_built(step, refs)
    }

    /// Takes the next step; a step that repeats an id stops the load.
    fn push_built(&mut self, step: Step, refs: Refs) -> Result<(), RunError> {
        let index = self.steps.len();
        let id = step.id.0.clone();
        self.steps.push(step);
        let refs = (!refs.is_empty()).then(|| Box::new(refs));
        self.taken.take(index, id, refs, Vec::new())
    }
}

impl Taken {
    /// Takes the step at `index` (the next one to take), with id `id`, built apart with its
    /// references and its own `warnings`; a step that repeats an id stops the load.
    fn take(
        &mut self,
        index: usize,
        id: String,
        refs: Option<Box<Refs>>,
        mut warnings: Vec<Warning>,
    ) -> Result<(), RunError> {
        self.warnings.append(&mut warnings);
        match self.seen.entry(id) {
            hashbrown::hash_map::Entry::Occupied(first) => Err(RunError::DuplicateStep {
                id: first.key().clone(),
                index,
                first: *first.get(),
            }),
            hashbrown::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
                self.pending.push(refs);
                Ok(())
            }
        }
    }

    /// Room for `more` steps besides those taken.
    fn reserve(&mut self, more: usize) {
        self.seen.reserve(more);
        self.pending.reserve(more);
    }
}

/// Steps whose references one task resolves.
const STEPS_PER_REFS_TASK: usize = 1024;

/// Steps from which the loader's own index of step ids is freed on the thread pool.
const FREE_APART: usize = 4096;

/// Context units (read from the run's fields as `units`, their producers checked here), every
/// reference between steps and units, the fields left over.
fn finish(
    mut run: Run,
    mut obj: Map<String, Value>,
    units: PendingUnits,
    steps: Steps,
    mut w: Vec<Warning>,
) -> (Run, Vec<Warning>) {
    let Steps {
        mut steps,
        taken: Taken {
            seen,
            mut pending,
            warnings,
        },
    } = steps;
    w.extend(warnings);
    if steps.is_empty() {
        w.push(Warning::run(
            Some("steps"),
            "\"steps\" is empty: the run opens as an empty run and nothing can be diagnosed",
        ));
    }
    run.context_units = units.resolve(&seen, &mut w);
    let unit_ids: HashSet<&str> = run.context_units.iter().map(|u| u.id.as_str()).collect();
    // Each step's references are resolved on its own, a run of steps per task on the thread
    // pool; the warnings come back in step order (issue 11: 0.05 s on one core at 100,000
    // steps, the other idle).
    let warned: Vec<Vec<Warning>> = steps
        .par_chunks_mut(STEPS_PER_REFS_TASK)
        .zip(pending.par_chunks_mut(STEPS_PER_REFS_TASK))
        .map(|(steps, pending)| {
            let mut w = Vec::new();
            for (step, refs) in steps.iter_mut().zip(pending) {
                if let Some(refs) = refs.take() {
                    resolve_refs(step, *refs, &seen, &unit_ids, &mut w);
                }
            }
            w
        })
        .collect();
    drop(pending);
    w.extend(warned.into_iter().flatten());
    drop(unit_ids);
    messages::check_places(&mut run.context_units, &steps, &seen, &mut w);
    messages::share_contents(&mut steps);
    bubbled::one_failure_per_fault(&mut steps, &seen);
    // A string per step: freed on the thread pool rather than before the run is handed on
    // (issue 11: 8 ms on one core at 100,000 steps).
    if seen.len() >= FREE_APART {
        rayon::spawn(move || drop(seen));
    } else {
        drop(seen);
    }
    steps.shrink_to_fit();
    run.steps = steps;
    for key in TOP_FIELDS {
        obj.remove(*key);
    }
    run.extra = obj;
    run.reindex();
    (run, w)
}

pub(super) fn missing_top(field: &'static str, fix: &'static str) -> RunError {
    RunError::Field {
        field,
        problem: "missing".to_owned(),
        fix,
    }
}

pub(super) fn wrong_top(field: &'static str, found: &Value, fix: &'static str) -> RunError {
    RunError::Field {
        field,
        problem: format!("{}, which is the wrong type", json_type(found)),
        fix,
    }
}

pub(super) fn ignored(field: &str, found: &Value, want: &str) -> String {
    format!(
        "\"{field}\" is {}, not {want}; it was ignored",
        json_type(found)
    )
}

pub(super) fn opt_string(
    obj: &mut Map<String, Value>,
    key: &str,
    w: &mut Vec<Warning>,
) -> Option<String> {
    match obj.remove(key)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => {
            w.push(Warning::run(Some(key), ignored(key, &other, "a string")));
            None
        }
    }
}

pub(super) fn opt_object(
    obj: &mut Map<String, Value>,
    key: &str,
    w: &mut Vec<Warning>,
) -> Map<String, Value> {
    match obj.remove(key) {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(other) => {
            w.push(Warning::run(Some(key), ignored(key, &other, "an object")));
            Map::new()
        }
    }
}

/// The fields of an object nobody took out, in a map of their own size. The object was sized
/// for every field it held and taking fields out leaves its room allocated; a run keeps one such
/// map per step and per context unit, mostly empty (issue 11: 43 MB of empty maps in a
/// 100,000-step run).
pub(super) fn leftover(obj: Map<String, Value>) -> Map<String, Value> {
    if obj.is_empty() {
        Map::new()
    } else {
        obj.into_iter().collect()
    }
}

/// A non-negative integer (an integral float is accepted).
pub(super) fn count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

#[cfg(test)]
mod schema_agreement {
    use super::TOP_FIELDS;
    use super::step::STEP_FIELDS;
    use serde_json::Value;

    /// The JSON Schema shipped for recorders names exactly the fields this loader knows.
    #[test]
    fn the_json_schema_names_the_fields_the_loader_reads() {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../../../../schemas/tdn.run-1.schema.json"
        ))
        .unwrap();
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        let sorted = |s: &[&str]| -> Vec<String> {
            let mut k: Vec<String> = s.iter().map(|s| (*s).to_owned()).collect();
            k.sort();
            k
        };
        assert_eq!(keys(&schema), sorted(TOP_FIELDS));
        assert_eq!(keys(&schema["$defs"]["step"]), sorted(STEP_FIELDS));
    }
}
