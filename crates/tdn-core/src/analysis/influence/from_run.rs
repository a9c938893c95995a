//! The report's `influence` and `dropped` sections, built from a run (report.md, influence.md
//! §2-6). Evidence is what reached the model: every context unit that an `llm` step was sent
//! (every unit when no step records `context`), and every retrieved document, tool result and
//! memory read that was not also recorded as a unit. Its ancestors are the outputs of the model
//! steps between it and the final answer. Scores are similarity proxies; nothing here claims a
//! cause.

use super::confidence::ranking_confidence;
use super::dropped::{StepDiffs, find_dropped_context};
use super::evidence::{ModelOutputs, RunEvidence, ancestor_window, gather_evidence, model_outputs};
use super::per_text::{Ranked, rank_per_text};
use super::score::{score_contrastive, score_influence, sort_by_score};
use super::section::{DroppedEntry, DroppedSection, DroppedStep, InfluenceEntry, InfluenceSection};
use super::sparse::SparseVector;
use super::types::{
    ConfidenceOptions, EmbedError, Embedder, EvidenceItem, InfluenceScore, RankingConfidence,
    ScoreError, ScoreRequest, Weights,
};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::progress::Progress;
use hashbrown::HashMap;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// Evidence items scored per embedding request. Bounds the vectors held at once (a run can
/// hold 100,000 steps); scores do not depend on it, since each item's score depends only on its
/// own texts and the answer.
pub(super) const EVIDENCE_CHUNK: usize = 512;

/// The influence section: every unit, document, tool result and memory read that reached the
/// model, ranked against the final answer (contrastively when `reference` is given). `Ok(None)`
/// when the run has no final answer or no evidence; `Err` when the embedder failed.
pub fn influence_section(
    run: &Run,
    reference: Option<&str>,
    embedder: &dyn Embedder,
    confidence: &ConfidenceOptions,
) -> Result<Option<InfluenceSection>, EmbedError> {
    influence_section_counted(run, reference, embedder, confidence, &Progress::new())
}

/// [`influence_section`], counting the pieces ranked in `progress`.
pub fn influence_section_counted(
    run: &Run,
    reference: Option<&str>,
    embedder: &dyn Embedder,
    confidence: &ConfidenceOptions,
    progress: &Progress,
) -> Result<Option<InfluenceSection>, EmbedError> {
    let Some(answer) = run.final_answer.as_deref().filter(|a| !a.trim().is_empty()) else {
        return Ok(None);
    };
    let mut evidence = gather_evidence(run);
    if evidence.is_empty() {
        return Ok(None);
    }
    let outputs = model_outputs(run, answer);
    progress.influence_total(u64::try_from(evidence.len()).unwrap_or(u64::MAX));

    let scores = if embedder.per_text() {
        // The texts move into the ranking, which lets each go once embedded.
        let ranked = rank_per_text(&evidence, &outputs, answer, reference, embedder, progress)?;
        // The model outputs' texts are not read again: they go before the entries are made.
        drop(outputs);
        entries(
            run,
            &mut evidence,
            ranked,
            Ranked::at,
            |r| r.score,
            |r, id| r.score(id),
            confidence,
        )
    } else {
        let scored = rank_in_chunks(&evidence, &outputs, answer, reference, embedder, progress)?;
        drop(outputs);
        entries(
            run,
            &mut evidence,
            scored,
            |(at, _)| *at,
            |(_, s)| s.score,
            |(_, s), _| s,
            confidence,
        )
    };
    let (scores, confidence) = scores;
    Ok(Some(InfluenceSection {
        ranked_by: if reference.is_some() {
            "contrastive"
        } else {
            "semantic"
        }
        .to_owned(),
        embedder: Some(embedder.name().to_owned()),
        scores,
        confidence,
    }))
}

/// The report's entries of the scored pieces, highest score first (equal scores in evidence
/// order), and the ranking's confidence. `at` is a score's position in `evidence`, `score` its
/// composite, and `make` its [`InfluenceScore`] from the piece's id. The pieces' ids are copied
/// (or moved, when owned) into the entries.
fn entries<T>(
    run: &Run,
    evidence: &mut [RunEvidence<'_>],
    mut scored: Vec<T>,
    at: impl Fn(&T) -> usize,
    score: impl Fn(&T) -> f64,
    make: impl Fn(T, String) -> InfluenceScore,
    confidence: &ConfidenceOptions,
) -> (Vec<InfluenceEntry>, RankingConfidence) {
    // Chunks come back sorted on their own, and per-text scores in the order they were made:
    // restore input order, then sort once, stably.
    scored.sort_by_key(&at);
    sort_by_score(&mut scored, &score);

    let pairs: Vec<(&str, f64)> = scored
        .iter()
        .map(|s| (evidence.get(at(s)).map_or("", |e| &*e.id), score(s)))
        .collect();
    let confidence = ranking_confidence(&pairs, confidence);
    drop(pairs);
    let mut weights = SharedWeights::default();
    let scores = scored
        .into_iter()
        .map(|s| {
            let mut e = evidence.get_mut(at(&s));
            let id = e
                .as_deref_mut()
                .map(|e| std::mem::take(&mut e.id).into_owned())
                .unwrap_or_default();
            entry(run, e.as_deref(), make(s, id), &mut weights)
        })
        .collect();
    (scores, confidence)
}

/// The evidence's scores, chunk by chunk through the generic scorers, each paired with its
/// position in `evidence` (chunks come back sorted on their own). For embedders whose vectors
/// may depend on the other texts of a call; for [`Embedder::per_call`] ones each chunk's texts
/// are embedded together in one call, so no vector meets one from another call.
fn rank_in_chunks(
    evidence: &[RunEvidence<'_>],
    outputs: &ModelOutputs<'_>,
    answer: &str,
    reference: Option<&str>,
    embedder: &dyn Embedder,
    progress: &Progress,
) -> Result<Vec<(usize, InfluenceScore)>, EmbedError> {
    let mut scored: Vec<(usize, InfluenceScore)> = Vec::with_capacity(evidence.len());
    // The answer, the reference and the model outputs near the answer are in every chunk: their
    // vectors are kept from one chunk to the next, not embedded again (a long answer embedded
    // once per 512 pieces made the work grow with answer length times evidence count). Not for
    // an embedder whose vectors hold only within one call: each chunk is then one whole call.
    let reusing = Reusing {
        inner: embedder,
        last: Mutex::new(HashMap::new()),
    };
    let embedder: &dyn Embedder = if embedder.per_call() {
        embedder
    } else {
        &reusing
    };
    // The outputs' texts, written once (JSON values) for all chunks.
    let output_texts: Vec<Cow<'_, str>> = (0..outputs.len())
        .filter_map(|i| outputs.text(i))
        .map(|t| t.to_cow())
        .collect();
    let mut start = 0;
    for chunk in evidence.chunks(EVIDENCE_CHUNK) {
        let texts: Vec<Cow<'_, str>> = chunk.iter().map(|e| e.text.to_cow()).collect();
        let items: Vec<EvidenceItem<'_>> = chunk
            .iter()
            .zip(&texts)
            .map(|(e, text)| EvidenceItem {
                id: &e.id,
                text,
                ancestors: ancestor_window(e, outputs)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| output_texts.get(i).map(|t| &**t))
                    .collect(),
            })
            .collect();
        let req = ScoreRequest::new(answer, &items);
        let result = match reference {
            Some(r) => score_contrastive(&req, r, embedder),
            None => score_influence(&req, embedder),
        };
        let positions: HashMap<&str, usize> = chunk
            .iter()
            .enumerate()
            .map(|(i, e)| (&*e.id, start + i))
            .collect();
        for s in result.map_err(into_embed_error)? {
            let at = positions.get(s.id.as_str()).copied().unwrap_or(usize::MAX);
            scored.push((at, s));
        }
        start += chunk.len();
        progress.influence_add(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
    }
    Ok(scored)
}

/// The report entry of a scored piece; equal weights are shared through `weights`.
fn entry(
    run: &Run,
    e: Option<&RunEvidence<'_>>,
    s: InfluenceScore,
    weights: &mut SharedWeights,
) -> InfluenceEntry {
    InfluenceEntry {
        unit: e.and_then(|e| e.unit(run)).map(Box::from),
        step: e.and_then(|e| e.step(run)).map(Box::from),
        id: s.id.into_boxed_str(),
        score: s.score,
        signals: s.signals,
        weights: Some(weights.get(s.weights)),
        adapted: Some(s.adapted),
        probe: None,
    }
}

/// One shared copy of each distinct weights seen (bit for bit): the entries of a run hold a
/// handful of distinct weights (the defaults, and those moved for lack of ancestors).
#[derive(Default)]
struct SharedWeights(HashMap<[u64; 4], Arc<Weights>>);

impl SharedWeights {
    fn get(&mut self, w: Weights) -> Arc<Weights> {
        let key = [w.fa, w.avg, w.persist, w.depth].map(f64::to_bits);
        Arc::clone(self.0.entry(key).or_insert_with(|| Arc::new(w)))
    }
}

/// An embedder that keeps the vectors of the previous request's texts and asks its inner
/// embedder only for texts it has not just seen. Holds one request's vectors at most.
struct Reusing<'e> {
    inner: &'e dyn Embedder,
    last: Mutex<HashMap<String, SparseVector>>,
}

impl Embedder for Reusing<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn per_call(&self) -> bool {
        self.inner.per_call()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        self.inner.embed(texts)
    }

    fn embed_sparse(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !last.contains_key(*t))
            .collect();
        let fresh = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed_sparse(&missing)?
        };
        if fresh.len() != missing.len() {
            // Let the caller's checks name the embedder's mistake.
            return Ok(fresh);
        }
        let mut fresh = missing.into_iter().zip(fresh).collect::<HashMap<_, _>>();
        let mut next = HashMap::with_capacity(texts.len());
        let mut out = Vec::with_capacity(texts.len());
        for &t in texts {
            let v = match fresh.remove(t) {
                Some(v) => v,
                None => match last.get(t).or_else(|| next.get(t)) {
                    Some(v) => v.clone(),
                    None => SparseVector::default(),
                },
            };
            next.insert(t.to_owned(), v.clone());
            out.push(v);
        }
        *last = next;
        Ok(out)
    }
}

/// Scoring with the default weights and unique ids can only fail in the embedder.
fn into_embed_error(e: ScoreError) -> EmbedError {
    match e {
        ScoreError::Embed(e) => e,
        other => EmbedError(other.to_string()),
    }
}

/// The dropped section over the `llm` steps' `context`; `None` when no step records `context`.
/// Available = every id in any `available`, in first-seen order; sent = every id in any `sent`.
pub fn dropped_section(run: &Run) -> Option<DroppedSection> {
    let llm: Vec<_> = run
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Llm)
        .filter_map(|s| s.context.as_ref().map(|c| (s, c)))
        .collect();
    if llm.is_empty() {
        return None;
    }
    let available: Vec<&str> = llm
        .iter()
        .flat_map(|(_, c)| c.available.iter().flatten())
        .map(|id| id.as_str())
        .collect();
    let sent = llm
        .iter()
        .flat_map(|(_, c)| c.sent.iter())
        .map(|id| id.as_str());
    let diff = find_dropped_context(available.iter().copied(), sent);
    let dropped = diff
        .dropped
        .iter()
        .filter_map(|&i| available.get(i))
        .map(|id| DroppedEntry {
            id: (*id).to_owned(),
            content: run.unit(id).map(|u| u.text.clone()),
            probe: None,
        })
        .collect();
    // Per step, the same diff without its sentence (no step shows one).
    let mut diffs = StepDiffs::default();
    let (mut avail_ids, mut sent_ids) = (Vec::new(), Vec::new());
    let steps = llm
        .iter()
        .filter_map(|(step, c)| {
            let avail = c.available.as_ref()?;
            avail_ids.clear();
            avail_ids.extend(avail.iter().map(|id| id.as_str()));
            sent_ids.clear();
            sent_ids.extend(c.sent.iter().map(|id| id.as_str()));
            let (dropped, available_count, sent_count) = diffs.diff(&avail_ids, &sent_ids);
            Some(DroppedStep {
                step: step.id.as_str().to_owned(),
                index: step.index,
                any_dropped: !dropped.is_empty(),
                dropped: dropped
                    .iter()
                    .filter_map(|&i| avail_ids.get(i))
                    .map(|id| (*id).to_owned())
                    .collect(),
                available_count,
                sent_count,
            })
        })
        .collect();
    Some(DroppedSection {
        dropped,
        available_count: diff.available_count,
        sent_count: diff.sent_count,
        any_dropped: diff.any_dropped,
        reason: diff.reason,
        steps,
    })
}

#[cfg(test)]
mod shared_weights_tests {
    use super::*;

    #[test]
    fn equal_weights_share_one_copy_and_others_get_their_own() {
        let mut shared = SharedWeights::default();
        let a = shared.get(Weights::default());
        let b = shared.get(Weights::default());
        let moved = Weights {
            fa: 0.8,
            avg: 0.0,
            persist: 0.0,
            depth: 0.2,
        };
        let c = shared.get(moved);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*a, Weights::default());
        assert_eq!(*c, moved);
        // -0.0 and 0.0 are kept apart, so what is written stays what was scored.
        let negative = shared.get(Weights { avg: -0.0, ..moved });
        assert!(!Arc::ptr_eq(&c, &negative));
        assert!(negative.avg.is_sign_negative());
    }
}
