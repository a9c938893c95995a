//! Validating a `tdn.run/1` JSON value into a [`Run`], by the rules of docs/run-format.md.
//!
//! Errors stop the load; warnings drop or ignore the offending part and keep going. Linear in the
//! size of the run: ids are looked up in hash maps, never by scanning.

use super::error::{RunError, json_type, quoted};
use super::timestamp;
use super::warning::Warning;
use crate::analysis::import::SourceFormat;
use crate::analysis::model::{
    ContextUnit, Decision, DecisionOption, Document, Limits, MemoryOp, ModelInfo, RUN_FORMAT, Run,
    RunStatus, Step, StepContext, StepId, StepKind, Tool, ToolCall, UnitId, Usage, describe_step,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

const TOP_FIELDS: &[&str] = &[
    "format",
    "id",
    "title",
    "status",
    "error",
    "task",
    "final_answer",
    "reference_answer",
    "model",
    "limits",
    "tools",
    "context_units",
    "steps",
    "attributes",
];

const STEP_FIELDS: &[&str] = &[
    "id",
    "kind",
    "agent",
    "name",
    "parent",
    "input",
    "output",
    "error",
    "tool",
    "documents",
    "memory",
    "decision",
    "context",
    "usage",
    "context_window",
    "started_at",
    "ended_at",
    "attributes",
];

/// Validates one run. `source` only decides whether `format` must already say `tdn.run/1`
/// (importers write it themselves, so it is checked for every run).
pub fn run_from_value(value: Value, source: SourceFormat) -> Result<(Run, Vec<Warning>), RunError> {
    let _ = source;
    let Value::Object(mut obj) = value else {
        return Err(RunError::NotObject {
            found: json_type(&value),
        });
    };
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

    let mut w = Vec::new();
    let mut run = Run::new(id, status);
    run.title = opt_string(&mut obj, "title", &mut w);
    run.error = opt_string(&mut obj, "error", &mut w);
    run.task = opt_string(&mut obj, "task", &mut w);
    run.final_answer = opt_string(&mut obj, "final_answer", &mut w);
    run.reference_answer = opt_string(&mut obj, "reference_answer", &mut w);
    run.model = model_info(&mut obj, &mut w);
    run.limits = limits(&mut obj, &mut w);
    run.tools = tools(&mut obj, &mut w);
    run.attributes = opt_object(&mut obj, "attributes", &mut w);

    // Steps: first pass builds each step and the id index, so later references resolve.
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(raw_steps.len());
    let mut steps = Vec::with_capacity(raw_steps.len());
    let mut pending = Vec::with_capacity(raw_steps.len());
    for (index, raw) in raw_steps.into_iter().enumerate() {
        let (step, refs) = step_from_value(raw, index, &mut w)?;
        if let Some(&first) = seen.get(step.id.as_str()) {
            return Err(RunError::DuplicateStep {
                id: step.id.0.clone(),
                index,
                first,
            });
        }
        seen.insert(step.id.0.clone(), index);
        steps.push(step);
        pending.push(refs);
    }
    if steps.is_empty() {
        w.push(Warning::run(
            Some("steps"),
            "\"steps\" is empty: the run opens as an empty run and nothing can be diagnosed",
        ));
    }

    // Context units, then every reference between steps and units.
    run.context_units = context_units(&mut obj, &seen, &mut w);
    let unit_ids: HashSet<&str> = run.context_units.iter().map(|u| u.id.as_str()).collect();
    for (step, refs) in steps.iter_mut().zip(pending) {
        resolve_refs(step, refs, &seen, &unit_ids, &mut w);
    }
    run.steps = steps;

    for key in TOP_FIELDS {
        obj.remove(*key);
    }
    run.extra = obj;
    run.reindex();
    Ok((run, w))
}

fn missing_top(field: &'static str, fix: &'static str) -> RunError {
    RunError::Field {
        field,
        problem: "missing".to_owned(),
        fix,
    }
}

fn wrong_top(field: &'static str, found: &Value, fix: &'static str) -> RunError {
    RunError::Field {
        field,
        problem: format!("{}, which is the wrong type", json_type(found)),
        fix,
    }
}

fn ignored(field: &str, found: &Value, want: &str) -> String {
    format!(
        "\"{field}\" is {}, not {want}; it was ignored",
        json_type(found)
    )
}

fn opt_string(obj: &mut Map<String, Value>, key: &str, w: &mut Vec<Warning>) -> Option<String> {
    match obj.remove(key)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => {
            w.push(Warning::run(Some(key), ignored(key, &other, "a string")));
            None
        }
    }
}

fn opt_object(obj: &mut Map<String, Value>, key: &str, w: &mut Vec<Warning>) -> Map<String, Value> {
    match obj.remove(key) {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(other) => {
            w.push(Warning::run(Some(key), ignored(key, &other, "an object")));
            Map::new()
        }
    }
}

/// A non-negative integer (an integral float is accepted).
fn count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

fn model_info(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Option<ModelInfo> {
    let v = obj.remove("model")?;
    let Value::Object(m) = v else {
        if !v.is_null() {
            w.push(Warning::run(
                Some("model"),
                ignored("model", &v, "an object"),
            ));
        }
        return None;
    };
    let name = match m.get("name") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(other) => {
            w.push(Warning::run(
                Some("model.name"),
                ignored("model.name", other, "a string"),
            ));
            None
        }
    };
    let context_window = match m.get("context_window") {
        None | Some(Value::Null) => None,
        Some(v) => match count(v) {
            Some(n) if n > 0 => Some(n),
            _ => {
                w.push(Warning::run(
                    Some("model.context_window"),
                    ignored("model.context_window", v, "a positive integer"),
                ));
                None
            }
        },
    };
    Some(ModelInfo {
        name,
        context_window,
    })
}

fn limits(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Option<Limits> {
    let v = obj.remove("limits")?;
    let Value::Object(m) = v else {
        if !v.is_null() {
            w.push(Warning::run(
                Some("limits"),
                ignored("limits", &v, "an object"),
            ));
        }
        return None;
    };
    let max_steps = match m.get("max_steps") {
        None | Some(Value::Null) => None,
        Some(v) => match count(v) {
            Some(n) => Some(n),
            None => {
                w.push(Warning::run(
                    Some("limits.max_steps"),
                    ignored("limits.max_steps", v, "a non-negative integer"),
                ));
                None
            }
        },
    };
    Some(Limits { max_steps })
}

fn tools(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Vec<Tool> {
    let Some(v) = obj.remove("tools") else {
        return Vec::new();
    };
    let Value::Array(items) = v else {
        if !v.is_null() {
            w.push(Warning::run(
                Some("tools"),
                ignored("tools", &v, "an array"),
            ));
        }
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Value::Object(mut t) = item else {
            w.push(Warning::run(
                Some("tools"),
                format!(
                    "tools[{i}] is {}, not an object; it was ignored",
                    json_type(&item)
                ),
            ));
            continue;
        };
        let Some(Value::String(name)) = t.remove("name") else {
            w.push(Warning::run(
                Some("tools"),
                format!("tools[{i}] has no string \"name\"; it was ignored"),
            ));
            continue;
        };
        let description = match t.remove("description") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let parameters = match t.remove("parameters") {
            Some(Value::Object(p)) => Some(Value::Object(p)),
            None | Some(Value::Null) => None,
            Some(other) => {
                w.push(Warning::run(
                    Some("tools"),
                    format!(
                        "tools[{i}] ('{}'): \"parameters\" is {}, not a JSON Schema object; it was ignored",
                        quoted(&name),
                        json_type(&other)
                    ),
                ));
                None
            }
        };
        let mutates = matches!(t.remove("mutates"), Some(Value::Bool(true)));
        out.push(Tool {
            name,
            description,
            parameters,
            mutates,
        });
    }
    out
}

fn context_units(
    obj: &mut Map<String, Value>,
    steps: &HashMap<String, usize>,
    w: &mut Vec<Warning>,
) -> Vec<ContextUnit> {
    let Some(v) = obj.remove("context_units") else {
        return Vec::new();
    };
    let Value::Array(items) = v else {
        if !v.is_null() {
            w.push(Warning::run(
                Some("context_units"),
                ignored("context_units", &v, "an array"),
            ));
        }
        return Vec::new();
    };
    let mut out: Vec<ContextUnit> = Vec::with_capacity(items.len());
    let mut seen: HashSet<String> = HashSet::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Value::Object(mut u) = item else {
            w.push(Warning::run(
                Some("context_units"),
                format!(
                    "context_units[{i}] is {}, not an object; it was ignored",
                    json_type(&item)
                ),
            ));
            continue;
        };
        let id = match u.remove("id") {
            Some(Value::String(s)) => s,
            _ => {
                w.push(Warning::run(
                    Some("context_units"),
                    format!("context_units[{i}] has no string \"id\"; it was ignored"),
                ));
                continue;
            }
        };
        if !seen.insert(id.clone()) {
            w.push(Warning::run(
                Some("context_units"),
                format!(
                    "context_units[{i}] repeats the unit id '{}'; the first unit with that id is used",
                    quoted(&id)
                ),
            ));
            continue;
        }
        let kind = match u.remove("kind") {
            Some(Value::String(s)) => s,
            _ => {
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}' has no string \"kind\"; it is treated as kind 'unknown'",
                        quoted(&id)
                    ),
                ));
                "unknown".to_owned()
            }
        };
        let text = match u.remove("text") {
            Some(Value::String(s)) => s,
            _ => {
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}' has no string \"text\"; its text is taken as empty",
                        quoted(&id)
                    ),
                ));
                String::new()
            }
        };
        let tokens = match u.remove("tokens") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let n = count(&v);
                if n.is_none() {
                    w.push(Warning::run(
                        Some("context_units"),
                        format!(
                            "context unit '{}': \"tokens\" is not a non-negative integer; it was ignored",
                            quoted(&id)
                        ),
                    ));
                }
                n
            }
        };
        let produced_by = match u.remove("produced_by") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if steps.contains_key(&s) => Some(StepId(s)),
            Some(other) => {
                w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}': \"produced_by\" names no step of this run ({}); the reference was dropped",
                        quoted(&id),
                        match &other {
                            Value::String(s) => format!("'{}'", quoted(s)),
                            v => json_type(v).to_owned(),
                        }
                    ),
                ));
                None
            }
        };
        out.push(ContextUnit {
            id: UnitId(id),
            kind,
            text,
            tokens,
            produced_by,
            extra: u,
        });
    }
    out
}

/// References a step makes, resolved once every step and unit is known.
#[derive(Default)]
struct Refs {
    parent: Option<Value>,
    decision: Option<Value>,
    context: Option<Value>,
}

fn step_from_value(
    raw: Value,
    index: usize,
    w: &mut Vec<Warning>,
) -> Result<(Step, Refs), RunError> {
    let Value::Object(mut o) = raw else {
        return Err(RunError::Step {
            step_id: None,
            index,
            field: "(step)",
            problem: format!(
                "is {}; each step must be an object with \"id\" and \"kind\"",
                json_type(&raw)
            ),
        });
    };
    let id = match o.remove("id") {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(RunError::Step {
                step_id: None,
                index,
                field: "id",
                problem: format!("is {}; give the step a string id", json_type(&other)),
            });
        }
        None => {
            return Err(RunError::Step {
                step_id: None,
                index,
                field: "id",
                problem: "is missing; give the step a string id".to_owned(),
            });
        }
    };
    let kind_raw = match o.remove("kind") {
        Some(Value::String(s)) => s,
        other => {
            return Err(RunError::Step {
                step_id: Some(id),
                index,
                field: "kind",
                problem: match other {
                    Some(v) => format!(
                        "is {}; give one of user, llm, tool, retrieval, memory_read, memory_write, decision, agent, system, event",
                        json_type(&v)
                    ),
                    None => "is missing; give one of user, llm, tool, retrieval, memory_read, memory_write, decision, agent, system, event".to_owned(),
                },
            });
        }
    };
    let mut step = Step::new(id.clone(), StepKind::Event);
    step.index = index;
    let here = |field: &str, msg: String| Warning::step(&id, index, field, msg);
    match StepKind::parse(&kind_raw) {
        Some(k) => step.kind = k,
        None => {
            w.push(here(
                "kind",
                format!(
                    "{}: unknown kind '{}'; it is analysed as an event",
                    describe_step(&id, index),
                    quoted(&kind_raw)
                ),
            ));
            step.kind_name = Some(kind_raw);
        }
    }
    let mut refs = Refs::default();
    let describe = describe_step(&id, index);
    let wrong = |field: &str, v: &Value, want: &str| {
        Warning::step(
            &id,
            index,
            field,
            format!(
                "{describe}: \"{field}\" is {}, not {want}; it was ignored",
                json_type(v)
            ),
        )
    };

    for key in ["agent", "name"] {
        match o.remove(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                if key == "agent" {
                    step.agent = Some(s);
                } else {
                    step.name = Some(s);
                }
            }
            Some(other) => w.push(wrong(key, &other, "a string")),
        }
    }
    refs.parent = o.remove("parent").filter(|v| !v.is_null());
    step.input = o.remove("input").filter(|v| !v.is_null());
    step.output = o.remove("output").filter(|v| !v.is_null());
    match o.remove("error") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if !s.trim().is_empty() {
                step.error = Some(s);
            }
        }
        Some(other) => w.push(wrong("error", &other, "a string")),
    }
    match o.remove("tool") {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut t)) => match t.remove("name") {
            Some(Value::String(name)) => {
                let call_id = match t.remove("call_id") {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                };
                step.tool = Some(ToolCall {
                    name,
                    arguments: t.remove("arguments").unwrap_or(Value::Null),
                    call_id,
                });
            }
            _ => w.push(here(
                "tool",
                format!("{describe}: \"tool\" has no string \"name\"; it was ignored"),
            )),
        },
        Some(other) => w.push(wrong("tool", &other, "an object")),
    }
    match o.remove("documents") {
        None | Some(Value::Null) => {}
        Some(Value::Array(docs)) => {
            let mut out = Vec::with_capacity(docs.len());
            for (n, d) in docs.into_iter().enumerate() {
                match d {
                    Value::Object(mut d) => {
                        let text = match d.remove("text") {
                            Some(Value::String(s)) => s,
                            _ => {
                                w.push(here(
                                    "documents",
                                    format!("{describe}: documents[{n}] has no string \"text\"; it was ignored"),
                                ));
                                continue;
                            }
                        };
                        let id = match d.remove("id") {
                            Some(Value::String(s)) => Some(s),
                            Some(Value::Number(x)) => Some(x.to_string()),
                            _ => None,
                        };
                        let source = match d.remove("source") {
                            Some(Value::String(s)) => Some(s),
                            _ => None,
                        };
                        let outdated = matches!(d.remove("outdated"), Some(Value::Bool(true)));
                        out.push(Document {
                            id,
                            text,
                            source,
                            outdated,
                        });
                    }
                    other => w.push(here(
                        "documents",
                        format!(
                            "{describe}: documents[{n}] is {}, not an object; it was ignored",
                            json_type(&other)
                        ),
                    )),
                }
            }
            step.documents = Some(out);
        }
        Some(other) => w.push(wrong("documents", &other, "an array")),
    }
    match o.remove("memory") {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut m)) => match m.remove("key") {
            Some(Value::String(key)) => {
                step.memory = Some(MemoryOp {
                    key,
                    value: m.remove("value").unwrap_or(Value::Null),
                });
            }
            _ => w.push(here(
                "memory",
                format!("{describe}: \"memory\" has no string \"key\"; it was ignored"),
            )),
        },
        Some(other) => w.push(wrong("memory", &other, "an object")),
    }
    refs.decision = o.remove("decision").filter(|v| !v.is_null());
    refs.context = o.remove("context").filter(|v| !v.is_null());
    match o.remove("usage") {
        None | Some(Value::Null) => {}
        Some(Value::Object(u)) => {
            let mut usage = Usage::default();
            for (key, slot) in [
                ("input_tokens", &mut usage.input_tokens),
                ("output_tokens", &mut usage.output_tokens),
            ] {
                match u.get(key) {
                    None | Some(Value::Null) => {}
                    Some(v) => match count(v) {
                        Some(n) => *slot = Some(n),
                        None => w.push(here(
                            "usage",
                            format!("{describe}: \"usage.{key}\" is not a non-negative integer; it was ignored"),
                        )),
                    },
                }
            }
            step.usage = Some(usage);
        }
        Some(other) => w.push(wrong("usage", &other, "an object")),
    }
    match o.remove("context_window") {
        None | Some(Value::Null) => {}
        Some(v) => match count(&v) {
            Some(n) if n > 0 => step.context_window = Some(n),
            _ => w.push(wrong("context_window", &v, "a positive integer")),
        },
    }
    for key in ["started_at", "ended_at"] {
        match o.remove(key) {
            None | Some(Value::Null) => {}
            Some(v) => match timestamp::parse(&v) {
                Some(t) => {
                    if key == "started_at" {
                        step.started_at = Some(t);
                    } else {
                        step.ended_at = Some(t);
                    }
                }
                None => w.push(wrong(key, &v, "an RFC 3339 time or Unix milliseconds")),
            },
        }
    }
    match o.remove("attributes") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => step.attributes = m,
        Some(other) => w.push(wrong("attributes", &other, "an object")),
    }
    for key in STEP_FIELDS {
        o.remove(*key);
    }
    step.extra = o;
    Ok((step, refs))
}

/// `Some(earlier index)` when `v` names an existing step strictly before `index`.
fn earlier_step(v: &Value, index: usize, steps: &HashMap<String, usize>) -> Result<StepId, String> {
    let Value::String(s) = v else {
        return Err(format!("is {}, not a step id", json_type(v)));
    };
    match steps.get(s) {
        None => Err(format!("names step '{}', which does not exist", quoted(s))),
        Some(&i) if i == index => Err("names the step itself".to_owned()),
        Some(&i) if i > index => Err(format!(
            "names step '{}' (position {}), which comes later",
            quoted(s),
            i + 1
        )),
        Some(_) => Ok(StepId(s.clone())),
    }
}

fn resolve_refs(
    step: &mut Step,
    refs: Refs,
    steps: &HashMap<String, usize>,
    units: &HashSet<&str>,
    w: &mut Vec<Warning>,
) {
    let index = step.index;
    let describe = step.describe();
    let id = step.id.0.clone();
    let here = |field: &str, msg: String| Warning::step(&id, index, field, msg);
    if let Some(p) = refs.parent {
        match earlier_step(&p, index, steps) {
            Ok(parent) => step.parent = Some(parent),
            Err(why) => w.push(here(
                "parent",
                format!("{describe}: \"parent\" {why}; the parent was dropped"),
            )),
        }
    }
    if let Some(d) = refs.decision {
        match d {
            Value::Object(mut d) => {
                let chosen = match d.remove("chosen") {
                    Some(Value::String(s)) => s,
                    Some(Value::Number(n)) => n.to_string(),
                    _ => {
                        w.push(here(
                            "decision",
                            format!("{describe}: \"decision.chosen\" is missing or not a string; no option counts as chosen"),
                        ));
                        String::new()
                    }
                };
                let mut options = Vec::new();
                if let Some(Value::Array(opts)) = d.remove("options") {
                    for (n, opt) in opts.into_iter().enumerate() {
                        let Value::Object(mut opt) = opt else {
                            w.push(here(
                                "decision",
                                format!("{describe}: decision.options[{n}] is not an object; it was ignored"),
                            ));
                            continue;
                        };
                        let oid = match opt.remove("id") {
                            Some(Value::String(s)) => s,
                            Some(Value::Number(x)) => x.to_string(),
                            _ => {
                                w.push(here(
                                    "decision",
                                    format!("{describe}: decision.options[{n}] has no string \"id\"; it was ignored"),
                                ));
                                continue;
                            }
                        };
                        let mut requires = Vec::new();
                        match opt.remove("requires") {
                            None | Some(Value::Null) => {}
                            Some(Value::Array(rs)) => {
                                for r in rs {
                                    match earlier_step(&r, index, steps) {
                                        Ok(s) => requires.push(s),
                                        Err(why) => w.push(here(
                                            "requires",
                                            format!(
                                                "{describe}: option '{}' \"requires\" {why}; that requirement was dropped",
                                                quoted(&oid)
                                            ),
                                        )),
                                    }
                                }
                            }
                            Some(other) => w.push(here(
                                "requires",
                                format!(
                                    "{describe}: option '{}' \"requires\" is {}, not an array; it was ignored",
                                    quoted(&oid),
                                    json_type(&other)
                                ),
                            )),
                        }
                        options.push(DecisionOption { id: oid, requires });
                    }
                }
                step.decision = Some(Decision { chosen, options });
            }
            other => w.push(here(
                "decision",
                format!(
                    "{describe}: \"decision\" is {}, not an object; it was ignored",
                    json_type(&other)
                ),
            )),
        }
    }
    if let Some(c) = refs.context {
        match c {
            Value::Object(mut c) => {
                let mut list = |key: &str, v: Value| -> Vec<UnitId> {
                    let Value::Array(items) = v else {
                        w.push(here(
                            "context",
                            format!(
                                "{describe}: \"context.{key}\" is {}, not an array of unit ids; it was ignored",
                                json_type(&v)
                            ),
                        ));
                        return Vec::new();
                    };
                    let mut out = Vec::with_capacity(items.len());
                    for item in items {
                        match item {
                            Value::String(s) if units.contains(s.as_str()) => out.push(UnitId(s)),
                            Value::String(s) => w.push(here(
                                "context",
                                format!(
                                    "{describe}: \"context.{key}\" names unit '{}', which is not in context_units; the id was dropped",
                                    quoted(&s)
                                ),
                            )),
                            other => w.push(here(
                                "context",
                                format!(
                                    "{describe}: \"context.{key}\" holds {}, not a unit id; it was dropped",
                                    json_type(&other)
                                ),
                            )),
                        }
                    }
                    out
                };
                let available = match c.remove("available") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(list("available", v)),
                };
                let sent = match c.remove("sent") {
                    None | Some(Value::Null) => {
                        w.push(here(
                            "context",
                            format!(
                                "{describe}: \"context.sent\" is missing; taken as nothing sent"
                            ),
                        ));
                        Vec::new()
                    }
                    Some(v) => list("sent", v),
                };
                step.context = Some(StepContext { available, sent });
            }
            other => w.push(here(
                "context",
                format!(
                    "{describe}: \"context\" is {}, not an object; it was ignored",
                    json_type(&other)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod schema_agreement {
    use super::{STEP_FIELDS, TOP_FIELDS};
    use serde_json::Value;

    /// The JSON Schema shipped for recorders names exactly the fields this loader knows.
    #[test]
    fn the_json_schema_names_the_fields_the_loader_reads() {
        let schema: Value =
            serde_json::from_str(include_str!("../../../schemas/tdn.run-1.schema.json")).unwrap();
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
