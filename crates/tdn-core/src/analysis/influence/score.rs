//! The three scorers of influence.md §2-4 over one frame: the four-signal scorer (cosine over an
//! embedder), the contrastive scorer (FA against a reference), and the lexical-overlap scorer (no
//! embedder). Each checks its request, makes at most one embedding call over the distinct texts in
//! first-seen order, scores every item, and sorts stably, highest first.
//!
//! Scores are similarity proxies: "resembles the answer", never "caused it".

use super::cosine::depth;
use super::lexical::{TokenSets, overlap_sorted};
use super::sparse::{Cosines, SparseVector};
use super::types::{
    EmbedError, Embedder, InfluenceScore, ScoreError, ScoreRequest, Signals, Weights,
};
use super::weights::{adapt_weights, composite, validate_weights};
use hashbrown::{HashMap, HashSet};

/// The four-signal scorer: FA is `cos(evidence, answer)`. Checks weights, then ids.
pub fn score_influence(
    req: &ScoreRequest<'_>,
    embedder: &dyn Embedder,
) -> Result<Vec<InfluenceScore>, ScoreError> {
    validate_weights(&req.weights)?;
    check_unique_ids(req)?;
    if req.evidence.is_empty() {
        return Ok(Vec::new());
    }
    let texts = Texts::collect(req, &[req.answer]);
    let vectors = embed_checked(embedder, &texts.list)?;
    let cos = Cosines::new(&vectors);
    let answer = texts.index(req.answer);
    score_frame(
        req,
        &texts,
        |a, b| similarity(&cos, a, b),
        |e| similarity(&cos, e, answer),
    )
}

/// The contrastive scorer: FA is `cos(evidence, answer) − cos(evidence, reference)`; everything
/// else as [`score_influence`]. Checks ids, then weights.
pub fn score_contrastive(
    req: &ScoreRequest<'_>,
    reference: &str,
    embedder: &dyn Embedder,
) -> Result<Vec<InfluenceScore>, ScoreError> {
    check_unique_ids(req)?;
    validate_weights(&req.weights)?;
    if req.evidence.is_empty() {
        return Ok(Vec::new());
    }
    let texts = Texts::collect(req, &[req.answer, reference]);
    let vectors = embed_checked(embedder, &texts.list)?;
    let cos = Cosines::new(&vectors);
    let (answer, refer) = (texts.index(req.answer), texts.index(reference));
    score_frame(
        req,
        &texts,
        |a, b| similarity(&cos, a, b),
        |e| Ok(similarity(&cos, e, answer)? - similarity(&cos, e, refer)?),
    )
}

/// The lexical scorer: every cosine replaced by the token-set overlap of §4; no embedder.
/// Checks weights, then ids.
pub fn score_lexical(req: &ScoreRequest<'_>) -> Result<Vec<InfluenceScore>, ScoreError> {
    validate_weights(&req.weights)?;
    check_unique_ids(req)?;
    let texts = Texts::collect(req, &[req.answer]);
    let mut interner = TokenSets::default();
    let sets: Vec<Vec<u32>> = texts.list.iter().map(|t| interner.set_of(t)).collect();
    let overlap = |a: usize, b: usize| -> Result<f64, ScoreError> {
        match (sets.get(a), sets.get(b)) {
            (Some(x), Some(y)) => Ok(overlap_sorted(x, y)),
            _ => Err(internal()),
        }
    };
    let answer = texts.index(req.answer);
    score_frame(req, &texts, overlap, |e| overlap(e, answer))
}

fn check_unique_ids(req: &ScoreRequest<'_>) -> Result<(), ScoreError> {
    let mut seen = HashSet::with_capacity(req.evidence.len());
    for item in req.evidence {
        if !seen.insert(item.id) {
            return Err(ScoreError::DuplicateId(item.id.to_owned()));
        }
    }
    Ok(())
}

/// The distinct texts of a request in first-seen order: the leading texts (answer, reference),
/// then each item's text followed by its ancestors.
struct Texts<'a> {
    list: Vec<&'a str>,
    at: HashMap<&'a str, usize>,
}

impl<'a> Texts<'a> {
    fn collect(req: &ScoreRequest<'a>, leading: &[&'a str]) -> Self {
        let mut t = Texts {
            list: Vec::new(),
            at: HashMap::new(),
        };
        for s in leading {
            t.add(s);
        }
        for item in req.evidence {
            t.add(item.text);
            for a in &item.ancestors {
                t.add(a);
            }
        }
        t
    }

    fn add(&mut self, s: &'a str) {
        if !self.at.contains_key(s) {
            self.at.insert(s, self.list.len());
            self.list.push(s);
        }
    }

    /// The position of a text that was collected (every text of the request was).
    fn index(&self, s: &str) -> usize {
        self.at.get(s).copied().unwrap_or(usize::MAX)
    }
}

/// One batch call, then the checks every embedder must pass: one vector per text, all of one
/// length. An empty batch makes no call.
fn embed_checked(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let vectors = embedder.embed_sparse(texts)?;
    if vectors.len() != texts.len() {
        return Err(EmbedError(format!(
            "the '{}' embedder returned {} vectors for {} texts",
            embedder.name(),
            vectors.len(),
            texts.len()
        )));
    }
    if let Some(first) = vectors.first()
        && let Some(odd) = vectors.iter().find(|v| v.dim() != first.dim())
    {
        return Err(EmbedError(format!(
            "the '{}' embedder returned vectors of different lengths ({} and {})",
            embedder.name(),
            first.dim(),
            odd.dim()
        )));
    }
    Ok(vectors)
}

fn similarity(cos: &Cosines<'_>, a: usize, b: usize) -> Result<f64, ScoreError> {
    match cos.get(a, b) {
        Some(r) => r.map_err(|e| EmbedError(e.to_string()).into()),
        None => Err(internal()),
    }
}

fn internal() -> ScoreError {
    ScoreError::Embed(EmbedError(
        "a text of the request has no vector (an internal error)".to_owned(),
    ))
}

/// Scores every item with `sim` between two text positions and `fa` of the item's text
/// position, then sorts stably by score, highest first.
fn score_frame(
    req: &ScoreRequest<'_>,
    texts: &Texts<'_>,
    sim: impl Fn(usize, usize) -> Result<f64, ScoreError>,
    fa: impl Fn(usize) -> Result<f64, ScoreError>,
) -> Result<Vec<InfluenceScore>, ScoreError> {
    let mut out = Vec::with_capacity(req.evidence.len());
    for item in req.evidence {
        let e = texts.index(item.text);
        let n = item.ancestors.len();
        let (mut sum, mut above) = (0.0, 0usize);
        for a in &item.ancestors {
            let s = sim(e, texts.index(a))?;
            sum += s;
            if s > req.persistence_threshold {
                above += 1;
            }
        }
        let sums = AncestorSums { n, sum, above };
        out.push(scored(item.id.to_owned(), fa(e)?, sums, &req.weights));
    }
    sort_by_score(&mut out, |s| s.score);
    Ok(out)
}

/// What an item's ancestors add up to: how many, the sum of their similarities, and how many
/// were above the persistence threshold.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AncestorSums {
    pub n: usize,
    pub sum: f64,
    pub above: usize,
}

/// The scored item from its FA and its ancestor sums, under `weights` adapted to it.
pub(super) fn scored(id: String, fa: f64, a: AncestorSums, weights: &Weights) -> InfluenceScore {
    let n = a.n;
    let signals = Signals {
        fa,
        avg: if n == 0 { 0.0 } else { a.sum / n as f64 },
        persist: if n == 0 {
            0.0
        } else {
            a.above as f64 / n as f64
        },
        depth: depth(n),
    };
    let effective = adapt_weights(weights, n);
    InfluenceScore {
        id,
        score: composite(&signals, &effective.weights),
        signals,
        weights: effective.weights,
        adapted: effective.adapted,
    }
}

/// `fin(s)`: the score when finite, else −∞, so malformed scores rank last.
pub(crate) fn fin(s: f64) -> f64 {
    if s.is_finite() { s } else { f64::NEG_INFINITY }
}

/// Stable sort, highest `fin(score)` first; equal scores (0 and −0 included) keep input order.
pub(crate) fn sort_by_score<T>(items: &mut [T], score: impl Fn(&T) -> f64) {
    items.sort_by(|a, b| {
        fin(score(b))
            .partial_cmp(&fin(score(a)))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}
