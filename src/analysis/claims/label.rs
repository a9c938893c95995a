//! Labelling one claim (docs/how-it-decides.md, "Claims"): match it to its best evidence by
//! shared words, numbers, ids and names counting double, then supported, partial, unsupported,
//! contradicted (a close source gives a different number), stale (only an outdated source
//! supports it) or no_claim (a pleasantry or a question). A claim that an action was carried out
//! ("Your order is confirmed") is checked against the state-changing calls themselves: a failed
//! call contradicts it, and a user's request never supports it.

use super::evidence::{EvidenceIndex, SourceKind};
use super::words::{Term, TermKind, each_term, lower_text, stem, terms};
use crate::analysis::detect::say::{quote, step as step_name, tool_of};
use crate::analysis::detect::vocab::{
    ACTION_MARKERS, ACTION_NAME_WORDS, GENERAL_NEGATIONS, MODALS, NEGATED_ACTION_LEADS,
    NEGATED_MODALS, NEGATIONS, PLEASANTRIES, SUCCESS_WORDS, WISHES, contains_words, find_phrase,
};
use crate::analysis::links::{StepTexts, flat_text};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::rank::params::{CLAIM_CLOSE, CLAIM_PARTIAL, CLAIM_SUPPORTED};
use crate::analysis::report::SupportLabel;
use std::collections::HashSet;

/// At most this many tool calls (the latest) are compared with a claim of an action.
const MAX_ACTION_CANDIDATES: usize = 2_000;
/// An evidence passage quoted in `why` is cut to this many characters.
const WHY_QUOTE: usize = 120;

/// A claim's label and where its evidence is.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// The label.
    pub label: SupportLabel,
    /// The step of the best evidence.
    pub evidence_step: Option<usize>,
    /// The evidence passage, when there is one.
    pub evidence_text: Option<String>,
    /// Why, in one sentence (inert).
    pub why: String,
    /// The claim says an action was carried out (or was not).
    pub action: bool,
}

/// A tool call a claim of an action may be about.
#[derive(Debug)]
pub struct ActionCall {
    step: usize,
    keys: HashSet<String>,
    numbers: HashSet<String>,
    failed: bool,
    text: String,
}

/// The calls claims of actions are compared with: the state-changing ones when the run marks any
/// tool as state-changing, else the calls whose tool name says it changes things
/// (`create_event`, `issue_refund`); the latest [`MAX_ACTION_CANDIDATES`].
pub fn action_calls(run: &Run, texts: &StepTexts) -> Vec<ActionCall> {
    let any_mutating = run.tools.iter().any(|t| t.mutates);
    let mut out: Vec<ActionCall> = Vec::new();
    let picked: Vec<usize> = run
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == StepKind::Tool)
        .filter(|(_, s)| {
            let Some(call) = &s.tool else { return false };
            if any_mutating {
                run.tool(&call.name).is_some_and(|t| t.mutates)
            } else {
                ACTION_NAME_WORDS.contains(&first_word(&call.name).as_str())
            }
        })
        .map(|(i, _)| i)
        .collect();
    let skip = picked.len().saturating_sub(MAX_ACTION_CANDIDATES);
    for i in picked.into_iter().skip(skip) {
        let Some(step) = run.steps.get(i) else {
            continue;
        };
        let mut text = String::new();
        if let Some(call) = &step.tool {
            text.push_str(&call.name);
            if let Some(d) = run.tool(&call.name).and_then(|t| t.description.as_ref()) {
                text.push('\n');
                text.push_str(d);
            }
            text.push('\n');
            text.push_str(&flat_text(&call.arguments));
        }
        text.push('\n');
        match &step.error {
            Some(e) => text.push_str(e),
            None => text.push_str(texts.produced(i)),
        }
        let mut keys = HashSet::new();
        let mut numbers = HashSet::new();
        each_term(&text, |k, kind| {
            if kind == TermKind::Number {
                numbers.insert(k.clone());
            }
            keys.insert(k);
        });
        out.push(ActionCall {
            step: i,
            keys,
            numbers,
            failed: step.failed(),
            text: step.error.clone().unwrap_or_default(),
        });
    }
    out
}

/// The first word of a tool name in lower case: `create` of `create_event` and `createEvent`.
fn first_word(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() || (prev_lower && c.is_uppercase()) {
            if out.is_empty() {
                continue;
            }
            break;
        }
        prev_lower = c.is_lowercase();
        out.extend(c.to_lowercase());
    }
    out
}

fn is_pleasantry(t: &Term) -> bool {
    match t.kind {
        TermKind::Word => PLEASANTRIES.iter().any(|p| stem(p) == t.key),
        TermKind::Name => true,
        TermKind::Number | TermKind::Id => false,
    }
}

fn source_words(run: &Run, kind: SourceKind, step: Option<usize>) -> String {
    let at = step.map_or_else(|| "the task".to_owned(), |i| step_name(run, i));
    match kind {
        SourceKind::Document => format!("a document at {at}"),
        SourceKind::ToolResult => format!(
            "the result of {} at {at}",
            step.map_or_else(|| "a tool".to_owned(), |i| tool_of(run, i))
        ),
        SourceKind::FailedCall => format!("the failed call at {at}"),
        SourceKind::Memory => format!("the memory read at {at}"),
        SourceKind::User => format!("the user's message at {at}"),
        SourceKind::EmptySearch => format!("the search that found nothing at {at}"),
    }
}

/// The terms of a claim that count in matching: pleasantry words left out.
pub fn claim_terms(claim: &str) -> Vec<Term> {
    content_terms(terms(claim))
}

fn content_terms(ts: Vec<Term>) -> Vec<Term> {
    ts.into_iter()
        .filter(|t| t.kind != TermKind::Word || !is_pleasantry(t))
        .collect()
}

/// Labels one claim.
pub fn label_claim(claim: &str, run: &Run, ix: &EvidenceIndex, actions: &[ActionCall]) -> Labelled {
    let lower = lower_text(claim);
    let ts = terms(claim);
    let no = |why: &str| Labelled {
        label: SupportLabel::NoClaim,
        evidence_step: None,
        evidence_text: None,
        why: why.to_owned(),
        action: false,
    };
    if claim.trim_end().ends_with('?') {
        return no("a question, not a claim");
    }
    if ts.iter().all(is_pleasantry) || is_wish(&lower, &ts) {
        return no("a pleasantry, not a claim");
    }
    let ts = content_terms(ts);
    let negated = find_phrase(&lower, NEGATIONS).is_some() || lower.contains("n't");
    // "could not" reports an inability, not a possibility: only other modals make a promise.
    let mut unmodal = lower.clone();
    for m in NEGATED_MODALS {
        unmodal = unmodal.replace(m, " ");
    }
    let modal = find_phrase(&unmodal, MODALS).is_some();
    let success = find_phrase(&lower, SUCCESS_WORDS).is_some();
    // "Done!" or "All set." alone is a claim that the action happened, too.
    let only_success = ts
        .iter()
        .filter(|t| !is_pleasantry(t))
        .all(|t| SUCCESS_WORDS.iter().any(|w| stem(w) == t.key));
    let explicit =
        success && (only_success || find_phrase(&lower, ACTION_MARKERS).is_some()) && !modal;
    // "Room Orion is booked": a success word right after "is"/"are", about something named.
    let specific = ts.iter().any(|t| t.kind != TermKind::Word);
    let passive = success && !modal && specific && passive_report(&lower);
    // "I could not book …": an action verb in its base form right after a negation.
    let negated_verb = negated && !modal && negated_action_verb(&lower);
    let action = explicit || passive || negated_verb;
    if action && let Some(l) = label_action(run, &ts, negated, actions, !explicit) {
        return l;
    }
    // Found by its wording alone and about none of the calls: an ordinary claim ("Invoices are
    // issued on the 1st"), but a user's request still never supports a claim that something
    // was done.
    label_by_words(
        run,
        &ts,
        ix,
        negated,
        explicit,
        action || (success && !modal),
    )
}

/// True for a wish or a goodbye ("Enjoy your visit!", "Have a great day!") holding no number
/// or id.
fn is_wish(lower: &str, ts: &[Term]) -> bool {
    let start = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let opens = WISHES.iter().any(|w| {
        start.strip_prefix(w).is_some_and(|rest| {
            rest.chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '\'')
        })
    });
    opens && ts.iter().all(|t| !t.is_key())
}

/// True when a success word follows "is" or "are" ("the room is booked").
fn passive_report(lower: &str) -> bool {
    SUCCESS_WORDS.iter().filter(|w| !w.contains(' ')).any(|w| {
        contains_words(lower, &format!("is {w}")) || contains_words(lower, &format!("are {w}"))
    })
}

/// True when an action verb in its base form follows a negation ("could not book", "was unable
/// to refund", "failed to send"), unless the negation is a general one ("does not open").
fn negated_action_verb(lower: &str) -> bool {
    const SKIP: &[&str] = &["to", "be", "able", "yet", "have", "been", "actually"];
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let verbs: Vec<String> = ACTION_NAME_WORDS.iter().map(|v| stem(v)).collect();
    for (k, w) in words.iter().enumerate() {
        let lead = NEGATED_ACTION_LEADS.contains(w) || w.ends_with("n't");
        if !lead || GENERAL_NEGATIONS.contains(w) {
            continue;
        }
        if k.checked_sub(1)
            .and_then(|p| words.get(p))
            .is_some_and(|p| GENERAL_NEGATIONS.contains(p))
        {
            continue;
        }
        let next = words.iter().skip(k + 1).take(4).find(|x| !SKIP.contains(x));
        if next.is_some_and(|x| verbs.contains(&stem(x))) {
            return true;
        }
    }
    false
}

fn label_action(
    run: &Run,
    ts: &[Term],
    negated: bool,
    actions: &[ActionCall],
    need_shared: bool,
) -> Option<Labelled> {
    let mut best: Option<(&ActionCall, f64)> = None;
    for c in actions {
        let score: f64 = ts
            .iter()
            .filter(|t| c.keys.contains(&t.key))
            .map(Term::weight)
            .sum();
        if best.is_none_or(|(_, s)| score >= s) {
            best = Some((c, score));
        }
    }
    let (c, score) = best?;
    // A claim found by its wording alone ("… is booked", "could not book …") must share a word
    // with the call it is checked against.
    if score <= 0.0 && (actions.len() > 1 || need_shared) {
        return None;
    }
    let call = format!(
        "the call {} at {}",
        tool_of(run, c.step),
        step_name(run, c.step)
    );
    let claim_numbers: Vec<&str> = ts
        .iter()
        .filter(|t| t.kind == TermKind::Number)
        .map(|t| t.key.as_str())
        .collect();
    let missing = claim_numbers.iter().any(|n| !c.numbers.contains(*n));
    let other = c
        .numbers
        .iter()
        .any(|n| !claim_numbers.contains(&n.as_str()));
    let (label, why) = match (c.failed, negated) {
        (true, false) => (
            SupportLabel::Contradicted,
            format!(
                "{call} failed ({}), yet the claim says it was done",
                quote(&c.text)
            ),
        ),
        (true, true) => (
            SupportLabel::Supported,
            format!("{call} failed, as the claim says"),
        ),
        (false, true) => (
            SupportLabel::Contradicted,
            format!("{call} succeeded, yet the claim says it was not done"),
        ),
        (false, false) if missing && other => (
            SupportLabel::Contradicted,
            format!("{call} succeeded with a different number than the claim"),
        ),
        (false, false) if missing => (
            SupportLabel::Partial,
            format!("{call} succeeded, but its record does not hold the claim's numbers"),
        ),
        (false, false) => (SupportLabel::Supported, format!("{call} succeeded")),
    };
    Some(Labelled {
        label,
        evidence_step: Some(c.step),
        evidence_text: None,
        why,
        action: true,
    })
}

fn label_by_words(
    run: &Run,
    ts: &[Term],
    ix: &EvidenceIndex,
    negated: bool,
    action: bool,
    says_done: bool,
) -> Labelled {
    let allowed = |k: SourceKind| match k {
        SourceKind::User => !says_done,
        SourceKind::FailedCall | SourceKind::EmptySearch => negated,
        _ => true,
    };
    let ids: Vec<Option<u32>> = ts.iter().map(|t| ix.term_id(&t.key)).collect();
    let present: Vec<u32> = ids.iter().flatten().copied().collect();
    let total: f64 = ts.iter().map(Term::weight).sum();
    let word_total: f64 = ts.iter().filter(|t| !t.is_key()).map(Term::weight).sum();
    let claim_numbers: Vec<u32> = ts
        .iter()
        .zip(&ids)
        .filter(|(t, _)| t.kind == TermKind::Number)
        .filter_map(|(_, id)| *id)
        .collect();
    let has_numbers = ts.iter().any(|t| t.kind == TermKind::Number);

    let mut best_support: Option<(usize, f64)> = None;
    let mut best_stale: Option<(usize, f64)> = None;
    let mut best_contra: Option<(usize, f64)> = None;
    let mut best_any: Option<(usize, f64)> = None;
    let better = |cur: Option<(usize, f64)>, s: f64| cur.is_none_or(|(_, b)| s > b);
    for p in ix.candidates(&present) {
        let Some(pass) = ix.passage(p) else { continue };
        if !allowed(pass.kind) {
            continue;
        }
        let mut shared = 0.0;
        let mut word_shared = 0.0;
        let mut keys_all = true;
        for (t, id) in ts.iter().zip(&ids) {
            let held = id.is_some_and(|id| ix.holds(p, id));
            if held {
                shared += t.weight();
                if !t.is_key() {
                    word_shared += t.weight();
                }
            } else if t.is_key() {
                keys_all = false;
            }
        }
        let share = if total > 0.0 { shared / total } else { 0.0 };
        let close = if word_total > 0.0 {
            word_shared / word_total
        } else {
            0.0
        };
        if share >= CLAIM_SUPPORTED && keys_all {
            if pass.outdated {
                if better(best_stale, share) {
                    best_stale = Some((p, share));
                }
            } else if better(best_support, share) {
                best_support = Some((p, share));
            }
        }
        if has_numbers && !pass.outdated && close >= CLAIM_CLOSE {
            let pnums = ix.numbers_of(p);
            let missing = ts.iter().zip(&ids).any(|(t, id)| {
                t.kind == TermKind::Number && !id.is_some_and(|id| pnums.contains(&id))
            });
            let other = pnums.iter().any(|n| !claim_numbers.contains(n));
            if missing && other && better(best_contra, close) {
                best_contra = Some((p, close));
            }
        }
        if better(best_any, share) {
            best_any = Some((p, share));
        }
    }
    let pick = |p: usize, label: SupportLabel, lead: &str| {
        let pass = ix.passage(p);
        let step = pass.and_then(|x| x.step);
        let kind = pass.map_or(SourceKind::Document, |x| x.kind);
        let text = pass.map(|x| x.text.clone());
        let quoted = text
            .as_deref()
            .map(|t| crate::analysis::detect::say::short(t, WHY_QUOTE))
            .unwrap_or_default();
        Labelled {
            label,
            evidence_step: step,
            why: format!("{lead} {}: '{quoted}'", source_words(run, kind, step)),
            evidence_text: text,
            action,
        }
    };
    if let Some((p, _)) = best_support {
        return pick(p, SupportLabel::Supported, "said by");
    }
    if let Some((p, _)) = best_stale {
        return pick(p, SupportLabel::Stale, "only an outdated source says it,");
    }
    if let Some((p, _)) = best_contra {
        return pick(
            p,
            SupportLabel::Contradicted,
            "a close source gives a different number,",
        );
    }
    if let Some((p, s)) = best_any
        && s >= CLAIM_PARTIAL
    {
        return pick(p, SupportLabel::Partial, "only partly said by");
    }
    Labelled {
        label: SupportLabel::Unsupported,
        evidence_step: None,
        evidence_text: None,
        why: if action {
            "no tool call, document, tool result or memory read shows it was done".to_owned()
        } else {
            "no retrieved document, tool result, memory read or user message says it".to_owned()
        },
        action,
    }
}
