//! A `serde_json::Value` read with no spare room: each object and array is sized to what it
//! holds. serde_json's own reader grows them as they fill, which leaves up to two spare entries
//! of 104 bytes in a small object (issue 11: a run's steps are mostly small objects). The value
//! is the same, key order and repeated keys included. No I/O.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Reads one value (a seed, so it can sit inside another reader).
#[derive(Clone, Copy, Debug, Default)]
pub struct Compact;

impl<'de> DeserializeSeed<'de> for Compact {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Compact {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Compact.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4_096));
        while let Some(v) = seq.next_element_seed(Compact)? {
            items.push(v);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value_seed(Compact)?;
            entries.push((key, v));
        }
        let mut out = Map::with_capacity(entries.len());
        for (k, v) in entries {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::{TreeShape, json_tree};
    use proptest::prelude::*;

    fn read(text: &str) -> Result<Value, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Compact.deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(v)
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e300..1e300_f64).prop_map(Value::from),
            "[a-c\u{e9}\"\\\\]{0,6}".prop_map(Value::String),
        ];
        json_tree(
            leaf,
            || "[a-c]{0,2}",
            TreeShape {
                depth: 4,
                size: 48,
                branch: 6,
                array: 0..6,
                object: 0..6,
            },
        )
    }

    proptest! {
        #[test]
        fn it_reads_what_serde_json_reads(v in json()) {
            let text = v.to_string();
            prop_assert_eq!(read(&text), Ok(serde_json::from_str::<Value>(&text).unwrap()));
        }
    }

    #[test]
    fn repeated_keys_and_key_order_are_serde_jsons() {
        for text in [
            r#"{"b":1,"a":2,"b":3}"#,
            r#"{"z":[1,2.5,-3,1e400],"y":{"x":null}}"#,
            "[]",
            "{}",
            r#""\u00e9\n""#,
        ] {
            let mine = read(text);
            let theirs = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(mine, theirs, "{text}");
            if let (Ok(a), Ok(b)) = (&mine, &theirs) {
                assert_eq!(a.to_string(), b.to_string());
            }
        }
    }
}
