//! Flat, indexed attribute keys turned back into JSON: `gen_ai.prompt.0.role`,
//! `llm.input_messages.1.message.tool_calls.0.tool_call.function.name` and the like become arrays
//! of objects, numeric segments being array positions (in index order, gaps closed). And the
//! reverse, [`flatten`], for formats that nest attributes as objects.
//!
//! Pure and linear in the number of keys under the prefix; a key that is both a value and a
//! branch keeps the branch.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug)]
enum Tree {
    Leaf(Value),
    Branch(BTreeMap<Seg, Tree>),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Index(u64),
    Name(String),
}

fn seg(s: &str) -> Seg {
    match s.parse::<u64>() {
        Ok(i) if !s.starts_with('+') => Seg::Index(i),
        _ => Seg::Name(s.to_owned()),
    }
}

/// Deeper nesting than this is kept as one value.
const MAX_FLATTEN_DEPTH: usize = 32;

/// Attributes nested as objects (`{"llm": {"input_messages": [{"message": {...}}]}}`) as the
/// flat dotted keys the conventions use (`llm.input_messages.0.message.role`): objects are always
/// opened, arrays only when they hold objects (a list of strings stays one value). Flat keys are
/// kept as they are. Iterative, so deep input cannot exhaust the stack.
pub fn flatten(attrs: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut work: Vec<(String, Value, usize)> =
        attrs.into_iter().rev().map(|(k, v)| (k, v, 0)).collect();
    while let Some((key, v, depth)) = work.pop() {
        let open = depth < MAX_FLATTEN_DEPTH
            && match &v {
                Value::Object(o) => !o.is_empty(),
                Value::Array(a) => a.iter().any(Value::is_object),
                _ => false,
            };
        if !open {
            out.insert(key, v);
            continue;
        }
        match v {
            Value::Object(o) => {
                for (k, child) in o.into_iter().rev() {
                    work.push((format!("{key}.{k}"), child, depth + 1));
                }
            }
            Value::Array(a) => {
                for (i, child) in a.into_iter().enumerate().rev() {
                    work.push((format!("{key}.{i}"), child, depth + 1));
                }
            }
            other => {
                out.insert(key, other);
            }
        }
    }
    out
}

/// The keys of `attrs` under `prefix.` as nested JSON; `None` when there are none.
pub fn unflatten(attrs: &Map<String, Value>, prefix: &str) -> Option<Value> {
    let head = format!("{prefix}.");
    let mut root = BTreeMap::new();
    let mut any = false;
    for (k, v) in attrs {
        let Some(rest) = k.strip_prefix(&head) else {
            continue;
        };
        any = true;
        insert(&mut root, rest, v.clone());
    }
    any.then(|| to_json(Tree::Branch(root)))
}

fn insert(root: &mut BTreeMap<Seg, Tree>, path: &str, v: Value) {
    let segs: Vec<Seg> = path.split('.').map(seg).collect();
    let Some((last, inner)) = segs.split_last() else {
        return;
    };
    let mut map = root;
    for s in inner {
        let entry = map
            .entry(s.clone())
            .or_insert_with(|| Tree::Branch(BTreeMap::new()));
        if let Tree::Leaf(_) = entry {
            *entry = Tree::Branch(BTreeMap::new());
        }
        match entry {
            Tree::Branch(m) => map = m,
            Tree::Leaf(_) => return,
        }
    }
    map.entry(last.clone()).or_insert(Tree::Leaf(v));
}

/// Converts without recursion, so a key with thousands of segments cannot exhaust the stack.
fn to_json(tree: Tree) -> Value {
    enum Work {
        Visit(Tree),
        Build { keys: Vec<Seg> },
    }
    let mut work = vec![Work::Visit(tree)];
    let mut done: Vec<Value> = Vec::new();
    while let Some(w) = work.pop() {
        match w {
            Work::Visit(Tree::Leaf(v)) => done.push(v),
            Work::Visit(Tree::Branch(m)) => {
                let keys: Vec<Seg> = m.keys().cloned().collect();
                work.push(Work::Build { keys });
                // Children are visited in reverse so they finish in key order.
                for (_, child) in m.into_iter().rev() {
                    work.push(Work::Visit(child));
                }
            }
            Work::Build { keys } => {
                let at = done.len().saturating_sub(keys.len());
                let values = done.split_off(at);
                let all_index = keys.iter().all(|k| matches!(k, Seg::Index(_)));
                if all_index {
                    done.push(Value::Array(values));
                } else {
                    let mut o = Map::new();
                    for (k, v) in keys.into_iter().zip(values) {
                        let name = match k {
                            Seg::Index(i) => i.to_string(),
                            Seg::Name(s) => s,
                        };
                        o.insert(name, v);
                    }
                    done.push(Value::Object(o));
                }
            }
        }
    }
    done.pop().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attrs(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn indexed_keys_become_arrays_in_index_order() {
        let a = attrs(json!({
            "gen_ai.prompt.10.role": "user",
            "gen_ai.prompt.2.role": "system",
            "gen_ai.prompt.2.content": "be brief",
            "gen_ai.prompt.10.content": "hi",
            "gen_ai.completion.0.content": "other",
        }));
        assert_eq!(
            unflatten(&a, "gen_ai.prompt"),
            Some(json!([
                {"content": "be brief", "role": "system"},
                {"content": "hi", "role": "user"}
            ]))
        );
        assert_eq!(unflatten(&a, "llm.input_messages"), None);
    }

    #[test]
    fn nested_calls_unflatten() {
        let a = attrs(json!({
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "f",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
        }));
        assert_eq!(
            unflatten(&a, "llm.output_messages"),
            Some(json!([{"message": {"role": "assistant", "tool_calls": [
                {"tool_call": {"function": {"arguments": "{}", "name": "f"}}}]}}]))
        );
    }

    #[test]
    fn nested_attributes_flatten_to_the_keys_conventions_use() {
        let nested = attrs(json!({
            "llm": {"input_messages": [{"message": {"role": "user", "content": "hi"}}],
                    "model_name": "m"},
            "tags": ["a", "b"],
            "input.value": "{}",
        }));
        let flat = flatten(nested);
        assert_eq!(
            flat.get("llm.input_messages.0.message.role"),
            Some(&json!("user"))
        );
        assert_eq!(flat.get("llm.model_name"), Some(&json!("m")));
        assert_eq!(flat.get("tags"), Some(&json!(["a", "b"])));
        assert_eq!(flat.get("input.value"), Some(&json!("{}")));
        assert_eq!(
            unflatten(&flat, "llm.input_messages"),
            Some(json!([{"message": {"content": "hi", "role": "user"}}]))
        );
    }

    #[test]
    fn a_key_both_leaf_and_branch_keeps_the_branch() {
        let a = attrs(json!({"p.0": "leaf", "p.0.x": 1}));
        assert_eq!(unflatten(&a, "p"), Some(json!([{"x": 1}])));
    }
}
