//! OTLP JSON decoded while it is parsed: the export's envelope (requests, `resourceSpans`,
//! `scopeSpans`, `spans`) is walked by serde visitors straight from the text, and each span is
//! parsed on its own into a small `serde_json::Value` and decoded at once (`wire::span_of`), so
//! the file is never held as one tree of values beside the spans it becomes (issue 28).
//!
//! It reads what [`super::Otlp`] reads from a parsed [`Document`](crate::analysis::document::Document),
//! in the same order, with the same choices (the first present of two names, a field of the wrong
//! type treated as absent); `tests` checks both give the same spans. A text that is not valid JSON,
//! or not an OTLP export, gives `None`, and the general reader then parses it and says why.

use super::wire::{self, Decoded, ResourceSpans, SCOPE_SPANS};
use crate::analysis::import::spans::Span;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// The keys under which an export request lists its resource spans, the first present one read.
const RESOURCE_SPANS: [&str; 3] = ["resourceSpans", "resource_spans", "batches"];

/// What one top-level JSON value of the file holds.
#[derive(Default)]
enum Top {
    /// An object: maybe an export request.
    Object(Request),
    /// An array of values, each maybe a request.
    Array(Vec<Item>),
    /// Anything else.
    #[default]
    Other,
}

/// An item of a top-level array.
#[derive(Default)]
enum Item {
    Object(Request),
    #[default]
    Other,
}

/// An object read as an export request.
#[derive(Default)]
struct Request {
    /// Per name in [`RESOURCE_SPANS`]: absent, present but not an array, or its entries.
    lists: [Option<Option<Vec<ResourceSpans>>>; 3],
    /// It has a `format` key (a native run's mark).
    has_format: bool,
}

impl Request {
    /// The entries of the first resource-spans name present, when that is an array (the request's
    /// resource spans); `None` when the object is no export request.
    fn into_entries(self) -> Option<Vec<ResourceSpans>> {
        self.lists.into_iter().flatten().next().flatten()
    }

    fn is_request(&self) -> bool {
        matches!(self.lists.iter().flatten().next(), Some(Some(_)))
    }
}

/// The spans of an OTLP export in `text`, decoded while it is parsed; `None` when the text is not
/// valid JSON or, unless `forced` (`--from otlp`), when the general reader would not take it for
/// OTLP (a native run's `format` first, then the OTLP importer's sniffing rules).
pub fn decode_text(text: &str, forced: bool) -> Option<Decoded> {
    let mut values = Vec::new();
    for v in serde_json::Deserializer::from_str(text).into_iter::<Top>() {
        values.push(v.ok()?);
    }
    if values.is_empty() {
        return None;
    }
    let lines = values.len() > 1;
    if !forced {
        let first_native = matches!(values.first(), Some(Top::Object(r)) if r.has_format);
        let otlp = match values.as_slice() {
            [] => false,
            [Top::Object(r)] => r.is_request(),
            [Top::Array(items)] => matches!(items.first(), Some(Item::Object(r)) if r.is_request()),
            [Top::Other] => false,
            many => many
                .iter()
                .any(|v| matches!(v, Top::Object(r) if r.is_request())),
        };
        if first_native || !otlp {
            return None;
        }
    }
    let mut out = Decoded::default();
    fn add(r: Option<Request>, out: &mut Decoded) {
        match r.and_then(Request::into_entries) {
            Some(entries) => entries.into_iter().for_each(|rs| out.push(rs)),
            None => out.not_traces += 1,
        }
    }
    for v in values {
        match v {
            Top::Object(r) => add(Some(r), &mut out),
            // A line holding an array is not a request; an array that is the whole file lists them.
            Top::Array(items) if !lines => {
                for item in items {
                    match item {
                        Item::Object(r) => add(Some(r), &mut out),
                        Item::Other => add(None, &mut out),
                    }
                }
            }
            Top::Array(_) | Top::Other => add(None, &mut out),
        }
    }
    Some(out)
}

/// Accepts any value other than a map or a sequence as `Default::default()`, and skips the
/// contents of a sequence (`seq`) or a map (`map`) when the visitor does not read them.
macro_rules! others_are_default {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
    (seq) => {
        others_are_default!();
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (map) => {
        others_are_default!();
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}
pub(in crate::analysis::import) use others_are_default;

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!();
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Top, A::Error> {
                request(map).map(Top::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Item>()? {
                    items.push(item);
                }
                Ok(Top::Array(items))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Item;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!(seq);
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Item, A::Error> {
                request(map).map(Item::Object)
            }
        }
        d.deserialize_any(V)
    }
}

/// The fields of an object read as an export request (the last of two equal keys wins, as in a
/// parsed object).
fn request<'de, A: MapAccess<'de>>(mut map: A) -> Result<Request, A::Error> {
    let mut r = Request::default();
    while let Some(key) = map.next_key::<String>()? {
        match RESOURCE_SPANS.iter().position(|k| *k == key) {
            Some(i) => {
                let List(entries) = map.next_value::<List<Entry>>()?;
                if let Some(slot) = r.lists.get_mut(i) {
                    *slot = Some(entries.map(|l| l.into_iter().map(|Entry(e)| e).collect()));
                }
            }
            None => {
                if key == "format" {
                    r.has_format = true;
                }
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(r)
}

/// A list: `Some` of its items when the value is an array, `None` for any other value.
struct List<T>(Option<Vec<T>>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!(map);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    out.push(item);
                }
                Ok(List(Some(out)))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A resource-spans entry (a value that is not an object is one with no spans).
#[derive(Default)]
struct Entry(ResourceSpans);

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!(seq);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let mut resource = None;
                let mut lists: [Option<Option<Vec<Scope>>>; 4] = Default::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "resource" {
                        resource = Some(map.next_value::<Value>()?);
                    } else if let Some(i) = SCOPE_SPANS.iter().position(|k| *k == key) {
                        let List(scopes) = map.next_value::<List<Scope>>()?;
                        if let Some(slot) = lists.get_mut(i) {
                            *slot = Some(scopes);
                        }
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                let spans = lists
                    .into_iter()
                    .flatten()
                    .next()
                    .flatten()
                    .unwrap_or_default()
                    .into_iter()
                    .flat_map(|Scope(spans)| spans)
                    .collect();
                Ok(Entry(ResourceSpans {
                    attrs: resource.map(wire::resource_attributes).unwrap_or_default(),
                    spans,
                }))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scope-spans entry's spans (none for a value that is not an object).
#[derive(Default)]
struct Scope(Vec<Span>);

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scope;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!(seq);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scope, A::Error> {
                let mut spans = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "spans" {
                        let List(list) = map.next_value::<List<OneSpan>>()?;
                        spans = list
                            .unwrap_or_default()
                            .into_iter()
                            .filter_map(|OneSpan(s)| s)
                            .collect();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Scope(spans))
            }
        }
        d.deserialize_any(V)
    }
}

/// One item of a `spans` list, parsed on its own and decoded at once.
struct OneSpan(Option<Span>);

impl<'de> Deserialize<'de> for OneSpan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| OneSpan(wire::span_of(v)))
    }
}

#[cfg(test)]
mod tests;
