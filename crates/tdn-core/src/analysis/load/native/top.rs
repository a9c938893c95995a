//! The optional top-level parts of a run: model, limits and tools (the context units are
//! `units.rs`).

use super::{count, ignored};
use crate::analysis::load::error::{json_type, quoted};
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{Limits, ModelInfo, Tool};
use serde_json::{Map, Value};

pub(super) fn model_info(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Option<ModelInfo> {
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

pub(super) fn limits(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Option<Limits> {
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

pub(super) fn tools(obj: &mut Map<String, Value>, w: &mut Vec<Warning>) -> Vec<Tool> {
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
