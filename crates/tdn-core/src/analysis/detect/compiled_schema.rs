//! A tool's parameter schema read once into a tree of its keywords, so checking many calls of
//! one tool does not look every keyword up again in every call (each lookup hashes the keyword:
//! at 100,000 steps that was most of the tool-error check; issue 11). [`Compiled::validate`]
//! answers exactly what [`validate`](super::schema::validate) answers: the same problems, in
//! the same order, within the same bounds. Building it is linear in the schema (each node once,
//! no deeper than a check ever goes). Never panics; no I/O.

use super::Facts;
use super::schema::{ArgsCheck, Cx, MAX_DEPTH, MAX_PROBLEMS, MAX_VISITS, problem, rule_problems};
use crate::analysis::model::{Json, JsonMap, Step};
use hashbrown::HashMap;
use serde_json::{Map, Value};

/// A schema node as a check reads it.
enum Node<'s> {
    /// Deeper than a check goes: never read.
    Deep,
    /// Not an object: `false` rejects every value, anything else accepts it.
    Plain(&'s Value),
    /// An object schema's keywords.
    Object(Box<Keywords<'s>>),
}

/// What `additionalProperties` says of an argument the schema does not declare.
enum Extra<'s> {
    /// Nothing (absent, `true`, or not a schema).
    Allowed,
    /// `false`: not allowed.
    Refused,
    /// A schema the argument must pass.
    Schema(Node<'s>),
}

/// The keywords of one object schema, each as the check reads it.
struct Keywords<'s> {
    schema: &'s Map<String, Value>,
    ty: Option<&'s Value>,
    allowed: Option<&'s Vec<Value>>,
    constant: Option<&'s Value>,
    items: Option<Node<'s>>,
    /// The first 32 branches, when there are any.
    any_of: Option<Vec<Node<'s>>>,
    one_of: Option<Vec<Node<'s>>>,
    /// The first 32 branches.
    all_of: Option<Vec<Node<'s>>>,
    /// The first 256 required names.
    required: Option<Vec<&'s str>>,
    properties: Option<HashMap<&'s str, Node<'s>>>,
    extra: Extra<'s>,
}

/// A schema read once, checked against many values.
pub struct Compiled<'s> {
    root: Node<'s>,
}

impl<'s> Compiled<'s> {
    /// Reads `schema`.
    pub fn new(schema: &'s Value) -> Compiled<'s> {
        Compiled {
            root: node(schema, 0),
        }
    }

    /// The problems of `value` against the schema (empty when it passes): what
    /// [`validate`](super::schema::validate) gives for the same schema and value.
    pub fn validate(&self, value: &Json) -> Vec<super::schema::Problem> {
        let mut cx = Cx {
            out: Vec::new(),
            visits: 0,
        };
        check(&self.root, value, "", 0, &mut cx);
        cx.out
    }
}

/// The schemas of a run's tools, each read on its first use.
#[derive(Default)]
pub struct Schemas<'s> {
    /// By the tool's position in the run's `tools`.
    read: HashMap<usize, Compiled<'s>>,
}

impl<'s> Schemas<'s> {
    /// [`check_call`](super::schema::check_call) of step `i` (which is `step`) against the
    /// schema of the tool it called, read once per tool.
    pub fn check(&mut self, f: &Facts<'s>, i: usize, step: &Step) -> ArgsCheck {
        let Some(call) = &step.tool else {
            return ArgsCheck::default();
        };
        if call.arguments.is_string() {
            return ArgsCheck::default();
        }
        let Some((at, schema)) = f
            .tool_position(i)
            .and_then(|at| Some((at, f.run.tools.get(at)?.parameters.as_ref()?)))
        else {
            return ArgsCheck::default();
        };
        let compiled = self.read.entry(at).or_insert_with(|| Compiled::new(schema));
        ArgsCheck {
            known: true,
            problems: compiled.validate(&call.arguments),
        }
    }
}

fn node(schema: &Value, depth: usize) -> Node<'_> {
    if depth > MAX_DEPTH {
        return Node::Deep;
    }
    let Value::Object(s) = schema else {
        return Node::Plain(schema);
    };
    let branches = |key: &str, nonempty: bool| match s.get(key) {
        Some(Value::Array(b)) if !nonempty || !b.is_empty() => {
            Some(b.iter().take(32).map(|b| node(b, depth + 1)).collect())
        }
        _ => None,
    };
    Node::Object(Box::new(Keywords {
        schema: s,
        ty: s.get("type"),
        allowed: match s.get("enum") {
            Some(Value::Array(a)) => Some(a),
            _ => None,
        },
        constant: s.get("const"),
        items: s.get("items").map(|i| node(i, depth + 1)),
        any_of: branches("anyOf", true),
        one_of: branches("oneOf", true),
        all_of: branches("allOf", false),
        required: match s.get("required") {
            Some(Value::Array(req)) => {
                Some(req.iter().filter_map(Value::as_str).take(256).collect())
            }
            _ => None,
        },
        properties: s.get("properties").and_then(Value::as_object).map(|p| {
            let mut out = HashMap::with_capacity(p.len());
            for (k, v) in p {
                out.insert(k.as_str(), node(v, depth + 1));
            }
            out
        }),
        extra: match s.get("additionalProperties") {
            Some(Value::Bool(false)) => Extra::Refused,
            Some(extra @ Value::Object(_)) => Extra::Schema(node(extra, depth + 1)),
            _ => Extra::Allowed,
        },
    }))
}

/// [`check`](super::schema) over a read schema: the same steps in the same order.
fn check(n: &Node<'_>, v: &Json, path: &str, depth: usize, out: &mut Cx) {
    out.visits += 1;
    if depth > MAX_DEPTH || out.out.len() >= MAX_PROBLEMS || out.visits > MAX_VISITS {
        return;
    }
    let k = match n {
        Node::Deep => return,
        Node::Plain(schema) => {
            if *schema == &Value::Bool(false) {
                problem(
                    out,
                    path,
                    v,
                    format!("{} is not allowed", super::schema::where_(path)),
                );
            }
            return;
        }
        Node::Object(k) => k,
    };
    if rule_problems(k.ty, k.allowed, k.constant, v, path, out) {
        return;
    }
    match v {
        Json::Object(o) => check_object(k, o, path, depth, out),
        Json::Array(items) => {
            if let Some(item) = &k.items {
                for (i, x) in items.iter().enumerate().take(256) {
                    check(item, x, &format!("{path}/{i}"), depth + 1, out);
                }
            }
        }
        Json::String(text) => super::schema::check_string(k.schema, text, path, v, out),
        Json::Number(_) => super::schema::check_number(k.schema, path, v, out),
        _ => {}
    }
    for branches in [&k.any_of, &k.one_of].into_iter().flatten() {
        if !branches
            .iter()
            .any(|b| branch_passes(b, v, path, depth + 1, out))
        {
            problem(
                out,
                path,
                v,
                format!(
                    "{} fits none of the allowed shapes",
                    super::schema::where_(path)
                ),
            );
        }
    }
    for b in k.all_of.iter().flatten() {
        check(b, v, path, depth + 1, out);
    }
}

fn branch_passes(n: &Node<'_>, v: &Json, path: &str, depth: usize, cx: &mut Cx) -> bool {
    let mut inner = Cx {
        out: Vec::new(),
        visits: cx.visits,
    };
    check(n, v, path, depth, &mut inner);
    cx.visits = inner.visits;
    inner.out.is_empty()
}

fn check_object(k: &Keywords<'_>, o: &JsonMap, path: &str, depth: usize, out: &mut Cx) {
    // Up to 256 names looked up in an object of any size: through an index when it is big.
    let index =
        (k.required.as_ref().is_some_and(|r| !r.is_empty()) && o.len() > 16).then(|| o.lookup());
    for r in k.required.iter().flatten() {
        let there = match &index {
            Some(ix) => ix.contains_key(*r),
            None => o.contains_key(r),
        };
        if !there {
            problem(
                out,
                path,
                &Json::Null,
                format!("the required argument {} is missing", super::say::quote(r)),
            );
        }
    }
    for (key, val) in o.iter().take(1024) {
        let sub = format!("{path}/{key}");
        match k.properties.as_ref().and_then(|p| p.get(key)) {
            Some(ps) => check(ps, val, &sub, depth + 1, out),
            None => match &k.extra {
                Extra::Refused => problem(
                    out,
                    &sub,
                    val,
                    format!(
                        "the argument {} is not one the tool takes",
                        super::say::quote(key)
                    ),
                ),
                Extra::Schema(extra) => check(extra, val, &sub, depth + 1, out),
                Extra::Allowed => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::schema::plain;
    use proptest::prelude::*;
    use serde_json::json;

    /// Small values: the shapes arguments take, with keys the schemas name.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(|n| json!(n)),
            Just(json!(2.5)),
            prop::sample::select(vec![
                "",
                "a",
                "abc",
                "2024-05-23",
                "x@y.z",
                "http://a",
                "10:00"
            ])
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(vec!["a", "b", "id"]), inner), 0..4)
                    .prop_map(|kv| {
                        Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                    }),
            ]
        })
    }

    /// Schemas built of every keyword the check reads, well and badly formed.
    fn schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(false)),
            Just(json!(true)),
            Just(json!(5)),
            prop::sample::select(vec![
                "string", "number", "integer", "boolean", "object", "array", "null", "other"
            ])
            .prop_map(|t| json!({ "type": t })),
            Just(json!({"type": ["string", "null"]})),
            Just(json!({"type": 7})),
            Just(json!({"enum": ["a", 1, null]})),
            Just(json!({"enum": "a"})),
            Just(json!({"const": "abc"})),
            Just(json!({"minimum": 0, "maximum": 3})),
            Just(json!({"minimum": "x"})),
            Just(json!({"minLength": 2, "maxLength": 3})),
            prop::sample::select(vec!["date-time", "date", "time", "email", "uri", "weird"])
                .prop_map(|f| json!({ "format": f })),
            Just(json!({"required": ["a", 3, "id"]})),
            Just(json!({"required": "a"})),
            Just(json!({"anyOf": []})),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|s| json!({ "items": s })),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| json!({"type": "object", "properties": {"a": a, "id": b}})),
                (inner.clone(), any::<bool>()).prop_map(|(a, refuse)| {
                    let extra = if refuse { json!(false) } else { a.clone() };
                    json!({"properties": {"a": a}, "additionalProperties": extra, "required": ["a"]})
                }),
                prop::collection::vec(inner.clone(), 0..4).prop_map(|b| json!({ "anyOf": b })),
                prop::collection::vec(inner.clone(), 0..4).prop_map(|b| json!({ "oneOf": b })),
                prop::collection::vec(inner, 0..4).prop_map(|b| json!({ "allOf": b })),
            ]
        })
    }

    proptest! {
        #[test]
        fn a_read_schema_finds_what_the_plain_check_finds(s in schema(), v in value()) {
            let v = Json::from(v);
            prop_assert_eq!(Compiled::new(&s).validate(&v), plain::validate(&s, &v));
        }
    }

    #[test]
    fn required_names_in_a_big_object_are_found_through_its_index() {
        // 40 arguments (above the size where the check indexes the object), a repeated key, and
        // required names present, missing, and present only in a nested object.
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"again\",\"inner\":{\"deep\":1}}");
        let args: Json = serde_json::from_str(&text).unwrap();
        let schema = json!({"type": "object",
            "required": ["k0", "k39", "k3", "missing", "deep", "k40"],
            "properties": {"k3": {"type": "string"}, "k5": {"type": "string"}}});
        let got = Compiled::new(&schema).validate(&args);
        assert_eq!(got, plain::validate(&schema, &args));
        let whats: Vec<&str> = got.iter().map(|p| p.what.as_str()).collect();
        assert_eq!(whats.len(), 4, "{whats:?}");
        for name in ["missing", "deep", "k40"] {
            assert!(
                whats
                    .iter()
                    .any(|w| w.contains(&format!("'{name}' is missing"))),
                "{whats:?}"
            );
        }
        assert!(got.iter().any(|p| p.path == "/k5"), "{got:?}");
    }

    #[test]
    fn deep_and_wide_schemas_give_the_plain_answer_within_the_bounds() {
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"anyOf": [deep, {"type": "object"}, {"type": "array"}]});
        }
        let mut nested = json!({"type": "object"});
        let mut arg = json!(1);
        for _ in 0..40 {
            nested = json!({"properties": {"a": nested}, "additionalProperties": false});
            arg = json!({"a": arg, "b": 2});
        }
        for (s, v) in [
            (&deep, json!(1)),
            (&nested, arg.clone()),
            (&nested, json!({"a": {"a": 1}})),
        ] {
            let v = Json::from(v);
            assert_eq!(Compiled::new(s).validate(&v), plain::validate(s, &v));
        }
        assert!(!plain::validate(&nested, &Json::from(arg)).is_empty());
    }
}
