//! The tool calls a claim of an action is checked against (docs/how-it-decides.md, "Claims"):
//! the state-changing calls, or the calls whose tool name says they change things, with the
//! words of their names and the numbers of their arguments and results. Pure; bounded by
//! [`MAX_ACTION_CANDIDATES`].

use super::records::{KeyedNumber, json_of, records};
use super::words::{TermKind, each_term, numbers_in, stem};
use crate::analysis::links::{StepTexts, flat_text};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::state_change::changes_state;
use hashbrown::HashSet;

/// At most this many tool calls (the latest) are compared with a claim of an action.
const MAX_ACTION_CANDIDATES: usize = 2_000;

/// A tool call a claim of an action may be about.
#[derive(Debug)]
pub struct ActionCall {
    pub(super) step: usize,
    pub(super) keys: HashSet<String>,
    pub(super) numbers: HashSet<String>,
    /// The numbers of its JSON arguments and result, with their keys.
    pub(super) keyed: Vec<KeyedNumber>,
    /// The numbers of a result that is plain text (no keys to tell what they are).
    pub(super) loose: HashSet<String>,
    /// The stemmed words of its tool's name (`book`, `reservation` of `book_reservation`).
    pub(super) name_words: Vec<String>,
    pub(super) failed: bool,
    pub(super) text: String,
}

/// The calls claims of actions are compared with: the calls that change things (a tool marked
/// `mutates`, or named or described with an action verb: `create_event`, `issue_refund`); the
/// latest [`MAX_ACTION_CANDIDATES`].
pub fn action_calls(run: &Run, texts: &StepTexts) -> Vec<ActionCall> {
    let mut out: Vec<ActionCall> = Vec::new();
    // The latest calls, found from the end: the run before them is not read.
    let mut picked: Vec<usize> = run
        .steps
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, s)| s.kind == StepKind::Tool)
        .filter(|(_, s)| s.tool.as_ref().is_some_and(|c| changes_state(run, &c.name)))
        .map(|(i, _)| i)
        .take(MAX_ACTION_CANDIDATES)
        .collect();
    picked.reverse();
    for i in picked {
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
            None => text.push_str(&texts.produced(i)),
        }
        let mut keys = HashSet::new();
        let mut numbers = HashSet::new();
        each_term(&text, |k, kind| {
            if kind == TermKind::Number && !numbers.contains(k) {
                numbers.insert(k.to_owned());
            }
            if !keys.contains(k) {
                keys.insert(k.to_owned());
            }
        });
        let mut keyed = Vec::new();
        let mut loose = HashSet::new();
        if let Some(call) = &step.tool {
            keyed.extend(records(&call.arguments).into_iter().flat_map(|r| r.numbers));
        }
        if !step.failed()
            && let Some(out) = &step.output
        {
            match json_of(out) {
                Some(v) => keyed.extend(records(&v).into_iter().flat_map(|r| r.numbers)),
                None => loose.extend(numbers_in(&texts.produced(i)).into_iter().map(|n| n.0)),
            }
        }
        let name_words = step
            .tool
            .as_ref()
            .map(|c| name_words(&c.name))
            .unwrap_or_default();
        out.push(ActionCall {
            step: i,
            keys,
            numbers,
            keyed,
            loose,
            name_words,
            failed: step.failed(),
            text: step.error.clone().unwrap_or_default(),
        });
    }
    out
}

/// The stemmed words of a tool name: `book_reservation` and `bookReservation` give `book`,
/// `reservation`.
fn name_words(name: &str) -> Vec<String> {
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if prev_lower && c.is_uppercase() {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase();
        spaced.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    spaced
        .split_whitespace()
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}
