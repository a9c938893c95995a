//! Span rows decoded while they are parsed: a top-level array of rows, or ClickHouse's JSON output
//! (`{"data": [rows], ...}`), is walked by serde visitors straight from the text, and each item is
//! parsed on its own into a small `serde_json::Value` and decoded at once ([`super::decode_row`]),
//! so the file is never held as one tree of values beside the spans it becomes (issue 28), as an
//! OTLP export is read (`otlp::stream`).
//!
//! It gives the runs [`super::SpanRows`] gives for the parsed [`Document`]: the object's other
//! fields are kept as values and the list's first item is kept, so that the general sniffing is
//! asked about the same shape. Any other shape (a Patronus trace object with its `spans`, JSON
//! lines, an object without a `data` list) gives `None`, and the general reader then reads it.

use super::{decode_row, resource_of, rows_of};
use crate::analysis::document::Document;
use crate::analysis::import::SourceFormat;
use crate::analysis::import::spans::{self, Resources, Span};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;

/// Span rows decoded while their text was parsed, before their runs are built.
pub struct Streamed {
    /// Every row in file order, its `trace_id` the one it is grouped by and its `resource` a
    /// position in `resources`.
    rows: Vec<Span>,
    resources: Resources,
}

impl fmt::Debug for Streamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Streamed")
            .field("rows", &self.rows.len())
            .field("resources", &self.resources.list.len())
            .finish()
    }
}

/// Rows grouped by trace id: `(trace id, rows)`.
pub(super) type Groups = Vec<(String, Vec<Span>)>;

/// What the reader has read so far.
#[derive(Default)]
struct State {
    rows: Vec<Span>,
    resources: Resources,
    /// The list's first item, as it was.
    first: Option<Value>,
}

/// The rows of a span-row file in `text`, decoded while it is parsed; `None` when the text is not
/// one valid JSON value of a shape read this way or, unless `forced` (`--from span-rows`), when
/// the general reader would not take it for span rows.
pub fn decode_text(text: &str, forced: bool) -> Option<Streamed> {
    let mut state = State::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let others = Top(&mut state).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let first = Value::Array(state.first.take().into_iter().collect());
    let sniffed = match others {
        None => first,
        Some(mut o) => {
            o.insert("data".to_owned(), first);
            Value::Object(o)
        }
    };
    if !forced
        && crate::analysis::import::sniff(&Document::One(sniffed)) != Some(SourceFormat::SpanRows)
    {
        return None;
    }
    Some(Streamed {
        rows: state.rows,
        resources: state.resources,
    })
}

impl Streamed {
    /// How many runs (distinct trace ids) it holds.
    pub fn count(&self) -> usize {
        let ids: HashSet<&str> = self.rows.iter().map(|s| s.trace_id.as_str()).collect();
        ids.len()
    }

    /// The rows grouped by trace id in order of first appearance, and the resources they name.
    pub(super) fn into_groups(self) -> (Groups, Vec<Map<String, Value>>) {
        let groups = spans::by_trace(self.rows.into_iter().map(|s| (s.trace_id.clone(), s)));
        (groups, self.resources.list)
    }
}

/// The file's one value: `None` for an array of rows, the other fields for `{"data": [rows]}`.
struct Top<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Option<Map<String, Value>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Option<Map<String, Value>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of span rows or {\"data\": [rows]}")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        rows(self.0, seq)?;
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut others = Map::new();
        let mut data = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                // A second list would be read over the first: left to the general reader.
                "data" if !data => {
                    map.next_value_seed(Data(&mut *self.0))?;
                    data = true;
                }
                // A trace object, a native run, a repeated list: left to the general reader.
                "data" | "spans" | "format" => return Err(de::Error::custom("another shape")),
                _ => {
                    others.insert(key, map.next_value::<Value>()?);
                }
            }
        }
        if !data {
            return Err(de::Error::custom("no data list"));
        }
        Ok(Some(others))
    }
}

/// The `data` list (any other value is left to the general reader).
struct Data<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Data<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Data<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of span rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        rows(self.0, seq)
    }
}

/// Each item of a list parsed on its own, its rows decoded at once; the first item kept.
fn rows<'de, A: SeqAccess<'de>>(state: &mut State, mut seq: A) -> Result<(), A::Error> {
    while let Some(item) = seq.next_element::<Value>()? {
        let mut found = Vec::new();
        rows_of(&item, &mut found);
        for (trace_id, row) in found {
            let resource = state.resources.intern(resource_of(row));
            state.rows.push(decode_row(row, &trace_id, resource));
        }
        if state.first.is_none() {
            state.first = Some(item);
        }
    }
    Ok(())
}
