//! How a failed call's error mentions the call's request (docs/how-it-decides.md, "Walk back"):
//! the argument values it names or quotes, an argument key it names at any depth (`amount` in
//! "payment amount does not add up"), the kind of value an id-like argument names ("gift card" of
//! `gift_card_8190333`), a number that is the sum of the arguments' numbers under one key (255 of
//! 250 + 5), whether it rejects the request's content ("does not add up", "not enough"), and
//! whether it is about the infrastructure (a 5xx, a time-out, an outage, credentials), which
//! keeps the blame on the service. Pure; every walk over the arguments is bounded.

use crate::analysis::detect::INFRASTRUCTURE;
use crate::analysis::links::number_value;
use crate::analysis::links::tokens::{TokenClass, tokens};
use crate::analysis::model::Json;
use crate::analysis::whole_words::{contains_words, find_phrase};

/// Phrases of an error rejecting the request's content by a business rule ("balance is not
/// enough", "amount exceeds the limit"): about the request when the error also names one of its
/// keys or the kind of one of its values.
pub const REJECTIONS: &[&str] = &[
    "not enough",
    "insufficient",
    "exceeds",
    "exceeded",
    "too many",
    "too few",
    "too high",
    "too low",
    "too large",
    "too small",
    "too long",
    "too short",
    "not available",
    "no longer available",
    "not allowed",
    "not permitted",
    "cannot be",
    "can't be",
    "could not be",
    "not eligible",
    "ineligible",
    "already",
    "over the limit",
    "limit",
    "mismatch",
    "does not match",
    "doesn't match",
    "conflict",
    "duplicate",
    "not supported",
    "unsupported",
    "rejected",
    "declined",
    "not accepted",
    "must",
    "only",
    "invalid",
    "wrong",
];

/// Phrases of an error refusing the request outright by a rule of the service ("this order
/// cannot be changed", "balance is not enough", a rule the request "must" or "should" follow):
/// enough on their own to say the request, not the service, was at fault. Narrower than [`REJECTIONS`], whose generic words
/// ("wrong", "limit") need a key or kind of the request beside them.
pub const REFUSALS: &[&str] = &[
    "cannot be",
    "can't be",
    "can only",
    "not allowed",
    "not permitted",
    "not eligible",
    "ineligible",
    "not enough",
    "insufficient",
    "no longer available",
    "not supported",
    "already",
    "should",
    "must",
];

/// At most this many argument values are collected.
const MAX_VALUES: usize = 64;
/// At most this many items of one array or object are looked at.
const MAX_FANOUT: usize = 256;
/// At most this many nodes of the arguments are visited per walk.
const MAX_NODES: usize = 10_000;

/// A number of the error that is the sum of the arguments' numbers under one key.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Derived {
    /// The number as the error writes it.
    pub number: String,
    /// The key the summed numbers sit under.
    pub key: String,
    /// The summed numbers, as the arguments write them.
    pub parts: Vec<String>,
}

/// What the error says about the request.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Mentions {
    /// A sum of the arguments' numbers that the error gives.
    pub derived: Option<Derived>,
    /// An argument key the error names.
    pub key: Option<String>,
    /// The kind of value an id-like argument names, in words, with that value.
    pub kind: Option<(String, String)>,
    /// A phrase rejecting the request's content.
    pub rejection: Option<&'static str>,
    /// A phrase refusing the request outright, enough on its own.
    pub refusal: Option<&'static str>,
    /// A phrase about the infrastructure (a 5xx, a time-out, an outage, credentials).
    pub infrastructure: Option<&'static str>,
}

impl Mentions {
    /// The error talks about the request's content: it gives a sum of its numbers, or names a
    /// key or the kind of a value and rejects something (`complaint`: an input complaint).
    pub fn about_content(&self, complaint: bool) -> bool {
        self.derived.is_some()
            || ((self.key.is_some() || self.kind.is_some())
                && (self.rejection.is_some() || complaint))
    }
}

/// Reads `err_lower` (the error in lower case) against the call's arguments.
pub(super) fn mentions(err_lower: &str, args: &Json) -> Mentions {
    Mentions {
        derived: derived(err_lower, args),
        key: named_key(err_lower, args),
        kind: named_kind(err_lower, args),
        rejection: find_phrase(err_lower, REJECTIONS),
        refusal: find_phrase(err_lower, REFUSALS),
        infrastructure: find_phrase(err_lower, INFRASTRUCTURE),
    }
}

/// The string and number leaves of a call's arguments worth naming (3 characters or more, so
/// an error mentioning "0" or "id" does not count as naming a value).
pub(super) fn arg_values(root: &Json) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        if out.len() >= MAX_VALUES {
            break;
        }
        match v {
            Json::String(s) if s.trim().chars().count() >= 3 => out.push(s.trim().to_owned()),
            Json::Number(n) if n.to_string().chars().count() >= 3 => out.push(n.to_string()),
            Json::Array(a) => stack.extend(a.iter().take(MAX_FANOUT)),
            Json::Object(o) => stack.extend(o.values().take(MAX_FANOUT)),
            _ => {}
        }
    }
    out
}

/// The values under `key`, at any depth, as text (strings trimmed, numbers as written).
pub(super) fn values_under(root: &Json, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, |k, v| {
        if k == Some(key) {
            match v {
                Json::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                Json::Number(n) => out.push(n.to_string()),
                _ => {}
            }
        }
    });
    out.truncate(MAX_VALUES);
    out
}

/// Calls `f` with each node's key (None for array items and the root) and value, depth first,
/// at most [`MAX_NODES`] nodes.
fn walk<'v>(root: &'v Json, mut f: impl FnMut(Option<&'v str>, &'v Json)) {
    let mut stack: Vec<(Option<&str>, &Json)> = vec![(None, root)];
    let mut seen = 0usize;
    while let Some((k, v)) = stack.pop() {
        seen += 1;
        if seen > MAX_NODES {
            return;
        }
        f(k, v);
        match v {
            Json::Array(a) => stack.extend(a.iter().take(MAX_FANOUT).map(|x| (None, x))),
            Json::Object(o) => {
                stack.extend(o.iter().take(MAX_FANOUT).map(|(k, x)| (Some(k), x)));
            }
            _ => {}
        }
    }
}

/// A key of the arguments (at any depth, 2 characters or more) that the error names, as
/// written or with `_` and `-` read as spaces (`order_id` or "order id").
fn named_key(err_lower: &str, args: &Json) -> Option<String> {
    let mut found = None;
    walk(args, |k, _| {
        if found.is_some() {
            return;
        }
        let Some(k) = k else { return };
        let lower = k.to_lowercase();
        if lower.chars().count() >= 2
            && (contains_words(err_lower, &lower)
                || contains_words(err_lower, &lower.replace(['_', '-'], " ")))
        {
            found = Some(k.to_owned());
        }
    });
    found
}

/// The kind of value an id-like string argument names, when the error names it: the words
/// before its number (`gift_card_8190333` gives "gift card"), at least 4 letters in all.
fn named_kind(err_lower: &str, args: &Json) -> Option<(String, String)> {
    let mut found = None;
    walk(args, |_, v| {
        if found.is_some() {
            return;
        }
        let Json::String(s) = v else { return };
        if let Some(words) = kind_words(s)
            && contains_words(err_lower, &words)
        {
            found = Some((words, s.trim().to_owned()));
        }
    });
    found
}

/// "gift card" of `gift_card_8190333` or `gift-card-8190333`: letters-only parts, then a
/// number at the end; None for anything else.
fn kind_words(s: &str) -> Option<String> {
    let s = s.trim();
    if s.len() > 80 {
        return None;
    }
    let parts: Vec<&str> = s.split(['_', '-']).collect();
    let (last, head) = parts.split_last()?;
    let numbered = !last.is_empty() && last.chars().all(|c| c.is_ascii_digit());
    let wordy = !head.is_empty()
        && head
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic));
    let words = head.join(" ").to_lowercase();
    (numbered && wordy && words.chars().filter(|c| c.is_alphabetic()).count() >= 4).then_some(words)
}

/// A number of the error equal to the sum of two or more of the arguments' numbers under one
/// key in one array (`payment_methods[*].amount`), or of a plain array of numbers.
fn derived(err_lower: &str, args: &Json) -> Option<Derived> {
    let in_error: Vec<(String, f64)> = tokens(err_lower)
        .filter(|t| t.class == TokenClass::Number)
        .filter_map(|t| number_value(t.text).map(|x| (t.text.to_owned(), x)))
        .take(MAX_VALUES)
        .collect();
    if in_error.is_empty() {
        return None;
    }
    let mut found = None;
    walk(args, |k, v| {
        if found.is_some() {
            return;
        }
        let Json::Array(items) = v else { return };
        for (key, parts) in sums_in(k, items) {
            let total: f64 = parts.iter().map(|p| p.1).sum();
            if let Some((text, _)) = in_error
                .iter()
                .find(|(_, x)| (x - total).abs() < 1e-9 && parts.iter().all(|p| p.1 != *x))
            {
                found = Some(Derived {
                    number: text.clone(),
                    key,
                    parts: parts.into_iter().map(|p| p.0).collect(),
                });
                return;
            }
        }
    });
    found
}

/// The groups of numbers an array can sum: for an array of objects, the numbers under each key
/// (two or more); for an array of numbers, all of them (under the array's own key).
fn sums_in(key: Option<&str>, items: &[Json]) -> Vec<(String, Vec<(String, f64)>)> {
    let items = items.get(..items.len().min(MAX_FANOUT)).unwrap_or(&[]);
    let mut out: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    let plain: Vec<(String, f64)> = items
        .iter()
        .filter_map(|v| v.as_f64().map(|x| (v.to_string(), x)))
        .collect();
    if plain.len() >= 2 {
        out.push((key.unwrap_or("").to_owned(), plain));
    }
    for item in items {
        let Json::Object(o) = item else { continue };
        for (k, v) in o.iter().take(MAX_FANOUT) {
            let Some(x) = v.as_f64() else { continue };
            let entry = (v.to_string(), x);
            match out.iter().position(|(name, _)| name == k) {
                Some(i) => {
                    if let Some((_, list)) = out.get_mut(i) {
                        list.push(entry);
                    }
                }
                None if out.len() < MAX_FANOUT => out.push((k.to_owned(), vec![entry])),
                None => {}
            }
        }
    }
    out.retain(|(_, list)| list.len() >= 2 && list.iter().all(|p| p.1.is_finite()));
    out
}

/// The spans of `err` between matching quotes (`'…'`, `"…"`, `` `…` ``, `‘…’`, `“…”`), of 2 to 200
/// characters: what an error message quotes is usually the value it complains about.
pub(super) fn quoted_spans(err: &str) -> Vec<&str> {
    const PAIRS: [(char, char); 5] = [('\'', '\''), ('"', '"'), ('`', '`'), ('‘', '’'), ('“', '”')];
    let chars: Vec<(usize, char)> = err.char_indices().collect();
    let mut out = Vec::new();
    for (open, close) in PAIRS {
        // Quote marks, leaving out apostrophes inside words ("can't").
        let marks: Vec<(usize, char)> = chars
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| *c == open || *c == close)
            .filter(|(k, (_, c))| {
                let inside = |d: isize| {
                    k.checked_add_signed(d)
                        .and_then(|j| chars.get(j))
                        .is_some_and(|(_, x)| x.is_alphanumeric())
                };
                *c != '\'' || !(inside(-1) && inside(1))
            })
            .map(|(_, &m)| m)
            .collect();
        let mut k = 0;
        while k + 1 < marks.len() && out.len() < 16 {
            let (Some(&(a, ca)), Some(&(b, cb))) = (marks.get(k), marks.get(k + 1)) else {
                break;
            };
            if ca != open || cb != close {
                k += 1;
                continue;
            }
            let span = err.get(a + open.len_utf8()..b).unwrap_or("").trim();
            if (2..=200).contains(&span.chars().count()) {
                out.push(span);
            }
            k += 2;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoted_values_are_found_around_apostrophes() {
        assert_eq!(
            quoted_spans("NameError: name 'reslt' is not defined"),
            vec!["reslt"]
        );
        assert_eq!(
            quoted_spans("can't parse 'Friday' as \"date\""),
            vec!["Friday", "date"]
        );
        assert_eq!(quoted_spans("it's fine, isn't it"), Vec::<&str>::new());
    }

    #[test]
    fn a_sum_of_the_arguments_numbers_under_one_key_is_a_mention() {
        let args = Json::from(
            json!({"pay": [{"id": "a", "amount": 250}, {"id": "b", "amount": 5.5}],
                          "counts": [1, 2, 3]}),
        );
        let d = derived("paid 255.5 of 300", &args).unwrap();
        assert_eq!((d.key.as_str(), d.parts.len()), ("amount", 2));
        assert_eq!(derived("6 items", &args).unwrap().key, "counts");
        // One number alone is a value, not a sum; nothing sums to 300.
        assert_eq!(derived("paid 250", &args), None);
        assert_eq!(derived("total 300", &args), None);
    }

    #[test]
    fn keys_at_any_depth_and_the_kind_of_an_id_are_mentions() {
        let args = Json::from(json!({"p": [{"payment_id": "gift_card_8190333"}]}));
        assert_eq!(
            named_key("bad payment id", &args),
            Some("payment_id".into())
        );
        assert_eq!(
            named_kind("gift card balance is not enough", &args),
            Some(("gift card".into(), "gift_card_8190333".into()))
        );
        assert_eq!(kind_words("ORD-1042"), None, "three letters are too few");
        assert_eq!(kind_words("2026-11-06"), None);
        assert_eq!(
            kind_words("certificate_7504069").as_deref(),
            Some("certificate")
        );
    }
}
