//! The walk back (docs/how-it-decides.md, "Walk back"): from each symptom, follow the links back.
//!
//! - If an earlier step on that path was flagged as a suspect, the earliest one is the root
//!   cause; its evidence gets "its output flows into step N, where the failure surfaced".
//! - Else, for a failed call: the model step whose value reached the call's arguments is the root
//!   cause (`wrong_value`), at [`WALK_BACK_NAMED`](crate::analysis::params::WALK_BACK_NAMED) when the error names that value, else
//!   [`WALK_BACK_UNNAMED`](crate::analysis::params::WALK_BACK_UNNAMED).
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
use crate::analysis::detect::{Category, Facts, Finding, Nature};
use crate::analysis::model::StepKind;
use crate::analysis::params::{QUOTE_CHARS, SERVICE_ERROR};
use crate::analysis::say::{short, step as step_name, tool_of, tool_phrase};
use blame::{Blame, blame};
pub(crate) use blame::{NOT_FOUND, user_origin};
use mention::arg_values;

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

mod blame;
mod mention;

#[cfg(test)]
mod tests;
