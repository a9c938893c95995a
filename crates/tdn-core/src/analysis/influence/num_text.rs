//! Numbers in JSON as influence.md writes them: a finite number is a plain JSON number; NaN and
//! the infinities are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`. A serde `with` module
//! (and an `option` one), plus the two conversions the toolbox uses on `serde_json::Value`s.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serializer};
use serde_json::Value;
use std::fmt;

/// The text of a non-finite number, `None` for a finite one.
pub fn non_finite_text(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("NaN")
    } else if x == f64::INFINITY {
        Some("Infinity")
    } else if x == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// A number as a JSON value: finite as a number, otherwise as its string.
pub fn to_value(x: f64) -> Value {
    match non_finite_text(x) {
        Some(t) => Value::String(t.to_owned()),
        None => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
    }
}

/// A JSON number, or one of the three non-finite strings; anything else is `None`.
pub fn from_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => from_text(s),
        _ => None,
    }
}

fn from_text(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// `#[serde(with = "num_text")]` for `f64`.
pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    match non_finite_text(*x) {
        Some(t) => s.serialize_str(t),
        None => s.serialize_f64(*x),
    }
}

/// `#[serde(with = "num_text")]` for `f64`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_any(NumVisitor)
}

struct NumVisitor;

impl Visitor<'_> for NumVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or one of \"NaN\", \"Infinity\", \"-Infinity\"")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        from_text(v).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

/// `#[serde(default, with = "num_text::option")]` for `Option<f64>` (null = none).
pub mod option {
    use super::*;

    /// Serializes `None` as null, a number as [`super::serialize`] does.
    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(x) => super::serialize(x, s),
            None => s.serialize_none(),
        }
    }

    /// Reads null, a number, or a non-finite string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let v = Value::deserialize(d)?;
        match v {
            Value::Null => Ok(None),
            other => from_value(&other).map(Some).ok_or_else(|| {
                de::Error::custom("expected null, a number, or NaN/Infinity/-Infinity")
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_numbers_round_trip_as_strings() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let v = to_value(x);
            assert!(v.is_string());
            let back = from_value(&v).unwrap();
            assert!(back.is_nan() == x.is_nan() && (x.is_nan() || back == x));
        }
        assert_eq!(to_value(0.25), serde_json::json!(0.25));
        assert_eq!(from_value(&serde_json::json!("high")), None);
        assert_eq!(from_value(&serde_json::json!(null)), None);
    }
}
