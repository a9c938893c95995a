//! [`Json`]: a step's payload (`input`, `output`, a tool call's `arguments`, a memory value) held
//! in 24 bytes a value, for runs of 100,000 steps (issue 11).
//!
//! A `serde_json::Value` with `preserve_order` is 72 bytes, an object entry 104 bytes plus the
//! key's `String` header and the map's index table; a loaded run held 63 MB of them. Here a string
//! is a `Box<str>`, an array a boxed slice, and an object a boxed slice of `(key, value)` entries
//! in document order, a short key shared with equal keys (`json_keys`). It holds the same value `serde_json` would: the same key order, a repeated
//! key kept at its first place with its last value, and it is written byte for byte as the
//! equivalent `Value` is (compact and pretty). Cold code that needs a `Value` converts with
//! [`Json::to_value`].

use super::json_keys::{self, Key, KeySeed};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};
use std::fmt;
use std::ops::Deref;

/// Any JSON value, compactly (see the module doc).
#[derive(Clone, Debug, Default)]
pub enum Json {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json holds it.
    Number(Number),
    /// A string.
    String(Box<str>),
    /// An array.
    Array(Box<[Json]>),
    /// An object, its entries in document order.
    Object(JsonMap),
}

const _: () = assert!(std::mem::size_of::<Json>() <= 24);

/// A JSON object: its entries in document order, each key once. Built with
/// [`JsonMap::from_entries`], which treats a repeated key as serde_json does.
///
/// [`JsonMap::get`] scans the entries: one lookup is linear in the object. A caller that looks
/// up many keys of one object (as many as the object has, or as another object has) makes a
/// [`JsonMap::lookup`] first so that it stays linear.
#[derive(Clone, Debug, Default)]
pub struct JsonMap {
    entries: Box<[(Key, Json)]>,
}

/// Up to this many entries a repeated key is found by scanning; above it, by hashing.
const SCAN_LIMIT: usize = 8;

impl JsonMap {
    /// An empty object.
    pub fn new() -> Self {
        JsonMap::default()
    }

    /// An object from its entries in document order. A key that comes again keeps its first
    /// place and takes its last value, as serde_json's `preserve_order` map does. Linear.
    pub fn from_entries(entries: Vec<(Key, Json)>) -> Self {
        JsonMap {
            entries: last_value_first_place(entries).into_boxed_slice(),
        }
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key` (a scan: see the type's doc).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v)
    }

    /// True when `key` is there.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in document order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json)> + DoubleEndedIterator {
        self.entries.iter().map(|(k, v)| (&**k, v))
    }

    /// The keys in document order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator {
        self.entries.iter().map(|(k, _)| &**k)
    }

    /// The values in document order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Json> + DoubleEndedIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    /// An index of the keys, for a caller that looks up many of them (linear to build).
    pub fn lookup(&self) -> hashbrown::HashMap<&str, &Json> {
        self.iter().collect()
    }

    /// The equivalent serde_json map.
    pub fn to_map(&self) -> serde_json::Map<String, Value> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_value()))
            .collect()
    }
}

/// For each entry, the index of the first entry with its key.
fn first_places<K: Deref<Target = str>, V>(entries: &[(K, V)]) -> Vec<usize> {
    if entries.len() <= SCAN_LIMIT {
        return (0..entries.len())
            .map(|i| {
                entries[..i]
                    .iter()
                    .position(|(k, _)| **k == *entries[i].0)
                    .unwrap_or(i)
            })
            .collect();
    }
    let mut seen: hashbrown::HashMap<&str, usize> =
        hashbrown::HashMap::with_capacity(entries.len());
    entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| *seen.entry(&**k).or_insert(i))
        .collect()
}

/// Entries of an object as read, with a repeated key keeping its first place and taking its
/// last value, as serde_json's `preserve_order` map does; the entries come back untouched when
/// no key repeats. Linear: up to [`SCAN_LIMIT`] entries a repeat is found by scanning, above it
/// by hashing. Shared by [`JsonMap`] and the loader's list of a step's fields.
pub(crate) fn last_value_first_place<K: Deref<Target = str>, V>(
    entries: Vec<(K, V)>,
) -> Vec<(K, V)> {
    let firsts = first_places(&entries);
    if firsts.iter().enumerate().all(|(i, &f)| i == f) {
        return entries;
    }
    // `place[i]`: where entry `i` went in `out`, for an entry that went in.
    let mut place = vec![0_usize; entries.len()];
    let mut out: Vec<(K, V)> = Vec::with_capacity(entries.len());
    for (i, (k, v)) in entries.into_iter().enumerate() {
        let first = firsts[i];
        if first == i {
            place[i] = out.len();
            out.push((k, v));
        } else if let Some(slot) = out.get_mut(place[first]) {
            slot.1 = v;
        }
    }
    out
}

impl PartialEq for JsonMap {
    /// Equal as maps, whatever the order (as serde_json's maps compare).
    fn eq(&self, other: &Self) -> bool {
        if self.len() != other.len() {
            return false;
        }
        if self.entries == other.entries {
            return true;
        }
        if self.len() <= SCAN_LIMIT {
            return self.iter().all(|(k, v)| other.get(k) == Some(v));
        }
        let theirs = other.lookup();
        self.iter().all(|(k, v)| theirs.get(k) == Some(&v))
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => a == b,
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => a == b,
            (Json::Object(a), Json::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl PartialEq<str> for Json {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Json {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Json::Null, Value::Null) => true,
            (Json::Bool(a), Value::Bool(b)) => a == b,
            (Json::Number(a), Value::Number(b)) => a == b,
            (Json::String(a), Value::String(b)) => **a == **b,
            (Json::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Json::Object(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

impl Json {
    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// True for a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    /// True for a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Json::Number(_))
    }

    /// True for a number that is an `i64`.
    pub fn is_i64(&self) -> bool {
        matches!(self, Json::Number(n) if n.is_i64())
    }

    /// True for a number that is a `u64`.
    pub fn is_u64(&self) -> bool {
        matches!(self, Json::Number(n) if n.is_u64())
    }

    /// True for `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Json::Bool(_))
    }

    /// True for an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    /// True for an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// The number as `u64`, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The number as `i64`, if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The entries, if this is an object.
    pub fn as_object(&self) -> Option<&JsonMap> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The value of `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.get(key)
    }

    /// The item at `index`, if this is an array that long.
    pub fn get_index(&self, index: usize) -> Option<&Json> {
        self.as_array()?.get(index)
    }

    /// The equivalent `serde_json::Value` (for cold code only: it copies everything).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(a) => Value::Array(a.iter().map(Json::to_value).collect()),
            Json::Object(m) => Value::Object(m.to_map()),
        }
    }
}

static NULL: Json = Json::Null;

impl std::ops::Index<&str> for Json {
    type Output = Json;

    /// The value of `key`, or `null` (as `Value` indexes).
    fn index(&self, key: &str) -> &Json {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Json {
    type Output = Json;

    /// The item at `index`, or `null` (as `Value` indexes).
    fn index(&self, index: usize) -> &Json {
        self.get_index(index).unwrap_or(&NULL)
    }
}

impl From<Value> for Json {
    fn from(v: Value) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(n),
            Value::String(s) => Json::String(s.into_boxed_str()),
            Value::Array(a) => Json::Array(a.into_iter().map(Json::from).collect()),
            // A serde_json map holds each key once already.
            Value::Object(m) => Json::Object(JsonMap {
                entries: m
                    .into_iter()
                    .map(|(k, v)| (json_keys::key(&k), Json::from(v)))
                    .collect(),
            }),
        }
    }
}

impl From<&Value> for Json {
    fn from(v: &Value) -> Json {
        Json::from(v.clone())
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.into())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s.into_boxed_str())
    }
}

impl From<Json> for Value {
    fn from(j: Json) -> Value {
        j.to_value()
    }
}

impl fmt::Display for Json {
    /// Compact JSON, or pretty with `{:#}`, exactly as `Value` displays.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if f.alternate() {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        }
        .map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl Serialize for Json {
    /// The same calls `Value` makes, so every serializer writes the same bytes.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(t) => s.serialize_str(t),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for item in a.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(m) => m.serialize(s),
        }
    }
}

impl Serialize for JsonMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonSeed)
    }
}

/// Reads one [`Json`] (a seed, so it can sit inside another reader); what `Deserialize` uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonSeed;

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.into()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v.into_boxed_str()))
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        JsonSeed.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4_096));
        while let Some(v) = seq.next_element_seed(JsonSeed)? {
            items.push(v);
        }
        Ok(Json::Array(items.into_boxed_slice()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries: Vec<(Key, Json)> = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let v = map.next_value_seed(JsonSeed)?;
            entries.push((key, v));
        }
        Ok(Json::Object(JsonMap::from_entries(entries)))
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
