//! Who the value rule blames for a failed call (docs/how-it-decides.md, "Walk back"): the model
//! step whose value reached the call's arguments, the tool or the service behind it, or no one
//! (a fair look-up of what the user gave); and the error phrases it reads.

use super::mention::{Mentions, arg_values, mentions, quoted_spans, values_under};
use crate::analysis::detect::Facts;
use crate::analysis::detect::schema::check_call;
use crate::analysis::links::tokens::clip;
use crate::analysis::model::{Json, StepKind};
use crate::analysis::params::{
    LINK_SCAN_BYTES, QUOTE_CHARS, WALK_BACK_NAMED, WALK_BACK_UNNAMED, WALK_BACK_USER_VALUE,
};
use crate::analysis::say::{quote, short, step as step_name, tool_of};
use crate::analysis::whole_words::{contains_words, find_phrase};

/// Phrases of an error that reject the request as a whole, or say its values matched nothing:
/// about the arguments even when the error names none of them.
pub const REQUEST_COMPLAINTS: &[&str] = &[
    "bad request",
    "400",
    "422",
    "unprocessable",
    "not found",
    "no such",
    "does not exist",
    "doesn't exist",
    "no match",
    "not recognized",
    "unexpected keyword",
    "unexpected argument",
    "positional argument",
];

/// Phrases of an error that complains about the call's input: the arguments are at fault. An
/// exception raised by code the model wrote (`NameError`, `ValueError`, ...) counts too.
pub const INPUT_COMPLAINTS: &[&str] = &[
    "invalid",
    "missing",
    "required",
    "must be",
    "must not",
    "expected",
    "malformed",
    "not a valid",
    "is not a",
    "bad request",
    "400",
    "422",
    "unprocessable",
    "cannot parse",
    "could not parse",
    "can't parse",
    "unable to parse",
    "parse error",
    "unrecognized",
    "unknown parameter",
    "unknown field",
    "unknown argument",
    "wrong type",
    "wrong format",
    "out of range",
    "too long",
    "too short",
    "not allowed",
    "not found",
    "no such",
    "does not exist",
    "doesn't exist",
    "not recognized",
    "no match",
    "mismatch",
    "could not convert",
    "cannot convert",
    "syntaxerror",
    "nameerror",
    "typeerror",
    "valueerror",
    "keyerror",
    "indexerror",
    "attributeerror",
    "zerodivisionerror",
    "modulenotfounderror",
    "importerror",
    "is not defined",
    "unexpected keyword",
    "unexpected argument",
    "positional argument",
];

/// Phrases of an error that says the details given matched nothing.
pub const NOT_FOUND: &[&str] = &[
    "not found",
    "no match",
    "no matching",
    "does not exist",
    "doesn't exist",
    "no such",
    "unknown customer",
    "unknown user",
    "unknown account",
    "no account",
    "no customer",
    "no user",
    "no record",
    "no records",
    "could not find",
    "couldn't find",
    "cannot find",
    "can't find",
    "unable to find",
    "not recognized",
    "did not match",
    "does not match",
    "doesn't match",
    "no results",
];

/// Who the value rule blames for a failed call.
pub(super) enum Blame {
    /// The model step whose value reached the call.
    Model {
        step: usize,
        confidence: f64,
        lines: Vec<String>,
        title: String,
    },
    /// The tool or its service.
    Service { lines: Vec<String> },
    /// No model step to blame.
    Nobody,
    /// No one: a look-up of what the user gave, one try of a search the agent went on with.
    Search,
}

/// The arguments of a failed step: a tool call's, else the step's input.
fn arguments_of(s: &crate::analysis::model::Step) -> &Json {
    static NONE: Json = Json::Null;
    match (&s.tool, &s.input) {
        (Some(t), _) => &t.arguments,
        (None, Some(i)) => i,
        (None, None) => &NONE,
    }
}

/// `conversation`: the run is a conversation with a user ([`is_conversation`]), worked out once.
pub(super) fn blame(facts: &Facts<'_>, x: usize, conversation: bool) -> Blame {
    let run = facts.run;
    let Some(s) = run.steps.get(x) else {
        return Blame::Nobody;
    };
    let err = clip(s.error.as_deref().unwrap_or(""), LINK_SCAN_BYTES);
    let err_lower = err.to_lowercase();
    let args = arguments_of(s);
    let values = arg_values(args);
    let said = mentions(&err_lower, args);
    let args_text = facts.texts.consumed(x);
    let mut named: Vec<String> = values
        .iter()
        .filter(|v| !err.is_empty() && contains_words(&err_lower, &v.to_lowercase()))
        .cloned()
        .collect();
    // An error that quotes part of the arguments names it too (`name 'reslt' is not defined`),
    // and so does one quoting what the model that issued the call wrote.
    let caller_text = facts
        .caller(x)
        .map(|c| facts.texts.produced(c))
        .unwrap_or_default();
    for q in quoted_spans(err) {
        if !named.iter().any(|n| n == q)
            && (contains_words(&args_text, q) || contains_words(&caller_text, q))
        {
            named.push(q.to_owned());
        }
    }
    let check = check_call(facts.tool(x), s);
    // An error about the infrastructure (a time-out, an outage, credentials) stays with the
    // service even when it names the request, unless the schema rejects the arguments.
    if !check.rejected()
        && let Some(infra) = said.infrastructure
    {
        return Blame::Service {
            lines: vec![format!(
                "the error is about the service ({}), not the arguments: the tool or the service behind it failed, not the model",
                quote(infra)
            )],
        };
    }
    // Arguments the tool's schema accepts, and an error naming none of them: a complaint counts
    // against the arguments only when it names one of their keys or rejects the request as a
    // whole ("invalid API key" is about the credentials, not the call's input).
    let schema_passed = check.known && !check.rejected();
    let complaint = find_phrase(&err_lower, INPUT_COMPLAINTS).filter(|_| {
        !schema_passed
            || find_phrase(&err_lower, REQUEST_COMPLAINTS).is_some()
            || said.key.is_some()
    });
    // A business rule rejecting what the request holds ("payment amount does not add up, ...
    // paid 255" of amounts 250 and 5) is about the arguments too.
    // A business rule refusing the request ("non-delivered order cannot be exchanged") is about
    // the request even when it names none of its parts: the decision to make it is blamed.
    let content = said.about_content(complaint.is_some()) || said.refusal.is_some();
    if named.is_empty() && !check.rejected() && complaint.is_none() && !content {
        let valid = if check.known {
            "the arguments pass the tool's schema"
        } else {
            "no sign that the arguments were wrong"
        };
        return Blame::Service {
            lines: vec![format!(
                "{valid} and the error does not mention them: the tool or the service behind it failed, not the model"
            )],
        };
    }
    // The argument values the error points at without naming them: the summed numbers, the
    // values under the key it names, the id whose kind it names.
    let mut pointed: Vec<String> = Vec::new();
    if let Some(d) = &said.derived {
        pointed.extend(d.parts.iter().cloned());
    }
    if let Some(k) = &said.key {
        pointed.extend(values_under(args, k));
    }
    if let Some((_, v)) = &said.kind {
        pointed.push(v.clone());
    }
    let latest_model = |v: &str| {
        facts
            .links
            .producers_of(v)
            .iter()
            .rev()
            .map(|&p| p as usize)
            .filter(|&p| p < x)
            .find(|&p| run.steps.get(p).is_some_and(|st| st.kind.is_model()))
    };
    let caller_wrote = |v: &str| {
        facts
            .caller(x)
            .filter(|&c| contains_words(&facts.texts.produced(c), v))
    };
    let from_named = named.iter().find_map(|v| {
        latest_model(v)
            .or_else(|| caller_wrote(v))
            .map(|m| (m, Some(v.as_str())))
    });
    let from_pointed = || {
        pointed.iter().find_map(|v| {
            latest_model(v)
                .or_else(|| caller_wrote(v))
                .map(|m| (m, Some(v.as_str())))
        })
    };
    let from_any = || {
        values
            .iter()
            .find_map(|v| latest_model(v).map(|m| (m, Some(v.as_str()))))
    };
    let picked = from_named
        .or_else(from_pointed)
        .or_else(from_any)
        .or_else(|| facts.caller(x).map(|m| (m, None)));
    let Some((m, value)) = picked else {
        return Blame::Nobody;
    };
    let wrote_named = named
        .iter()
        .any(|v| contains_words(&facts.texts.produced(m), v));
    let mut confidence = if wrote_named {
        WALK_BACK_NAMED
    } else {
        WALK_BACK_UNNAMED
    };
    let tool = tool_of(run, x);
    let mut lines = Vec::new();
    let title = match value {
        Some(v) => {
            let at = step_name(run, x);
            lines.push(if contains_words(&args_text, v) {
                format!(
                    "it wrote {}, which reached the arguments of {tool} at {at}",
                    quote(v)
                )
            } else {
                format!(
                    "it wrote {}, which the failing call to {tool} at {at} quotes",
                    quote(v)
                )
            });
            let pointed_at = named.is_empty() && pointed.iter().any(|p| p == v);
            match (&said.derived, &said.key, &said.kind) {
                (Some(d), _, _) if pointed_at => format!(
                    "it wrote the {} values of a call that {tool} rejected",
                    quote(&d.key)
                ),
                (None, Some(k), _) if pointed_at => {
                    format!("it wrote the {} of a call that {tool} rejected", quote(k))
                }
                (None, None, Some((words, _))) if pointed_at => {
                    format!("it chose the {} that {tool} rejected", quote(words))
                }
                _ => format!("it wrote {}, which {tool} rejected", quote(v)),
            }
        }
        None => {
            lines.push(format!(
                "it issued the call to {tool} at {}",
                step_name(run, x)
            ));
            format!("it issued a call that {tool} rejected")
        }
    };
    if let Some(v) = named.first() {
        lines.push(format!(
            "the tool's error names {}: {}",
            quote(v),
            quote(err)
        ));
    } else if !err.is_empty() {
        lines.push(format!("the tool's error: {}", quote(err)));
    }
    if named.is_empty() && complaint.is_none() {
        lines.extend(content_lines(&said));
    }
    if check.rejected() {
        let what: Vec<_> = check.problems.iter().map(|p| p.what.as_str()).collect();
        lines.push(format!(
            "the arguments fail the tool's schema: {}",
            what.join("; ")
        ));
    }
    if let Some(v) = value
        && let Some(u) = user_origin(facts, v, x)
    {
        lines.push(format!(
            "{} was first given by the user, at {}",
            quote(v),
            u
        ));
        // Looking up what the user gave was a fair decision when it matched nothing: the user's
        // details, not the choice, failed.
        if !facts.mutating(x)
            && contains_words(&args_text, v)
            && find_phrase(&err_lower, NOT_FOUND).is_some()
        {
            // ... and when the agent's next call found something another way, the failed
            // look-up was one try of a search that went on: no cause at all.
            if conversation && searched_on(facts, x) {
                return Blame::Search;
            }
            confidence = WALK_BACK_USER_VALUE;
            lines.push(
                "the model looked up what the user gave, as given, and changed nothing: a weak suspect"
                    .to_owned(),
            );
        }
    }
    Blame::Model {
        step: m,
        confidence,
        lines,
        title,
    }
}

/// Whether the next tool call after the failed call `x` changes nothing, has other arguments and
/// succeeded: the agent went on searching and found something. Asked only in a conversation with
/// a user, who can give more (a task-only run has no one to: there the failed look-up stays a
/// weak suspect).
fn searched_on(facts: &Facts<'_>, x: usize) -> bool {
    let run = facts.run;
    let Some(args) = run
        .steps
        .get(x)
        .and_then(|s| s.tool.as_ref())
        .map(|c| &c.arguments)
    else {
        return false;
    };
    let next = run
        .steps
        .iter()
        .enumerate()
        .skip(x + 1)
        .find(|(_, s)| s.tool.is_some());
    next.is_some_and(|(k, s)| {
        !facts.mutating(k)
            && s.error.as_deref().is_none_or(|e| e.trim().is_empty())
            && s.tool.as_ref().is_some_and(|c| &c.arguments != args)
    })
}

/// What ties an error that names no argument value to the request: a sum of its numbers, one
/// of its keys, the kind of one of its values; and that nothing in it is about the service.
fn content_lines(said: &Mentions) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(d) = &said.derived {
        lines.push(format!(
            "the error's {} is the sum of the arguments' {} values ({})",
            quote(&d.number),
            quote(&d.key),
            short(&d.parts.join(" + "), QUOTE_CHARS)
        ));
    } else if let Some(k) = &said.key {
        lines.push(format!(
            "the error is about {}, a field of the arguments",
            quote(k)
        ));
    } else if let Some((words, v)) = &said.kind {
        lines.push(format!(
            "the error is about the {} the arguments name ({})",
            quote(words),
            quote(v)
        ));
    }
    if lines.is_empty()
        && let Some(r) = said.refusal
    {
        lines.push(format!(
            "the error refuses the request itself ({})",
            quote(r)
        ));
    }
    if !lines.is_empty() {
        lines.push(
            "it rejects what the request holds, and says nothing of a time-out, an outage or credentials, so the model that wrote the request is blamed, not the service"
                .to_owned(),
        );
    }
    lines
}

/// Where the user first gave `value` before step `x` (a user step, or the task), in words.
pub(crate) fn user_origin(facts: &Facts<'_>, value: &str, x: usize) -> Option<String> {
    let run = facts.run;
    let first = facts.links.producers_of(value).first().map(|&p| p as usize);
    if let Some(p) = first
        && p < x
        && run.steps.get(p).is_some_and(|s| s.kind == StepKind::User)
    {
        return Some(step_name(run, p));
    }
    run.task
        .as_deref()
        .is_some_and(|t| contains_words(clip(t, LINK_SCAN_BYTES), value))
        .then(|| "the task".to_owned())
}
