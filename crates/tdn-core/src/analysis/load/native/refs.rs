//! Resolving what a step names: its parent, a decision's required steps, and its context units.
//! A reference to a missing, later or same step, or to no unit, is dropped with a warning.

use super::step::{Describe, Refs};
use crate::analysis::load::error::{json_type, quoted};
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{Decision, DecisionOption, Json, Step, StepContext, StepId, UnitId};
use hashbrown::{HashMap, HashSet};
use serde_json::Value;

/// `Some(earlier index)` when `v` names an existing step strictly before `index`.
pub(super) fn earlier_step(
    v: &Value,
    index: usize,
    steps: &HashMap<String, usize>,
) -> Result<StepId, String> {
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

pub(super) fn resolve_refs(
    step: &mut Step,
    refs: Refs,
    steps: &HashMap<String, usize>,
    units: &HashSet<&str>,
    w: &mut Vec<Warning>,
) {
    let index = step.index;
    let id = step.id.0.clone();
    let describe = Describe(&id, index);
    let here = |field: &str, msg: String| Warning::step(&id, index, field, msg);
    if let Some(p) = refs.parent.map(Value::from) {
        match earlier_step(&p, index, steps) {
            Ok(parent) => step.parent = Some(parent),
            Err(why) => w.push(here(
                "parent",
                format!("{describe}: \"parent\" {why}; the parent was dropped"),
            )),
        }
    }
    if let Some(d) = refs.decision.map(Value::from) {
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
                step.decision = Some(Box::new(Decision { chosen, options }));
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
        // Read as it was parsed, with no `Value` made of it (issue 11: one per model call,
        // the load's biggest cost after the steps themselves).
        match c {
            Json::Object(c) => {
                let mut list = |key: &str, v: &Json| -> Vec<UnitId> {
                    let Json::Array(items) = v else {
                        w.push(here(
                            "context",
                            format!(
                                "{describe}: \"context.{key}\" is {}, not an array of unit ids; it was ignored",
                                json_kind(v)
                            ),
                        ));
                        return Vec::new();
                    };
                    let mut out = Vec::with_capacity(items.len());
                    for item in items {
                        match item {
                            Json::String(s) if units.contains(&**s) => {
                                out.push(UnitId(String::from(&**s)));
                            }
                            Json::String(s) => w.push(here(
                                "context",
                                format!(
                                    "{describe}: \"context.{key}\" names unit '{}', which is not in context_units; the id was dropped",
                                    quoted(s)
                                ),
                            )),
                            other => w.push(here(
                                "context",
                                format!(
                                    "{describe}: \"context.{key}\" holds {}, not a unit id; it was dropped",
                                    json_kind(other)
                                ),
                            )),
                        }
                    }
                    out
                };
                let available = match c.get("available") {
                    None | Some(Json::Null) => None,
                    Some(v) => Some(list("available", v)),
                };
                let sent = match c.get("sent") {
                    None | Some(Json::Null) => {
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
                step.context = Some(Box::new(StepContext { available, sent }));
            }
            other => w.push(here(
                "context",
                format!(
                    "{describe}: \"context\" is {}, not an object; it was ignored",
                    json_kind(&other)
                ),
            )),
        }
    }
}

/// What [`json_type`] says of the same value made a `Value`.
fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parsed_value_is_named_as_the_same_value_made_a_value() {
        let text = r#"[null, true, 1.5, "s", [1], {"a": 1}]"#;
        let parsed: Vec<Json> = serde_json::from_str(text).unwrap();
        let names: Vec<&str> = parsed.iter().map(json_kind).collect();
        let want: Vec<&str> = parsed
            .into_iter()
            .map(|j| json_type(&Value::from(j)))
            .collect();
        assert_eq!(names, want);
        assert_eq!(names.len(), 6);
    }
}
