//! Ungrounded number (docs/how-it-decides.md, "Detect"): in a failed conversation with a user, a
//! number the agent states (in what it tells the user, or in the arguments of a state-changing
//! call it makes) that nothing before it gives: no user message, tool result, instruction or
//! earlier agent message holds it (in its numbers, ids or dates), and it is not the sum, difference
//! or product (with a count of at most 12) of two numbers they hold.
//! A count, a price or an amount the agent made up or misread. Numbers of one significant digit
//! are left out (list markers, "5 to 7 days"). Linear in the run: each step's numbers are
//! checked against a bounded set of the numbers seen before it. No I/O.

use super::conversation::{is_conversation, said};
use super::say::{quote, step, tool_of};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, decides};
use crate::analysis::links::number_value;
use crate::analysis::links::tokens::{TokenClass, clip, tokens};
use crate::analysis::model::StepKind;
use crate::analysis::rank::params::{LINK_SCAN_BYTES, UNGROUNDED_NUMBER};
use hashbrown::HashSet;
use std::collections::VecDeque;

/// Distinct numbers kept for the sum, difference and product check (the latest ones win).
const MAX_SEEN_VALUES: usize = 200;
/// Numbers of one step checked.
const MAX_CHECKED: usize = 32;
/// Numbers of one run checked: beyond this a hostile run gets no more findings, so the work is
/// at most this many numbers times [`MAX_SEEN_VALUES`].
const MAX_CHECKED_PER_RUN: usize = 10_000;
/// Numbers named in one finding's evidence.
const MAX_NAMED: usize = 3;
/// The largest count a given number may be multiplied by (passengers, nights, items).
const MAX_FACTOR: f64 = 12.0;

/// A number stated that nothing before it gives.
pub struct UngroundedNumber;

/// A number in one canonical form: whole numbers without a fraction, others to the cent.
fn key(x: f64) -> String {
    let cents = (x * 100.0).round() / 100.0;
    if cents.fract() == 0.0 {
        format!("{cents:.0}")
    } else {
        format!("{cents:.2}")
    }
}

/// The numbers a text states with two or more significant digits, as written and as a value.
fn numbers(text: &str) -> Vec<(&str, f64)> {
    tokens(clip(text, LINK_SCAN_BYTES))
        .filter(|t| t.class == TokenClass::Number)
        .filter_map(|t| {
            let x = number_value(t.text)?;
            let significant = t
                .text
                .chars()
                .filter(char::is_ascii_digit)
                .skip_while(|&c| c == '0')
                .count();
            (significant >= 2).then_some((t.text, x))
        })
        .collect()
}

/// Every number a text gives: its numbers (one digit too), and the runs of digits inside its
/// ids and dates (`2024-05-23` gives 2024, 5 and 23; `certificate_7504069` gives 7504069).
fn given(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for t in tokens(clip(text, LINK_SCAN_BYTES)) {
        match t.class {
            TokenClass::Number => out.extend(number_value(t.text)),
            TokenClass::Id | TokenClass::Date => out.extend(
                t.text
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|d| !d.is_empty())
                    .filter_map(|d| d.parse::<f64>().ok()),
            ),
            _ => {}
        }
    }
    out
}

/// The numbers seen so far: a set of keys and the latest distinct values.
#[derive(Default)]
struct Seen {
    keys: HashSet<String>,
    values: VecDeque<f64>,
}

impl Seen {
    fn add(&mut self, text: &str) {
        for x in given(text) {
            if self.keys.insert(key(x)) {
                if self.values.len() == MAX_SEEN_VALUES {
                    self.values.pop_front();
                }
                self.values.push_back(x);
            }
        }
    }

    /// Given outright, or the sum, difference or product of two numbers given (a price times a
    /// count of at most [`MAX_FACTOR`]).
    fn grounds(&self, x: f64) -> bool {
        self.keys.contains(&key(x))
            || self.values.iter().any(|&a| {
                self.keys.contains(&key(x - a))
                    || self.keys.contains(&key(a - x))
                    || ((2.0..=MAX_FACTOR).contains(&a)
                        && a.fract() == 0.0
                        && self.keys.contains(&key(x / a)))
            })
    }
}

impl Detector for UngroundedNumber {
    fn id(&self) -> DetectorId {
        DetectorId::Grounding
    }

    fn doc(&self) -> &'static str {
        "In a failed conversation, a number the agent states or passes to a state-changing call that nothing before it gives."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() || !is_conversation(run) {
            return Vec::new();
        }
        // The state-changing calls each decision made.
        let mut calls: Vec<Vec<usize>> = vec![Vec::new(); run.steps.len()];
        for (t, s) in run.steps.iter().enumerate() {
            if s.kind == StepKind::Tool
                && f.mutating(t)
                && let Some(slot) = f.caller(t).and_then(|d| calls.get_mut(d))
            {
                slot.push(t);
            }
        }
        let mut seen = Seen::default();
        let mut out = Vec::new();
        let mut budget = MAX_CHECKED_PER_RUN;
        for (i, s) in run.steps.iter().enumerate() {
            if budget == 0 {
                break;
            }
            if !decides(s) {
                if s.kind != StepKind::Tool || !s.failed() {
                    seen.add(f.texts.produced(i));
                }
                continue;
            }
            let text = said(s).unwrap_or("");
            let mut bad: Vec<(String, Option<usize>)> = Vec::new();
            for (shown, x) in numbers(text).into_iter().take(MAX_CHECKED) {
                budget = budget.saturating_sub(1);
                if bad.len() < MAX_CHECKED
                    && !seen.grounds(x)
                    && !bad.iter().any(|(b, _)| b == shown)
                {
                    bad.push((shown.to_owned(), None));
                }
            }
            for &t in calls.get(i).map(Vec::as_slice).unwrap_or_default() {
                for (shown, x) in numbers(f.texts.consumed(t)).into_iter().take(MAX_CHECKED) {
                    budget = budget.saturating_sub(1);
                    if bad.len() < MAX_CHECKED
                        && !seen.grounds(x)
                        && !bad.iter().any(|(b, _)| b == shown)
                    {
                        bad.push((shown.to_owned(), Some(t)));
                    }
                }
            }
            // What it says or passes on grounds what it says later.
            seen.add(text);
            for &t in calls.get(i).map(Vec::as_slice).unwrap_or_default() {
                seen.add(f.texts.consumed(t));
            }
            if bad.is_empty() {
                continue;
            }
            let named: Vec<String> = bad.iter().take(MAX_NAMED).map(|(b, _)| quote(b)).collect();
            let mut fi = Finding::new(
                i,
                Category::UngroundedNumber,
                DetectorId::Grounding,
                UNGROUNDED_NUMBER,
                Nature::Suspect,
                format!(
                    "it stated {} that nothing before it gives",
                    named.join(", ")
                ),
            );
            for (b, at) in bad.iter().take(MAX_NAMED) {
                fi = fi.because(match at {
                    None => format!("it told the user {}: {}", quote(b), quote(text)),
                    Some(t) => format!(
                        "it passed {} to the state-changing call to {} at {}",
                        quote(b),
                        tool_of(run, *t),
                        step(run, *t)
                    ),
                });
            }
            out.push(fi.because(
                "no user message, tool result, instruction or earlier message of the agent holds it, and it is not the sum, difference or product of two numbers they hold"
                    .to_owned(),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn chat() -> RunBuilder {
        RunBuilder::failed()
            .user("u0", "How many T-shirt options are available?")
            .llm("m1", json!({"tool_calls": [{"name": "get_product"}]}))
            .tool_ok(
                "t2",
                "get_product",
                json!({"id": "TS-9"}),
                json!({"variants": [{"price": 50.88}, {"price": 49.67}, {"price": 46.85}]}),
            )
    }

    #[test]
    fn a_count_no_result_gives_is_flagged_and_a_difference_is_not() {
        let run = chat()
            .llm(
                "m3",
                "There are 11 options. The cheapest is $46.85, $4.03 less than the first.",
            )
            .user("u4", "Thanks")
            .build();
        let found = facts_for(&run, |f| UngroundedNumber.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [3]);
        assert!(found[0].title.contains("'11'"), "{}", found[0].title);
        assert!(
            !found[0].title.contains("4.03"),
            "50.88 - 46.85: {}",
            found[0].title
        );
    }

    #[test]
    fn a_number_already_said_grounds_its_repeats_and_single_digits_do_not_count() {
        let run = chat()
            .llm("m3", "There are 3 options, delivered in 5 to 7 days.")
            .user("u4", "And the second price?")
            .llm("m5", "It is 49.67.")
            .build();
        assert!(facts_for(&run, |f| UngroundedNumber.detect(f)).is_empty());
    }

    #[test]
    fn dates_ids_and_a_price_times_a_count_ground_what_is_said() {
        let run = RunBuilder::failed()
            .user(
                "u0",
                "Book 3 seats on the flight of 2024-05-23 with certificate_7504069.",
            )
            .llm("m1", json!({"tool_calls": [{"name": "search"}]}))
            .tool_ok("t2", "search", json!({}), json!({"price": 155.5}))
            .llm(
                "m3",
                "On May 23, 2024, 3 seats cost $466.50, paid with certificate 7504069.",
            )
            .user("u4", "ok")
            .build();
        assert!(facts_for(&run, |f| UngroundedNumber.detect(f)).is_empty());
    }

    #[test]
    fn the_arguments_of_a_state_changing_call_are_checked() {
        let run = chat()
            .tool_def("refund", "", json!(null), true)
            .llm("m3", "Refunding now.")
            .user("u4", "ok")
            .llm("m5", json!({"tool_calls": [{"name": "refund"}]}))
            .tool_ok("t6", "refund", json!({"amount": 75.5}), "done")
            .build();
        let found = facts_for(&run, |f| UngroundedNumber.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [5]);
        assert!(
            found[0].evidence[0].contains("'refund' at step 't6'"),
            "{:?}",
            found[0].evidence
        );
    }
}
