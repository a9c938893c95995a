//! Labelling one claim (docs/how-it-decides.md, "Claims"): match it to its best evidence by
//! shared words, numbers, ids and names counting double, then supported, partial, unsupported,
//! contradicted (a close source gives a different number), stale (only an outdated source
//! supports it) or no_claim (a pleasantry or a question). A claim that an action was carried out
//! ("Your order is confirmed") is checked against the state-changing calls themselves: a failed
//! call contradicts it, and a user's request never supports it.

use super::SupportLabel;
use super::actions::ActionCall;
use super::courtesy::{PLEASANTRIES, SUCCESS_WORDS};
use super::evidence::{EvidenceIndex, SourceKind};
use super::words::{Term, TermKind, lower_text, numbers_in, stem, terms};
use crate::analysis::model::Run;
use crate::analysis::params::{CLAIM_CLOSE, CLAIM_PARTIAL, CLAIM_SUPPORTED};
use crate::analysis::say::{quote, step as step_name, tool_of};
use crate::analysis::state_change::ACTION_NAME_WORDS;
use crate::analysis::whole_words::{contains_words, find_phrase};
use std::cell::LazyCell;

/// Words that make a success word a report about this conversation ("Your call is booked",
/// "I've refunded", "The refund has been issued") rather than a general statement ("Invoices
/// are issued monthly").
pub const ACTION_MARKERS: &[&str] = &[
    "i",
    "i've",
    "i'm",
    "i have",
    "we",
    "we've",
    "we have",
    "your",
    "you",
    "you're",
    "you've",
    "has been",
    "have been",
    "was",
    "were",
    "is now",
    "are now",
    "all set",
    "just",
];

/// Words that turn a claim around ("could not book").
pub const NEGATIONS: &[&str] = &[
    "not", "n't", "never", "no", "unable", "cannot", "failed", "couldn't", "wasn't", "didn't",
    "isn't", "haven't", "hasn't", "won't", "can't", "weren't", "aren't", "don't", "doesn't",
];

/// Words that make a claim a promise or a possibility rather than a report of what happened.
pub const MODALS: &[&str] = &[
    "will", "would", "can", "could", "should", "may", "might", "shall", "going", "'ll", "once",
    "if",
];

/// Openings of a wish or a goodbye ("Enjoy your visit!", "Have a great day!"): a sentence that
/// opens with one of these and holds no number or id is a pleasantry, not a claim.
pub const WISHES: &[&str] = &[
    "enjoy",
    "have a",
    "have an",
    "have fun",
    "take care",
    "safe travels",
    "safe trip",
    "good luck",
    "best of luck",
    "all the best",
    "best wishes",
    "happy",
    "see you",
    "talk soon",
    "stay safe",
    "wishing you",
];

/// Words that, right before an action verb in its base form, say the action did not happen
/// ("could not book", "couldn't cancel", "was unable to refund", "failed to send").
pub const NEGATED_ACTION_LEADS: &[&str] = &["not", "never", "cannot", "unable", "failed", "n't"];

/// Negations that make a statement general rather than a report ("The store does not open on
/// Sundays"): an action verb after these is not a claim about a call.
pub const GENERAL_NEGATIONS: &[&str] = &["does", "do", "doesn't", "don't"];

/// Negated modals that report an inability ("could not", "can't") rather than a promise: they
/// do not make a claim of an action a possibility.
pub const NEGATED_MODALS: &[&str] = &[
    "could not",
    "couldn't",
    "can not",
    "cannot",
    "can't",
    "would not",
    "wouldn't",
];

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
        SourceKind::Instruction => format!("the instructions at {at}"),
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

/// A claim that asserts nothing, and why.
pub fn no_claim(why: &str) -> Labelled {
    Labelled {
        label: SupportLabel::NoClaim,
        evidence_step: None,
        evidence_text: None,
        why: why.to_owned(),
        action: false,
    }
}

/// Labels one claim.
pub fn label_claim(
    claim: &str,
    run: &Run,
    ix: &LazyCell<EvidenceIndex, impl FnOnce() -> EvidenceIndex>,
    actions: &LazyCell<Vec<ActionCall>, impl FnOnce() -> Vec<ActionCall>>,
) -> Labelled {
    let lower = lower_text(claim);
    let ts = terms(claim);
    let no = no_claim;
    if claim.trim_end().ends_with('?') {
        return no("a question, not a claim");
    }
    // Only pleasantry words, and names only beside one ("Thanks, Dana!"): a title-case claim
    // ("Order Shipped") is made of names and is not a pleasantry.
    let pleasantry_word = ts
        .iter()
        .any(|t| t.kind == TermKind::Word && is_pleasantry(t));
    let only_pleasantries = ts.iter().all(is_pleasantry)
        && (pleasantry_word || ts.iter().all(|t| t.kind != TermKind::Name));
    if only_pleasantries || is_wish(&lower, &ts) {
        return no("a pleasantry, not a claim");
    }
    if let Some(why) = super::courtesy::non_claim(claim) {
        return no(why);
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
    // "I could not book …": an action verb in its base form right after a negation. Such a
    // claim is about a call doing that action ("book" of 'book_room'), not any call.
    let verb = (negated && !modal)
        .then(|| negated_action_verb(&lower))
        .flatten();
    let action = explicit || passive || verb.is_some();
    let only_verb = if explicit || passive {
        None
    } else {
        verb.as_deref()
    };
    // "Done!" alone names no call: it says the last one did what was asked.
    let about = match (explicit && only_success, only_verb) {
        (true, _) => About::Last,
        (false, Some(v)) => About::Verb(v),
        (false, None) if explicit => About::Any,
        (false, None) => About::Shared,
    };
    if action
        && let Some(l) = label_action(
            run,
            &ts,
            negated,
            LazyCell::force(actions).as_slice(),
            about,
        )
    {
        return l;
    }
    // Found by its wording alone and about none of the calls: an ordinary claim ("Invoices are
    // issued on the 1st"), but a user's request still never supports a claim that something
    // was done.
    label_by_words(
        run,
        claim,
        &ts,
        LazyCell::force(ix),
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

/// The action verb (stemmed) in its base form that follows a negation ("could not book", "was
/// unable to refund", "failed to send"), unless the negation is a general one ("does not open").
fn negated_action_verb(lower: &str) -> Option<String> {
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
        if let Some(x) = next.map(|x| stem(x))
            && verbs.contains(&x)
        {
            return Some(x);
        }
    }
    None
}

/// Which of the run's state-changing calls a claim of an action is about.
#[derive(Clone, Copy, Debug)]
enum About<'a> {
    /// A claim with words of its own that says it was done ("I booked room Orion"): the call
    /// that shares the most of its words, or the only call.
    Any,
    /// A claim found by its wording alone ("… is booked"): a call that shares a word with it.
    Shared,
    /// "I could not book …": a call whose tool name has this (stemmed) verb, sharing a word with
    /// the claim when there are several.
    Verb(&'a str),
    /// "Done!" or "All set." alone: the last call, the one that finished the job.
    Last,
}

fn label_action(
    run: &Run,
    ts: &[Term],
    negated: bool,
    actions: &[ActionCall],
    about: About<'_>,
) -> Option<Labelled> {
    let mut best: Option<(&ActionCall, f64)> = None;
    let doing = |c: &&ActionCall| match about {
        About::Verb(v) => c.name_words.iter().any(|w| w == v),
        _ => true,
    };
    let actions: Vec<&ActionCall> = actions.iter().filter(doing).collect();
    for c in actions.iter().copied() {
        let score: f64 = ts
            .iter()
            .filter(|t| c.keys.contains(&t.key))
            .map(Term::weight)
            .sum();
        if best.is_none_or(|(_, s)| score >= s) {
            best = Some((c, score));
        }
    }
    let (c, score) = match about {
        About::Last => (*actions.last()?, 0.0),
        _ => best?,
    };
    // A claim found by its wording alone ("… is booked", "could not book …") must share a word
    // with the call it is checked against, as must one with words of its own when several calls
    // could be meant.
    let need_shared = matches!(about, About::Shared | About::Verb(_));
    if !matches!(about, About::Last) && score <= 0.0 && (actions.len() > 1 || need_shared) {
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
    // Another number of the same thing: one under a key the claim names ("refund_amount": 80
    // against "your refund of $120"), or any number of a plain-text result.
    let words: Vec<&str> = ts
        .iter()
        .filter(|t| !t.is_key())
        .map(|t| t.key.as_str())
        .collect();
    let other = c.keyed.iter().any(|k| {
        !claim_numbers.contains(&k.number.as_str())
            && k.key.iter().any(|w| words.contains(&w.as_str()))
    }) || c.loose.iter().any(|n| !claim_numbers.contains(&n.as_str()));
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

/// What a contradiction compares on the claim's side.
struct ClaimNumbers<'c> {
    /// The claim's numbers: term id (None: no passage holds it) and whether written as money.
    numbers: Vec<(Option<u32>, bool)>,
    /// The term ids of the claim's numbers and ids.
    keys: Vec<u32>,
    /// The claim's words (stems), for matching a record's keys.
    words: Vec<&'c str>,
}

impl<'c> ClaimNumbers<'c> {
    fn new(text: &str, ts: &'c [Term], ids: &[Option<u32>]) -> Self {
        let money: Vec<(String, bool)> = numbers_in(text);
        let numbers = ts
            .iter()
            .zip(ids)
            .filter(|(t, _)| t.kind == TermKind::Number)
            .map(|(t, id)| {
                let m = money.iter().any(|(n, is)| *is && *n == t.key);
                (*id, m)
            })
            .collect();
        let keys = ts
            .iter()
            .zip(ids)
            .filter(|(t, _)| t.is_key())
            .filter_map(|(_, id)| *id)
            .collect();
        let words = ts
            .iter()
            .filter(|t| !t.is_key())
            .map(|t| t.key.as_str())
            .collect();
        ClaimNumbers {
            numbers,
            keys,
            words,
        }
    }
}

/// True when a close passage lacks one of the claim's numbers and gives another number of the
/// same thing. In a record, the other number must sit under a key the claim names ("refund:
/// 80" against "your refund is $120"), or be an amount in a record naming the claim's id or
/// number (the certificate '7504069' holding 250 against "Certificate 7504069: $300"). In text,
/// the passage must share two words or a number or id with the claim, and give a number of the
/// same kind (an amount against an amount).
fn gives_another_number(
    pass: &super::evidence::Passage,
    ix: &EvidenceIndex,
    claim: &ClaimNumbers<'_>,
    word_shared: f64,
) -> bool {
    let held = |id: &u32| ix.passage_holds(pass, *id);
    let missing: Vec<bool> = claim
        .numbers
        .iter()
        .filter(|(id, _)| !id.as_ref().is_some_and(held))
        .map(|(_, money)| *money)
        .collect();
    if missing.is_empty() {
        return false;
    }
    let mine: Vec<u32> = claim.numbers.iter().filter_map(|(id, _)| *id).collect();
    let others = pass.numbers.iter().filter(|n| !mine.contains(&n.term));
    let identity = claim.keys.iter().any(held);
    if pass.keyed {
        let mut others = others;
        others.any(|o| {
            o.key.iter().any(|k| claim.words.contains(&k.as_str()))
                || (identity && o.money && missing.iter().any(|m| *m))
        })
    } else {
        let mut others = others;
        (word_shared >= 2.0 || identity) && others.any(|o| missing.contains(&o.money))
    }
}

fn label_by_words(
    run: &Run,
    text: &str,
    ts: &[Term],
    ix: &EvidenceIndex,
    negated: bool,
    action: bool,
    says_done: bool,
) -> Labelled {
    // The agent's instructions say what it is and how it works: they support a statement of
    // theirs, never a bare figure (a number a worked example of the prompt holds).
    let figures_only = !ts.is_empty() && ts.iter().all(|t| t.kind == TermKind::Number);
    let allowed = |k: SourceKind| match k {
        SourceKind::Instruction => !says_done && !figures_only,
        SourceKind::User => !says_done,
        SourceKind::FailedCall | SourceKind::EmptySearch => negated,
        _ => true,
    };
    let ids: Vec<Option<u32>> = ts.iter().map(|t| ix.term_id(&t.key)).collect();
    let present: Vec<u32> = ids.iter().flatten().copied().collect();
    let total: f64 = ts.iter().map(Term::weight).sum();
    let word_total: f64 = ts.iter().filter(|t| !t.is_key()).map(Term::weight).sum();
    let has_numbers = ts.iter().any(|t| t.kind == TermKind::Number);
    let claim = ClaimNumbers::new(text, ts, &ids);

    let mut best_support: Option<(usize, f64)> = None;
    let mut best_stale: Option<(usize, f64)> = None;
    let mut best_contra: Option<(usize, f64)> = None;
    let mut best_any: Option<(usize, f64, bool)> = None;
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
        if has_numbers
            && !pass.outdated
            && pass.contradicts
            && close >= CLAIM_CLOSE
            && gives_another_number(pass, ix, &claim, word_shared)
            && better(best_contra, close)
        {
            best_contra = Some((p, close));
        }
        // For "partial", a passage holding every number and id of the claim (the figure a
        // document gave) goes before one that holds more of its other words (the user's
        // question, which names the subject but not the figure).
        // The instructions say a claim in part only when they hold its figures too: a word in
        // common with a long prompt ("dollars") is no source of "7.50 dollars".
        let partial_source = pass.kind != SourceKind::Instruction || keys_all;
        if share >= CLAIM_PARTIAL
            && partial_source
            && best_any.is_none_or(|(_, s, k)| (keys_all, share) > (k, s))
        {
            best_any = Some((p, share, keys_all));
        }
    }
    let pick = |p: usize, label: SupportLabel, lead: &str| {
        let pass = ix.passage(p);
        let step = pass.and_then(|x| x.step);
        let kind = pass.map_or(SourceKind::Document, |x| x.kind);
        let text = pass.map(|x| x.text.clone());
        let quoted = text
            .as_deref()
            .map(|t| crate::analysis::say::short(t, WHY_QUOTE))
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
    if let Some((p, s, _)) = best_any
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
