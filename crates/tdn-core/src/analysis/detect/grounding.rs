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
use crate::analysis::links::tokens::{Token, TokenClass, clip, tokens};
use crate::analysis::model::StepKind;
use crate::analysis::params::{LINK_SCAN_BYTES, UNGROUNDED_NUMBER};
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

/// Below this many cents, a number's [`key`] is told by its count of cents alone.
const EXACT_CENTS: f64 = (1u64 << 50) as f64;

/// A number's [`key`], without writing it out for all but huge numbers. The key is written from
/// the count of cents (`(x * 100).round()`, its sign kept: -0 is written "-0"), and below
/// [`EXACT_CENTS`] two counts give two keys (the cents are then within a thousandth of the
/// count's value, so each writes as itself); so the count, as bits, stands for the key.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    /// The bits of the count of cents.
    Cents(u64),
    /// The key written out (a huge number, infinity or not a number).
    Written(String),
}

fn key_of(x: f64) -> Key {
    let cents = (x * 100.0).round();
    if cents.abs() < EXACT_CENTS {
        Key::Cents(cents.to_bits())
    } else {
        Key::Written(key(x))
    }
}

/// Calls `f` with each stretch of `text` between ASCII white space that holds an ASCII digit, in
/// order. No token crosses ASCII white space (it is neither a letter, a digit nor a joiner, and
/// ends a link), so the tokens of the stretches are the tokens of the text that hold a digit, and
/// every number, id and date holds one: the rest of the text, mostly words, is not tokenized.
fn digit_stretches<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    // Where the next stretch may start: just after a white space (or the text's start).
    let mut from = 0;
    // Each turn finds the next digit, then the white space on either side of it: the bytes
    // between stretches are read once, by a loop that only looks for a digit.
    while let Some(d) = bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(u8::is_ascii_digit))
        .map(|d| from + d)
    {
        let start = bytes
            .get(from..d)
            .and_then(|before| before.iter().rposition(u8::is_ascii_whitespace))
            .map_or(from, |w| from + w + 1);
        let end = bytes
            .get(d..)
            .and_then(|after| after.iter().position(u8::is_ascii_whitespace))
            .map_or(bytes.len(), |w| d + w);
        // White space is ASCII: both ends are character boundaries.
        if let Some(w) = text.get(start..end) {
            f(w);
        }
        from = end + 1;
    }
}

/// The tokens of `text` (clipped to [`LINK_SCAN_BYTES`]) that may be numbers, ids or dates.
fn digit_tokens<'a>(text: &'a str, mut f: impl FnMut(Token<'a>)) {
    digit_stretches(clip(text, LINK_SCAN_BYTES), |w| tokens(w).for_each(&mut f));
}

/// The numbers a text states with two or more significant digits, as written and as a value.
fn numbers(text: &str) -> Vec<(&str, f64)> {
    let mut out = Vec::new();
    digit_tokens(text, |t| {
        if t.class != TokenClass::Number {
            return;
        }
        let Some(x) = number_value(t.text) else {
            return;
        };
        let significant = t
            .text
            .chars()
            .filter(char::is_ascii_digit)
            .skip_while(|&c| c == '0')
            .count();
        if significant >= 2 {
            out.push((t.text, x));
        }
    });
    out
}

/// Calls `f` with every number a text gives: its numbers (one digit too), and the runs of
/// digits inside its ids and dates (`2024-05-23` gives 2024, 5 and 23; `certificate_7504069`
/// gives 7504069).
fn each_given(text: &str, mut f: impl FnMut(f64)) {
    digit_tokens(text, |t| match t.class {
        TokenClass::Number => {
            if let Some(x) = number_value(t.text) {
                f(x);
            }
        }
        TokenClass::Id | TokenClass::Date => t
            .text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|d| !d.is_empty())
            .filter_map(|d| d.parse::<f64>().ok())
            .for_each(&mut f),
        _ => {}
    });
}

/// The numbers seen so far: a set of keys and the latest distinct values. The keys are kept as
/// two sets, one per kind of [`Key`], so the common one is a set of plain 8-byte counts (a
/// run of many distinct numbers keeps a quarter of the memory, hashed faster; issue 11).
#[derive(Default)]
struct Seen {
    cents: HashSet<u64>,
    written: HashSet<String>,
    values: VecDeque<f64>,
}

impl Seen {
    /// Adds a key; true when it was not there yet.
    fn insert(&mut self, key: Key) -> bool {
        match key {
            Key::Cents(c) => self.cents.insert(c),
            Key::Written(w) => self.written.insert(w),
        }
    }

    fn add(&mut self, text: &str) {
        each_given(text, |x| {
            if self.insert(key_of(x)) {
                if self.values.len() == MAX_SEEN_VALUES {
                    self.values.pop_front();
                }
                self.values.push_back(x);
            }
        });
    }

    fn holds(&self, x: f64) -> bool {
        match key_of(x) {
            Key::Cents(c) => self.cents.contains(&c),
            Key::Written(w) => self.written.contains(&w),
        }
    }

    /// Given outright, or the sum, difference or product of two numbers given (a price times a
    /// count of at most [`MAX_FACTOR`]).
    fn grounds(&self, x: f64) -> bool {
        self.holds(x)
            || self.values.iter().any(|&a| {
                self.holds(x - a)
                    || self.holds(a - x)
                    || ((2.0..=MAX_FACTOR).contains(&a) && a.fract() == 0.0 && self.holds(x / a))
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
        // A text of several leaves is joined here, into one buffer for all steps.
        let mut joined = String::new();
        for (i, s) in run.steps.iter().enumerate() {
            if budget == 0 {
                break;
            }
            if !decides(s) {
                if s.kind != StepKind::Tool || !s.failed() {
                    seen.add(f.texts.produced_text(i).joined_in(&mut joined));
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
                for (shown, x) in numbers(&f.texts.consumed(t)).into_iter().take(MAX_CHECKED) {
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
                seen.add(&f.texts.consumed(t));
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
    use crate::analysis::testutil::{RunBuilder, xorshift};
    use hashbrown::HashMap;
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

    /// The numbers, ids and dates of the whole text, as the tokenizer reads them.
    fn whole(text: &str) -> Vec<(String, TokenClass)> {
        tokens(clip(text, LINK_SCAN_BYTES))
            .filter(|t| {
                matches!(
                    t.class,
                    TokenClass::Number | TokenClass::Id | TokenClass::Date
                )
            })
            .map(|t| (t.text.to_owned(), t.class))
            .collect()
    }

    fn stretched(text: &str) -> Vec<(String, TokenClass)> {
        let mut out = Vec::new();
        digit_tokens(text, |t| {
            if matches!(
                t.class,
                TokenClass::Number | TokenClass::Id | TokenClass::Date
            ) {
                out.push((t.text.to_owned(), t.class));
            }
        });
        out
    }

    #[test]
    fn reading_only_stretches_with_digits_finds_the_tokens_of_the_whole_text() {
        let fixed = [
            "Order ORD-1234, total $1,200.50 on 2024-05-23T10:00Z.",
            "see https://x.example/a1?b=2 and http://y/3\tthen 45",
            "joined 12- 34 a.1 b_2_ 3@x 4@x.com 5'6 7\u{2019}8",
            "ends with a joiner 12,\n34. 56/\r\n78:",
            "wide\u{a0}space 12\u{a0}34 and \u{3000}56 \u{0663}\u{0664}7",
            "caf\u{e9}9 \u{e9}10 10\u{e9} \x0c11\x0b12",
            "",
            "no digits at all",
            "99",
        ];
        for text in fixed {
            assert_eq!(stretched(text), whole(text), "{text:?}");
        }
        // stretches of many words without a digit around the ones with digits
        for n in [0, 1, 31, 32, 33, 63, 64, 65] {
            let text = format!(
                "{}ab12 cd{} 9 ORD-7{}",
                "w ".repeat(n),
                " x".repeat(n),
                " y".repeat(n)
            );
            assert_eq!(
                stretched(&text),
                [
                    ("ab12", TokenClass::Id),
                    ("9", TokenClass::Number),
                    ("ORD-7", TokenClass::Id)
                ]
                .map(|(t, c)| (t.to_owned(), c)),
                "{text:?}"
            );
            assert_eq!(stretched(&text), whole(&text));
        }
        let alphabet: Vec<char> = "a1Z0.,-_@/:+'\u{2019} \t\n\r\x0b\x0c\u{a0}\u{e9}\u{663}$()\"hps"
            .chars()
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut found = 0;
        for _ in 0..2000 {
            let mut text = String::new();
            for _ in 0..40 {
                xorshift(&mut seed);
                let i = (seed % alphabet.len() as u64) as usize;
                text.push(alphabet[i]);
                if seed.is_multiple_of(97) {
                    text.push_str("http://");
                }
            }
            let want = whole(&text);
            found += want.len();
            assert_eq!(stretched(&text), want, "{text:?}");
        }
        assert!(found > 2000, "the texts hold numbers and ids: {found}");
    }

    #[test]
    fn two_numbers_share_a_key_exactly_when_their_written_keys_agree() {
        let mut xs: Vec<f64> = vec![
            0.0,
            -0.0,
            0.004,
            -0.004,
            0.005,
            -0.005,
            1.005,
            2.675,
            19.999,
            20.0,
            1e13,
            EXACT_CENTS / 100.0,
            EXACT_CENTS / 100.0 - 0.01,
            EXACT_CENTS / 100.0 + 0.0234375,
            2f64.powi(45) + 0.015_625,
            2f64.powi(45) + 0.023_437_5,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        // sums, differences and ratios of a spread of values, as `grounds` forms them
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut base = Vec::new();
        for _ in 0..300 {
            xorshift(&mut seed);
            let digits = (seed % 1_000_000) as f64;
            let scale = [1.0, 0.1, 0.01, 0.001, 1e9][(seed >> 40) as usize % 5];
            base.push(digits * scale);
        }
        for (i, &a) in base.iter().enumerate() {
            let b = base.get(i + 1).copied().unwrap_or(1.0);
            xs.extend([a, a - b, b - a, a + b, a / 3.0, a / 7.0]);
        }
        // key -> key_of and back: each a function, so equal keys are equal key_of and back
        let mut by_key: HashMap<String, Key> = HashMap::new();
        let mut by_key_of: HashMap<Key, String> = HashMap::new();
        for &x in &xs {
            let (k, o) = (key(x), key_of(x));
            assert!(
                by_key.entry(k.clone()).or_insert(o.clone()) == &o,
                "{x:?} {k}"
            );
            assert_eq!(by_key_of.entry(o).or_insert(k.clone()), &k, "{x:?}");
        }
        assert!(by_key.len() > 1000, "a spread of keys: {}", by_key.len());
    }
}
