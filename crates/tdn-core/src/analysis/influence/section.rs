//! The `influence` and `dropped` sections of the report (docs/report.md), as the influence
//! ranking and the dropped-context diff fill them.

use super::{RankingConfidence, Signals, Weights};
use crate::analysis::probe::ProbeResult;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `influence`: every piece of context that reached the model, ranked by resemblance to the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InfluenceSection {
    /// `semantic` or `contrastive` (a reference answer is in force).
    pub ranked_by: String,
    /// The embedder's name (`hashed`, `mock`, `lexical`, `cmd`).
    pub embedder: Option<String>,
    /// Ranked, highest first.
    pub scores: Vec<InfluenceEntry>,
    /// How far the ranking can be trusted.
    pub confidence: RankingConfidence,
}

/// One scored piece of evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InfluenceEntry {
    /// The unit id, else `<step id>` or `<step id>#<n>`. The strings are boxed, exact size: a run
    /// of 100,000 steps lists 50,000 entries, held until the report is written (issue 11).
    pub id: Box<str>,
    /// The unit an ablation removes (null: nothing to remove).
    pub unit: Option<Box<str>>,
    /// The producing step, or null.
    pub step: Option<Box<str>>,
    /// The composite score; a similarity proxy, not a probability.
    pub score: f64,
    /// The four signals.
    pub signals: Signals,
    /// The effective weights for this item. Shared: a run's entries hold a handful of distinct
    /// weights, and 50,000 entries of a 100,000-step run each held their own copy (issue 11).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "shared_weights"
    )]
    pub weights: Option<Arc<Weights>>,
    /// True when weights moved for lack of ancestors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapted: Option<bool>,
    /// From `localize` and the screen's experiments: what re-running without it showed. Boxed:
    /// a run of 100,000 steps lists 50,000 entries, nearly all never probed (issue 11).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Box<ProbeResult>>,
}

/// `dropped`: context that could have reached the model and did not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedSection {
    /// Available units never sent, in first-seen order.
    pub dropped: Vec<DroppedEntry>,
    /// Distinct available ids.
    pub available_count: usize,
    /// Distinct sent ids (including ids never available).
    pub sent_count: usize,
    /// `!dropped.is_empty()`.
    pub any_dropped: bool,
    /// A sentence for people; says a dropped unit is only a candidate.
    pub reason: String,
    /// Per `llm` step that records `context.available`.
    pub steps: Vec<DroppedStep>,
}

/// One dropped unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedEntry {
    /// The unit id.
    pub id: String,
    /// The unit's text, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// From `localize` and the screen's experiments: what putting it back showed.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeResult>,
}

/// The dropped diff of one `llm` step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedStep {
    /// Step id.
    pub step: String,
    /// 0-based position.
    pub index: usize,
    /// Unit ids available but not sent at this step.
    pub dropped: Vec<String>,
    /// Distinct available ids.
    pub available_count: usize,
    /// Distinct sent ids.
    pub sent_count: usize,
    /// `!dropped.is_empty()`.
    pub any_dropped: bool,
}

/// `InfluenceEntry::weights` written and read as plain weights (or null), whatever shares them.
mod shared_weights {
    use super::super::Weights;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub(super) fn serialize<S: Serializer>(
        w: &Option<Arc<Weights>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        w.as_deref().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Arc<Weights>>, D::Error> {
        Ok(Option::<Weights>::deserialize(d)?.map(Arc::new))
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    fn entry(weights: Option<Weights>) -> InfluenceEntry {
        InfluenceEntry {
            id: "u1".into(),
            unit: Some("u1".into()),
            step: None,
            score: 0.5,
            signals: Signals::default(),
            weights: weights.map(Arc::new),
            adapted: Some(false),
            probe: None,
        }
    }

    #[test]
    fn shared_weights_are_written_and_read_as_plain_weights() {
        let w = Weights {
            fa: 0.8,
            avg: 0.0,
            persist: 0.0,
            depth: 0.2,
        };
        let e = entry(Some(w));
        let json = serde_json::to_string(&e).unwrap_or_default();
        assert!(
            json.contains(r#""weights":{"fa":0.8,"avg":0.0,"persist":0.0,"depth":0.2}"#),
            "{json}"
        );
        assert!(
            json.contains(r#""id":"u1","unit":"u1","step":null"#),
            "{json}"
        );
        let back: Option<InfluenceEntry> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(e));

        let none = entry(None);
        let json = serde_json::to_string(&none).unwrap_or_default();
        assert!(!json.contains("weights"), "{json}");
        let back: Option<InfluenceEntry> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(none));
    }
}
