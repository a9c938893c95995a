//! What two recordings of the same behaviour share: texts and JSON values with the recording's
//! own ids and clock taken out, canonical JSON (keys sorted, JSON held in strings parsed, `1.0` and
//! `1` equal), stable hashes of those, and the facts a message names.
//!
//! Nothing here is quadratic: every function is one pass over its input (plus a sort of an
//! object's keys or of a text's facts).

use crate::analysis::model::embedded_json;
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Number, Value};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// What a token made by a machine for one run reads as once taken out.
pub const VOLATILE: &str = "<id>";

/// Values nested deeper than this are compared as one opaque marker (the loader's parser already
/// stops at 128 levels; this keeps the recursion here bounded whatever built the run).
const MAX_DEPTH: usize = 96;

/// Tokens a machine makes afresh for every run: UUIDs, machine timestamps (`2025-06-29T00:23:24Z`),
/// and long runs of letters and digits (span ids, provider call ids like `call_kW83onhu...`,
/// response ids). Which of the long runs are ids is decided by [`looks_generated`].
fn volatile_pattern() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        RegexBuilder::new(
            r"(?x)
              [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}
            | [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?
            | [A-Za-z0-9]{13,}",
        )
        .size_limit(1 << 20)
        .build()
        .ok()
    })
    .as_ref()
}

/// True for a long run of letters and digits that reads as made by a machine: hex with both
/// digits and letters (span and trace ids, digests), a number of 13 digits or more (a clock in
/// milliseconds or finer), or letters of both cases mixed with digits (base62 ids such as
/// provider call ids). Words, and ids people read (`credit_card_4421486`, `HAT136`), are not.
fn looks_generated(token: &str) -> bool {
    let b = token.as_bytes();
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    let lower = b.iter().filter(|c| c.is_ascii_lowercase()).count();
    let upper = b.iter().filter(|c| c.is_ascii_uppercase()).count();
    if digits == b.len() {
        return b.len() >= 13;
    }
    if b.len() < 16 {
        return false;
    }
    let hex = b.iter().all(u8::is_ascii_hexdigit);
    (hex && digits > 0) || (digits >= 2 && lower >= 2 && upper >= 2)
}

/// `text` with every machine-made token (see [`volatile_pattern`]) written as [`VOLATILE`], each
/// run of white space as one space (one line break when it held one), trimmed.
pub fn normalize_text(text: &str) -> String {
    let replaced = match volatile_pattern() {
        Some(re) => re.replace_all(text, |c: &regex::Captures<'_>| {
            let m = c.get(0).map_or("", |m| m.as_str());
            let generated = m.contains('-') || m.contains(':') || looks_generated(m);
            if generated {
                VOLATILE.to_owned()
            } else {
                m.to_owned()
            }
        }),
        None => std::borrow::Cow::Borrowed(text),
    };
    // Each run of white space becomes one space, or one line break when it held one (the
    // facts of a message read its lines).
    let mut out = String::with_capacity(replaced.len());
    let mut gap: Option<char> = None;
    for c in replaced.chars() {
        if c.is_whitespace() {
            if c == '\n' || gap.is_none() {
                gap = Some(if c == '\n' { '\n' } else { gap.unwrap_or(' ') });
            }
        } else {
            if let Some(g) = gap.take()
                && !out.is_empty()
            {
                out.push(g);
            }
            out.push(c);
        }
    }
    out
}

/// A JSON value as two recordings of the same behaviour write it alike: object keys sorted,
/// strings that hold a JSON object or array parsed, strings normalised ([`normalize_text`]),
/// integral floats written as integers.
pub fn canon(v: &Value) -> Value {
    canon_at(v, 0)
}

fn canon_at(v: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::String("<too deep>".to_owned());
    }
    match v {
        Value::Null | Value::Bool(_) => v.clone(),
        Value::Number(n) => Value::Number(canon_number(n)),
        Value::String(s) => match embedded_json(s) {
            Some(inner) => canon_at(&inner, depth + 1),
            None => Value::String(normalize_text(s)),
        },
        Value::Array(items) => Value::Array(items.iter().map(|x| canon_at(x, depth + 1)).collect()),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            let mut out = Map::new();
            for k in keys {
                if let Some(x) = m.get(k) {
                    out.insert(k.clone(), canon_at(x, depth + 1));
                }
            }
            Value::Object(out)
        }
    }
}

fn canon_number(n: &Number) -> Number {
    if n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() < 9.0e15
    {
        // exact: |f| < 2^53
        return Number::from(f as i64);
    }
    n.clone()
}

/// Feeds a canonical value ([`canon`]) to a hasher: equal canonical values hash alike.
pub fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => {
            1u8.hash(h);
            b.hash(h);
        }
        Value::Number(n) => {
            2u8.hash(h);
            n.to_string().hash(h);
        }
        Value::String(s) => {
            3u8.hash(h);
            s.hash(h);
        }
        Value::Array(items) => {
            4u8.hash(h);
            items.len().hash(h);
            for x in items {
                hash_value(x, h);
            }
        }
        Value::Object(m) => {
            // `canon` sorts the keys, so document order is key order here.
            5u8.hash(h);
            m.len().hash(h);
            for (k, x) in m {
                k.hash(h);
                hash_value(x, h);
            }
        }
    }
}

/// The facts a message names, lower-cased, sorted, each once: words with a digit (amounts,
/// dates, times, flight numbers, ids), words with `_` or `@` (ids, handles, addresses), and
/// capitalised words that do not start a sentence or a list item (names, places, codes). Two
/// messages that name the same facts say the same thing in other words.
pub fn facts(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut starts = true;
    let mut line_start = true;
    // Inside a markdown heading line, or a bold label opened where a sentence starts
    // (`**Current Flight Date:**`): capitals there are a title's, not names.
    let mut heading = false;
    let mut label = false;
    let mut rest = text;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        if rest[..ws].contains('\n') {
            starts = true;
            line_start = true;
            heading = false;
            label = false;
        }
        rest = &rest[ws..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let raw = &rest[..end];
        rest = &rest[end..];
        if raw.is_empty() {
            continue;
        }
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let bullet = line_start && is_bullet(raw);
        if bullet && raw.starts_with('#') {
            heading = true;
        }
        if starts && (raw.starts_with("**") || raw.starts_with("__")) {
            label = true;
        }
        let has_digit = word.chars().any(|c| c.is_ascii_digit());
        if !word.is_empty() && !bullet {
            let marked = word.contains('_') || word.contains('@');
            let short_caps = word.chars().count() <= 2 && !word.chars().any(char::is_lowercase);
            let proper = !starts
                && !heading
                && !label
                && word.chars().next().is_some_and(char::is_uppercase)
                && !short_caps
                && !word.starts_with("I'")
                && !word.starts_with("I’");
            if has_digit || marked || proper {
                out.push(fact_form(word));
            }
        }
        if label && (raw.ends_with("**") || raw.ends_with("__")) && raw.len() > 2 {
            label = false;
        }
        if !bullet {
            line_start = false;
            if !word.is_empty() {
                // A sentence ends at `.`, `!`, `?`, `:` or `;`, closing quotes and brackets
                // after it included (`ID.)` `done."`).
                let tail = &raw[raw.trim_end_matches(|c: char| !c.is_alphanumeric()).len()..];
                starts = tail.contains(['.', '!', '?', ':', ';']);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A list marker or heading marker at the start of a line (`-`, `*`, `1.`, `##`, `**`).
fn is_bullet(raw: &str) -> bool {
    raw.chars()
        .all(|c| matches!(c, '-' | '*' | '#' | '•' | '>' | '+'))
        || (raw.ends_with(['.', ')']) && raw[..raw.len() - 1].chars().all(|c| c.is_ascii_digit()))
}

/// A fact as compared: lower case, thousands separators and a trailing possessive dropped.
fn fact_form(word: &str) -> String {
    let w = word
        .strip_suffix("'s")
        .or_else(|| word.strip_suffix("’s"))
        .unwrap_or(word);
    let digits_only = w
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c == '.');
    let w: String = if digits_only {
        w.chars().filter(|&c| c != ',').collect()
    } else {
        w.to_owned()
    };
    w.to_lowercase()
}

/// Up to `max` characters of `s` (whole characters) on one line (line breaks as spaces), with
/// `…` when cut.
pub fn excerpt(s: &str, max: usize) -> String {
    let cut = match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    };
    cut.replace(['\n', '\r'], " ")
}

/// A canonical value as short text: a string as itself, anything else as compact JSON.
pub fn value_excerpt(v: &Value, max: usize) -> String {
    match v {
        Value::String(s) => excerpt(s, max),
        other => excerpt(&other.to_string(), max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn machine_made_tokens_are_taken_out_and_words_kept() {
        let a = normalize_text(
            "call  call_kW83onhuRFzCvfhqM524IExy at 2025-06-29T00:23:24.123Z span 4b613ab5cf2e4d1a",
        );
        assert_eq!(a, "call call_<id> at <id> span <id>");
        assert_eq!(
            normalize_text("id 123e4567-e89b-12d3-a456-426614174000 ok"),
            "id <id> ok"
        );
        // Ids people read and long plain words stay.
        for kept in [
            "credit_card_4421486",
            "HAT136",
            "internationalization",
            "2024-05-15 15:00:00",
            "mia_li_3668",
        ] {
            assert_eq!(normalize_text(kept), kept);
        }
        assert_eq!(normalize_text("t=1719619404123456"), "t=<id>");
        assert_eq!(normalize_text("  a \t b \n\n  c\r\n"), "a b\nc");
        assert_eq!(
            facts(&normalize_text("IDs:\n\n- UM3OG5\n- 5RJ7UH\n\nLet me know")),
            vec!["5rj7uh", "um3og5"]
        );
    }

    #[test]
    fn canonical_json_ignores_key_order_embedded_json_and_float_form() {
        let a = canon(&json!({"b": 1.0, "a": "{\"y\": [1, 2], \"x\": \"q\"}"}));
        let b = canon(&json!({"a": {"x": "q", "y": [1, 2]}, "b": 1}));
        assert_eq!(a, b);
        let hash = |v: &Value| {
            let mut h = std::hash::DefaultHasher::new();
            hash_value(v, &mut h);
            h.finish()
        };
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(
            hash(&a),
            hash(&canon(&json!({"a": {"x": "q", "y": [2, 1]}, "b": 1})))
        );
        assert_ne!(canon(&json!({"n": 1.5})), canon(&json!({"n": 1})));
    }

    #[test]
    fn facts_are_numbers_ids_and_names_not_words() {
        assert_eq!(
            facts("Your flight HAT136 on May 20 costs $1,250. Thank you, Mia!"),
            vec!["1250", "20", "hat136", "may", "mia"]
        );
        // The same facts in other words.
        assert_eq!(
            facts("Thanks Mia: HAT136 costs 1250 dollars, May 20."),
            facts("Your flight HAT136 on May 20 costs $1,250. Thank you, Mia!")
        );
        assert!(facts("Could you please provide your user ID? I'm here, OK").is_empty());
        assert_eq!(
            facts("- Flights:\n- Payment: gift_card_1"),
            vec!["gift_card_1"]
        );
        assert_eq!(facts("The capital is Paris."), vec!["paris"]);
        assert_eq!(
            facts("- **Current Flight Date:** May 23\n## Your Trip\nSure, New York it is"),
            vec!["23", "new", "york"]
        );
        assert_ne!(
            facts("The capital is Paris."),
            facts("The capital is London.")
        );
        assert!(facts("").is_empty());
    }

    #[test]
    fn excerpts_cut_on_characters() {
        assert_eq!(excerpt("héllo wörld", 5), "héllo…");
        assert_eq!(excerpt("abc", 5), "abc");
    }
}
