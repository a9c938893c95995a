//! Who was at fault (docs/how-it-decides.md, "Who was at fault"), from the trace alone:
//!
//! - `none` exactly when the run succeeded; `unfinished` whenever it is unfinished;
//! - for a failed or crashed run, `user` when the user's details never matched (a lookup failed
//!   with "not found" on a value the user gave, no later call of that tool and no later call taking
//!   a value the user gave succeeded, and nothing changed), or when the user turned down what the agent offered and nothing changed;
//!   `unfinished` when nothing went wrong yet and the run stopped on the agent's question to the
//!   user; else `agent`, with the top suspect as the place to look. When that suspect is a tool
//!   or the service behind it (`service_error`), `why` says so, and names the agent's part, if
//!   any: a final answer that says the failed call worked, or the next suspect among its steps.

use super::ranking::SuspectEntry;
use super::walk_back::NOT_FOUND;
use crate::analysis::claims::SupportLabel;
use crate::analysis::detect::confirmation::DECLINES;
use crate::analysis::detect::{Category, Facts};
use crate::analysis::links::tokens::{clip, tokens};
use crate::analysis::model::{RunStatus, StepKind};
use crate::analysis::params::LINK_SCAN_BYTES;
use crate::analysis::say::{quote, step as step_name, tool_phrase};
use crate::analysis::whole_words::find_phrase;
use serde::{Deserialize, Serialize};

/// Phrases of an agent offering something.
pub const OFFERS: &[&str] = &[
    "would you like",
    "do you want",
    "shall i",
    "should i",
    "i can offer",
    "we can offer",
    "i could",
    "i can ",
    "we could",
    "option",
    "alternatively",
    "instead",
    "how about",
    "would you prefer",
    "are you interested",
    "do you accept",
    "for a fee",
    "would it work",
];

/// Phrases of a closing offer of more help ("Is there anything else I can help you with?"): a
/// question that ends a finished answer and waits for nothing.
pub const CLOSING_OFFERS: &[&str] = &[
    "anything else",
    "something else",
    "anything more",
    "any other",
    "any further",
    "any more questions",
    "further help",
    "further assistance",
    "more help",
    "other questions",
    "help you with today",
];

/// Which party the failure belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Party {
    /// The agent did something wrong.
    Agent,
    /// The user's details never matched, or they declined what was offered.
    User,
    /// The run stopped while waiting for the user.
    Unfinished,
    /// The run did not fail.
    None,
}

/// `fault`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    /// Who.
    pub party: Party,
    /// Why, in one or two sentences.
    pub why: String,
}

/// The fault verdict.
pub fn fault(facts: &Facts<'_>, suspects: &[SuspectEntry]) -> Fault {
    let run = facts.run;
    match run.status {
        RunStatus::Succeeded => {
            return Fault {
                party: Party::None,
                why: "the run succeeded, so there is no failure to assign".to_owned(),
            };
        }
        RunStatus::Unfinished => {
            return Fault {
                party: Party::Unfinished,
                why: format!(
                    "the run stopped while waiting{}; nothing has failed yet",
                    waiting_on(facts).map_or_else(String::new, |w| format!(" ({w})"))
                ),
            };
        }
        RunStatus::Failed | RunStatus::Error => {}
    }
    if let Some(why) = details_never_matched(facts) {
        return Fault {
            party: Party::User,
            why,
        };
    }
    if let Some(why) = declined_offer(facts) {
        return Fault {
            party: Party::User,
            why,
        };
    }
    if let Some(why) = stopped_on_question(facts, suspects) {
        return Fault {
            party: Party::Unfinished,
            why,
        };
    }
    let why = match suspects.first() {
        Some(s) if s.category == Category::ServiceError => service_failure(facts, s, suspects),
        Some(s) => format!(
            "the agent's own steps went wrong: start with {} ({}); nothing shows the user at fault",
            step_name(run, s.step),
            s.category.as_str().replace('_', " ")
        ),
        None => "the run failed and nothing shows the user at fault, but no rule found where the agent went wrong".to_owned(),
    };
    Fault {
        party: Party::Agent,
        why,
    }
}

/// The `why` of a run whose top suspect is a tool or its service: what failed, then the agent's
/// part as far as the rules see it.
fn service_failure(facts: &Facts<'_>, top: &SuspectEntry, suspects: &[SuspectEntry]) -> String {
    let run = facts.run;
    let err = run
        .steps
        .get(top.step)
        .and_then(|s| s.error.as_deref())
        .unwrap_or("");
    let failed = format!(
        "{} or the service behind it failed at {} ({}), and nothing shows the user at fault",
        tool_phrase(run, top.step),
        step_name(run, top.step),
        quote(err)
    );
    // The answer says the failed call worked: a claim that this very call contradicts.
    let says_it_worked = facts.claims.iter().find(|c| {
        c.action && c.label == SupportLabel::Contradicted && c.evidence_step == Some(top.step)
    });
    let own = suspects.iter().skip(1).find(|s| {
        s.category != Category::ServiceError
            && run.steps.get(s.step).is_some_and(|x| x.kind.is_model())
    });
    let part = match (says_it_worked, own) {
        (Some(c), _) => format!(
            "the agent's part: the final answer still says it worked ({})",
            quote(&c.text)
        ),
        (None, Some(s)) => format!(
            "of the agent's own steps, check {} next ({})",
            step_name(run, s.step),
            s.category.as_str().replace('_', " ")
        ),
        (None, None) => "no rule found a mistake in the agent's own steps".to_owned(),
    };
    format!("{failed}; {part}")
}

/// The agent's last question to the user, when the run ends on one. A closing offer of more
/// help ("Is there anything else I can help you with?") ends a finished answer: it waits for
/// nothing.
fn waiting_on(facts: &Facts<'_>) -> Option<String> {
    let run = facts.run;
    let (i, last) = run.steps.iter().enumerate().next_back()?;
    let text = facts.texts.produced(i);
    let text = text.trim();
    if !last.kind.is_model() || !text.ends_with('?') {
        return None;
    }
    let question = crate::analysis::links::tokens::sentences(clip(text, LINK_SCAN_BYTES))
        .last()
        .unwrap_or(text)
        .to_lowercase()
        .replace('\u{2019}', "'");
    if find_phrase(&question, CLOSING_OFFERS).is_some() {
        return None;
    }
    Some(format!(
        "{} asked the user {}",
        step_name(run, i),
        quote(text)
    ))
}

fn details_never_matched(facts: &Facts<'_>) -> Option<String> {
    let run = facts.run;
    if facts.changed_something() {
        return None;
    }
    for (i, s) in run.steps.iter().enumerate() {
        let (Some(err), Some(call)) = (&s.error, &s.tool) else {
            continue;
        };
        if find_phrase(&clip(err, LINK_SCAN_BYTES).to_lowercase(), NOT_FOUND).is_none() {
            continue;
        }
        let consumed = facts.texts.consumed(i);
        let given = tokens(&consumed)
            .find_map(|t| super::walk_back::user_origin(facts, t.text, i).map(|w| (t.text, w)));
        if given.is_none() {
            continue;
        }
        // Matched after all: a later call of the same tool, or any later call taking a value the
        // user gave, succeeded.
        let matched_later = run.steps.iter().enumerate().skip(i + 1).any(|(k, t)| {
            !t.failed()
                && t.tool.as_ref().is_some_and(|c| {
                    c.name == call.name
                        || tokens(&facts.texts.consumed(k))
                            .any(|tok| super::walk_back::user_origin(facts, tok.text, k).is_some())
                })
        });
        if matched_later {
            return None;
        }
        if let Some((value, at)) = given {
            return Some(format!(
                "the user's details never matched: {} was given by the user at {at}, and {} answered {}; no later call of that tool succeeded and nothing was changed",
                quote(value),
                step_name(run, i),
                quote(err)
            ));
        }
    }
    None
}

fn declined_offer(facts: &Facts<'_>) -> Option<String> {
    let run = facts.run;
    if facts.changed_something() {
        return None;
    }
    let u = run.steps.iter().rposition(|s| s.kind == StepKind::User)?;
    let said = facts
        .texts
        .produced(u)
        .to_lowercase()
        .replace('\u{2019}', "'");
    let decline = find_phrase(&said, DECLINES)?;
    if asks_to_go_ahead(&said) {
        return None;
    }
    let offer = (0..u).rev().find(|&k| {
        run.steps.get(k).is_some_and(|s| s.kind.is_model())
            && find_phrase(&facts.texts.produced(k).to_lowercase(), OFFERS).is_some()
    })?;
    Some(format!(
        "the user turned down what was offered: {} offered something and {} answered {}; nothing was changed",
        step_name(run, offer),
        step_name(run, u),
        quote(decline)
    ))
}

/// The user's message (lower case) tells the agent to go ahead ("alright, go ahead and finalize
/// it"), not after a negation ("don't go ahead"): it accepts what was offered, whatever else it
/// says ("I don't want to mess this up" is no decline then).
fn asks_to_go_ahead(said: &str) -> bool {
    ["go ahead", "please proceed", "please do"].iter().any(|p| {
        said.match_indices(p).any(|(at, _)| {
            let before = said.get(..at).unwrap_or_default();
            let near: String = before
                .chars()
                .rev()
                .take(12)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            !(near.contains("n't")
                || near.contains("not ")
                || near.contains("no ")
                || near.contains("never"))
        })
    })
}

/// Nothing went wrong yet: no step failed, nothing changed, no rule found a suspect, and the
/// run stopped on the agent's question to the user.
fn stopped_on_question(facts: &Facts<'_>, suspects: &[SuspectEntry]) -> Option<String> {
    let run = facts.run;
    if !suspects.is_empty() || facts.changed_something() || run.steps.iter().any(|s| s.failed()) {
        return None;
    }
    waiting_on(facts).map(|w| {
        format!(
            "nothing went wrong yet: the run stopped while the agent was waiting for the user ({w})"
        )
    })
}
