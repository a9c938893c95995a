//! Components, bundles and the manifest diff (attribution-ledger.md §3): the entry of a context
//! unit or replay, a bundle's sorted manifest and digest, the baseline bundle B of a run, the
//! bundles an experiment tests, the diff between two bundles, and whether a trial's claim is
//! admissible. Pure; no I/O.

use super::canonical::{CanonError, MAX_SAFE_INTEGER, canonical, utf16_cmp};
use super::digest::{digest, sha256_hex, sorted_unique};
use super::record::EvidenceLevel;
use crate::analysis::model::{ContextUnit, Run, StepKind};
use crate::experiments::spec::ExperimentKind;
use serde_json::{Value, json};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// The `format` member hashed into every bundle digest.
pub const BUNDLE_FORMAT: &str = "tdn.bundle/1";
/// The component kind of a replay entry.
pub const REPLAY_KIND: &str = "replay";

/// `{"kind", "id", "text_sha256"}`: one component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The unit's kind, or `replay`.
    pub kind: String,
    /// The unit's id, or the replayed step's id.
    pub id: String,
    /// SHA-256 hex of the unit's text (for a replay, of its parameters).
    pub text_sha256: String,
}

impl Entry {
    /// The entry of a context unit.
    pub fn of_unit(u: &ContextUnit) -> Entry {
        Entry {
            kind: u.kind.clone(),
            id: u.id.as_str().to_owned(),
            text_sha256: sha256_hex(u.text.as_bytes()),
        }
    }

    /// The replay entry of a replay from `from_step` (§3): its text digest binds the patch and the
    /// removed and restored ids (sorted, unique).
    pub fn replay(
        from_step: &str,
        patch: Option<&str>,
        remove: &[String],
        restore: &[String],
    ) -> Result<Entry, CanonError> {
        let params = json!({
            "from_step": from_step,
            "patch": patch,
            "remove": sorted_unique(remove.to_vec()),
            "restore": sorted_unique(restore.to_vec()),
        });
        Ok(Entry {
            kind: REPLAY_KIND.to_owned(),
            id: from_step.to_owned(),
            text_sha256: sha256_hex(canonical(&params)?.as_bytes()),
        })
    }

    /// `{"kind", "id", "text_sha256"}`.
    pub fn to_value(&self) -> Value {
        json!({"kind": self.kind, "id": self.id, "text_sha256": self.text_sha256})
    }

    /// The component digest.
    pub fn digest(&self) -> Result<String, CanonError> {
        digest(&self.to_value())
    }

    fn key_cmp(&self, other: &Entry) -> Ordering {
        utf16_cmp(&self.kind, &other.kind).then_with(|| utf16_cmp(&self.id, &other.id))
    }
}

/// An entry with its component digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry {
    /// The component.
    pub entry: Entry,
    /// `digest(entry)`.
    pub digest: String,
}

/// A set of entries, unique by (kind, id), sorted by kind then id (UTF-16), with its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    entries: Vec<BundleEntry>,
    digest: String,
}

/// Why entries do not make a bundle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// Two entries share (kind, id).
    #[error("two components share kind '{kind}' and id '{id}'")]
    Duplicate {
        /// The kind.
        kind: String,
        /// The id.
        id: String,
    },
    /// A text or digest cannot be written canonically.
    #[error(transparent)]
    Canon(#[from] CanonError),
}

impl Bundle {
    /// Sorts `entries` and computes the digests; a repeated (kind, id) is an error.
    pub fn new(mut entries: Vec<Entry>) -> Result<Bundle, BundleError> {
        entries.sort_by(Entry::key_cmp);
        if let Some(w) = entries
            .windows(2)
            .find(|w| matches!(w, [a, b] if a.key_cmp(b).is_eq()))
            && let Some(a) = w.first()
        {
            return Err(BundleError::Duplicate {
                kind: a.kind.clone(),
                id: a.id.clone(),
            });
        }
        let units: Vec<Value> = entries.iter().map(Entry::to_value).collect();
        let digest = digest(&json!({"format": BUNDLE_FORMAT, "units": units}))?;
        let entries = entries
            .into_iter()
            .map(|e| {
                let d = e.digest()?;
                Ok(BundleEntry {
                    entry: e,
                    digest: d,
                })
            })
            .collect::<Result<Vec<_>, CanonError>>()?;
        Ok(Bundle { entries, digest })
    }

    /// The bundle digest.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The entries in manifest order.
    pub fn entries(&self) -> &[BundleEntry] {
        &self.entries
    }

    /// The entry with this kind and id.
    pub fn get(&self, kind: &str, id: &str) -> Option<&BundleEntry> {
        self.entries
            .binary_search_by(|e| {
                utf16_cmp(&e.entry.kind, kind).then_with(|| utf16_cmp(&e.entry.id, id))
            })
            .ok()
            .and_then(|i| self.entries.get(i))
    }

    /// The members of a bundle record: `{"digest", "units": [{kind, id, text_sha256, digest}]}`.
    pub fn record_fields(&self) -> Value {
        let units: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({"kind": e.entry.kind, "id": e.entry.id,
                       "text_sha256": e.entry.text_sha256, "digest": e.digest})
            })
            .collect();
        json!({"digest": self.digest, "units": units})
    }

    /// This bundle without the entries whose id is in `ids`.
    pub fn without_ids(&self, ids: &HashSet<&str>) -> Result<Bundle, BundleError> {
        Bundle::new(
            self.entries
                .iter()
                .filter(|e| !ids.contains(e.entry.id.as_str()))
                .map(|e| e.entry.clone())
                .collect(),
        )
    }

    /// This bundle with `extra` added; an extra entry sharing (kind, id) with a member is an error.
    pub fn with(&self, extra: &[Entry]) -> Result<Bundle, BundleError> {
        let mut all: Vec<Entry> = self.entries.iter().map(|e| e.entry.clone()).collect();
        all.extend(extra.iter().cloned());
        Bundle::new(all)
    }
}

/// Where the baseline bundle's units came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaselineSource {
    /// The units named in some `llm` step's `context.sent`.
    Sent,
    /// No step records `context`: all of the run's context units (the screen says so).
    AllUnits,
}

/// The baseline bundle B of a run.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// B.
    pub bundle: Bundle,
    /// How B was chosen.
    pub source: BaselineSource,
    /// The run repeats a unit id: it gets no trials.
    pub duplicates: bool,
}

/// B of `run` (§3).
pub fn baseline_of(run: &Run) -> Result<Baseline, BundleError> {
    let mut seen_ids = HashSet::new();
    let duplicates = !run
        .context_units
        .iter()
        .all(|u| seen_ids.insert(u.id.as_str()));
    let any_context = run.steps.iter().any(|s| s.context.is_some());
    let (units, source): (Vec<&ContextUnit>, _) = if any_context {
        let mut named = HashSet::new();
        let mut units = Vec::new();
        for step in run.steps.iter().filter(|s| s.kind == StepKind::Llm) {
            for id in step.context.iter().flat_map(|c| c.sent.iter()) {
                if named.insert(id.as_str())
                    && let Some(u) = run.unit(id.as_str())
                {
                    units.push(u);
                }
            }
        }
        (units, BaselineSource::Sent)
    } else {
        let mut named = HashSet::new();
        let units = run
            .context_units
            .iter()
            .filter(|u| named.insert(u.id.as_str()))
            .collect();
        (units, BaselineSource::AllUnits)
    };
    let bundle = Bundle::new(units.into_iter().map(Entry::of_unit).collect())?;
    Ok(Baseline {
        bundle,
        source,
        duplicates,
    })
}

/// A unit's token cost (§4): its `tokens`, else its word count.
pub fn unit_token_cost(u: &ContextUnit) -> u64 {
    let n = u
        .tokens
        .unwrap_or_else(|| u64::try_from(u.text.split_whitespace().count()).unwrap_or(u64::MAX));
    n.min(MAX_SAFE_INTEGER)
}

/// The (tested, comparison) bundles of an experiment against B (§3): ablation of `remove`
/// (B, B − U); restoration of `restore` (B ∪ R, B); replay ((B − remove) ∪ restore ∪ {replay}, B);
/// a baseline tests nothing (B, B). Restored entries already present by (kind, id) are skipped.
pub fn experiment_bundles(
    kind: ExperimentKind,
    b: &Bundle,
    remove: &[String],
    restore: &[Entry],
    replay: Option<&Entry>,
) -> Result<(Bundle, Bundle), BundleError> {
    let removed: HashSet<&str> = remove.iter().map(String::as_str).collect();
    let extras = |base: &Bundle| {
        let mut seen = HashSet::new();
        restore
            .iter()
            .filter(|e| base.get(&e.kind, &e.id).is_none())
            .filter(|e| seen.insert((e.kind.as_str(), e.id.as_str())))
            .cloned()
            .collect::<Vec<Entry>>()
    };
    match kind {
        ExperimentKind::Baseline => Ok((b.clone(), b.clone())),
        ExperimentKind::Ablate => Ok((b.clone(), b.without_ids(&removed)?)),
        ExperimentKind::Restore => Ok((b.with(&extras(b))?, b.clone())),
        ExperimentKind::Replay => {
            let base = b.without_ids(&removed)?;
            let mut add = extras(&base);
            add.extend(replay.cloned());
            Ok((base.with(&add)?, b.clone()))
        }
    }
}

/// One change of a manifest diff: the component digests on each side (null when absent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The kind.
    pub kind: String,
    /// The id.
    pub id: String,
    /// The tested side's component digest.
    pub tested: Option<String>,
    /// The comparison side's component digest.
    pub comparison: Option<String>,
}

/// Diff(tested, comparison) in (kind, id) UTF-16 order, equal pairs skipped. Linear.
pub fn diff(tested: &Bundle, comparison: &Bundle) -> Vec<Change> {
    let mut out = Vec::new();
    let (mut a, mut b) = (
        tested.entries.iter().peekable(),
        comparison.entries.iter().peekable(),
    );
    loop {
        let change = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(x), None) => {
                let c = change(x, Some(x), None);
                a.next();
                c
            }
            (None, Some(y)) => {
                let c = change(y, None, Some(y));
                b.next();
                c
            }
            (Some(x), Some(y)) => match x.entry.key_cmp(&y.entry) {
                Ordering::Less => {
                    let c = change(x, Some(x), None);
                    a.next();
                    c
                }
                Ordering::Greater => {
                    let c = change(y, None, Some(y));
                    b.next();
                    c
                }
                Ordering::Equal => {
                    let c = (x.digest != y.digest).then(|| change(x, Some(x), Some(y)));
                    a.next();
                    b.next();
                    match c {
                        Some(c) => c,
                        None => continue,
                    }
                }
            },
        };
        out.push(change);
    }
    out
}

fn change(at: &BundleEntry, t: Option<&BundleEntry>, c: Option<&BundleEntry>) -> Change {
    Change {
        kind: at.entry.kind.clone(),
        id: at.entry.id.clone(),
        tested: t.map(|e| e.digest.clone()),
        comparison: c.map(|e| e.digest.clone()),
    }
}

/// What the diff supports for a component: the highest admissible level and the interactions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// `causal_ablation` when the change is the only one and not a replay, else `paired_shadow`.
    pub highest: EvidenceLevel,
    /// The sorted component digests of the other changes (tested side, else comparison side).
    pub interactions: Vec<String>,
}

/// A manifest diff indexed by (kind, id): checking one component is O(1), so many trials over
/// one pair of bundles cost what their own records hold, not a full diff each.
#[derive(Clone, Debug)]
pub struct IndexedDiff {
    same: bool,
    changes: Vec<Change>,
    index: HashMap<(String, String), usize>,
}

impl IndexedDiff {
    /// Diffs two bundles once.
    pub fn new(tested: &Bundle, comparison: &Bundle) -> IndexedDiff {
        let changes = diff(tested, comparison);
        let index = changes
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.kind.clone(), c.id.clone()), i))
            .collect();
        IndexedDiff {
            same: tested.digest == comparison.digest,
            changes,
            index,
        }
    }

    /// How many components differ.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// True when nothing differs.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// §3's rules 1-2 for component (kind, id, digest), and the highest level the diff supports
    /// (rule 3: `causal_ablation` only for the sole change, never for a replay).
    pub fn check(&self, kind: &str, id: &str, digest: &str) -> Result<EvidenceLevel, String> {
        if self.same {
            return Err("the tested and comparison bundles are the same".to_owned());
        }
        let mine = self
            .index
            .get(&(kind.to_owned(), id.to_owned()))
            .and_then(|&i| self.changes.get(i));
        match mine {
            None => Err(format!(
                "the bundles do not differ in component '{kind}'/'{id}'"
            )),
            Some(c) if c.tested.as_deref() != Some(digest) => Err(format!(
                "component '{kind}'/'{id}' in the tested bundle is not the one under test"
            )),
            Some(c) if c.comparison.is_some() => Err(format!(
                "component '{kind}'/'{id}' is replaced, not removed: a replacement is never admissible"
            )),
            Some(_) if self.changes.len() == 1 && kind != REPLAY_KIND => {
                Ok(EvidenceLevel::CausalAblation)
            }
            Some(_) => Ok(EvidenceLevel::PairedShadow),
        }
    }

    /// The sorted component digests of the other changes (tested side, else comparison side).
    pub fn interactions(&self, kind: &str, id: &str) -> Vec<String> {
        sorted_unique(
            self.changes
                .iter()
                .filter(|c| !(c.kind == kind && c.id == id))
                .filter_map(|c| c.tested.clone().or_else(|| c.comparison.clone()))
                .collect(),
        )
    }

    /// [`IndexedDiff::check`] with the interactions.
    pub fn admit(&self, kind: &str, id: &str, digest: &str) -> Result<Admitted, String> {
        let highest = self.check(kind, id, digest)?;
        Ok(Admitted {
            highest,
            interactions: self.interactions(kind, id),
        })
    }
}

/// Checks §3's rules 1-2 for component (kind, id, digest); rule 3 is [`Admitted::allows`].
pub fn admit(
    tested: &Bundle,
    comparison: &Bundle,
    kind: &str,
    id: &str,
    component_digest: &str,
) -> Result<Admitted, String> {
    IndexedDiff::new(tested, comparison).admit(kind, id, component_digest)
}

impl Admitted {
    /// True when `claimed` claims no more than the diff supports.
    pub fn allows(&self, claimed: EvidenceLevel) -> bool {
        match claimed {
            EvidenceLevel::CausalAblation => self.highest == EvidenceLevel::CausalAblation,
            EvidenceLevel::PairedShadow => true,
            EvidenceLevel::ComponentCorrelated => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(kind: &str, id: &str, text: &str) -> Entry {
        Entry {
            kind: kind.to_owned(),
            id: id.to_owned(),
            text_sha256: sha256_hex(text.as_bytes()),
        }
    }

    #[test]
    fn bundles_sort_by_kind_then_id_and_refuse_repeats() {
        let b = Bundle::new(vec![e("memory", "m", "x"), e("document", "z", "y")]).unwrap();
        let ids: Vec<&str> = b.entries().iter().map(|x| x.entry.id.as_str()).collect();
        assert_eq!(ids, ["z", "m"]);
        let same = Bundle::new(vec![e("document", "z", "y"), e("memory", "m", "x")]).unwrap();
        assert_eq!(b.digest(), same.digest());
        assert!(matches!(
            Bundle::new(vec![e("memory", "m", "x"), e("memory", "m", "y")]),
            Err(BundleError::Duplicate { .. })
        ));
    }

    #[test]
    fn a_single_removal_is_causal_and_a_second_change_makes_it_shadow() {
        let b = Bundle::new(vec![e("doc", "a", "1"), e("doc", "b", "2")]).unwrap();
        let a = b.get("doc", "a").unwrap().digest.clone();
        let minus_a = b.without_ids(&HashSet::from(["a"])).unwrap();
        let got = admit(&b, &minus_a, "doc", "a", &a).unwrap();
        assert_eq!(got.highest, EvidenceLevel::CausalAblation);
        assert!(got.interactions.is_empty());
        let minus_both = b.without_ids(&HashSet::from(["a", "b"])).unwrap();
        let got = admit(&b, &minus_both, "doc", "a", &a).unwrap();
        assert_eq!(got.highest, EvidenceLevel::PairedShadow);
        assert_eq!(
            got.interactions,
            [b.get("doc", "b").unwrap().digest.clone()]
        );
        assert!(!got.allows(EvidenceLevel::CausalAblation));
    }

    #[test]
    fn replacements_absences_and_equal_bundles_are_not_admissible() {
        let b = Bundle::new(vec![e("doc", "a", "1")]).unwrap();
        let b2 = Bundle::new(vec![e("doc", "a", "2")]).unwrap();
        let d = b.get("doc", "a").unwrap().digest.clone();
        assert!(
            admit(&b, &b2, "doc", "a", &d)
                .unwrap_err()
                .contains("replaced")
        );
        assert!(admit(&b, &b, "doc", "a", &d).is_err());
        let empty = Bundle::new(vec![]).unwrap();
        assert!(admit(&empty, &b, "doc", "a", &d).is_err());
    }

    #[test]
    fn a_replay_entry_is_never_causal() {
        let b = Bundle::new(vec![e("doc", "a", "1")]).unwrap();
        let r = Entry::replay("s3", None, &[], &[]).unwrap();
        let tested = b.with(std::slice::from_ref(&r)).unwrap();
        let got = admit(&tested, &b, REPLAY_KIND, "s3", &r.digest().unwrap()).unwrap();
        assert_eq!(got.highest, EvidenceLevel::PairedShadow);
    }
}
