//! Schema 1 (attribution-ledger.md §7, "Versioning"): records written before the bindings
//! existed, read in memory only and never rewritten. A schema-1 attribution missing any binding
//! becomes `legacy_unverified`: kept as history, never reconstructed, never a reason to demote a
//! unit. No I/O.

use serde_json::{Map, Value, json};

/// The bindings a schema-1 attribution must hold to be verified like schema 2.
pub const BINDINGS: [&str; 5] = [
    "comparison_bundle",
    "neutral_effect",
    "high_token_cost",
    "matched_pair_keys",
    "source_trial_digests",
];

/// A schema-1 record brought into the schema-2 shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Migrated {
    /// The members, with placeholders where schema 1 had nothing.
    pub value: Map<String, Value>,
    /// The bindings that were missing (non-empty → `legacy_unverified`).
    pub missing: Vec<&'static str>,
}

/// Migrates one schema-1 object. Placeholders are only ever used for records that the caller then
/// treats as `legacy_unverified`, or for members schema 1 never had (`with_sample`, ...), which
/// verification of schema-1 trials does not read.
pub fn migrate(obj: &Map<String, Value>) -> Migrated {
    let mut value = obj.clone();
    if !value.contains_key("type") {
        let inferred = if value.contains_key("attribution_id") {
            Some("attribution")
        } else if value.contains_key("trial_id") {
            Some("trial")
        } else if value.contains_key("scope") && value.contains_key("name") {
            Some("ledger")
        } else {
            None
        };
        if let Some(t) = inferred {
            value.insert("type".to_owned(), json!(t));
        }
    }
    let mut missing = Vec::new();
    let kind = value.get("type").and_then(Value::as_str).map(str::to_owned);
    let tested = value.get("tested_bundle").cloned();
    let mut fill = |k: &str, v: Value| {
        value.entry(k.to_owned()).or_insert(v);
    };
    match kind.as_deref() {
        Some("attribution") => {
            for b in BINDINGS {
                if !obj.contains_key(b) {
                    missing.push(b);
                }
            }
            fill("comparison_bundle", json!(""));
            fill("neutral_effect", json!(0));
            fill("high_token_cost", json!(0));
            fill("matched_pair_keys", json!([]));
            fill("source_trial_digests", json!([]));
            fill("baseline_bundle", tested.unwrap_or(Value::Null));
            fill("supersedes", Value::Null);
        }
        Some("trial") => {
            fill("baseline_bundle", tested.unwrap_or(Value::Null));
            fill("with_sample", Value::Null);
            fill("without_sample", Value::Null);
            fill("experiment", json!(""));
        }
        Some("ledger") => {
            fill("created_at", json!(""));
            fill("created_by", json!(""));
        }
        _ => {}
    }
    Migrated { value, missing }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attribution_without_bindings_lists_what_is_missing() {
        let v = json!({"attribution_id": "a", "tested_bundle": "t", "neutral_effect": 0.0});
        let m = migrate(v.as_object().unwrap());
        assert_eq!(m.value["type"], "attribution");
        assert_eq!(m.value["baseline_bundle"], "t");
        assert_eq!(
            m.missing,
            [
                "comparison_bundle",
                "high_token_cost",
                "matched_pair_keys",
                "source_trial_digests"
            ]
        );
    }

    #[test]
    fn a_complete_schema_one_attribution_misses_nothing() {
        let mut v = json!({"type": "attribution"});
        for b in BINDINGS {
            v[b] = json!(1);
        }
        assert!(migrate(v.as_object().unwrap()).missing.is_empty());
    }
}
