//! The ranking of a run's evidence with an embedder whose vectors are per text
//! ([`Embedder::per_text`]): every distinct text of the run is embedded once, however many
//! pieces share it or have it as an ancestor, and each vector is let go after the last chunk
//! that reads it.
//!
//! The pieces are taken in the order of their first ancestor, so the ancestors of one chunk are
//! mostly those of the next and few vectors are held at once; the scores do not depend on that
//! order (each depends only on its own texts and the answer) and come with their positions. Each
//! score is what [`super::score::score_influence`] (or `score_contrastive`) gives the same
//! piece: the same cosines, summed in the same order, through the same composite.

use super::evidence::MAX_ANCESTORS;
use super::evidence::{ModelOutputs, RunEvidence, Text, first_ancestor, window_from, write_value};
use super::prepared::{Columns, Prepared, Spread};
use super::ring::Ring;
use super::score::{AncestorSums, scored};
use super::sparse::SparseVector;
use super::types::{EmbedError, Embedder, InfluenceScore, Weights};
use crate::analysis::progress::Progress;
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
use rayon::prelude::*;
use std::hash::BuildHasher;
use std::ops::Range;

/// Pieces scored per embedding call. Bounds the vectors held at once (a chunk's pieces, their
/// ancestors, the answer): 128 rather than the chunked path's 512 holds about a quarter as many
/// (issue 11), while each call still shares its token hashes among enough texts. Scores do not
/// depend on it (each depends only on its own texts), nor vectors (they are per text).
pub(super) const PER_TEXT_CHUNK: usize = 128;

/// Cosines remembered for pieces whose text another piece has too, at most this many at once
/// (then forgotten all together; none is needed again for the scores to be right).
const MEMO_ROOM: usize = 1 << 16;

/// One piece's score and what it is made of, without the piece's id (issue 11: 50,000 of them
/// at 100,000 steps; the report's entry is made from it once the ranking is sorted). 32 bytes:
/// a position fits in 32 bits (one per piece), the counts in 16 (at most
/// [`super::evidence::MAX_ANCESTORS`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ranked {
    /// The piece's position in the evidence.
    at: u32,
    ancestors: u16,
    above: u16,
    /// The composite, as [`Ranked::score`] makes it again.
    pub score: f64,
    fa: f64,
    sum: f64,
}

const _: () = assert!(std::mem::size_of::<Ranked>() == 32);

impl Ranked {
    fn new(at: u32, fa: f64, sums: AncestorSums, weights: &Weights) -> Ranked {
        let score = scored(String::new(), fa, sums, weights).score;
        let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
        Ranked {
            at,
            score,
            fa,
            sum: sums.sum,
            ancestors: count(sums.n),
            above: count(sums.above),
        }
    }

    /// The piece's position in the evidence.
    pub(super) fn at(&self) -> usize {
        self.at as usize
    }

    /// The piece's score under the default weights, with its `id`: what
    /// [`super::score::score_influence`] (or `score_contrastive`) gives it.
    pub(super) fn score(&self, id: String) -> InfluenceScore {
        let sums = AncestorSums {
            n: self.ancestors as usize,
            sum: self.sum,
            above: self.above as usize,
        };
        scored(id, self.fa, sums, &Weights::default())
    }
}

/// The evidence's scores, each with its piece's position in `evidence`, in the order they were
/// made (see the module docs). `reference` makes FA contrastive.
pub(super) fn rank_per_text<'e>(
    evidence: &[RunEvidence<'e>],
    outputs: &ModelOutputs<'e>,
    answer: &str,
    reference: Option<&str>,
    embedder: &dyn Embedder,
    progress: &Progress,
) -> Result<Vec<Ranked>, EmbedError> {
    let weights = Weights::default();
    let threshold = super::cosine::DEFAULT_PERSISTENCE_THRESHOLD;
    let plan = Plan::new(evidence, outputs, answer, reference);
    // The hashed embedder keeps its token cache from one call to the next until the ranking
    // is over.
    let _kept = super::hashed::scratch_session();

    let mut held = Held {
        embedder,
        live: HashMap::new(),
        dim: None,
        written: String::new(),
        bytes: Vec::new(),
    };
    let leading: Vec<u32> = std::iter::once(plan.answer)
        .chain(plan.reference.filter(|&r| r != plan.answer))
        .collect();
    held.embed(&plan, &leading)?;
    // The answer's and the reference's numbers come first; they are held throughout.
    let held_throughout = leading.iter().max().map_or(0, |&m| m + 1);
    let (mut columns, column_of) = tail_columns(&plan, &mut held, &leading)?;
    let column = |t: u32| {
        column_of
            .get(t as usize)
            .and_then(|&k| usize::from(k).checked_sub(1))
    };

    let mut out: Vec<Ranked> = Vec::with_capacity(evidence.len());
    let mut spread = Spread::default();
    let mut ring = Ring::new();
    let mut memo: HashMap<(u32, u32), f64> = HashMap::new();
    // Per text: 1 + the last chunk that listed it, so a chunk lists each text once.
    let mut listed = vec![0u32; plan.texts.len()];
    for (c, chunk) in plan.order.chunks(PER_TEXT_CHUNK).enumerate() {
        let c = u32::try_from(c).unwrap_or(u32::MAX);
        let mut read = Vec::new();
        for &k in chunk {
            plan.for_each_text(k as usize, |t| {
                if let Some(l) = listed.get_mut(t as usize)
                    && *l != c.saturating_add(1)
                {
                    *l = c.saturating_add(1);
                    read.push(t);
                }
            });
        }
        let missing: Vec<u32> = read
            .iter()
            .copied()
            .filter(|t| !held.live.contains_key(t))
            .collect();
        held.embed(&plan, &missing)?;

        let live = &held.live;
        let vector = |t: u32| live.get(&t).ok_or_else(no_vector);
        // Per piece: the texts it is compared with (ancestors, answer, reference), each with
        // the way its cosine is had (see [`Route`]); the vectors that take [`Left::cosines`];
        // and the cosines.
        let mut asked: Vec<(u32, Route)> = Vec::new();
        let mut rights: Vec<&Prepared> = Vec::new();
        let mut computed = Vec::new();
        let mut cosines: Vec<f64> = Vec::new();
        for &k in chunk {
            let Some(&text) = plan.piece_text.get(k as usize) else {
                continue;
            };
            let left = vector(text)?;
            let remember = plan.repeated.get(text as usize) == Some(&true);
            let known = |t: u32| remember.then(|| memo.get(&(text, t)).copied()).flatten();
            asked.clear();
            for p in plan.ancestor_runs(k as usize).into_iter().flatten() {
                let Some(&t) = plan.output_text.get(p) else {
                    continue;
                };
                let route = match (known(t), column(t)) {
                    (Some(c), _) => Route::Known(c),
                    (None, Some(col)) => Route::Column(col),
                    (None, None) => match ring.hold(&mut columns, p, vector(t)?) {
                        Some(lane) => Route::Lane(lane, p),
                        None => Route::Fresh,
                    },
                };
                asked.push((t, route));
            }
            let ancestors = asked.len();
            for t in std::iter::once(plan.answer).chain(plan.reference) {
                let route = match (known(t), column(t)) {
                    (Some(c), _) => Route::Known(c),
                    (None, Some(col)) => Route::Column(col),
                    (None, None) => Route::Fresh,
                };
                asked.push((t, route));
            }
            // One walk gives the dot products with the columns and with the ring's lanes; a
            // piece whose cosines are all remembered (or all fresh) needs none.
            let walk = asked
                .iter()
                .any(|(_, r)| matches!(r, Route::Column(_) | Route::Lane(..)));
            let dots = if walk { columns.dots(left) } else { None };
            // A route the left vector cannot take, or a lane a later position of the window
            // took over, is had fresh.
            for (_, route) in asked.iter_mut() {
                let usable = match *route {
                    Route::Column(_) => dots.is_some(),
                    Route::Lane(lane, p) => dots.is_some() && ring.holds(lane, p),
                    Route::Known(_) | Route::Fresh => true,
                };
                if !usable {
                    *route = Route::Fresh;
                }
            }
            rights.clear();
            for &(t, route) in &asked {
                if matches!(route, Route::Fresh) {
                    rights.push(vector(t)?);
                }
            }
            computed.clear();
            if !rights.is_empty() {
                spread.left(left).cosines(&rights, &mut computed);
            }
            let mut fresh = computed.iter().copied();
            cosines.clear();
            for &(t, route) in &asked {
                let c = match route {
                    Route::Known(c) => {
                        cosines.push(c);
                        continue;
                    }
                    Route::Column(col) => dots.as_ref().and_then(|d| columns.cosine(left, col, d)),
                    Route::Lane(lane, _) => dots.as_ref().and_then(|d| ring.cosine(left, lane, d)),
                    Route::Fresh => fresh.next(),
                };
                let c = c.ok_or_else(no_vector)?.map_err(mismatch)?;
                if remember {
                    if memo.len() >= MEMO_ROOM {
                        memo.clear();
                    }
                    memo.insert((text, t), c);
                }
                cosines.push(c);
            }
            let mut sums = AncestorSums::default();
            for &s in cosines.get(..ancestors).unwrap_or_default() {
                sums.n += 1;
                sums.sum += s;
                if s > threshold {
                    sums.above += 1;
                }
            }
            let mut fa = cosines.get(ancestors).copied().unwrap_or(0.0);
            if plan.reference.is_some() {
                fa -= cosines.get(ancestors + 1).copied().unwrap_or(0.0);
            }
            out.push(Ranked::new(k, fa, sums, &weights));
        }
        for t in read {
            if t >= held_throughout && plan.last_read.get(t as usize) == Some(&c) {
                held.live.remove(&t);
            }
        }
        progress.influence_add(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
    }
    Ok(out)
}

/// How the cosine of a piece and one text it is compared with is had.
#[derive(Clone, Copy)]
enum Route {
    /// Remembered from another piece with the same text.
    Known(f64),
    /// From the piece's dot products with the [`Columns`], in this column.
    Column(usize),
    /// From the piece's dot products with the [`Ring`], in this lane, which holds this output
    /// position.
    Lane(usize, usize),
    /// Through [`Left::cosines`](super::prepared::Left::cosines).
    Fresh,
}

/// The texts every ancestor window ends with (the last [`MAX_ANCESTORS`]` / 2` model outputs),
/// the answer and the reference, embedded now and held as [`Columns`]; with, per text number,
/// 1 + its column (0 for none).
fn tail_columns(
    plan: &Plan<'_>,
    held: &mut Held<'_>,
    leading: &[u32],
) -> Result<(Columns, Vec<u8>), EmbedError> {
    let total = plan.output_text.len();
    let mut tail: Vec<u32> = plan
        .output_text
        .get(total.saturating_sub(MAX_ANCESTORS / 2)..)
        .unwrap_or_default()
        .to_vec();
    tail.extend_from_slice(leading);
    tail.sort_unstable();
    tail.dedup();
    let missing: Vec<u32> = tail
        .iter()
        .copied()
        .filter(|t| !held.live.contains_key(t))
        .collect();
    held.embed(plan, &missing)?;
    let vectors = tail
        .iter()
        .map(|t| held.live.get(t).ok_or_else(no_vector))
        .collect::<Result<Vec<&Prepared>, EmbedError>>()?;
    let (columns, placed) = Columns::new(&vectors);
    let mut column_of = vec![0u8; plan.texts.len()];
    for (&t, k) in tail.iter().zip(placed) {
        if let (Some(k), Some(c)) = (k, column_of.get_mut(t as usize)) {
            *c = u8::try_from(k + 1).unwrap_or(0);
        }
    }
    Ok((columns, column_of))
}

/// What the ranking reads, by text number: each piece's text, the order pieces are taken in,
/// and for each text the last chunk that reads it. A piece's ancestor window is made again from
/// its first ancestor when read rather than held for every piece.
struct Plan<'a> {
    /// How many model outputs there are.
    outputs: usize,
    texts: TextIds<'a>,
    answer: u32,
    reference: Option<u32>,
    piece_text: Vec<u32>,
    output_text: Vec<u32>,
    /// Each piece's first ancestor (see [`first_ancestor`]); its window is made from it.
    first: Vec<u32>,
    /// Piece positions by their first ancestor.
    order: Vec<u32>,
    /// Per text, the last chunk that reads it.
    last_read: Vec<u32>,
    /// Texts that more than one piece has.
    repeated: Vec<bool>,
}

impl<'a> Plan<'a> {
    /// The plan of the ranking of `evidence`.
    fn new<'e: 'a>(
        evidence: &[RunEvidence<'e>],
        outputs: &ModelOutputs<'e>,
        answer: &'a str,
        reference: Option<&'a str>,
    ) -> Plan<'a> {
        // Every distinct text gets a number; pieces and outputs refer to their text by it.
        let mut texts = TextIds::with_capacity(evidence.len() + outputs.len() + 2);
        let answer = texts.id(Text::Str(answer));
        let reference = reference.map(|r| texts.id(Text::Str(r)));
        let piece_text: Vec<u32> = evidence.iter().map(|e| texts.id(e.text)).collect();
        let output_text: Vec<u32> = (0..outputs.len())
            .map(|i| texts.id(outputs.text(i).unwrap_or(Text::Str(""))))
            .collect();
        texts.numbered();
        // An output position fits in u32 whenever the output numbers do (one per text).
        let first: Vec<u32> = evidence
            .iter()
            .map(|e| u32::try_from(first_ancestor(e, outputs)).unwrap_or(u32::MAX))
            .collect();
        let outputs = outputs.len();
        // A piece position fits in u32 whenever the text numbers do (one per piece at most).
        let mut order: Vec<u32> = (0..evidence.len())
            .map(|k| u32::try_from(k).unwrap_or(u32::MAX))
            .collect();
        order.sort_by_key(|&k| first.get(k as usize).copied().unwrap_or(0));

        let mut plan = Plan {
            outputs,
            last_read: vec![0; texts.len()],
            repeated: vec![false; texts.len()],
            texts,
            answer,
            reference,
            piece_text,
            output_text,
            first,
            order,
        };
        let mut pieces_with = vec![0u8; plan.texts.len()];
        for &t in &plan.piece_text {
            if let Some(n) = pieces_with.get_mut(t as usize) {
                *n = n.saturating_add(1);
            }
        }
        for (r, n) in plan.repeated.iter_mut().zip(pieces_with) {
            *r = n > 1;
        }
        let mut last_read = std::mem::take(&mut plan.last_read);
        for (c, chunk) in plan.order.chunks(PER_TEXT_CHUNK).enumerate() {
            let c = u32::try_from(c).unwrap_or(u32::MAX);
            for &k in chunk {
                plan.for_each_text(k as usize, |t| {
                    if let Some(l) = last_read.get_mut(t as usize) {
                        *l = c;
                    }
                });
            }
        }
        plan.last_read = last_read;
        plan
    }

    /// The output positions of piece `k`'s ancestors, in order: two runs of positions.
    fn ancestor_runs(&self, k: usize) -> [Range<usize>; 2] {
        self.first
            .get(k)
            .map_or([0..0, 0..0], |&f| window_from(f as usize, self.outputs))
    }

    /// Gives `each` the texts piece `k` reads: its own, then its ancestors', in order (plain
    /// loops over the two runs of the window: issue 11, a chain of iterators cost more than
    /// the work done per text).
    fn for_each_text(&self, k: usize, mut each: impl FnMut(u32)) {
        if let Some(&t) = self.piece_text.get(k) {
            each(t);
        }
        for run in self.ancestor_runs(k) {
            for &t in self.output_text.get(run).unwrap_or_default() {
                each(t);
            }
        }
    }
}

/// The vectors held, by text number.
struct Held<'e> {
    embedder: &'e dyn Embedder,
    live: HashMap<u32, Prepared>,
    dim: Option<usize>,
    /// The texts of one call's JSON values, written one after the other (kept for the next).
    written: String,
    /// Scratch for writing a value.
    bytes: Vec<u8>,
}

impl Held<'_> {
    /// Embeds the texts `ids` in one call and holds their vectors, after the checks every
    /// embedder must pass: one vector per text, all of one length.
    fn embed(&mut self, plan: &Plan<'_>, ids: &[u32]) -> Result<(), EmbedError> {
        if ids.is_empty() {
            return Ok(());
        }
        let name = self.embedder.name();
        // A value's text is written into `written`; its place there stands for it until all
        // are written.
        self.written.clear();
        let places: Vec<Result<&str, (usize, usize)>> = ids
            .iter()
            .map(|&t| match plan.texts.get(t) {
                Text::Str(s) => Ok(s),
                Text::Value(v) => {
                    let start = self.written.len();
                    write_value(v, &mut self.bytes, &mut self.written);
                    Err((start, self.written.len()))
                }
            })
            .collect();
        let written = &self.written;
        let batch: Vec<&str> = places
            .into_iter()
            .map(|p| p.unwrap_or_else(|(a, b)| written.get(a..b).unwrap_or_default()))
            .collect();
        let vectors = embed_parts(self.embedder, &batch)?;
        if vectors.len() != batch.len() {
            return Err(EmbedError(format!(
                "the '{name}' embedder returned {} vectors for {} texts",
                vectors.len(),
                batch.len()
            )));
        }
        for (&t, v) in ids.iter().zip(vectors) {
            let first = *self.dim.get_or_insert(v.dim());
            if v.dim() != first {
                return Err(EmbedError(format!(
                    "the '{name}' embedder returned vectors of different lengths ({first} and {})",
                    v.dim()
                )));
            }
            self.live.insert(t, Prepared::new(v));
        }
        Ok(())
    }
}

/// Texts of a call embedded together at least, when the embedder lets a call be cut into parts
/// ([`Embedder::parallel`]).
const TEXTS_PER_PART: usize = 64;

/// The vectors of `batch`, in order: in parts on the thread pool when the embedder allows it
/// (issue 11: embedding is most of the ranking, which otherwise runs on one thread while the
/// rules' work has the other core), else in one call.
fn embed_parts(embedder: &dyn Embedder, batch: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
    if !embedder.parallel() || batch.len() < 2 * TEXTS_PER_PART {
        return embedder.embed_sparse(batch);
    }
    let parts: Vec<Vec<SparseVector>> = batch
        .par_chunks(TEXTS_PER_PART)
        .map(|part| embedder.embed_sparse(part))
        .collect::<Result<_, _>>()?;
    Ok(parts.into_iter().flatten().collect())
}

fn no_vector() -> EmbedError {
    EmbedError("a text of the ranking has no vector (an internal error)".to_owned())
}

fn mismatch(e: super::cosine::LengthMismatch) -> EmbedError {
    EmbedError(e.to_string())
}

/// Distinct texts numbered in first-seen order. The table holds only numbers (4 bytes a
/// slot); a text is hashed again from the list when the table grows. A JSON value's text is
/// written into a scratch buffer to be hashed or compared, and not kept.
struct TextIds<'a> {
    list: Vec<Text<'a>>,
    at: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// Scratch for the text at hand, the one it is compared with, and writing a value.
    buf: [String; 2],
    bytes: Vec<u8>,
}

impl<'a> TextIds<'a> {
    /// Room for `n` distinct texts, made at once (no growth while numbering).
    fn with_capacity(n: usize) -> TextIds<'a> {
        TextIds {
            list: Vec::with_capacity(n),
            at: HashTable::with_capacity(n),
            hasher: DefaultHashBuilder::default(),
            buf: [String::new(), String::new()],
            bytes: Vec::new(),
        }
    }

    fn id(&mut self, text: Text<'a>) -> u32 {
        let TextIds {
            list,
            at,
            hasher,
            buf: [mine, theirs],
            bytes,
        } = self;
        let read = text.read(mine, bytes);
        let hash = hasher.hash_one(read);
        let same = |&i: &u32| {
            list.get(i as usize)
                .is_some_and(|t| t.read(theirs, bytes) == read)
        };
        if let Some(&i) = at.find(hash, same) {
            return i;
        }
        let next = u32::try_from(list.len()).unwrap_or(u32::MAX);
        // Only on growth, which the capacity made at first spares the numbering.
        let rehash = |&i: &u32| {
            let t = list.get(i as usize).copied().unwrap_or(Text::Str(""));
            hasher.hash_one(&*t.to_cow())
        };
        at.insert_unique(hash, next, rehash);
        list.push(text);
        next
    }

    /// Lets the table and the scratch go once every text is numbered (the list stays).
    fn numbered(&mut self) {
        self.list.shrink_to_fit();
        self.at = HashTable::new();
        self.buf = [String::new(), String::new()];
        self.bytes = Vec::new();
    }

    fn get(&self, id: u32) -> Text<'a> {
        self.list.get(id as usize).copied().unwrap_or(Text::Str(""))
    }

    fn len(&self) -> usize {
        self.list.len()
    }
}
