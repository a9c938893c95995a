//! Verification of bundle, sample and trial lines (attribution-ledger.md §6): each recomputed from
//! the durable lines above it. Pure.

use super::V;
use crate::analysis::model::inert_line;
use crate::experiments::ledger::attribute::matched_pair_key;
use crate::experiments::ledger::bundle::{
    Bundle, Entry, IndexedDiff, REPLAY_KIND, experiment_bundles,
};
use crate::experiments::ledger::canonical::utf16_cmp;
use crate::experiments::ledger::digest::{digest, is_sorted_unique};
use crate::experiments::ledger::record::{
    BundleRecord, EvidenceLevel, Sample, Scope, Trial, score_rule,
};
use crate::experiments::spec::ExperimentKind;
use serde_json::json;
use std::rc::Rc;

/// The first 8 characters of an id, for messages.
pub(super) fn id8(s: &str) -> String {
    inert_line(s).chars().take(8).collect()
}

impl<'f> V<'f> {
    pub(super) fn bundle(&mut self, idx: usize, b: &'f BundleRecord) {
        let sorted = b.units.windows(2).all(|w| match w {
            [(x, _), (y, _)] => utf16_cmp(&x.kind, &y.kind)
                .then_with(|| utf16_cmp(&x.id, &y.id))
                .is_lt(),
            _ => true,
        });
        if !sorted {
            self.fail(
                idx,
                "units",
                "units are not sorted by kind then id (UTF-16), or repeat one".to_owned(),
            );
        }
        for (i, (entry, stored)) in b.units.iter().enumerate() {
            match entry.digest() {
                Ok(d) if &d == stored => {}
                Ok(d) => self.fail(
                    idx,
                    "digest",
                    format!(
                        "units[{i}] digest {} != {} recomputed",
                        id8(stored),
                        id8(&d)
                    ),
                ),
                Err(e) => self.fail(idx, "digest", format!("units[{i}]: {e}")),
            }
        }
        let built = Bundle::new(b.units.iter().map(|(e, _)| e.clone()).collect());
        let built = match built {
            Ok(bundle) if bundle.digest() == b.digest => Some(bundle),
            Ok(bundle) => {
                self.fail(
                    idx,
                    "digest",
                    format!(
                        "digest {} != {} recomputed from its units",
                        id8(&b.digest),
                        id8(bundle.digest())
                    ),
                );
                None
            }
            Err(e) => {
                self.fail(idx, "units", e.to_string());
                None
            }
        };
        match self.bundles.get(b.digest.as_str()) {
            Some(&(first, _)) => {
                let same = matches!(
                    self.lines.get(first).and_then(|l| l.parsed()).map(|p| &p.record),
                    Some(crate::experiments::ledger::record::Record::Bundle(e)) if e.units == b.units
                );
                if !same {
                    self.fail(
                        idx,
                        "bundle",
                        format!(
                            "differs from the bundle record with the same digest at line {}",
                            first + 1
                        ),
                    );
                }
            }
            None => {
                let keep = if self.failed(idx) {
                    None
                } else {
                    built.map(Rc::new)
                };
                self.bundles.insert(&b.digest, (idx, keep));
            }
        }
    }

    /// Looks up a bundle named by line `idx`; fails `idx` when absent or failed.
    fn bundle_ref(&mut self, idx: usize, digest: &str, field: &str) -> Option<Rc<Bundle>> {
        match self.bundles.get(digest) {
            None => {
                self.fail(
                    idx,
                    "reference",
                    format!("{field} {} names no earlier bundle record", id8(digest)),
                );
                None
            }
            Some((at, bundle)) => {
                let (at, bundle) = (*at, bundle.clone());
                if self.depends(idx, at) { bundle } else { None }
            }
        }
    }

    pub(super) fn sample(&mut self, idx: usize, s: &'f Sample) {
        if let Some(h) = self.header
            && h.scope == Scope::Run
            && h.name != s.run_id
        {
            self.fail(
                idx,
                "run",
                format!(
                    "run_id '{}' is not the run '{}' this run-scope ledger belongs to",
                    inert_line(&s.run_id),
                    inert_line(&h.name)
                ),
            );
        }
        if let Some(&first) = self.samples.get(s.sample_id.as_str()) {
            self.fail(
                idx,
                "duplicate",
                format!("sample_id repeats line {}", first + 1),
            );
        } else {
            self.samples.insert(&s.sample_id, idx);
        }
        self.bundle_ref(idx, &s.baseline_bundle, "baseline_bundle");
        if let Some(o) = &s.outcome
            && let Some(score) = o.score
        {
            match score_rule(&s.run_status, o.reproduced) {
                None => self.fail(
                    idx,
                    "score",
                    format!("a run with status '{}' has no score", s.run_status),
                ),
                Some(want) if want != score => self.fail(
                    idx,
                    "score",
                    format!(
                        "score {score} disagrees with reproduced={} for a {} run (expected {want})",
                        o.reproduced, s.run_status
                    ),
                ),
                Some(_) => {}
            }
        }
    }

    /// The sample a trial names, when it exists earlier and did not fail.
    fn sample_ref(
        &mut self,
        idx: usize,
        id: Option<&str>,
        field: &str,
    ) -> Option<(usize, &'f Sample)> {
        let Some(id) = id else {
            self.fail(idx, "field", format!("'{field}' must name a sample"));
            return None;
        };
        let Some(&at) = self.samples.get(id) else {
            self.fail(
                idx,
                "reference",
                format!("{field} {} names no earlier sample", id8(id)),
            );
            return None;
        };
        if !self.depends(idx, at) {
            return None;
        }
        match self
            .lines
            .get(at)
            .and_then(|l| l.parsed())
            .map(|p| &p.record)
        {
            Some(crate::experiments::ledger::record::Record::Sample(s)) => Some((at, s)),
            _ => None,
        }
    }

    pub(super) fn trial(&mut self, idx: usize, t: &'f Trial, schema: u64) {
        if let Some(&first) = self.trials.get(t.trial_id.as_str()) {
            self.fail(
                idx,
                "duplicate",
                format!("trial_id repeats line {}", first + 1),
            );
        } else {
            self.trials.insert(&t.trial_id, idx);
        }
        self.cohort_trials
            .entry(&t.cohort)
            .or_default()
            .push(&t.trial_id);
        if let Some(&at) = self.cancelled.get(t.cohort.as_str()) {
            self.fail(
                idx,
                "cohort_cancelled",
                format!(
                    "cohort '{}' was cancelled at line {}; no trial may follow",
                    inert_line(&t.cohort),
                    at + 1
                ),
            );
        }
        if let Some(&closed) = self.closed.get(t.cohort.as_str()) {
            self.fail(
                idx,
                "cohort_closed",
                format!(
                    "cohort '{}' was closed by the attribution at line {}; no trial may follow",
                    inert_line(&t.cohort),
                    closed + 1
                ),
            );
        }
        if t.evidence_level == EvidenceLevel::ComponentCorrelated {
            self.fail(
                idx,
                "level",
                "component_correlated is a score, never a trial".to_owned(),
            );
        }
        if t.tested_bundle == t.comparison_bundle {
            self.fail(
                idx,
                "bundles",
                "tested_bundle equals comparison_bundle".to_owned(),
            );
        }
        if !is_sorted_unique(&t.interactions) {
            self.fail(
                idx,
                "interactions",
                "interactions are not sorted and unique".to_owned(),
            );
        }
        match matched_pair_key(t) {
            Ok(key) => {
                if let Some(&first) = self.pair_keys.get(&key) {
                    self.fail(
                        idx,
                        "duplicate_pair",
                        format!(
                            "its matched-pair key repeats the trial at line {}",
                            first + 1
                        ),
                    );
                } else {
                    self.pair_keys.insert(key, idx);
                }
            }
            Err(e) => self.fail(idx, "field", e.to_string()),
        }
        if schema == 2 {
            self.trial_against_samples(idx, t);
        }
    }

    fn trial_against_samples(&mut self, idx: usize, t: &'f Trial) {
        let want_id = digest(&json!({
            "with_sample": t.with_sample, "without_sample": t.without_sample,
            "component_digest": t.component_digest,
        }));
        match want_id {
            Ok(d) if d == t.trial_id => {}
            Ok(d) => self.fail(
                idx,
                "trial_id",
                format!("trial_id {} != {} recomputed", id8(&t.trial_id), id8(&d)),
            ),
            Err(e) => self.fail(idx, "trial_id", e.to_string()),
        }
        let with = self.sample_ref(idx, t.with_sample.as_deref(), "with_sample");
        let without = self.sample_ref(idx, t.without_sample.as_deref(), "without_sample");
        let (Some(with), Some(without)) = (with, without) else {
            return;
        };
        if with.0 == without.0 {
            self.fail(
                idx,
                "samples",
                "with_sample and without_sample are the same".to_owned(),
            );
            return;
        }
        let (exp, base, kind) = match t.experiment.kind() {
            Some(ExperimentKind::Ablate) => (without, with, ExperimentKind::Ablate),
            Some(ExperimentKind::Restore) => (with, without, ExperimentKind::Restore),
            Some(ExperimentKind::Replay) => (with, without, ExperimentKind::Replay),
            Some(ExperimentKind::Baseline) | None => {
                let other = t.experiment.as_str();
                self.fail(
                    idx,
                    "experiment",
                    format!(
                        "experiment '{}' is not ablate, restore or replay",
                        inert_line(other)
                    ),
                );
                return;
            }
        };
        self.roles(idx, t, exp, base.1, kind);
        // What each side spent is a copy of its sample's record, when the trial carries it
        // (trials written before it was recorded do not).
        for (recorded, s, field) in [
            (&t.with_spent, with.1, "with_spent"),
            (&t.without_spent, without.1, "without_spent"),
        ] {
            if let Some(sp) = recorded
                && Some(*sp) != crate::experiments::ledger::record::Spent::of(s)
            {
                self.fail(
                    idx,
                    field,
                    format!(
                        "{field} is not what its sample {} records",
                        id8(&s.sample_id)
                    ),
                );
            }
        }
        for (s, score, role) in [
            (with.1, t.with_score, "with_score"),
            (without.1, t.without_score, "without_score"),
        ] {
            match s.score() {
                None => self.fail(
                    idx,
                    "samples",
                    format!(
                        "sample {} is not a successful, scored sample",
                        id8(&s.sample_id)
                    ),
                ),
                Some(x) if x != score => self.fail(
                    idx,
                    "score",
                    format!("{role} {score} != {x} of sample {}", id8(&s.sample_id)),
                ),
                Some(_) => {}
            }
        }
        let later = with
            .1
            .finished_at
            .as_str()
            .max(without.1.finished_at.as_str());
        if t.tested_at != later {
            self.fail(
                idx,
                "tested_at",
                format!(
                    "tested_at '{}' != '{later}', the later finished_at",
                    inert_line(&t.tested_at)
                ),
            );
        }
        self.trial_bundles(idx, t, exp);
    }

    /// The `remove` and `restore` ids of the sample at line `at`, as sets (built once).
    fn members(&mut self, at: usize, s: &'f Sample) -> Rc<super::Members<'f>> {
        self.members
            .entry(at)
            .or_insert_with(|| {
                Rc::new((
                    s.remove.iter().map(String::as_str).collect(),
                    s.restore.iter().map(String::as_str).collect(),
                ))
            })
            .clone()
    }

    fn roles(
        &mut self,
        idx: usize,
        t: &Trial,
        exp: (usize, &'f Sample),
        base: &Sample,
        kind: ExperimentKind,
    ) {
        let (at, exp) = exp;
        for s in [exp, base] {
            let agree = [
                ("cohort", &s.cohort, &t.cohort),
                ("evaluator_epoch", &s.evaluator_epoch, &t.evaluator_epoch),
                ("run_id", &s.run_id, &t.run_id),
                ("runner_sha256", &s.runner_sha256, &t.runner_sha256),
                ("baseline_bundle", &s.baseline_bundle, &t.baseline_bundle),
            ];
            for (field, a, b) in agree {
                if a != b {
                    self.fail(
                        idx,
                        "samples",
                        format!("{field} differs from sample {}", id8(&s.sample_id)),
                    );
                }
            }
            if s.seed != t.seed {
                self.fail(
                    idx,
                    "samples",
                    format!("seed differs from sample {}", id8(&s.sample_id)),
                );
            }
        }
        if base.experiment != ExperimentKind::Baseline {
            self.fail(
                idx,
                "roles",
                format!("sample {} is not a baseline", id8(&base.sample_id)),
            );
        }
        if exp.experiment != kind {
            self.fail(
                idx,
                "roles",
                format!(
                    "sample {} is not a {} sample",
                    id8(&exp.sample_id),
                    kind.as_str()
                ),
            );
            return;
        }
        let sets = self.members(at, exp);
        let (remove, restore) = (&sets.0, &sets.1);
        let id = t.component_id.as_str();
        let names = match kind {
            ExperimentKind::Ablate => restore.is_empty() && remove.contains(id),
            ExperimentKind::Restore => remove.is_empty() && restore.contains(id),
            ExperimentKind::Replay => {
                t.component_kind == REPLAY_KIND
                    && exp.from_step.as_deref() == Some(id)
                    && t.token_cost == 0
            }
            ExperimentKind::Baseline => false,
        };
        if !names {
            self.fail(
                idx,
                "roles",
                format!(
                    "sample {} does not test component '{}' as a {} (or also changes other units)",
                    id8(&exp.sample_id),
                    inert_line(id),
                    kind.as_str()
                ),
            );
        }
    }

    /// §3's derivation of the tested and comparison bundles from the experiment sample and B,
    /// computed once per (sample, B, tested bundle).
    fn derive(
        &mut self,
        exp: (usize, &'f Sample),
        b: &Bundle,
        tested: &Bundle,
        keys: (&'f str, &'f str),
    ) -> super::Derived {
        let (at, exp) = exp;
        if let Some(r) = self.derived.get(&(at, keys.0, keys.1)) {
            return r.clone();
        }
        let sets = self.members(at, exp);
        let restored: Vec<Entry> = tested
            .entries()
            .iter()
            .filter(|e| sets.1.contains(e.entry.id.as_str()) && e.entry.kind != REPLAY_KIND)
            .map(|e| e.entry.clone())
            .collect();
        let replay = match (exp.experiment, &exp.from_step) {
            (ExperimentKind::Replay, Some(step)) => Some(Entry::replay(
                step,
                exp.patch.as_deref(),
                &exp.remove,
                &exp.restore,
            )),
            _ => None,
        };
        let r = match replay.transpose() {
            Err(e) => Err(e.to_string()),
            Ok(replay) => {
                experiment_bundles(exp.experiment, b, &exp.remove, &restored, replay.as_ref())
                    .map(|(t, c)| (t.digest().to_owned(), c.digest().to_owned()))
                    .map_err(|e| e.to_string())
            }
        };
        self.derived.insert((at, keys.0, keys.1), r.clone());
        r
    }

    fn trial_bundles(&mut self, idx: usize, t: &'f Trial, exp: (usize, &'f Sample)) {
        let b = self.bundle_ref(idx, &t.baseline_bundle, "baseline_bundle");
        let tested = self.bundle_ref(idx, &t.tested_bundle, "tested_bundle");
        let comparison = self.bundle_ref(idx, &t.comparison_bundle, "comparison_bundle");
        let (Some(b), Some(tested), Some(comparison)) = (b, tested, comparison) else {
            return;
        };
        match self.derive(exp, &b, &tested, (&t.baseline_bundle, &t.tested_bundle)) {
            Ok((want_t, want_c)) => {
                if want_t != tested.digest() || want_c != comparison.digest() {
                    self.fail(
                        idx,
                        "bundles",
                        format!(
                            "tested/comparison bundles {}/{} are not what the {} sample derives from the baseline bundle ({}/{})",
                            id8(tested.digest()),
                            id8(comparison.digest()),
                            exp.1.experiment.as_str(),
                            id8(&want_t),
                            id8(&want_c)
                        ),
                    );
                    return;
                }
            }
            Err(e) => {
                self.fail(idx, "bundles", e);
                return;
            }
        }
        let diff = self
            .diffs
            .entry((&t.tested_bundle, &t.comparison_bundle))
            .or_insert_with(|| Rc::new(IndexedDiff::new(&tested, &comparison)))
            .clone();
        let highest = match diff.check(&t.component_kind, &t.component_id, &t.component_digest) {
            Ok(h) => h,
            Err(why) => {
                self.fail(idx, "admissible", format!("not admissible: {why}"));
                return;
            }
        };
        let allowed = match t.evidence_level {
            EvidenceLevel::CausalAblation => highest == EvidenceLevel::CausalAblation,
            EvidenceLevel::PairedShadow => true,
            EvidenceLevel::ComponentCorrelated => false,
        };
        if !allowed {
            self.fail(
                idx,
                "level",
                format!(
                    "claims {} but the diff supports only {} ({} other changes)",
                    t.evidence_level.as_str(),
                    highest.as_str(),
                    diff.len().saturating_sub(1)
                ),
            );
        }
        // Compare sizes first: building the list costs what the stored list holds.
        let others = diff.len().saturating_sub(1);
        if t.interactions.len() != others
            || diff.interactions(&t.component_kind, &t.component_id) != t.interactions
        {
            self.fail(
                idx,
                "interactions",
                format!(
                    "interactions list {} components, the diff's other changes are {others}",
                    t.interactions.len()
                ),
            );
        }
    }
}
