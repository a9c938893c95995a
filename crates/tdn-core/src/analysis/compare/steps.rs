//! What differs between two aligned steps, part by part; the turn a run skipped with its user
//! before a call that changes the world; the runs' final answers.

use super::normalize::{excerpt, facts, normalize_text, value_excerpt};
use super::profile::{Call, DocPart, Parts, Profile, Role, parts};
use super::words::changed_words;
use super::{Change, Class, Difference};
use crate::analysis::model::{Run, Step, StepKind, value_text};
use serde_json::Value;

/// How long a value shown in a difference may be, in characters.
const VALUE_CHARS: usize = 160;
/// The most argument paths listed for one call.
const MAX_PATHS: usize = 8;
/// How deep an argument's path is followed before the value is shown whole.
const MAX_PATH_DEPTH: usize = 8;
/// The most facts listed on a side of a message difference.
const MAX_FACTS: usize = 8;

/// The differences of two aligned steps `x` (good, position `i`) and `y` (bad, `j`) on `row`.
pub fn pair_differences(
    row: usize,
    i: usize,
    j: usize,
    x: &Step,
    y: &Step,
    px: &Profile,
    py: &Profile,
) -> Vec<Difference> {
    let acts = px.role == Role::Action || py.role == Role::Action;
    let weight = if acts { Class::Action } else { Class::Message };
    let make =
        |change: Change, class: Class| Difference::new(Some(row), Some(i), Some(j), change, class);
    let mut out = Vec::new();
    if x.kind_label() != y.kind_label() {
        let mut d = make(Change::Kind, weight);
        d.good_value = Some(summary(x));
        d.bad_value = Some(summary(y));
        out.push(d);
        return out;
    }
    for (change, a, b) in [
        (Change::Agent, &x.agent, &y.agent),
        (Change::Name, &x.name, &y.name),
    ] {
        let (a, b) = (
            a.as_deref().map(normalize_text),
            b.as_deref().map(normalize_text),
        );
        if a != b {
            let mut d = make(change, weight);
            d.good_value = a.map(|s| excerpt(&s, VALUE_CHARS));
            d.bad_value = b.map(|s| excerpt(&s, VALUE_CHARS));
            out.push(d);
        }
    }
    let (g, b) = (parts(x), parts(y));
    calls(&g.calls, &b.calls, &make, &mut out);
    said(&g, &b, weight, &make, &mut out);
    if g.output != b.output {
        let change = if x.kind == StepKind::Tool {
            Change::ToolResult
        } else {
            Change::Output
        };
        out.push(value_difference(
            make(change, weight),
            g.output.as_ref(),
            b.output.as_ref(),
        ));
    }
    if g.error != b.error {
        let mut d = make(Change::Error, Class::Action);
        d.good_value = g.error.as_deref().map(|e| excerpt(e, VALUE_CHARS));
        d.bad_value = b.error.as_deref().map(|e| excerpt(e, VALUE_CHARS));
        out.push(d);
    }
    if g.documents != b.documents {
        out.push(documents(
            make(Change::Document, Class::Action),
            &g.documents,
            &b.documents,
        ));
    }
    if g.memory != b.memory {
        let mut d = make(Change::Memory, Class::Action);
        match (&g.memory, &b.memory) {
            (Some((gk, gv)), Some((bk, bv))) if gk == bk => {
                d.key = Some(gk.clone());
                d.good_value = Some(value_excerpt(gv, VALUE_CHARS));
                d.bad_value = Some(value_excerpt(bv, VALUE_CHARS));
            }
            (gm, bm) => {
                d.good_value = gm.as_ref().map(|m| excerpt(&m.0, VALUE_CHARS));
                d.bad_value = bm.as_ref().map(|m| excerpt(&m.0, VALUE_CHARS));
            }
        }
        out.push(d);
    }
    if g.decision != b.decision {
        let mut d = make(Change::Decision, Class::Action);
        d.good_value = g.decision.as_deref().map(|s| excerpt(s, VALUE_CHARS));
        d.bad_value = b.decision.as_deref().map(|s| excerpt(s, VALUE_CHARS));
        out.push(d);
    }
    if g.input != b.input {
        out.push(value_difference(
            make(Change::Input, weight),
            g.input.as_ref(),
            b.input.as_ref(),
        ));
    }
    out
}

/// Other tools called, or the same tools with other arguments (one difference per argument
/// path, at most [`MAX_PATHS`] a call). Arguments are compared exactly (after the canonical
/// form): a query in other words is another query.
fn calls(
    g: &[Call],
    b: &[Call],
    make: &impl Fn(Change, Class) -> Difference,
    out: &mut Vec<Difference>,
) {
    let names = |c: &[Call]| {
        (!c.is_empty()).then(|| {
            let list: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
            excerpt(&list.join(", "), VALUE_CHARS)
        })
    };
    if g.len() != b.len() || g.iter().zip(b).any(|(x, y)| x.name != y.name) {
        let mut d = make(Change::Tool, Class::Action);
        d.good_value = names(g);
        d.bad_value = names(b);
        out.push(d);
        return;
    }
    for (x, y) in g.iter().zip(b) {
        if x.arguments == y.arguments {
            continue;
        }
        let mut paths = Vec::new();
        value_paths(&x.arguments, &y.arguments, String::new(), 0, &mut paths);
        for (path, gv, bv) in paths {
            let mut d = make(Change::Argument, Class::Action);
            d.tool = Some(x.name.clone());
            d.key = (!path.is_empty()).then_some(path);
            d.good_value = gv.map(|v| value_excerpt(v, VALUE_CHARS));
            d.bad_value = bv.map(|v| value_excerpt(v, VALUE_CHARS));
            out.push(d);
        }
    }
}

/// The text of two steps: the same facts in other words (wording), other facts (a message), or
/// for text not written by a model or a person (a system prompt, an event), any change.
fn said(
    g: &Parts,
    b: &Parts,
    weight: Class,
    make: &impl Fn(Change, Class) -> Difference,
    out: &mut Vec<Difference>,
) {
    if g.text == b.text {
        return;
    }
    let (gt, bt) = (
        g.text.as_deref().unwrap_or(""),
        b.text.as_deref().unwrap_or(""),
    );
    if !(g.spoken && b.spoken) {
        let mut d = make(Change::Output, weight);
        let (ge, be) = changed_words(gt, bt);
        d.good_value = g.text.as_ref().map(|_| ge);
        d.bad_value = b.text.as_ref().map(|_| be);
        out.push(d);
        return;
    }
    let (gf, bf) = (facts(gt), facts(bt));
    if gf == bf {
        let mut d = make(Change::Wording, Class::Wording);
        let (ge, be) = changed_words(gt, bt);
        d.good_value = (!gt.is_empty()).then_some(ge);
        d.bad_value = (!bt.is_empty()).then_some(be);
        out.push(d);
        return;
    }
    let mut d = make(Change::Message, Class::Message);
    d.facts = true;
    (d.good_value, d.bad_value) = only_facts(&gf, &bf);
    out.push(d);
}

/// The facts (sorted, as [`facts`] gives them) only the good side names, and only the bad side
/// names, at most [`MAX_FACTS`] each.
fn only_facts(g: &[String], b: &[String]) -> (Option<String>, Option<String>) {
    let only = |a: &[String], other: &[String]| {
        let list: Vec<&str> = a
            .iter()
            .filter(|f| other.binary_search(f).is_err())
            .take(MAX_FACTS)
            .map(String::as_str)
            .collect();
        (!list.is_empty()).then(|| excerpt(&list.join(", "), VALUE_CHARS))
    };
    (only(g, b), only(b, g))
}

/// A difference of two canonical values, at the first path where they part.
fn value_difference(mut d: Difference, g: Option<&Value>, b: Option<&Value>) -> Difference {
    match (g, b) {
        (Some(Value::String(x)), Some(Value::String(y))) => {
            let (ge, be) = changed_words(x, y);
            d.good_value = Some(ge);
            d.bad_value = Some(be);
        }
        (Some(x), Some(y)) => {
            let mut paths = Vec::new();
            value_paths(x, y, String::new(), 0, &mut paths);
            if let Some((path, gv, bv)) = paths.into_iter().next() {
                d.key = (!path.is_empty()).then_some(path);
                d.good_value = gv.map(|v| value_excerpt(v, VALUE_CHARS));
                d.bad_value = bv.map(|v| value_excerpt(v, VALUE_CHARS));
            }
        }
        (x, y) => {
            d.good_value = x.map(|v| value_excerpt(v, VALUE_CHARS));
            d.bad_value = y.map(|v| value_excerpt(v, VALUE_CHARS));
        }
    }
    d
}

/// The paths (`a.b[2].c`) where two canonical values differ, with the value on each side
/// (`None`: absent there); at most [`MAX_PATHS`].
fn value_paths<'v>(
    g: &'v Value,
    b: &'v Value,
    path: String,
    depth: usize,
    out: &mut Vec<(String, Option<&'v Value>, Option<&'v Value>)>,
) {
    if out.len() >= MAX_PATHS || g == b {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (g, b) {
        (Value::Object(x), Value::Object(y)) if depth < MAX_PATH_DEPTH => {
            for (k, gv) in x {
                match y.get(k) {
                    Some(bv) => value_paths(gv, bv, join(k), depth + 1, out),
                    None => out.push((join(k), Some(gv), None)),
                }
                if out.len() >= MAX_PATHS {
                    return;
                }
            }
            for (k, bv) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                if out.len() >= MAX_PATHS {
                    return;
                }
                out.push((join(k), None, Some(bv)));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() && depth < MAX_PATH_DEPTH => {
            for (n, (gv, bv)) in x.iter().zip(y).enumerate() {
                value_paths(gv, bv, format!("{path}[{n}]"), depth + 1, out);
                if out.len() >= MAX_PATHS {
                    return;
                }
            }
        }
        _ => out.push((path, Some(g), Some(b))),
    }
}

/// Other documents retrieved (by id or source), or the same ones with other text.
fn documents(mut d: Difference, g: &Option<Vec<DocPart>>, b: &Option<Vec<DocPart>>) -> Difference {
    let label = |x: &DocPart| {
        x.label
            .clone()
            .unwrap_or_else(|| format!("'{}'", excerpt(&x.text, 40)))
    };
    let labels =
        |docs: &Option<Vec<DocPart>>| -> Vec<String> { docs.iter().flatten().map(label).collect() };
    let (gl, bl) = (labels(g), labels(b));
    if gl != bl {
        let only = |a: &[String], other: &[String]| {
            let theirs: std::collections::HashSet<&str> =
                other.iter().map(String::as_str).collect();
            let list: Vec<&str> = a
                .iter()
                .filter(|l| !theirs.contains(l.as_str()))
                .take(MAX_FACTS)
                .map(String::as_str)
                .collect();
            if list.is_empty() {
                // The same documents in another order.
                excerpt(&a.join(", "), VALUE_CHARS)
            } else {
                excerpt(&list.join(", "), VALUE_CHARS)
            }
        };
        d.good_value = g.as_ref().map(|_| only(&gl, &bl));
        d.bad_value = b.as_ref().map(|_| only(&bl, &gl));
        return d;
    }
    let changed = g
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .find(|(x, y)| x.text != y.text);
    if let Some((x, y)) = changed {
        d.key = Some(label(x));
        let (ge, be) = changed_words(&x.text, &y.text);
        d.good_value = Some(ge);
        d.bad_value = Some(be);
    }
    d
}

/// A step in a few words: `tool get_weather({"city":"Paris"})`, `llm → get_weather`,
/// `user: 'Yes, go ahead'`.
pub fn summary(step: &Step) -> String {
    let kind = step.kind_label();
    if let Some(t) = &step.tool {
        return excerpt(
            &format!("{kind} {}({})", t.name, value_text(&t.arguments)),
            VALUE_CHARS,
        );
    }
    let p = parts(step);
    if !p.calls.is_empty() {
        let calls: Vec<String> = p
            .calls
            .iter()
            .map(|c| format!("{}({})", c.name, value_text(&c.arguments)))
            .collect();
        return excerpt(&format!("{kind} → {}", calls.join(", ")), VALUE_CHARS);
    }
    let label = match (&step.agent, &step.name) {
        (Some(a), _) => format!("{kind} {a}"),
        (None, Some(n)) => format!("{kind} {n}"),
        (None, None) => kind.to_owned(),
    };
    match p.text.filter(|t| !t.is_empty()) {
        Some(t) => excerpt(&format!("{label}: '{t}'"), VALUE_CHARS),
        None => excerpt(&label, VALUE_CHARS),
    }
}

/// For each step of a run, the last user message since the run's previous step that acted
/// (none when the user said nothing in between).
pub fn users_since_action(profiles: &[Profile]) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(profiles.len());
    let mut last: Option<usize> = None;
    for (i, p) in profiles.iter().enumerate() {
        out.push(last);
        match p.role {
            Role::Action => last = None,
            Role::Message if p.user => last = Some(i),
            _ => {}
        }
    }
    out
}

/// A call that changes the world made without the user's reply the good run waited for: at a
/// row where both runs make the same calls, one of which a run marks as changing the world
/// (`mutates`), the good run heard from its user since its own previous action and the bad run
/// did not since its own. `good_users` and `bad_users` are [`users_since_action`] of each run.
#[allow(clippy::too_many_arguments)]
pub fn skipped_user_turn(
    good: &Run,
    bad: &Run,
    gp: &[Profile],
    bp: &[Profile],
    good_users: &[Option<usize>],
    bad_users: &[Option<usize>],
    row: usize,
    i: usize,
    j: usize,
) -> Option<Difference> {
    let (x, y) = (gp.get(i)?, bp.get(j)?);
    if x.role != Role::Action || x.calls.is_empty() || x.calls != y.calls {
        return None;
    }
    let heard = (*good_users.get(i)?)?;
    if bad_users.get(j).copied().flatten().is_some() {
        return None;
    }
    let name = x.calls.iter().find(|n| {
        good.tool(n).is_some_and(|t| t.mutates) || bad.tool(n).is_some_and(|t| t.mutates)
    })?;
    let mut d = Difference::new(
        Some(row),
        Some(heard),
        Some(j),
        Change::SkippedUserTurn,
        Class::Action,
    );
    d.tool = Some(name.clone());
    d.good_value = good.steps.get(heard).map(summary);
    Some(d)
}

/// The runs' final answers, when they differ: a message difference when they name other facts
/// (or only one run gave one), wording otherwise.
pub fn final_answer(good: &Run, bad: &Run) -> Option<Difference> {
    let g = good
        .final_answer
        .as_deref()
        .map(normalize_text)
        .filter(|s| !s.is_empty());
    let b = bad
        .final_answer
        .as_deref()
        .map(normalize_text)
        .filter(|s| !s.is_empty());
    if g == b {
        return None;
    }
    let (gt, bt) = (g.as_deref().unwrap_or(""), b.as_deref().unwrap_or(""));
    let class = if g.is_some() && b.is_some() && facts(gt) == facts(bt) {
        Class::Wording
    } else {
        Class::Message
    };
    let mut d = Difference::new(None, None, None, Change::FinalAnswer, class);
    let (ge, be) = changed_words(gt, bt);
    d.good_value = g.map(|_| ge);
    d.bad_value = b.map(|_| be);
    Some(d)
}
