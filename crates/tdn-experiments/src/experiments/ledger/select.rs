//! Prompt component selection (attribution-ledger.md §9): which units of the current bundle a
//! prompt could drop, and which restorations helped, without deleting any evidence. Only a
//! verified `causal_ablation` record can demote a unit: legacy, failed, other-bundle and
//! `paired_shadow` records always leave it included. Pure.

use super::bundle::{Bundle, unit_token_cost};
use super::canonical::utf16_cmp;
use super::record::{Attribution, Disposition, EvidenceLevel, Record};
use super::verify::{Checked, Status};
use crate::analysis::model::Run;
use std::collections::HashMap;

/// How far an attribution line may be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Verified.
    Verified,
    /// Schema-1 without bindings.
    Legacy,
    /// Failed verification.
    Failed,
}

/// Why a unit is included or omitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// No record in the current epoch.
    NoEvidence,
    /// The record is legacy or failed verification.
    Unverified,
    /// Tested with another baseline bundle: kept until re-ablation.
    OtherBundle,
    /// Only paired-shadow evidence: never omits.
    ShadowOnly,
    /// Harmful or a demotion candidate: omitted, history retained.
    Demoted,
    /// Retained.
    Retained,
    /// Uncertain.
    Uncertain,
}

impl Reason {
    /// The spec's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NoEvidence => "no_evidence",
            Reason::Unverified => "unverified",
            Reason::OtherBundle => "other_bundle",
            Reason::ShadowOnly => "shadow_only",
            Reason::Demoted => "demoted",
            Reason::Retained => "retained",
            Reason::Uncertain => "uncertain",
        }
    }
}

/// A unit of the current bundle, as selection sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Kind.
    pub kind: String,
    /// Id.
    pub id: String,
    /// Component digest.
    pub digest: String,
    /// Its token cost from the run (`--run`), used when no record gives one.
    pub token_cost: Option<u64>,
}

/// One line of the selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Selected {
    /// Kind.
    pub component_kind: String,
    /// Id.
    pub component_id: String,
    /// Digest.
    pub component_digest: String,
    /// Kept in the prompt.
    pub included: bool,
    /// The disposition that decided.
    pub disposition: Disposition,
    /// The record's level, none without a record.
    pub evidence_level: Option<EvidenceLevel>,
    /// The record's effect.
    pub effect: Option<f64>,
    /// The record's confidence.
    pub confidence: Option<f64>,
    /// The record.
    pub attribution_id: Option<String>,
    /// From the record, else from the unit.
    pub token_cost: Option<u64>,
    /// Why.
    pub reason: Reason,
}

/// The whole selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The current bundle digest.
    pub bundle: String,
    /// The epoch in force.
    pub evaluator_epoch: String,
    /// Units of the current bundle, manifest order.
    pub components: Vec<Selected>,
    /// Units outside it whose verified causal restoration helped.
    pub restore: Vec<Selected>,
    /// Epochs of attribution lines that were ignored (sorted, unique).
    pub other_epochs: Vec<String>,
}

/// `select` of §9. `history` holds the attribution lines in file order with their trust.
pub fn select(
    bundle: &str,
    units: &[Unit],
    history: &[(&Attribution, Trust)],
    epoch: &str,
) -> Selection {
    let mut latest: HashMap<&str, (&Attribution, Trust)> = HashMap::new();
    let mut other_epochs = Vec::new();
    for (a, t) in history {
        if a.evaluator_epoch == epoch {
            latest.insert(&a.component_digest, (a, *t));
        } else {
            other_epochs.push(a.evaluator_epoch.clone());
        }
    }
    let in_bundle: std::collections::HashSet<&str> =
        units.iter().map(|u| u.digest.as_str()).collect();
    let components = units
        .iter()
        .map(|u| decide(u, latest.get(u.digest.as_str()).copied(), bundle))
        .collect();
    let mut restore: Vec<Selected> = latest
        .values()
        .filter(|(a, t)| {
            *t == Trust::Verified
                && !in_bundle.contains(a.component_digest.as_str())
                && a.evidence_level == EvidenceLevel::CausalAblation
                && a.comparison_bundle == a.baseline_bundle
                && a.tested_bundle != a.baseline_bundle
                && a.disposition == Disposition::Retained
                && a.baseline_bundle == bundle
        })
        .map(|(a, _)| from_record(a, true, a.disposition, Reason::Retained, None))
        .collect();
    restore.sort_by(|x, y| {
        utf16_cmp(&x.component_kind, &y.component_kind)
            .then_with(|| utf16_cmp(&x.component_id, &y.component_id))
            .then_with(|| utf16_cmp(&x.component_digest, &y.component_digest))
    });
    Selection {
        bundle: bundle.to_owned(),
        evaluator_epoch: epoch.to_owned(),
        components,
        restore,
        other_epochs: super::digest::sorted_unique(other_epochs),
    }
}

fn decide(u: &Unit, record: Option<(&Attribution, Trust)>, bundle: &str) -> Selected {
    let Some((a, trust)) = record else {
        return Selected {
            component_kind: u.kind.clone(),
            component_id: u.id.clone(),
            component_digest: u.digest.clone(),
            included: true,
            disposition: Disposition::Uncertain,
            evidence_level: None,
            effect: None,
            confidence: None,
            attribution_id: None,
            token_cost: u.token_cost,
            reason: Reason::NoEvidence,
        };
    };
    let (included, disposition, reason) = if trust != Trust::Verified {
        (true, Disposition::Uncertain, Reason::Unverified)
    } else if a.baseline_bundle != bundle {
        (true, Disposition::Uncertain, Reason::OtherBundle)
    } else if a.evidence_level != EvidenceLevel::CausalAblation {
        (true, a.disposition, Reason::ShadowOnly)
    } else {
        match a.disposition {
            Disposition::Harmful | Disposition::DemotionCandidate => {
                (false, a.disposition, Reason::Demoted)
            }
            Disposition::Retained => (true, a.disposition, Reason::Retained),
            Disposition::Uncertain => (true, a.disposition, Reason::Uncertain),
        }
    };
    let mut s = from_record(a, included, disposition, reason, u.token_cost);
    s.component_kind = u.kind.clone();
    s.component_id = u.id.clone();
    s
}

fn from_record(
    a: &Attribution,
    included: bool,
    disposition: Disposition,
    reason: Reason,
    unit_cost: Option<u64>,
) -> Selected {
    Selected {
        component_kind: a.component_kind.clone(),
        component_id: a.component_id.clone(),
        component_digest: a.component_digest.clone(),
        included,
        disposition,
        evidence_level: Some(a.evidence_level),
        effect: Some(a.effect),
        confidence: Some(a.confidence),
        attribution_id: Some(a.attribution_id.clone()),
        token_cost: Some(a.token_cost).or(unit_cost),
        reason,
    }
}

/// Every attribution line of a verified ledger with its trust, in file order.
pub fn history_of(checked: &Checked) -> Vec<(&Attribution, Trust)> {
    checked
        .records()
        .filter_map(|(_, p, status)| match &p.record {
            Record::Attribution(a) => Some((
                &**a,
                match status {
                    Status::Failed => Trust::Failed,
                    Status::LegacyUnverified => Trust::Legacy,
                    _ => Trust::Verified,
                },
            )),
            _ => None,
        })
        .collect()
}

/// The units of a bundle, with token costs from `run` when given.
pub fn units_of(bundle: &Bundle, run: Option<&Run>) -> Vec<Unit> {
    bundle
        .entries()
        .iter()
        .map(|e| Unit {
            kind: e.entry.kind.clone(),
            id: e.entry.id.clone(),
            digest: e.digest.clone(),
            token_cost: run.and_then(|r| r.unit(&e.entry.id)).map(unit_token_cost),
        })
        .collect()
}

/// The bundle whose digest is `digest`, from its verified bundle record.
pub fn bundle_from_ledger(checked: &Checked, digest: &str) -> Option<Bundle> {
    checked.records().find_map(|(_, p, s)| match &p.record {
        Record::Bundle(b) if b.digest == digest && s != Status::Failed => {
            Bundle::new(b.units.iter().map(|(e, _)| e.clone()).collect()).ok()
        }
        _ => None,
    })
}
