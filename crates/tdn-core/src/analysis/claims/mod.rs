//! The claim check (docs/how-it-decides.md, "Claims"): split the final answer into claims,
//! collect the evidence (documents, successful tool results, memory reads, the user's messages),
//! match each claim to its best evidence by shared words with numbers, ids and names counting
//! double, label it, and find the earliest model step whose output already held it.
//!
//! Matching is by words, not meaning: a correct paraphrase can show as partial. Pure; no I/O.

mod actions;
mod courtesy;
mod evidence;
mod label;
mod markup;
mod origin;
mod passage_terms;
mod records;
mod split;
pub(crate) mod words;

pub(crate) use split::ends_abbreviated;

pub use split::{Part, split_claims, split_parts};

use crate::analysis::links::StepTexts;
use crate::analysis::model::Run;
use evidence::EvidenceIndex;
use serde::{Deserialize, Serialize};
use std::cell::LazyCell;

/// How well a claim is supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SupportLabel {
    /// A source says it.
    Supported,
    /// A source says some of it.
    Partial,
    /// No source says it.
    Unsupported,
    /// A close source gives a different number or outcome.
    Contradicted,
    /// Only an outdated source supports it.
    Stale,
    /// A pleasantry, not a claim.
    NoClaim,
}

/// One claim of the final answer, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedClaim {
    /// The claim as written.
    pub text: String,
    /// Its support.
    pub label: SupportLabel,
    /// The position of the step holding the best evidence.
    pub evidence_step: Option<usize>,
    /// The evidence passage (run text, not yet inert).
    pub evidence_text: Option<String>,
    /// The position of the earliest model step whose output already held the claim.
    pub origin_step: Option<usize>,
    /// Why this label, in one sentence (inert).
    pub why: String,
    /// The claim says an action was (or was not) carried out.
    pub action: bool,
}

/// Checks every claim of the run's final answer (none when it has no final answer).
pub fn check_claims(run: &Run, texts: &StepTexts) -> Vec<CheckedClaim> {
    let Some(answer) = run.final_answer.as_deref() else {
        return Vec::new();
    };
    let parts = split_parts(answer);
    if parts.is_empty() {
        return Vec::new();
    }
    // Only the claims' terms are looked up in the evidence, so only they are indexed.
    let wanted = parts
        .iter()
        .flat_map(|p| words::terms(&p.text))
        .map(|t| t.key)
        .collect();
    // Built on first use: a claim checked against the calls alone (an action) or one that
    // asserts nothing needs neither the evidence nor the calls.
    let ix = LazyCell::new(|| EvidenceIndex::build(run, texts, wanted));
    let actions = LazyCell::new(|| actions::action_calls(run, texts));
    // A sentence that asserts nothing (an offer, a courtesy, a lead-in) makes none of its
    // clauses a claim either ("I hope it clears up soon and that you have a good trip").
    let labelled: Vec<_> = parts
        .iter()
        .map(|p| match courtesy::non_claim(&p.whole) {
            _ if p.heading => label::no_claim("a heading, not a claim"),
            Some(why) if p.whole != p.text => label::no_claim(why),
            _ => label::label_claim(&p.text, run, &ix, &actions),
        })
        .collect();
    let parts: Vec<String> = parts.into_iter().map(|p| p.text).collect();
    let terms: Vec<_> = parts
        .iter()
        .zip(&labelled)
        .map(|(c, l)| (l.label != SupportLabel::NoClaim).then(|| label::claim_terms(c)))
        .collect();
    let origins = origin::origins(run, texts, &terms);
    parts
        .into_iter()
        .zip(labelled)
        .zip(origins)
        .map(|((text, l), origin_step)| CheckedClaim {
            text,
            label: l.label,
            evidence_step: l.evidence_step,
            evidence_text: l.evidence_text,
            origin_step,
            why: l.why,
            action: l.action,
        })
        .collect()
}

#[cfg(test)]
mod review_tests;
#[cfg(test)]
mod tests;
