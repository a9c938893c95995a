//! A small JSON Schema check for tool arguments: `type`, `required`, `properties`,
//! `additionalProperties`, `enum`, `const`, `items`, `format` (date-time, date, time, email, uri),
//! `minLength`/`maxLength`, `minimum`/`maximum`, `anyOf`/`oneOf`/`allOf`. Other keywords (and
//! `pattern`) are not checked, so a schema using only those accepts everything. Bounded in depth
//! and in the problems it reports; never panics on any schema or value.

use super::say::quote;
use crate::analysis::model::{Json, Step, Tool};
use serde_json::{Map, Value};

/// Deeper schemas are not followed.
pub(super) const MAX_DEPTH: usize = 32;
/// At most this many problems are reported.
pub(super) const MAX_PROBLEMS: usize = 8;
/// At most this many schema nodes are visited per check (nested `anyOf` cannot explode).
pub(super) const MAX_VISITS: usize = 10_000;

/// One way the arguments break the schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Where, as a JSON pointer (`/start`), `` for the whole value.
    pub path: String,
    /// The offending value as text, when it is a string or number.
    pub value: Option<String>,
    /// What is wrong, inert, for evidence.
    pub what: String,
}

/// The result of checking a tool step's arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgsCheck {
    /// The run offers this tool with a schema.
    pub known: bool,
    /// The problems found (empty: valid, or no schema).
    pub problems: Vec<Problem>,
}

impl ArgsCheck {
    /// True when a known schema rejects the arguments.
    pub fn rejected(&self) -> bool {
        self.known && !self.problems.is_empty()
    }
}

/// Checks a tool step's arguments against the schema of `tool`, the tool it called (`run.tool`
/// of its call's name, as [`Facts::tool`](super::Facts::tool) keeps it for every step). Arguments
/// that are text (what an importer could not read as JSON or as a Python literal) are not
/// checked: what the tool received is unknown, so no schema can reject it.
pub fn check_call(tool: Option<&Tool>, step: &Step) -> ArgsCheck {
    let Some(call) = &step.tool else {
        return ArgsCheck::default();
    };
    if call.arguments.is_string() {
        return ArgsCheck::default();
    }
    let Some(schema) = tool.and_then(|t| t.parameters.as_ref()) else {
        return ArgsCheck::default();
    };
    ArgsCheck {
        known: true,
        problems: validate(schema, &call.arguments),
    }
}

/// The problems of `value` against `schema` (empty when it passes). The schema is read into its
/// keywords first ([`Compiled`](super::compiled_schema::Compiled)); a schema checked against many
/// values is better read once.
pub fn validate(schema: &Value, value: &Json) -> Vec<Problem> {
    super::compiled_schema::Compiled::new(schema).validate(value)
}

/// Problems found so far and the work done.
pub(super) struct Cx {
    pub(super) out: Vec<Problem>,
    pub(super) visits: usize,
}

/// True when `schema` says something about an object's properties (so "fits" means something).
pub fn has_properties(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// True when every key of the object `args` is a declared property of `schema`.
pub fn keys_declared(schema: &Value, args: &Json) -> bool {
    match (
        schema.get("properties").and_then(Value::as_object),
        args.as_object(),
    ) {
        (Some(props), Some(a)) => !a.is_empty() && a.keys().all(|k| props.contains_key(k)),
        _ => false,
    }
}

pub(super) fn problem(cx: &mut Cx, path: &str, value: &Json, what: String) {
    if cx.out.len() < MAX_PROBLEMS {
        let value_text = match value {
            Json::String(s) => Some(s.to_string()),
            Json::Number(n) => Some(n.to_string()),
            _ => None,
        };
        cx.out.push(Problem {
            path: path.to_owned(),
            value: value_text,
            what,
        });
    }
}

pub(super) fn where_(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_owned()
    } else {
        quote(path.trim_start_matches('/'))
    }
}

/// The problems of `type`, `enum` and `const` (given as the schema holds them); true when the
/// type is wrong, and nothing more of the schema is read.
pub(super) fn rule_problems(
    ty: Option<&Value>,
    allowed: Option<&Vec<Value>>,
    constant: Option<&Value>,
    v: &Json,
    path: &str,
    out: &mut Cx,
) -> bool {
    if let Some(t) = ty
        && !type_matches(t, v)
    {
        problem(
            out,
            path,
            v,
            format!("{} should be {}", where_(path), type_words(t)),
        );
        return true;
    }
    if let Some(allowed) = allowed
        && !allowed.iter().any(|a| v == a)
    {
        problem(
            out,
            path,
            v,
            format!("{} is not one of the allowed values", where_(path)),
        );
    }
    if let Some(c) = constant
        && v != c
    {
        problem(
            out,
            path,
            v,
            format!("{} must be {}", where_(path), quote(&c.to_string())),
        );
    }
    false
}

/// The problems of a number: `minimum` and `maximum`.
pub(super) fn check_number(s: &Map<String, Value>, path: &str, v: &Json, out: &mut Cx) {
    let Some(x) = v.as_f64() else {
        return;
    };
    if let Some(min) = s.get("minimum").and_then(Value::as_f64)
        && x < min
    {
        problem(
            out,
            path,
            v,
            format!("{} is below the minimum {min}", where_(path)),
        );
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64)
        && x > max
    {
        problem(
            out,
            path,
            v,
            format!("{} is above the maximum {max}", where_(path)),
        );
    }
}

pub(super) fn check_string(s: &Map<String, Value>, text: &str, path: &str, v: &Json, out: &mut Cx) {
    let len = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        problem(
            out,
            path,
            v,
            format!("{} is shorter than {min} characters", where_(path)),
        );
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        problem(
            out,
            path,
            v,
            format!("{} is longer than {max} characters", where_(path)),
        );
    }
    if let Some(fmt) = s.get("format").and_then(Value::as_str)
        && !format_ok(fmt, text)
    {
        problem(
            out,
            path,
            v,
            format!("{} {} is not a {}", where_(path), quote(text), quote(fmt)),
        );
    }
}

fn format_ok(fmt: &str, s: &str) -> bool {
    use time::format_description::well_known::Rfc3339;
    match fmt {
        "date-time" => time::OffsetDateTime::parse(s, &Rfc3339).is_ok(),
        "date" => {
            time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).is_ok()
        }
        "time" => {
            time::Time::parse(
                s,
                time::macros::format_description!("[hour]:[minute]:[second]"),
            )
            .is_ok()
                || time::Time::parse(s, time::macros::format_description!("[hour]:[minute]"))
                    .is_ok()
        }
        "email" => s.split_once('@').is_some_and(|(a, d)| {
            !a.is_empty() && d.contains('.') && !d.starts_with('.') && !d.ends_with('.')
        }),
        "uri" | "url" => s.split_once(':').is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
        }),
        _ => true,
    }
}

fn type_matches(t: &Value, v: &Json) -> bool {
    match t {
        Value::String(name) => one_type(name, v),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|n| one_type(n, v)),
        _ => true,
    }
}

fn one_type(name: &str, v: &Json) -> bool {
    match name {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn type_words(t: &Value) -> String {
    match t {
        Value::String(n) => format!("of type {}", quote(n)),
        Value::Array(ns) => {
            let names: Vec<_> = ns.iter().filter_map(Value::as_str).map(quote).collect();
            format!("of type {}", names.join(" or "))
        }
        _ => "of another type".to_owned(),
    }
}

/// The plain reading of a schema, keyword by keyword from the JSON on every value: what the
/// compiled reading must find (its property tests compare the two).
#[cfg(test)]
pub(super) mod plain {
    use super::*;

    /// The problems of `value` against `schema`, read the plain way.
    pub(in crate::analysis::detect) fn validate(schema: &Value, value: &Json) -> Vec<Problem> {
        let mut cx = Cx {
            out: Vec::new(),
            visits: 0,
        };
        check(schema, value, "", 0, &mut cx);
        cx.out
    }

    fn check(schema: &Value, v: &Json, path: &str, depth: usize, out: &mut Cx) {
        out.visits += 1;
        if depth > MAX_DEPTH || out.out.len() >= MAX_PROBLEMS || out.visits > MAX_VISITS {
            return;
        }
        let Value::Object(s) = schema else {
            if schema == &Value::Bool(false) {
                problem(out, path, v, format!("{} is not allowed", where_(path)));
            }
            return;
        };
        let allowed = match s.get("enum") {
            Some(Value::Array(a)) => Some(a),
            _ => None,
        };
        if rule_problems(s.get("type"), allowed, s.get("const"), v, path, out) {
            return;
        }
        match v {
            Json::Object(o) => check_object(s, o, path, depth, out),
            Json::Array(items) => {
                if let Some(item_schema) = s.get("items") {
                    for (i, item) in items.iter().enumerate().take(256) {
                        check(item_schema, item, &format!("{path}/{i}"), depth + 1, out);
                    }
                }
            }
            Json::String(text) => check_string(s, text, path, v, out),
            Json::Number(_) => check_number(s, path, v, out),
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = s.get(key)
                && !branches.is_empty()
                && !branches
                    .iter()
                    .take(32)
                    .any(|b| branch_passes(b, v, path, depth + 1, out))
            {
                problem(
                    out,
                    path,
                    v,
                    format!("{} fits none of the allowed shapes", where_(path)),
                );
            }
        }
        if let Some(Value::Array(all)) = s.get("allOf") {
            for b in all.iter().take(32) {
                check(b, v, path, depth + 1, out);
            }
        }
    }

    /// Checks one branch with its own problem list but the shared work budget; a branch not
    /// finished for lack of budget passes.
    fn branch_passes(schema: &Value, v: &Json, path: &str, depth: usize, cx: &mut Cx) -> bool {
        let mut inner = Cx {
            out: Vec::new(),
            visits: cx.visits,
        };
        check(schema, v, path, depth, &mut inner);
        cx.visits = inner.visits;
        inner.out.is_empty()
    }

    fn check_object(
        s: &Map<String, Value>,
        o: &crate::analysis::model::JsonMap,
        path: &str,
        depth: usize,
        out: &mut Cx,
    ) {
        if let Some(Value::Array(req)) = s.get("required") {
            for r in req.iter().filter_map(Value::as_str).take(256) {
                if !o.contains_key(r) {
                    problem(
                        out,
                        path,
                        &Json::Null,
                        format!("the required argument {} is missing", quote(r)),
                    );
                }
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, val) in o.iter().take(1024) {
            let sub = format!("{path}/{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check(ps, val, &sub, depth + 1, out),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => problem(
                        out,
                        &sub,
                        val,
                        format!("the argument {} is not one the tool takes", quote(k)),
                    ),
                    Some(extra @ Value::Object(_)) => check(extra, val, &sub, depth + 1, out),
                    _ => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arguments_left_as_text_are_not_checked() {
        use crate::analysis::model::{Run, RunStatus, StepKind, Tool, ToolCall};
        let mut run = Run::new("r", RunStatus::Failed);
        run.tools = vec![Tool {
            name: "search".into(),
            parameters: Some(serde_json::json!({"type": "object", "required": ["query"]})),
            ..Tool::default()
        }];
        run.reindex();
        let mut step = Step::new("s", StepKind::Tool);
        step.tool = Some(Box::new(ToolCall {
            name: "search".into(),
            arguments: Json::from("{'query': unterminated"),
            call_id: None,
        }));
        assert!(!check_call(run.tool("search"), &step).rejected());
        if let Some(t) = step.tool.as_mut() {
            t.arguments = Json::from(serde_json::json!({}));
        }
        assert!(
            check_call(run.tool("search"), &step).rejected(),
            "parsed arguments are still checked"
        );
    }

    use super::*;
    use serde_json::json;

    /// [`super::validate`] of a value written as a `serde_json::Value`.
    fn validate(schema: &Value, value: &Value) -> Vec<Problem> {
        super::validate(schema, &Json::from(value.clone()))
    }

    #[test]
    fn a_weekday_is_not_a_date_time() {
        let schema = json!({"type": "object", "required": ["start"],
            "properties": {"start": {"type": "string", "format": "date-time"}}});
        let p = validate(&schema, &json!({"start": "Friday"}));
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, "/start");
        assert_eq!(p[0].value.as_deref(), Some("Friday"));
        assert!(
            p[0].what.contains("'Friday' is not a 'date-time'"),
            "{}",
            p[0].what
        );
        assert!(validate(&schema, &json!({"start": "2026-11-06T10:00:00Z"})).is_empty());
    }

    #[test]
    fn required_types_extra_keys_and_bounds() {
        let schema = json!({"type": "object", "required": ["order_id"], "additionalProperties": false,
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number", "minimum": 0}}});
        let p = validate(&schema, &json!({"tracking_number": "1Z9", "amount": -5}));
        let whats: Vec<_> = p.iter().map(|x| x.what.as_str()).collect();
        assert_eq!(whats.len(), 3, "{whats:?}");
        assert!(validate(&schema, &json!({"order_id": "A1", "amount": 3})).is_empty());
    }

    #[test]
    fn hostile_schemas_do_not_panic() {
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"anyOf": [deep, {"type": "object"}, {"type": "array"}]});
        }
        let _ = validate(&deep, &json!(1));
        let mut nested = json!({"type": "object"});
        for _ in 0..100 {
            nested = json!({"properties": {"a": nested}});
        }
        let _ = validate(&nested, &json!({"a": {"a": 1}}));
        let _ = validate(
            &json!({"type": 5, "enum": "x", "required": 3}),
            &json!(null),
        );
        let _ = validate(&json!({"minimum": "x", "maxLength": -1}), &json!("s"));
    }
}
