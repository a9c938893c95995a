//! Tool results written as JSON, read as records: each object with plain values becomes one
//! passage of `key: value` lines, with the identifying values of the objects around it (`id`,
//! `*_id`, `*_number`, `name`, an id used as a key), and each of its numbers keeps the key it sits
//! under. A claim is then matched against one reservation, one payment method, one flight, not
//! against a whole account at once, and a number contradicts a claim only when it is a number of
//! the same thing (docs/how-it-decides.md, "Claims"). Pure; bounded by [`MAX_RECORDS`] and
//! [`MAX_NODES`].

use super::words::{Term, numbers_in, stem, terms};
use crate::analysis::model::Json;
use std::borrow::Cow;

/// At most this many records are read from one result.
const MAX_RECORDS: usize = 2_000;
/// At most this many JSON nodes are visited per result.
const MAX_NODES: usize = 20_000;
/// A JSON text longer than this is not parsed.
const MAX_JSON_BYTES: usize = 64 * 1024;
/// Each value is cut to this many characters in a record's text.
const VALUE_CHARS: usize = 200;
/// At most this many identifying lines are carried down from the objects around a record.
const MAX_CONTEXT_LINES: usize = 8;

/// Key words that make the numbers under them amounts of money.
const MONEY_KEYS: &[&str] = &[
    "amount",
    "price",
    "cost",
    "fee",
    "total",
    "balance",
    "paid",
    "payment",
    "refund",
    "charge",
    "fare",
    "subtotal",
    "tax",
    "credit",
    "compensation",
];

/// A number of a record and the key it sits under.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedNumber {
    /// Canonical number (the claim check's form).
    pub number: String,
    /// The stemmed words of its key (`last_four` gives `last`, `four`).
    pub key: Vec<String>,
    /// Its key names an amount of money.
    pub money: bool,
}

/// One record: its text and its numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// `key: value` lines, for people.
    pub text: String,
    /// The values alone, for matching: a key ("order_id") is not the record saying "order".
    pub values: String,
    /// The numbers of its own values, with their keys.
    pub numbers: Vec<KeyedNumber>,
}

/// The JSON of a result: an object or array, or a string holding one.
pub fn json_of(v: &Json) -> Option<Cow<'_, Json>> {
    match v {
        Json::Object(_) | Json::Array(_) => Some(Cow::Borrowed(v)),
        Json::String(s) => {
            let t = s.trim();
            let looks = (t.starts_with('{') && t.ends_with('}'))
                || (t.starts_with('[') && t.ends_with(']'));
            if !looks || t.len() > MAX_JSON_BYTES {
                return None;
            }
            serde_json::from_str::<Json>(t)
                .ok()
                .filter(|p| p.is_object() || p.is_array())
                .map(Cow::Owned)
        }
        _ => None,
    }
}

/// The stemmed words of a key.
pub fn key_words(key: &str) -> Vec<String> {
    terms(&key.replace(['_', '-', '.'], " "))
        .into_iter()
        .map(|t: Term| t.key)
        .collect()
}

fn is_money_key(words: &[String]) -> bool {
    words
        .iter()
        .any(|w| MONEY_KEYS.iter().any(|m| stem(m) == *w))
}

/// True for keys whose value identifies the object it is in.
fn identifying(key: &str) -> bool {
    let k = key.to_lowercase();
    k == "id" || k == "name" || k.ends_with("_id") || k.ends_with("number") || k.ends_with("_name")
}

fn scalar_text(v: &Json) -> Option<String> {
    match v {
        // (no more characters than bytes: a short string is whole)
        Json::String(s) if s.len() <= VALUE_CHARS => Some(s.to_string()),
        Json::String(s) => Some(match s.char_indices().nth(VALUE_CHARS) {
            Some((end, _)) => s.get(..end).unwrap_or_default().to_owned(),
            None => s.to_string(),
        }),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The values of identifying lines (`reservation_id: ABC123` gives `ABC123`; a bare id stays).
fn context_values(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l.split_once(": ") {
            Some((_, v)) => v.to_owned(),
            None => l.clone(),
        })
        .collect()
}

/// Most keys a [`KeyWords`] remembers, and the longest.
const MAX_KEYS_KEPT: usize = 4_096;
const MAX_KEY_BYTES: usize = 64;

/// The stemmed words of keys met so far, and whether they name money: results of one tool
/// repeat their keys in every record (issue 28: stemming them again was a third of the claim
/// check on such runs).
#[derive(Debug, Default)]
pub struct KeyWords(hashbrown::HashMap<String, (Vec<String>, bool)>);

impl KeyWords {
    /// [`key_words`] of `key` and whether they name money.
    fn of(&mut self, key: &str) -> (Vec<String>, bool) {
        if let Some((words, money)) = self.0.get(key) {
            return (words.clone(), *money);
        }
        let words = key_words(key);
        let money = is_money_key(&words);
        if self.0.len() < MAX_KEYS_KEPT && key.len() <= MAX_KEY_BYTES {
            self.0.insert(key.to_owned(), (words.clone(), money));
        }
        (words, money)
    }
}

/// The records of a JSON value, outermost first.
pub fn records(root: &Json) -> Vec<Record> {
    records_with(root, &mut KeyWords::default())
}

/// [`records`], with the words of keys met before kept in `keys`.
pub fn records_with(root: &Json, keys: &mut KeyWords) -> Vec<Record> {
    let mut out = Vec::new();
    // (value, its key in the parent, identifying lines of the objects around it)
    let mut stack: Vec<(&Json, Option<&str>, Vec<String>)> = vec![(root, None, Vec::new())];
    let mut nodes = 0usize;
    while let Some((v, own_key, context)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_NODES || out.len() >= MAX_RECORDS {
            break;
        }
        match v {
            Json::Array(items) => {
                for item in items.iter().rev() {
                    stack.push((item, own_key, context.clone()));
                }
            }
            Json::Object(o) => {
                let mut lines = context.clone();
                // An object stored under an id ("certificate_7504069": {...}) is named by it.
                if let Some(k) = own_key
                    && k.chars().any(|c| c.is_ascii_digit())
                {
                    lines.push(k.to_owned());
                }
                let mut inner = lines.clone();
                let mut own = Vec::new();
                let mut values: Vec<String> = context_values(&lines);
                let mut numbers = Vec::new();
                for (k, x) in o.iter() {
                    let text = match x {
                        Json::Array(a) if a.iter().all(|e| scalar_text(e).is_some()) => Some(
                            a.iter()
                                .filter_map(scalar_text)
                                .collect::<Vec<_>>()
                                .join(", "),
                        ),
                        _ => scalar_text(x),
                    };
                    let Some(text) = text else { continue };
                    let (words, money) = keys.of(k);
                    for (n, _) in numbers_in(&text) {
                        numbers.push(KeyedNumber {
                            number: n,
                            key: words.clone(),
                            money,
                        });
                    }
                    let line = format!("{k}: {text}");
                    values.push(text.clone());
                    if identifying(k) && inner.len() < MAX_CONTEXT_LINES {
                        inner.push(line.clone());
                    }
                    own.push(line);
                }
                if !own.is_empty() {
                    lines.extend(own);
                    out.push(Record {
                        text: lines.join("\n"),
                        values: values.join("\n"),
                        numbers,
                    });
                }
                let children: Vec<_> = o
                    .iter()
                    .filter(|(_, x)| x.is_object() || x.is_array())
                    .collect();
                for (k, x) in children.into_iter().rev() {
                    stack.push((x, Some(k), inner.clone()));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_object_is_a_record_named_by_what_identifies_it() {
        let v = json!({"user_id": "mia_1", "payment_methods": {
            "certificate_7504069": {"source": "certificate", "amount": 250},
            "credit_card_1": {"source": "credit_card", "last_four": "7447"}}});
        let r = records(&Json::from(v));
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].text, "user_id: mia_1");
        assert!(
            r[1].text.contains("user_id: mia_1\ncertificate_7504069\n"),
            "{}",
            r[1].text
        );
        assert_eq!(
            r[1].numbers,
            vec![KeyedNumber {
                number: "250".into(),
                key: vec!["amount".into()],
                money: true
            }]
        );
        assert!(!r[2].numbers[0].money, "last four digits are no amount");
    }

    /// Keys remembered from result to result give the records a fresh reading gives, and a
    /// long value is cut to its first 200 characters, not bytes.
    #[test]
    fn remembered_keys_and_cut_values_read_as_a_fresh_reading() {
        let long: String = "é".repeat(150) + &"x".repeat(100);
        let results = [
            json!({"refund_amount": 80, "order_id": "ORD-1", "note": long}),
            json!([{"refund_amount": 120, "last_four": "7447"}, {"order_id": "ORD-2", "fare": 3}]),
            json!({"refund_amount": "$95", "Total-Paid": 12, "note": "short"}),
        ];
        let mut keys = KeyWords::default();
        for r in &results {
            let v = Json::from(r.clone());
            assert_eq!(records_with(&v, &mut keys), records(&v));
        }
        let first = records(&Json::from(results[0].clone()));
        let note = first[0].text.lines().find(|l| l.starts_with("note: "));
        let want = format!("note: {}{}", "é".repeat(150), "x".repeat(50));
        assert_eq!(note, Some(want.as_str()));
    }

    #[test]
    fn json_in_a_string_is_read_and_plain_text_is_not() {
        assert!(json_of(&Json::from(json!("{\"a\": 1}"))).is_some());
        assert!(json_of(&Json::from(json!("Refunded $19."))).is_none());
        assert!(json_of(&Json::from(json!("{not json}"))).is_none());
    }
}
