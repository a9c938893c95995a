//! What a sample spent as the ledger records it (docs/ledger.md): the runner's reported cost
//! (`loops`, `tokens`, `usd`) and, on a trial, a copy of what each of its two samples spent
//! (`with_spent`, `without_spent`) with the time the command took. Plain values and their JSON
//! members; no I/O.

use super::record::Sample;
use serde_json::{Map, Value, json};

/// `cost`: what the runner reported.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Agent loops.
    pub loops: Option<f64>,
    /// Tokens.
    pub tokens: Option<f64>,
    /// Dollars (`usd`; absent in lines written before it was recorded).
    pub usd: Option<f64>,
}

impl Cost {
    /// The members reported, as JSON.
    pub fn fields(&self) -> Map<String, Value> {
        let mut m = Map::new();
        for (k, v) in [
            ("loops", self.loops),
            ("tokens", self.tokens),
            ("usd", self.usd),
        ] {
            if let Some(x) = v {
                m.insert(k.to_owned(), json!(x));
            }
        }
        m
    }
}

/// What one sample of a trial spent, copied from the sample record (`with_spent`,
/// `without_spent`): the runner's time and what the agent reported. Absent in trials written
/// before it was recorded; when present, verification checks it against the sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// The sample's `duration_ms`.
    pub duration_ms: Option<u64>,
    /// The sample's `cost`.
    pub cost: Cost,
}

impl Spent {
    /// What sample `s` spent, as its record says (`None` when it records neither time nor cost).
    pub fn of(s: &Sample) -> Option<Spent> {
        (s.duration_ms.is_some() || s.cost.is_some()).then(|| Spent {
            duration_ms: s.duration_ms,
            cost: s.cost.unwrap_or_default(),
        })
    }

    /// JSON members: `duration_ms` and the cost's members, each when present.
    pub fn fields(&self) -> Value {
        let mut m = self.cost.fields();
        if let Some(d) = self.duration_ms {
            m.insert("duration_ms".to_owned(), json!(d));
        }
        Value::Object(m)
    }
}
