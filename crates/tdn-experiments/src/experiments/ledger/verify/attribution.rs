//! Verification of attribution lines and of closed cohorts (attribution-ledger.md §6): every
//! field recomputed from the listed trials, the `supersedes` link, and the cohort check that a
//! closed cohort's attributions are exactly what `attribute` yields from all its verified trials.
//! Marks verified trials of open cohorts `unbound`. Pure.

use super::records::id8;
use super::{Status, V};
use crate::analysis::js_number::js_number;
use crate::analysis::model::inert_line;
use crate::experiments::ledger::attribute::{attribute, component_key};
use crate::experiments::ledger::digest::is_sorted_unique;
use crate::experiments::ledger::parse::Parsed;
use crate::experiments::ledger::record::{Attribution, CancelRecord, Record, Trial};
use std::collections::HashMap;

impl<'f> V<'f> {
    pub(super) fn attribution(&mut self, idx: usize, a: &'f Attribution, parsed: &Parsed) {
        if let Some(&first) = self.attributions.get(a.attribution_id.as_str()) {
            self.fail(
                idx,
                "duplicate",
                format!("attribution_id repeats line {}", first + 1),
            );
        } else {
            self.attributions.insert(&a.attribution_id, idx);
        }
        let key = component_key(a);
        let expected_link = self.latest.get(&key).cloned();
        self.latest.insert(key, a.attribution_id.clone());
        if !parsed.missing.is_empty() {
            self.legacy_cohorts.insert(&a.cohort);
            if let Some(s) = self.status.get_mut(idx)
                && *s != Status::Failed
            {
                *s = Status::LegacyUnverified;
            }
            self.warn(
                idx,
                "legacy",
                format!(
                    "schema-1 attribution without {}: kept as history, not verified, never a reason to demote",
                    parsed.missing.join(", ")
                ),
            );
            return;
        }
        if let Some(&at) = self.cancelled.get(a.cohort.as_str()) {
            self.fail(
                idx,
                "cohort_cancelled",
                format!(
                    "cohort '{}' was cancelled at line {}: a cancelled batch concludes nothing, so no attribution may follow",
                    inert_line(&a.cohort),
                    at + 1
                ),
            );
        }
        self.closed.entry(&a.cohort).or_insert(idx);
        if a.supersedes != expected_link {
            let show =
                |s: &Option<String>| s.as_deref().map(id8).unwrap_or_else(|| "null".to_owned());
            self.fail(
                idx,
                "supersedes",
                format!(
                    "supersedes {} != {}, the latest earlier attribution of this component",
                    show(&a.supersedes),
                    show(&expected_link)
                ),
            );
        }
        if !(a.policy.neutral_effect.is_finite() && a.policy.neutral_effect >= 0.0) {
            self.fail(
                idx,
                "policy",
                "neutral_effect must be a finite number >= 0".to_owned(),
            );
        }
        let mut trials: Vec<Trial> = Vec::with_capacity(a.trial_ids.len());
        let mut complete = true;
        for id in &a.trial_ids {
            match self.listed.get(id.as_str()) {
                Some(&other) => {
                    self.fail(
                        idx,
                        "listed",
                        format!(
                            "trial {} is already listed by the attribution at line {}",
                            id8(id),
                            other + 1
                        ),
                    );
                    complete = false;
                }
                None => {
                    self.listed.insert(id, idx);
                }
            }
            let Some(&at) = self.trials.get(id.as_str()) else {
                self.fail(
                    idx,
                    "reference",
                    format!("trial {} names no earlier trial", id8(id)),
                );
                complete = false;
                continue;
            };
            if !self.depends(idx, at) {
                complete = false;
                continue;
            }
            match self
                .lines
                .get(at)
                .and_then(|l| l.parsed())
                .map(|p| &p.record)
            {
                Some(Record::Trial(t)) => trials.push((**t).clone()),
                _ => complete = false,
            }
        }
        if complete {
            self.recompute(idx, a, &trials);
        }
    }

    fn recompute(&mut self, idx: usize, a: &Attribution, trials: &[Trial]) {
        let n = trials.len();
        let agg = match attribute(trials, &a.evaluator_epoch, &a.policy) {
            Ok(agg) => agg,
            Err(e) => {
                self.fail(idx, "field", e.to_string());
                return;
            }
        };
        if !agg.rejections.is_empty() {
            let codes: Vec<&str> = agg.rejections.iter().map(|r| r.code.as_str()).collect();
            self.fail(
                idx,
                "aggregate",
                format!("its {n} trials do not aggregate: {}", codes.join(", ")),
            );
            return;
        }
        let [c] = agg.attributions.as_slice() else {
            self.fail(
                idx,
                "aggregate",
                format!(
                    "its {n} trials form {} groups, not one",
                    agg.attributions.len()
                ),
            );
            return;
        };
        let from = format!("recomputed from {n} trial{}", if n == 1 { "" } else { "s" });
        let texts = [
            ("component_kind", &a.component_kind, &c.component_kind),
            ("component_id", &a.component_id, &c.component_id),
            ("component_digest", &a.component_digest, &c.component_digest),
            ("tested_bundle", &a.tested_bundle, &c.tested_bundle),
            (
                "comparison_bundle",
                &a.comparison_bundle,
                &c.comparison_bundle,
            ),
            ("cohort", &a.cohort, &c.cohort),
            ("baseline_bundle", &a.baseline_bundle, &c.baseline_bundle),
            ("tested_at", &a.tested_at, &c.tested_at),
        ];
        for (field, stored, want) in texts {
            if stored != want {
                self.fail(
                    idx,
                    field,
                    format!(
                        "{field} '{}' != '{}' {from}",
                        inert_line(stored),
                        inert_line(want)
                    ),
                );
            }
        }
        if a.evidence_level != c.evidence_level {
            self.fail(
                idx,
                "evidence_level",
                format!(
                    "evidence_level {} != {} {from}",
                    a.evidence_level.as_str(),
                    c.evidence_level.as_str()
                ),
            );
        }
        for (field, stored, want) in [
            ("effect", a.effect, c.effect),
            ("confidence", a.confidence, c.confidence),
        ] {
            if stored != want {
                self.fail(
                    idx,
                    field,
                    format!(
                        "{field} {} != {} {from}",
                        js_number(stored),
                        js_number(want)
                    ),
                );
            }
        }
        if a.token_cost != c.token_cost {
            self.fail(
                idx,
                "token_cost",
                format!("token_cost {} != {} {from}", a.token_cost, c.token_cost),
            );
        }
        let lists = [
            ("interactions", &a.interactions, &c.interactions),
            ("trial_ids", &a.trial_ids, &c.trial_ids),
            (
                "matched_pair_keys",
                &a.matched_pair_keys,
                &c.matched_pair_keys,
            ),
            (
                "source_trial_digests",
                &a.source_trial_digests,
                &c.source_trial_digests,
            ),
        ];
        for (field, stored, want) in lists {
            if stored != want {
                self.fail(
                    idx,
                    field,
                    format!(
                        "{field} ({} entries) != the {} entries {from} (sorted, unique)",
                        stored.len(),
                        want.len()
                    ),
                );
            }
        }
        if a.attribution_id != c.attribution_id {
            self.fail(
                idx,
                "attribution_id",
                format!(
                    "attribution_id {} != {} {from}",
                    id8(&a.attribution_id),
                    id8(&c.attribution_id)
                ),
            );
        }
        if a.disposition != c.disposition {
            self.fail(
                idx,
                "disposition",
                format!(
                    "disposition {} != {} under the stored policy",
                    a.disposition.as_str(),
                    c.disposition.as_str()
                ),
            );
        }
    }

    /// A `cancel` record: the cohort is neither closed nor cancelled above, and `trial_ids` are
    /// exactly the cohort's trials above it, sorted; a failed one fails it too.
    pub(super) fn cancel(&mut self, idx: usize, c: &'f CancelRecord) {
        let cohort = inert_line(&c.cohort).into_owned();
        if let Some(&at) = self.cancelled.get(c.cohort.as_str()) {
            self.fail(
                idx,
                "duplicate",
                format!("cohort '{cohort}' was already cancelled at line {}", at + 1),
            );
        } else {
            self.cancelled.insert(&c.cohort, idx);
        }
        if let Some(&at) = self.closed.get(c.cohort.as_str()) {
            self.fail(
                idx,
                "cohort_closed",
                format!(
                    "cohort '{cohort}' was closed by the attribution at line {}; it cannot be cancelled after",
                    at + 1
                ),
            );
        }
        let mut above: Vec<&str> = self
            .cohort_trials
            .get(c.cohort.as_str())
            .cloned()
            .unwrap_or_default();
        above.sort_unstable();
        above.dedup();
        let listed: Vec<&str> = c.trial_ids.iter().map(String::as_str).collect();
        if !is_sorted_unique(&c.trial_ids) || listed != above {
            self.fail(
                idx,
                "trial_ids",
                format!(
                    "trial_ids ({} entries) != the {} trials of cohort '{cohort}' above it (sorted, unique)",
                    listed.len(),
                    above.len()
                ),
            );
            return;
        }
        for id in &c.trial_ids {
            if let Some(&at) = self.trials.get(id.as_str())
                && !self.depends(idx, at)
            {
                return;
            }
        }
    }

    /// The cohort check of §6, after every line was seen.
    pub(super) fn cohorts(&mut self) {
        let lines = self.lines;
        let mut stored: HashMap<&str, Vec<(usize, &Attribution)>> = HashMap::new();
        let mut trials: HashMap<&str, Vec<Trial>> = HashMap::new();
        for (idx, line) in lines.iter().enumerate() {
            let Some(p) = line.parsed() else { continue };
            match &p.record {
                Record::Attribution(a) if p.missing.is_empty() => {
                    stored.entry(&a.cohort).or_default().push((idx, a));
                }
                Record::Trial(t) if self.status.get(idx) == Some(&Status::Verified) => {
                    trials.entry(&t.cohort).or_default().push((**t).clone());
                }
                _ => {}
            }
        }
        let mut cohorts: Vec<(&str, Vec<(usize, &Attribution)>)> = stored.into_iter().collect();
        cohorts.sort_by_key(|(_, v)| v.first().map(|(i, _)| *i));
        for (cohort, atts) in cohorts {
            let Some((_, first)) = atts.first() else {
                continue;
            };
            let empty = Vec::new();
            let cohort_trials = trials.get(cohort).unwrap_or(&empty);
            let computed = match attribute(cohort_trials, &first.evaluator_epoch, &first.policy) {
                Ok(agg) => agg.attributions,
                Err(_) => Vec::new(),
            };
            let is_prefix = atts.len() <= computed.len()
                && atts
                    .iter()
                    .zip(&computed)
                    .all(|((_, a), c)| a.attribution_id == c.attribution_id);
            if is_prefix {
                if atts.len() < computed.len()
                    && let Some(&(last, _)) = atts.last()
                {
                    self.warn(
                        last,
                        "incomplete",
                        format!(
                            "cohort '{}' is incomplete: {} of {} attributions were written (aggregation was cut short); the next session appends the rest",
                            inert_line(cohort),
                            atts.len(),
                            computed.len()
                        ),
                    );
                }
                continue;
            }
            for (pos, (idx, a)) in atts.iter().enumerate() {
                let matches =
                    computed.get(pos).map(|c| &c.attribution_id) == Some(&a.attribution_id);
                if !matches && !self.failed(*idx) {
                    self.fail(
                        *idx,
                        "cohort",
                        format!(
                            "cohort '{}': its {} verified trials do not yield this attribution at this place ({} expected); a trial was dropped, added or changed",
                            inert_line(cohort),
                            cohort_trials.len(),
                            computed.len()
                        ),
                    );
                }
            }
        }
    }

    /// Verified trials of cohorts without attributions are unbound (a warning), unless their
    /// batch was cancelled: then they are history that concludes nothing.
    pub(super) fn unbound(&mut self) {
        let lines = self.lines;
        for (idx, line) in lines.iter().enumerate() {
            let Some(Record::Trial(t)) = line.parsed().map(|p| &p.record) else {
                continue;
            };
            if self.status.get(idx) == Some(&Status::Verified)
                && self.cancelled.contains_key(t.cohort.as_str())
            {
                if let Some(s) = self.status.get_mut(idx) {
                    *s = Status::Cancelled;
                }
                continue;
            }
            if self.status.get(idx) == Some(&Status::Verified)
                && !self.closed.contains_key(t.cohort.as_str())
                && !self.legacy_cohorts.contains(t.cohort.as_str())
            {
                if let Some(s) = self.status.get_mut(idx) {
                    *s = Status::Unbound;
                }
                self.warn(
                    idx,
                    "unbound",
                    format!(
                        "cohort '{}' is open: this trial is not aggregated yet",
                        inert_line(&t.cohort)
                    ),
                );
            }
        }
    }
}
