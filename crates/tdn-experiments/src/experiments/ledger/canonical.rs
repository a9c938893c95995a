//! Canonical JSON (attribution-ledger.md §2): RFC 8785 (JCS) with a safe-integer and a surrogate
//! rule, and the strict parser that reads ledger lines. Pure functions over `serde_json::Value`;
//! no I/O. Object member order never comes from serde_json's map: keys are sorted here by UTF-16
//! code units.

use crate::analysis::js_number::js_number;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// 2^53 − 1: the largest integer every JSON reader holds exactly.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A value that has no canonical form, or text that is not strict JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CanonError {
    /// Not JSON, a lone surrogate, a duplicate key or a rejected number, with where.
    #[error("{0}")]
    Parse(String),
    /// A number outside the canonical range (non-finite, or an integer above 2^53 − 1).
    #[error("the number '{0}' has no canonical form (non-finite, or an integer above 2^53-1)")]
    Number(String),
}

/// Orders two strings by their UTF-16 code units (a proper prefix first), as JCS and ECMAScript do.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Parses `text` as one JSON value under the strict rules: a duplicate object key, a lone
/// surrogate, a non-finite number or an integer of magnitude above 2^53 − 1 is an error.
pub fn parse_strict(text: &str) -> Result<Value, CanonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = StrictValue::deserialize(&mut de).map_err(|e| CanonError::Parse(e.to_string()))?;
    de.end().map_err(|e| CanonError::Parse(e.to_string()))?;
    Ok(v.0)
}

/// The canonical text of `v`.
pub fn canonical(v: &Value) -> Result<String, CanonError> {
    let mut out = String::new();
    write_value(v, &mut out)?;
    Ok(out)
}

fn write_value(v: &Value, out: &mut String) -> Result<(), CanonError> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&number(n)?),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => write_object(map, out)?,
    }
    Ok(())
}

fn write_object(map: &Map<String, Value>, out: &mut String) -> Result<(), CanonError> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|a, b| utf16_cmp(a.0, b.0));
    out.push('{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        write_value(v, out)?;
    }
    out.push('}');
    Ok(())
}

/// A string as RFC 8785 writes it: the escapes serde_json makes.
fn write_string(s: &str, out: &mut String) {
    crate::analysis::model::json_string::write_json_string(s, out);
}

/// The canonical text of a JSON number, or an error when it has none.
fn number(n: &Number) -> Result<String, CanonError> {
    if let Some(u) = n.as_u64() {
        return if u <= MAX_SAFE_INTEGER {
            Ok(u.to_string())
        } else {
            Err(CanonError::Number(u.to_string()))
        };
    }
    if let Some(i) = n.as_i64() {
        return if i.unsigned_abs() <= MAX_SAFE_INTEGER {
            Ok(i.to_string())
        } else {
            Err(CanonError::Number(i.to_string()))
        };
    }
    match n.as_f64() {
        Some(f) => canonical_f64(f),
        None => Err(CanonError::Number(n.to_string())),
    }
}

/// True when `f` may appear in canonical JSON: finite, and not an integer above 2^53 − 1.
pub fn f64_in_range(f: f64) -> bool {
    // Every binary64 of magnitude 2^53 or more is an integer, so the magnitude test suffices
    // for them; below it, integral or not, every value is allowed.
    f.is_finite() && f.abs() <= 9_007_199_254_740_991.0
}

/// `f` as an integer when it is one in 0..=2^53 − 1 (a canonical `3` may have been read as `3.0`).
pub fn exact_u64(f: f64) -> Option<u64> {
    // Checked above: integral, non-negative and at most 2^53 − 1, so the conversion is exact.
    (f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_991.0).then_some(f as u64)
}

/// The canonical text of a binary64, or an error when it has none.
pub fn canonical_f64(f: f64) -> Result<String, CanonError> {
    if f64_in_range(f) {
        Ok(js_number(f))
    } else {
        Err(CanonError::Number(js_number(f)))
    }
}

/// A `Value` read under the strict rules (duplicate keys and unsafe numbers rejected).
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = StrictValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<StrictValue, E> {
        Ok(StrictValue(Value::Bool(b)))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<StrictValue, E> {
        if i.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(E::custom(format!(
                "the integer {i} is outside -(2^53-1)..2^53-1"
            )));
        }
        Ok(StrictValue(Value::from(i)))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<StrictValue, E> {
        if u > MAX_SAFE_INTEGER {
            return Err(E::custom(format!("the integer {u} is above 2^53-1")));
        }
        Ok(StrictValue(Value::from(u)))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<StrictValue, E> {
        if !f64_in_range(f) {
            return Err(E::custom(format!(
                "the number {} is an integer above 2^53-1 or not finite",
                js_number(f)
            )));
        }
        Number::from_f64(f)
            .map(|n| StrictValue(Value::Number(n)))
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<StrictValue, E> {
        Ok(StrictValue(Value::String(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<StrictValue, E> {
        Ok(StrictValue(Value::String(s)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<StrictValue, E> {
        Ok(StrictValue(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<StrictValue, E> {
        Ok(StrictValue(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StrictValue, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element::<StrictValue>()? {
            items.push(v);
        }
        Ok(StrictValue(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StrictValue, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if obj.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the object key '{}' appears twice",
                    crate::analysis::model::inert_line(&key)
                )));
            }
            let StrictValue(v) = map.next_value::<StrictValue>()?;
            obj.insert(key, v);
        }
        Ok(StrictValue(Value::Object(obj)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_the_spec_examples() {
        for (f, want) in [
            (0.2, "0.2"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1.23e-5, "0.0000123"),
            (1.0, "1"),
            (-0.0, "0"),
            (-0.05, "-0.05"),
            (1e21, "1e+21"),
            (123.0e18, "123000000000000000000"),
        ] {
            assert_eq!(js_number(f), want, "{f}");
        }
        assert_eq!(js_number(f64::INFINITY), "Infinity");
        assert!(canonical_f64(1e21).is_err());
        assert!(canonical_f64(f64::NAN).is_err());
        assert_eq!(
            canonical_f64(-9_007_199_254_740_991.0).unwrap(),
            "-9007199254740991"
        );
    }

    #[test]
    fn built_values_with_unsafe_integers_are_refused() {
        assert!(canonical(&json!({"a": 9_007_199_254_740_992_u64})).is_err());
        assert!(canonical(&json!([-9_007_199_254_740_992_i64])).is_err());
        assert_eq!(canonical(&json!({"a": 5})).unwrap(), "{\"a\":5}");
    }

    #[test]
    fn strings_escape_only_what_jcs_escapes() {
        let v = json!("\u{7f}\u{2028}/\u{1f}\u{0}");
        assert_eq!(canonical(&v).unwrap(), "\"\u{7f}\u{2028}/\\u001f\\u0000\"");
    }

    #[test]
    fn strict_parsing_rejects_duplicates_even_nested() {
        let e = parse_strict(r#"{"a":{"b":1,"b":1}}"#).unwrap_err();
        assert!(e.to_string().contains("'b' appears twice"), "{e}");
        assert!(parse_strict(r#"{"a":1} x"#).is_err());
        assert!(parse_strict(r#"{"a":1,"A":2}"#).is_ok());
    }
}
