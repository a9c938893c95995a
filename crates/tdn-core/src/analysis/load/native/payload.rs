//! A step read from the text with its payloads (`input`, `output`, `tool.arguments`,
//! `memory.value`) parsed straight into [`Json`], never held as a `serde_json::Value` (issue 11:
//! they are most of a run's bytes). The step's other fields are read as `Value`s into
//! [`StepFields`], for [`step_from_raw`](super::step::step_from_raw) to check; a payload field
//! keeps its place there with a `null` in it, so the fields (and those left over, their order
//! included) are those of reading the whole step as a `Value`. A repeated key is read as
//! serde_json reads it: the last value wins, at the first one's place.

use super::compact::Compact;
use super::leftover;
use super::step::STEP_FIELDS;
use crate::analysis::model::{Json, JsonSeed, last_value_first_place};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::ops::Deref;

/// The payloads of one step, when they were read apart from its map (`None`: not in the text, or
/// not read apart: then the map holds it, as for a step built from a `Value`).
#[derive(Debug, Default)]
pub(in crate::analysis::load) struct Payloads {
    pub(super) input: Option<Json>,
    pub(super) output: Option<Json>,
    /// `tool.arguments`, of the last `tool` when it is an object.
    pub(super) arguments: Option<Json>,
    /// `memory.value`, of the last `memory` when it is an object.
    pub(super) memory_value: Option<Json>,
}

/// A step's fields as the step's checks take them out (see [`StepFields`]).
pub(super) trait Fields {
    /// Takes the field `key` out, the last field moving into its place.
    fn remove(&mut self, key: &str) -> Option<Value>;
    /// True when no field is left.
    fn is_empty(&self) -> bool;
    /// The fields left, in their order, in a map of their own size.
    fn into_map(self) -> Map<String, Value>;
}

impl Fields for Map<String, Value> {
    fn remove(&mut self, key: &str) -> Option<Value> {
        Map::remove(self, key)
    }

    fn is_empty(&self) -> bool {
        Map::is_empty(self)
    }

    fn into_map(self) -> Map<String, Value> {
        leftover(self)
    }
}

/// A step's fields in document order, each key once, without the hash table a serde_json map
/// builds (a step has a dozen fields, each taken out once). Taking one out moves the last field
/// into its place, as a serde_json map's `remove` does (`swap_remove`), so the fields left over
/// come in the order that map would give. A lookup scans: a step's checks take out a fixed list
/// of fields, so a step of any size is read in time linear in its fields.
#[derive(Debug, Default)]
pub(in crate::analysis::load) struct StepFields(Vec<(FieldName, Value)>);

impl StepFields {
    /// The fields read, a repeated key keeping its first place and its last value.
    fn from_entries(entries: Vec<(FieldName, Value)>) -> StepFields {
        StepFields(last_value_first_place(entries))
    }
}

/// A step field's name: one the loader knows, not copied, or another, copied (issue 11: every
/// field of 100,000 steps had its name copied, then freed once the step was built).
#[derive(Debug)]
pub(in crate::analysis::load) enum FieldName {
    /// One of [`STEP_FIELDS`].
    Known(&'static str),
    /// Any other name.
    Other(String),
}

impl FieldName {
    /// The loader's own copy of `name`, when it is one of [`STEP_FIELDS`].
    fn known(name: &str) -> Option<&'static str> {
        STEP_FIELDS.iter().find(|&&known| known == name).copied()
    }

    fn into_string(self) -> String {
        match self {
            FieldName::Known(k) => k.to_owned(),
            FieldName::Other(s) => s,
        }
    }
}

impl Deref for FieldName {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            FieldName::Known(k) => k,
            FieldName::Other(s) => s,
        }
    }
}

/// Reads a step field's name as a [`FieldName`].
#[derive(Clone, Copy, Debug)]
struct FieldNameSeed;

impl<'de> DeserializeSeed<'de> for FieldNameSeed {
    type Value = FieldName;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FieldName, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for FieldNameSeed {
    type Value = FieldName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<FieldName, E> {
        Ok(FieldName::known(v).map_or_else(|| FieldName::Other(v.to_owned()), FieldName::Known))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<FieldName, E> {
        Ok(FieldName::known(&v).map_or(FieldName::Other(v), FieldName::Known))
    }
}

impl Fields for StepFields {
    fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.0.iter().position(|(k, _)| &**k == key)?;
        Some(self.0.swap_remove(at).1)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn into_map(self) -> Map<String, Value> {
        let mut out = Map::with_capacity(self.0.len());
        out.extend(self.0.into_iter().map(|(k, v)| (k.into_string(), v)));
        out
    }
}

/// One element of `steps` as read: an object's fields and payloads, or anything else.
#[derive(Debug)]
pub(in crate::analysis::load) enum RawStep {
    /// An object.
    Fields(StepFields, Payloads),
    /// Not an object (the step is unusable).
    NotObject(Value),
}

/// The value of a payload field taken out of a step's map (`field`), and the payload read apart
/// for it (`read`): the payload when there is one, else the field's value.
pub(super) fn payload(field: Option<Value>, read: Option<Json>) -> Option<Json> {
    let field = field?;
    Some(read.unwrap_or_else(|| Json::from(field)))
}

/// Reads one element of `steps` (see [`RawStep`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StepSeed;

impl<'de> DeserializeSeed<'de> for StepSeed {
    type Value = RawStep;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The visitor calls a step's reader passes on, for a value that is not an object.
macro_rules! forward_to_compact {
    ($wrap:expr) => {
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Compact.visit_bool(v).map($wrap)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Compact.visit_i64(v).map($wrap)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Compact.visit_u64(v).map($wrap)
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Compact.visit_f64(v).map($wrap)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Compact.visit_str(v).map($wrap)
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Compact.visit_string(v).map($wrap)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Compact.visit_none().map($wrap)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Compact.visit_unit().map($wrap)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            Compact.visit_some(d).map($wrap)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Compact.visit_seq(seq).map($wrap)
        }
    };
}

impl<'de> Visitor<'de> for StepSeed {
    type Value = RawStep;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    forward_to_compact!(RawStep::NotObject);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut p = Payloads::default();
        let mut entries: Vec<(FieldName, Value)> = Vec::new();
        while let Some(key) = map.next_key_seed(FieldNameSeed)? {
            let v = match &*key {
                "input" => {
                    p.input = Some(map.next_value_seed(JsonSeed)?);
                    Value::Null
                }
                "output" => {
                    p.output = Some(map.next_value_seed(JsonSeed)?);
                    Value::Null
                }
                "tool" => {
                    let (v, args) = map.next_value_seed(Holder("arguments"))?;
                    p.arguments = args;
                    v
                }
                "memory" => {
                    let (v, value) = map.next_value_seed(Holder("value"))?;
                    p.memory_value = value;
                    v
                }
                _ => map.next_value_seed(Compact)?,
            };
            entries.push((key, v));
        }
        Ok(RawStep::Fields(StepFields::from_entries(entries), p))
    }
}

/// An object of this size, with serde_json's treatment of a repeated key.
fn sized_map(entries: Vec<(String, Value)>) -> Map<String, Value> {
    let mut out = Map::with_capacity(entries.len());
    for (k, v) in entries {
        out.insert(k, v);
    }
    out
}

/// Reads a field that holds a payload under the key `.0` (`tool` holds `arguments`): its
/// `Value` with a placeholder for the payload, and the payload.
#[derive(Clone, Copy, Debug)]
struct Holder(&'static str);

impl<'de> DeserializeSeed<'de> for Holder {
    type Value = (Value, Option<Json>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Holder {
    type Value = (Value, Option<Json>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    forward_to_compact!(|v| (v, None));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut held = None;
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = if key == self.0 {
                held = Some(map.next_value_seed(JsonSeed)?);
                Value::Null
            } else {
                map.next_value_seed(Compact)?
            };
            entries.push((key, v));
        }
        Ok((Value::Object(sized_map(entries)), held))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parallel::run_from_text_parallel;
    use super::super::stream::step_by_step;
    use super::super::{Streamed, run_from_value};
    use crate::analysis::import::SourceFormat;
    use crate::analysis::progress::Progress;
    use proptest::prelude::*;

    /// A JSON text: strings with escapes and non-ASCII, numbers of every kind, objects whose
    /// keys repeat.
    fn value_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            Just("18446744073709551615".to_owned()),
            Just("-0.0".to_owned()),
            Just("2.5e-300".to_owned()),
            Just("1e300".to_owned()),
            "[a-c\u{e9}]{0,4}".prop_map(|s| format!("\"{s}\\n\\u00e9\\\"\"")),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-c]", inner), 0..6).prop_map(|kv| object(&kv)),
            ]
        })
    }

    fn object(kv: &[(String, String)]) -> String {
        let body: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(","))
    }

    /// A field that holds a payload (`tool` holds `arguments`), as an object whose keys may
    /// repeat (the payload's too), or as something else.
    fn holder(inner: &'static str) -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just(inner.to_owned()),
            Just("name".to_owned()),
            Just("key".to_owned()),
            Just("call_id".to_owned()),
            Just("zz".to_owned()),
        ];
        let value = prop_oneof![value_text(), Just("\"n\"".to_owned())];
        prop_oneof![
            4 => prop::collection::vec((key, value), 0..5).prop_map(|kv| object(&kv)),
            1 => value_text(),
        ]
    }

    /// A step whose fields may repeat, payload fields included.
    fn step_text() -> impl Strategy<Value = String> {
        let field = prop_oneof![
            6 => (
                prop::sample::select(vec![
                    "input", "output", "zz", "yy", "x y", "name", "error", "parent", "usage",
                    "attributes", "context", "documents", "container", "agent"
                ]),
                value_text()
            )
                .prop_map(|(k, v)| (k.to_owned(), v)),
            1 => holder("arguments").prop_map(|v| ("tool".to_owned(), v)),
            1 => holder("value").prop_map(|v| ("memory".to_owned(), v)),
            1 => (0..6_u8).prop_map(|n| ("id".to_owned(), format!("\"s{n}\""))),
        ];
        let kind = prop_oneof![Just("tool"), Just("memory_read"), Just("llm"), Just("user")];
        (0..6_u8, kind, prop::collection::vec(field, 0..24), 0..12_u8).prop_map(
            |(n, kind, fields, shape)| {
                if shape == 0 {
                    return "[1]".to_owned();
                }
                let mut kv = vec![
                    ("id".to_owned(), format!("\"s{n}\"")),
                    ("kind".to_owned(), format!("\"{kind}\"")),
                ];
                kv.extend(fields);
                object(&kv)
            },
        )
    }

    fn same(a: &Streamed, b: &Streamed) -> Result<(), TestCaseError> {
        match (a, b) {
            (Streamed::Loaded(r, w), Streamed::Loaded(r2, w2)) => {
                prop_assert_eq!(r, r2);
                // Equal as values, and written byte for byte alike (key order included).
                prop_assert_eq!(
                    serde_json::to_string(r).ok(),
                    serde_json::to_string(r2).ok()
                );
                prop_assert_eq!(w, w2);
            }
            (Streamed::Failed(e), Streamed::Failed(e2)) => prop_assert_eq!(e, e2),
            (a, b) => prop_assert!(false, "{:?} against {:?}", a, b),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The payloads read apart give the run that reading every step as one `Value` gives,
        /// in both readers of the text.
        #[test]
        fn payloads_read_apart_give_the_run_a_whole_value_gives(
            steps in prop::collection::vec(step_text(), 0..12)
        ) {
            let text = format!(
                r#"{{"format":"tdn.run/1","id":"r","status":"failed","steps":[{}]}}"#,
                steps.join(",")
            );
            let general = match run_from_value(
                serde_json::from_str(&text).map_err(|e| TestCaseError::fail(e.to_string()))?,
                SourceFormat::Native,
            ) {
                Ok((run, w)) => Streamed::Loaded(Box::new(run), w),
                Err(e) => Streamed::Failed(e),
            };
            same(&step_by_step(&text, &Progress::new()), &general)?;
            let parallel = run_from_text_parallel(&text, &Progress::new());
            prop_assert!(parallel.is_some(), "{}", text);
            if let Some(p) = parallel {
                same(&p, &general)?;
            }
        }
    }

    #[test]
    fn the_last_of_a_repeated_payload_field_is_kept() {
        let text = r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[
            {"id":"a","kind":"tool","output":1,"tool":{"name":"t","arguments":{"x":1,"y":2,"x":3}},"output":{"b":1,"a":2,"b":3},"zz":1},
            {"id":"b","kind":"tool","tool":{"name":"t","arguments":[1]},"tool":{"name":"u"}},
            {"id":"c","kind":"memory_write","memory":{"key":"k","value":"v1","value":"v2"}}]}"#;
        let Streamed::Loaded(run, _) = step_by_step(text, &Progress::new()) else {
            panic!("not loaded");
        };
        let a = &run.steps[0];
        assert_eq!(
            a.output.as_ref().map(|o| o.to_string()).as_deref(),
            Some(r#"{"b":3,"a":2}"#)
        );
        assert_eq!(
            a.tool.as_ref().map(|t| t.arguments.to_string()).as_deref(),
            Some(r#"{"x":3,"y":2}"#)
        );
        assert_eq!(
            run.steps[1].tool.as_ref().map(|t| t.name.as_str()),
            Some("u")
        );
        assert!(
            run.steps[1]
                .tool
                .as_ref()
                .is_some_and(|t| t.arguments.is_null())
        );
        assert_eq!(
            run.steps[2].memory.as_ref().and_then(|m| m.value.as_str()),
            Some("v2")
        );
        assert_eq!(run.steps[0].extra().get("zz"), Some(&serde_json::json!(1)));
    }
}
