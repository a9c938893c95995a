//! A Langfuse export decoded while it is parsed: the file's envelope (a top-level array, or an
//! object's `observations` or `data` list) is walked by serde visitors straight from the text, and
//! each observation is parsed on its own into a small `serde_json::Value` and decoded at once
//! ([`super::span`]), so the file is never held as one tree of values beside the spans it becomes
//! (issue 28), as an OTLP export is read (`otlp::stream`, whose visitors' defaults this shares).
//!
//! It gives the runs [`super::Langfuse`] gives for the parsed [`Document`]: the other fields of the
//! object are kept as values, the first item of each list is kept so that the general sniffing
//! (every importer before Langfuse in [`crate::analysis::import::IMPORTERS`]) is asked about the
//! same shape, and the choices of `runs` (which list, which trace object, which items) are made
//! the same way once the text is read. A text that is not one JSON value, or that the general
//! reader would not take for Langfuse, gives `None`, and the general reader then reads it.

use super::{
    Decoded, Span, TRACE_ATTRIBUTES, TRACE_FIELDS, kept_trace, listed_traces,
    looks_like_observation, traces_by_id,
};
use crate::analysis::document::Document;
use crate::analysis::import::otlp::stream::others_are_default;
use crate::analysis::import::{ImportError, SourceFormat, spans};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A Langfuse file decoded while its text was parsed, before its runs are built.
#[derive(Debug)]
pub struct Streamed {
    /// `runs` of the parsed file, as decoded observations.
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    /// One trace: the trace object's fields the run reads, and its observations that are objects.
    Trace(Value, Vec<Obs>),
    /// A bare list of observations (one run per `traceId`); the items that look like observations,
    /// and the trace objects listed beside them (`traces`), the fields the run reads.
    Bare(Vec<Obs>, Vec<Value>),
    /// Neither (only when the format was forced).
    Nothing,
}

/// One item of a list, decoded.
#[derive(Debug)]
struct Obs {
    span: Span,
    /// Its `metadata.resourceAttributes`, numbered once its run is known.
    resource: Option<Map<String, Value>>,
    /// It passes [`looks_like_observation`] (a bare list keeps only these).
    looks_like: bool,
}

/// A list under a key the reader streams: its decoded object items and its first item, or
/// `None` when the value is not an array.
#[derive(Default)]
struct List(Option<(Vec<Obs>, Option<Value>)>);

/// What the file's one JSON value holds.
#[derive(Default)]
enum Top {
    Array(Vec<Obs>, Option<Value>),
    Object {
        /// Every field but `observations` and `data`, in order (the last of two equal keys wins).
        others: Map<String, Value>,
        observations: Option<List>,
        data: Option<List>,
    },
    #[default]
    Other,
}

/// The observations of a Langfuse file in `text`, decoded while it is parsed; `None` when the text
/// is not one valid JSON value or, unless `forced` (`--from langfuse`), when the general reader
/// would not take it for Langfuse.
pub fn decode_text(text: &str, forced: bool) -> Option<Streamed> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Top>();
    let top = values.next()?.ok()?;
    if values.next().is_some() {
        return None;
    }
    let first = |l: &Option<List>| match l {
        Some(List(Some((_, first)))) => Value::Array(first.iter().cloned().collect()),
        _ => Value::Null,
    };
    if !forced {
        // The shape the sniffers read: the object's fields, each list cut to its first item.
        let sniffed = match &top {
            Top::Array(_, first) => Value::Array(first.iter().cloned().collect()),
            Top::Object {
                others,
                observations,
                data,
            } => {
                let mut o = others.clone();
                o.insert("observations".to_owned(), first(observations));
                o.insert("data".to_owned(), first(data));
                Value::Object(o)
            }
            Top::Other => return None,
        };
        if crate::analysis::import::sniff(&Document::One(sniffed)) != Some(SourceFormat::Langfuse) {
            return None;
        }
    }
    let list = |l: Option<List>| l.and_then(|List(l)| l).map(|(items, _)| items);
    let shape = match top {
        Top::Array(items, _) => Shape::Bare(items, Vec::new()),
        Top::Object {
            others,
            observations,
            data,
        } => match (list(observations), list(data)) {
            (Some(items), _) => match listed_traces(&others) {
                Some(traces) => Shape::Bare(items, traces.iter().map(kept_trace).collect()),
                None => {
                    let trace = match others.get("trace").filter(|t| t.is_object()) {
                        Some(t) => kept_trace(t),
                        None => {
                            let keys = TRACE_FIELDS.into_iter().chain(TRACE_ATTRIBUTES);
                            Value::Object(
                                keys.filter_map(|k| Some((k.to_owned(), others.get(k)?.clone())))
                                    .collect(),
                            )
                        }
                    };
                    Shape::Trace(trace, items)
                }
            },
            (None, Some(items)) => Shape::Bare(items, Vec::new()),
            (None, None) => Shape::Nothing,
        },
        Top::Other => Shape::Nothing,
    };
    Some(Streamed { shape })
}

impl Streamed {
    /// How many runs it holds (see [`crate::analysis::import::Importer::count`]).
    pub fn count(&self) -> usize {
        match &self.shape {
            Shape::Trace(..) => 1,
            Shape::Bare(items, _) => {
                let keys = items.iter().filter(|o| o.looks_like);
                keys.map(|o| o.span.trace_id.as_str())
                    .collect::<std::collections::HashSet<_>>()
                    .len()
            }
            Shape::Nothing => 0,
        }
    }

    /// Each run's decoded observations, as [`super::decode`] gives them for the parsed file.
    pub(super) fn into_decoded(self) -> Result<Vec<Decoded>, ImportError> {
        let groups: Vec<(Option<Value>, Vec<Obs>)> = match self.shape {
            Shape::Trace(trace, items) => vec![(Some(trace), items)],
            Shape::Bare(items, traces) => {
                let by_id = traces_by_id(&traces);
                let kept = items.into_iter().filter(|o| o.looks_like);
                spans::by_trace(kept.map(|o| (o.span.trace_id.clone(), o)))
                    .into_iter()
                    .map(|(id, members)| (by_id.get(id.as_str()).map(|&t| t.clone()), members))
                    .collect()
            }
            Shape::Nothing => Vec::new(),
        };
        if groups.is_empty() {
            return Err(ImportError(
                "no Langfuse trace or observations found".to_owned(),
            ));
        }
        Ok(groups
            .into_iter()
            .map(|(trace, members)| {
                let trace_id = trace
                    .as_ref()
                    .and_then(|t| super::text_at(t, "id"))
                    .or_else(|| members.first().map(|o| o.span.trace_id.as_str()))
                    .filter(|id| !id.is_empty())
                    .unwrap_or("trace")
                    .to_owned();
                let mut resources = vec![Map::new()];
                let spans = members
                    .into_iter()
                    .map(
                        |Obs {
                             mut span, resource, ..
                         }| {
                            if let Some(r) = resource {
                                resources.push(r);
                                span.resource = resources.len() - 1;
                            }
                            span
                        },
                    )
                    .collect();
                Decoded {
                    trace,
                    trace_id,
                    spans,
                    resources,
                }
            })
            .collect())
    }
}

/// One item of a list, parsed on its own and decoded at once (`None` for an item that is not an
/// object, which no shape reads), with the item itself when it is the list's first.
fn item(v: Value) -> Option<Obs> {
    if !v.is_object() {
        return None;
    }
    let mut resources = vec![Map::new()];
    let span = super::span(&v, &mut resources);
    let resource = (resources.len() > 1).then(|| resources.pop()).flatten();
    Some(Obs {
        span,
        resource,
        looks_like: looks_like_observation(&v),
    })
}

/// The items of a sequence decoded one by one, the first kept as it was.
fn items<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(Vec<Obs>, Option<Value>), A::Error> {
    let mut out = Vec::new();
    let first = seq.next_element::<Value>()?;
    if let Some(v) = first.clone() {
        out.extend(item(v));
        while let Some(v) = seq.next_element::<Value>()? {
            out.extend(item(v));
        }
    }
    Ok((out, first))
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!();
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
                let (items, first) = items(seq)?;
                Ok(Top::Array(items, first))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
                let mut others = Map::new();
                let (mut observations, mut data) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "observations" => observations = Some(map.next_value::<List>()?),
                        "data" => data = Some(map.next_value::<List>()?),
                        // A native run is never Langfuse: stop reading it.
                        "format" => return Err(de::Error::custom("a native run")),
                        _ => {
                            others.insert(key, map.next_value::<Value>()?);
                        }
                    }
                }
                Ok(Top::Object {
                    others,
                    observations,
                    data,
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = List;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            others_are_default!(map);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<List, A::Error> {
                items(seq).map(|l| List(Some(l)))
            }
        }
        d.deserialize_any(V)
    }
}
