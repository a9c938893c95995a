//! The walk back (docs/how-it-decides.md, "Walk back"): from each symptom, follow the links back.
//!
//! - If an earlier step on that path was flagged as a suspect, the earliest one is the root
//!   cause; its evidence gets "its output flows into step N, where the failure surfaced".
//! - Else, for a failed call: the model step whose value reached the call's arguments is the root
//!   cause (`wrong_value`), at [`WALK_BACK_NAMED`] when the error names that value, else
//!   [`WALK_BACK_UNNAMED`].
//! - Valid arguments and an error that does not mention them (a 500, a time-out): the tool or
//!   the service behind it is blamed (`service_error`), not the model.
//!
//! "Upstream" is the value links, the model step that issued a tool call, the steps a decision
//! requires and, for a claim, its evidence step. All of them point backwards, so one forward pass
//! keeps, for every step, its earliest flagged ancestor: linear in the run, never a search per
//! symptom. A cause found by the walk back counts for the symptoms after it in step order.

use super::Role;
use crate::analysis::count::group;
use crate::analysis::detect::conversation::is_conversation;
use crate::analysis::detect::schema::check_call;
use crate::analysis::detect::{Category, Facts, Finding, Nature};
use crate::analysis::links::tokens::clip;
use crate::analysis::model::Json;
use crate::analysis::model::StepKind;
use crate::analysis::params::{
    LINK_SCAN_BYTES, QUOTE_CHARS, SERVICE_ERROR, WALK_BACK_NAMED, WALK_BACK_UNNAMED,
    WALK_BACK_USER_VALUE,
};
use crate::analysis::say::{quote, short, step as step_name, tool_of, tool_phrase};
use crate::analysis::whole_words::{contains_words, find_phrase};
use mention::{Mentions, arg_values, mentions, quoted_spans, values_under};

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

/// A finding after the walk back: how it was found and what caused it.
#[derive(Clone, Debug)]
pub struct Walked {
    /// The finding (evidence extended by the walk back).
    pub finding: Finding,
    /// Root cause, symptom (with a known cause) or suspect.
    pub role: Role,
    /// For a symptom: the position of the step that caused it.
    pub cause: Option<usize>,
}

/// Walks back from every symptom; returns every finding with its role, plus the root causes
/// the walk back found (`wrong_value` findings on model steps).
pub fn walk_back(facts: &Facts<'_>, findings: Vec<Finding>) -> Vec<Walked> {
    let run = facts.run;
    let n = run.steps.len();
    let mut items: Vec<Walked> = findings
        .into_iter()
        .filter(|f| f.step < n)
        .map(|finding| Walked {
            finding,
            role: Role::Suspect,
            cause: None,
        })
        .collect();
    let mut flagged = vec![false; n];
    let mut symptoms_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, w) in items.iter().enumerate() {
        match w.finding.nature {
            // A lead names no fault (the final answer, a hand-off of its value, the decisions the
            // answer rested on, the instruction behind a stall, the first change): none is a
            // cause to walk back to.
            Nature::Suspect if !w.finding.category.is_lead() => {
                if let Some(f) = flagged.get_mut(w.finding.step) {
                    *f = true;
                }
            }
            Nature::Suspect => {}
            Nature::Symptom => {
                if let Some(list) = symptoms_at.get_mut(w.finding.step) {
                    list.push(k);
                }
            }
        }
    }
    let mut anc: Vec<Option<usize>> = vec![None; n];
    // (cause, symptom step, the symptom's finding)
    let mut roots: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let earliest = |flagged: &[bool], anc: &[Option<usize>], p: usize| -> Option<usize> {
        let own = flagged.get(p).copied().unwrap_or(false).then_some(p);
        min_opt(own, anc.get(p).copied().flatten())
    };
    // Per state-changing tool: the first failed call of the current run of failures and the
    // decision it was blamed on (a retry that fails again goes back to that first attempt).
    let mut chains: std::collections::HashMap<&str, Chain> = std::collections::HashMap::new();
    let mut retry_lines: Vec<(usize, String)> = Vec::new();
    // Failed look-ups that were one try of a search: no finding at all.
    let mut searches: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let conversation = is_conversation(run);
    for x in 0..n {
        let mut best: Option<usize> = None;
        for p in parents(facts, x) {
            best = min_opt(best, earliest(&flagged, &anc, p));
        }
        let retry_of = retried_change(facts, &mut chains, x);
        if let Some((first, cause)) = retry_of {
            best = min_opt(best, Some(cause));
            retry_lines.push((cause, retry_line(facts, first, x)));
        }
        if let Some(slot) = anc.get_mut(x) {
            *slot = best;
        }
        let here = symptoms_at.get(x).cloned().unwrap_or_default();
        for k in here {
            let Some(w) = items.get(k) else { continue };
            let mut cause = best;
            for &u in w.finding.upstream.iter().filter(|&&u| u < x) {
                cause = min_opt(cause, earliest(&flagged, &anc, u));
            }
            if let Some(c) = cause {
                if let Some(w) = items.get_mut(k) {
                    w.cause = Some(c);
                    w.role = Role::Symptom;
                }
                roots.push((c, x, Some(k)));
                continue;
            }
            let failed_call = matches!(
                w.finding.category,
                Category::ToolError | Category::StepError | Category::InvalidArguments
            ) && run.steps.get(x).is_some_and(|s| !s.kind.is_model());
            if !failed_call {
                continue;
            }
            let blamed = blame(facts, x, conversation);
            if let Blame::Model { step, .. } = &blamed {
                start_chain(facts, &mut chains, x, *step);
            }
            match blamed {
                Blame::Model {
                    step: m,
                    confidence,
                    lines,
                    title,
                } => {
                    let mut f = Finding::new(
                        m,
                        Category::WrongValue,
                        w.finding.detector,
                        confidence,
                        Nature::Suspect,
                        title,
                    );
                    f.evidence = lines;
                    items.push(Walked {
                        finding: f,
                        role: Role::RootCause,
                        cause: None,
                    });
                    if let Some(flag) = flagged.get_mut(m) {
                        *flag = true;
                    }
                    if let Some(w) = items.get_mut(k) {
                        w.cause = Some(m);
                        w.role = Role::Symptom;
                    }
                    roots.push((m, x, Some(k)));
                    if let Some(slot) = anc.get_mut(x) {
                        *slot = min_opt(*slot, Some(m));
                    }
                }
                Blame::Service { lines } => {
                    if let Some(w) = items.get_mut(k) {
                        w.finding.category = Category::ServiceError;
                        w.finding.confidence = SERVICE_ERROR;
                        w.finding.title = format!("{} or its service failed", tool_phrase(run, x));
                        w.finding.evidence.extend(lines);
                    }
                }
                Blame::Nobody => {}
                Blame::Search => {
                    searches.insert(k);
                }
            }
        }
    }
    // Each root's evidence: the first few failures its output flowed into, in detail, then one
    // line counting the rest (a root behind thousands of failed calls keeps a readable list, and
    // building it stays linear).
    let mut flows: std::collections::HashMap<usize, Flow> = std::collections::HashMap::new();
    for (root, symptom, k) in roots {
        let flow = flows.entry(root).or_default();
        if !flow.symptoms.insert(symptom) {
            continue;
        }
        if flow.detailed >= FLOWS_IN_DETAIL {
            flow.more.push(symptom);
            continue;
        }
        flow.detailed += 1;
        let mut new = vec![format!(
            "its output flows into {}, where the failure surfaced",
            step_name(run, symptom)
        )];
        // A symptom on a step that decided nothing (a call's result) is not listed as a
        // suspect: say here what showed there, with its evidence.
        if let Some(w) = k.and_then(|k| items.get(k))
            && run
                .steps
                .get(symptom)
                .is_some_and(|s| !s.kind.is_model() && s.kind != StepKind::User)
        {
            new.push(format!(
                "there, {}",
                short(&w.finding.title, 2 * QUOTE_CHARS)
            ));
            new.extend(w.finding.evidence.iter().cloned());
        }
        for line in new {
            if flow.seen.insert(line.clone()) {
                flow.lines.push(line);
            }
        }
    }
    for (root, line) in retry_lines {
        let flow = flows.entry(root).or_default();
        if flow.seen.insert(line.clone()) {
            flow.lines.push(line);
        }
    }
    let mut flows: std::collections::HashMap<usize, Vec<String>> = flows
        .into_iter()
        .map(|(root, flow)| {
            let mut lines = flow.lines;
            if !flow.more.is_empty() {
                let named: Vec<String> = flow
                    .more
                    .iter()
                    .take(FLOWS_NAMED)
                    .map(|&x| step_name(run, x))
                    .collect();
                let rest = flow.more.len() - named.len();
                let tail = if rest > 0 {
                    format!(" and {} more", group(rest))
                } else {
                    String::new()
                };
                lines.push(format!(
                    "its output also flows into {} more failed {}: {}{tail}",
                    group(flow.more.len()),
                    if flow.more.len() == 1 {
                        "step"
                    } else {
                        "steps"
                    },
                    named.join(", ")
                ));
            }
            (root, lines)
        })
        .collect();
    for w in items.iter_mut() {
        if w.finding.nature != Nature::Suspect {
            continue;
        }
        if let Some(lines) = flows.remove(&w.finding.step) {
            w.role = Role::RootCause;
            let mut ev = lines;
            ev.append(&mut w.finding.evidence);
            w.finding.evidence = ev;
        }
    }
    let items = items
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !searches.contains(k))
        .map(|(_, w)| w)
        .collect();
    super::decision::to_decisions(facts, items)
}

/// How many of a root's failures are described in full in its evidence; the rest are counted.
const FLOWS_IN_DETAIL: usize = 3;
/// How many of the rest are named in the counting line.
const FLOWS_NAMED: usize = 5;

/// What a root's output flowed into, gathered while walking back.
#[derive(Default)]
struct Flow {
    /// The evidence lines, in order, each once.
    lines: Vec<String>,
    seen: std::collections::HashSet<String>,
    /// Every failure traced to this root, each once.
    symptoms: std::collections::HashSet<usize>,
    /// How many failures are described in `lines`.
    detailed: usize,
    /// The failures past `FLOWS_IN_DETAIL`, in the order they were found.
    more: Vec<usize>,
}

fn min_opt(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The steps directly upstream of `x`: value links into it, the model step that issued it (a
/// tool call), the decision behind an earlier change to what it works on (a failed call), the
/// steps it requires (a decision). All earlier than `x`.
fn parents(facts: &Facts<'_>, x: usize) -> Vec<usize> {
    let run = facts.run;
    let mut out: Vec<usize> = facts.links.into_step(x).iter().map(|u| u.from).collect();
    if let Some(c) = facts.caller(x) {
        out.push(c);
    }
    // A failed call on something an earlier change had changed depends on that change's decision.
    if let Some(d) = facts.state_source(x).and_then(|(w, _)| facts.caller(w)) {
        out.push(d);
    }
    if let Some(d) = run.steps.get(x).and_then(|s| s.decision.as_ref()) {
        for o in d.options.iter().filter(|o| o.id == d.chosen) {
            out.extend(o.requires.iter().filter_map(|r| run.step_index(r.as_str())));
        }
    }
    out.retain(|&p| p < x);
    out
}

/// A failed call to a state-changing tool that no success of that tool has followed yet.
struct Chain {
    /// The failed call.
    first: usize,
    /// The decision the walk back blamed for it.
    cause: usize,
    /// Its argument values.
    values: Vec<String>,
}

/// The name of the state-changing tool that step `x` called and failed, when it did.
fn failed_change<'r>(facts: &Facts<'r>, x: usize) -> Option<&'r str> {
    let s = facts.run.steps.get(x)?;
    let call = s.tool.as_ref()?;
    (facts.mutating(x) && s.error.as_deref().is_some_and(|e| !e.trim().is_empty()))
        .then_some(call.name.as_str())
}

/// When step `x` is a call to a state-changing tool that retries an earlier failed call to the
/// same tool on the same thing (an argument value in common, other arguments changed), with no
/// success of that tool between: the first failed call and the decision blamed for it. A
/// successful call of the tool ends its chain.
fn retried_change<'r>(
    facts: &Facts<'r>,
    chains: &mut std::collections::HashMap<&'r str, Chain>,
    x: usize,
) -> Option<(usize, usize)> {
    let s = facts.run.steps.get(x)?;
    let call = s.tool.as_ref()?;
    if !facts.mutating(x) {
        return None;
    }
    let Some(name) = failed_change(facts, x) else {
        chains.remove(call.name.as_str());
        return None;
    };
    let chain = chains.get(name)?;
    let values = arg_values(&call.arguments);
    let same_thing = values.iter().any(|v| chain.values.contains(v));
    let changed = arg_values(&facts.run.steps.get(chain.first)?.tool.as_ref()?.arguments) != values;
    (same_thing && changed && chain.cause < x).then_some((chain.first, chain.cause))
}

/// Opens a chain at the failed call `x` to a state-changing tool, blamed on `cause`, unless one
/// is open for that tool.
fn start_chain<'r>(
    facts: &Facts<'r>,
    chains: &mut std::collections::HashMap<&'r str, Chain>,
    x: usize,
    cause: usize,
) {
    let Some(name) = failed_change(facts, x) else {
        return;
    };
    let values = facts
        .run
        .steps
        .get(x)
        .and_then(|s| s.tool.as_ref())
        .map(|c| arg_values(&c.arguments))
        .unwrap_or_default();
    chains.entry(name).or_insert(Chain {
        first: x,
        cause,
        values,
    });
}

/// The evidence line on the first failed attempt of a change that a retry repeated.
fn retry_line(facts: &Facts<'_>, first: usize, retry: usize) -> String {
    let run = facts.run;
    let by = facts
        .caller(retry)
        .map_or_else(String::new, |c| format!(" by {}", step_name(run, c)));
    format!(
        "its call to {} at {} failed first; the retry{by}, on the same thing with changed arguments, failed again at {}: the first attempt is the earliest wrong decision",
        tool_of(run, first),
        step_name(run, first),
        step_name(run, retry)
    )
}

/// Who the value rule blames for a failed call.
enum Blame {
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
fn blame(facts: &Facts<'_>, x: usize, conversation: bool) -> Blame {
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

mod mention;

#[cfg(test)]
mod tests;
