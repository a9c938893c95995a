//! Sparse vectors made ready for many cosines, and the cosines of one left vector against many.
//! The left vector is spread out once into a dense scratch vector; each cosine then walks the
//! right vector's entries and multiplies each by the left value at its bucket. A scorer asks
//! one left vector against a score of right ones (its ancestors, the answer), so the dot
//! products of several right vectors are summed side by side, each in its own accumulator:
//! their additions do not wait on one another, which is where a single sum spends its time.
//!
//! Bits as [`super::sparse::Cosines`] and [`cosine_sparse`]: each dot product is summed in
//! bucket order, starting from `+0.0`; the terms of the buckets only the right side has are
//! products with zero, which add nothing to such a sum (it can never be `-0.0`, and no term is
//! NaN: the fast path is taken only when every entry of both sides is finite). Vectors with a
//! non-finite entry and overflowing sums take [`cosine_sparse`] itself.

use super::cosine::LengthMismatch;
use super::sparse::{SparseVector, cosine_sparse};

/// A vector with its norm.
#[derive(Clone)]
pub(super) struct Prepared {
    vector: SparseVector,
    /// `Σx²` in index order, when every entry is finite.
    norm: Option<f64>,
}

impl Prepared {
    /// Prepares `vector`.
    pub(super) fn new(vector: SparseVector) -> Prepared {
        // One walk: the sum in index order, and whether every entry is finite.
        let (norm, finite) = vector
            .entries()
            .iter()
            .fold((0.0_f64, true), |(n, f), (_, x)| {
                (n + x * x, f & x.is_finite())
            });
        Prepared {
            vector,
            norm: finite.then_some(norm),
        }
    }

    /// The number of dimensions.
    pub(super) fn dim(&self) -> usize {
        self.vector.dim()
    }

    /// True when every entry is finite (the vectors the side-by-side sums take).
    pub(super) fn finite(&self) -> bool {
        self.norm.is_some()
    }

    /// The non-zero entries, in index order.
    pub(super) fn entries(&self) -> &[(u32, f64)] {
        self.vector.entries()
    }
}

/// A dense scratch vector, all zeros between uses.
#[derive(Default)]
pub(super) struct Spread {
    dense: Vec<f64>,
}

impl Spread {
    /// Cosines of `left` against any number of vectors; `left` is spread out until the result
    /// is dropped.
    pub(super) fn left<'s>(&'s mut self, left: &'s Prepared) -> Left<'s> {
        if self.dense.len() < left.dim() {
            self.dense.resize(left.dim(), 0.0);
        }
        for &(i, x) in left.vector.entries() {
            if let Some(slot) = self.dense.get_mut(i as usize) {
                *slot = x;
            }
        }
        Left {
            dense: &mut self.dense,
            left,
        }
    }
}

/// One vector spread out (see [`Spread::left`]).
pub(super) struct Left<'s> {
    dense: &'s mut Vec<f64>,
    left: &'s Prepared,
}

/// Right vectors whose dot products are summed side by side.
const LANES: usize = 4;

impl Left<'_> {
    /// The cosine of the left vector and `right`.
    #[cfg(test)]
    pub(super) fn cosine(&self, right: &Prepared) -> Result<f64, LengthMismatch> {
        let mut out = Vec::with_capacity(1);
        self.cosines(&[right], &mut out);
        out.pop().unwrap_or(Ok(0.0))
    }

    /// The cosines of the left vector and each of `rights`, in order, appended to `out`.
    pub(super) fn cosines(&self, rights: &[&Prepared], out: &mut Vec<Result<f64, LengthMismatch>>) {
        let first = out.len();
        // The dot products of the rights that take the fast path, by position in `rights`.
        let mut fast: [(usize, &[(u32, f64)]); LANES] = [(0, &[]); LANES];
        let mut queued = 0;
        for (k, right) in rights.iter().enumerate() {
            match self.plain(right) {
                Some(done) => out.push(done),
                None => {
                    // A placeholder, replaced once the dot product is summed.
                    out.push(Ok(0.0));
                    if let Some(slot) = fast.get_mut(queued) {
                        *slot = (k, right.vector.entries());
                        queued += 1;
                    }
                    if queued == LANES {
                        self.finish(rights, &fast, out, first);
                        queued = 0;
                    }
                }
            }
        }
        for &(k, entries) in fast.get(..queued).unwrap_or_default() {
            let dot = dot_from(self.dense, entries, 0.0_f64);
            self.settle(rights, k, dot, out, first);
        }
    }

    /// The answer for `right` when it does not take the fast path; `None` when it does.
    fn plain(&self, right: &Prepared) -> Option<Result<f64, LengthMismatch>> {
        let (a, b) = (self.left, right);
        let (Some(na), Some(nb)) = (a.norm, b.norm) else {
            return Some(cosine_sparse(&a.vector, &b.vector));
        };
        if a.dim() != b.dim() {
            return Some(cosine_sparse(&a.vector, &b.vector));
        }
        if na == 0.0 || nb == 0.0 {
            return Some(Ok(0.0));
        }
        None
    }

    /// Sums the [`LANES`] queued dot products side by side and settles their cosines.
    fn finish(
        &self,
        rights: &[&Prepared],
        fast: &[(usize, &[(u32, f64)]); LANES],
        out: &mut [Result<f64, LengthMismatch>],
        first: usize,
    ) {
        let [(k0, e0), (k1, e1), (k2, e2), (k3, e3)] = *fast;
        let dense: &[f64] = self.dense;
        let x = |i: u32| dense.get(i as usize).copied().unwrap_or(0.0);
        let (mut d0, mut d1, mut d2, mut d3) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
        let mut n = 0;
        for (((&(i0, y0), &(i1, y1)), &(i2, y2)), &(i3, y3)) in e0.iter().zip(e1).zip(e2).zip(e3) {
            d0 += x(i0) * y0;
            d1 += x(i1) * y1;
            d2 += x(i2) * y2;
            d3 += x(i3) * y3;
            n += 1;
        }
        let rest = |e: &'_ [(u32, f64)], d: f64| dot_from(dense, e.get(n..).unwrap_or_default(), d);
        let dots = [
            (k0, rest(e0, d0)),
            (k1, rest(e1, d1)),
            (k2, rest(e2, d2)),
            (k3, rest(e3, d3)),
        ];
        for (k, dot) in dots {
            self.settle(rights, k, dot, out, first);
        }
    }

    /// Writes the cosine of `rights[k]` from its dot product into `out[first + k]`.
    fn settle(
        &self,
        rights: &[&Prepared],
        k: usize,
        dot: f64,
        out: &mut [Result<f64, LengthMismatch>],
        first: usize,
    ) {
        let (Some(right), Some(slot)) = (rights.get(k), out.get_mut(first + k)) else {
            return;
        };
        let (a, b) = (self.left, *right);
        let (Some(na), Some(nb)) = (a.norm, b.norm) else {
            *slot = cosine_sparse(&a.vector, &b.vector);
            return;
        };
        let plain = dot / (na.sqrt() * nb.sqrt());
        *slot = if plain.is_finite() && na.is_finite() && nb.is_finite() {
            Ok(plain)
        } else {
            cosine_sparse(&a.vector, &b.vector)
        };
    }
}

/// `d` plus the products of `entries` with the spread vector, added in entry order.
fn dot_from(dense: &[f64], entries: &[(u32, f64)], d: f64) -> f64 {
    entries.iter().fold(d, |d, &(i, y)| {
        d + dense.get(i as usize).copied().unwrap_or(0.0) * y
    })
}

impl Drop for Left<'_> {
    fn drop(&mut self) {
        for &(i, _) in self.left.vector.entries() {
            if let Some(slot) = self.dense.get_mut(i as usize) {
                *slot = 0.0;
            }
        }
    }
}

/// How many vectors a [`Columns`] holds at most: the last ten model outputs every ancestor
/// window ends with, the answer and the reference.
pub(super) const COLUMNS: usize = 12;

/// Numbers per bucket of a [`Columns`]: its columns, then the lanes of the
/// [`super::ring::Ring`] (issue 11: one walk over a piece's entries sums the dot products of
/// both), padded to three cache lines.
pub(super) const ROW: usize = 24;

/// The numbers of a row that hold values: the columns, then the lanes.
const USED: usize = COLUMNS + super::ring::LANES;

const _: () = assert!(USED <= ROW);

/// One bucket's numbers (see [`ROW`]), aligned so that it spans exactly three cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Row(pub(super) [f64; ROW]);

/// A few vectors that many left vectors are compared with, laid out by bucket: for each
/// bucket, their values there side by side. A left vector's dot products with all of them are
/// summed in one walk over its entries, each in its own accumulator, in bucket order (issue 11:
/// every piece of evidence is compared with the same last model outputs and the answer).
///
/// Bits as [`Left::cosines`]: each dot product is the sum, in bucket order from `+0.0`, of the
/// products at the buckets both sides have; the buckets only the left side has add a product
/// with zero, which changes no such sum. Only vectors whose entries are all finite are held, and
/// only such left vectors are walked; the rest take [`Left::cosines`].
pub(super) struct Columns {
    /// Per bucket, the held vectors' values there (0 where one has no entry), then the
    /// [`super::ring::Ring`]'s lanes.
    pub(super) rows: Vec<Row>,
    held: Vec<Prepared>,
}

impl Columns {
    /// Holds `vectors`, those of them whose entries are all finite and whose length is the
    /// first one's, up to [`COLUMNS`]; each comes back with its column, or `None`.
    pub(super) fn new(vectors: &[&Prepared]) -> (Columns, Vec<Option<usize>>) {
        let dim = vectors.first().map_or(0, |v| v.dim());
        let mut rows = vec![Row([0.0; ROW]); dim];
        let mut held = Vec::new();
        let mut placed = Vec::with_capacity(vectors.len());
        for &v in vectors {
            if v.norm.is_none() || v.dim() != dim || held.len() == COLUMNS {
                placed.push(None);
                continue;
            }
            let k = held.len();
            for &(i, x) in v.vector.entries() {
                if let Some(cell) = rows.get_mut(i as usize).and_then(|r| r.0.get_mut(k)) {
                    *cell = x;
                }
            }
            held.push(v.clone());
            placed.push(Some(k));
        }
        (Columns { rows, held }, placed)
    }

    /// The dot products of `left` with every column and every lane of the ring (see [`ROW`]);
    /// `None` when `left` does not take this path (an entry not finite, or another length).
    pub(super) fn dots(&self, left: &Prepared) -> Option<[f64; ROW]> {
        if left.norm.is_none() || left.dim() != self.rows.len() {
            return None;
        }
        // Only the numbers of the columns and the lanes are summed; the padding stays 0.
        let mut d = [0.0_f64; ROW];
        let (sums, _) = d.split_at_mut(USED);
        for &(i, x) in left.vector.entries() {
            if let Some(row) = self.rows.get(i as usize) {
                for (d, y) in sums.iter_mut().zip(&row.0) {
                    *d += x * y;
                }
            }
        }
        Some(d)
    }

    /// The cosine of `left` and column `k`, from the dot products [`Columns::dots`] gave.
    pub(super) fn cosine(
        &self,
        left: &Prepared,
        k: usize,
        dots: &[f64; ROW],
    ) -> Option<Result<f64, LengthMismatch>> {
        let right = self.held.get(k)?;
        let dot = *dots.get(k)?;
        Some(cosine_of_dot(left, right, dot))
    }
}

/// The cosine of `left` and `right` from their dot product, summed as [`Left::cosines`] sums it
/// (for vectors whose entries are all finite); vectors that are not, and overflowing sums, take
/// [`cosine_sparse`].
pub(super) fn cosine_of_dot(
    left: &Prepared,
    right: &Prepared,
    dot: f64,
) -> Result<f64, LengthMismatch> {
    let (Some(na), Some(nb)) = (left.norm, right.norm) else {
        return cosine_sparse(&left.vector, &right.vector);
    };
    if na == 0.0 || nb == 0.0 {
        return Ok(0.0);
    }
    let plain = dot / (na.sqrt() * nb.sqrt());
    if plain.is_finite() && na.is_finite() && nb.is_finite() {
        Ok(plain)
    } else {
        cosine_sparse(&left.vector, &right.vector)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::cosine::cosine;
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = f64> {
        super::super::sparse::tests::entry_with_zeros(6)
    }

    /// `n` numbers: mostly finite ones (zeros, plain values, -0, huge and tiny ones), else
    /// with the non-finite ones too.
    pub(in crate::analysis::influence) fn vector_of(n: usize) -> impl Strategy<Value = Vec<f64>> {
        let finite = prop_oneof![
            6 => Just(0.0),
            4 => -3.0..3.0_f64,
            1 => Just(-0.0),
            1 => Just(1e200),
            1 => Just(-1e-300),
        ];
        prop_oneof![
            4 => prop::collection::vec(finite, n),
            1 => prop::collection::vec(entry(), n),
        ]
    }

    /// 161 numbers (see [`vector_of`]).
    fn vector() -> impl Strategy<Value = Vec<f64>> {
        vector_of(161)
    }

    proptest! {
        /// Vectors asked in any order, against themselves too.
        #[test]
        fn cosines_against_a_spread_vector_have_the_bits_of_the_dense_ones(
            batch in (1usize..200).prop_flat_map(|n| prop::collection::vec(prop::collection::vec(entry(), n), 1..6)),
            asks in prop::collection::vec((0usize..6, 0usize..6), 1..20),
        ) {
            let prepared: Vec<Prepared> =
                batch.iter().map(|v| Prepared::new(SparseVector::from_dense(v))).collect();
            let mut spread = Spread::default();
            for (a, b) in asks {
                let (Some(x), Some(y)) = (batch.get(a), batch.get(b)) else { continue };
                let want = cosine(x, y).unwrap().to_bits();
                let left = spread.left(&prepared[a]);
                prop_assert_eq!(left.cosine(&prepared[b]).unwrap().to_bits(), want);
            }
            prop_assert!(spread.dense.iter().all(|&x| x.to_bits() == 0));
        }

        /// One left vector against up to 13 right ones (whole groups of lanes and a rest, of
        /// different entry counts), some of another length: each answer is the dense cosine's
        /// bits, or its error, in the order asked. Most vectors are finite, so most cosines
        /// take the side-by-side sums.
        #[test]
        fn a_batch_of_cosines_answers_each_as_the_dense_cosine(
            n in 1usize..160,
            left in vector(),
            rights in prop::collection::vec((vector(), 0usize..8), 0..13),
        ) {
            let left: Vec<f64> = left.into_iter().take(n).collect();
            // Every eighth right vector is one longer than the left one.
            let rights: Vec<Vec<f64>> = rights
                .into_iter()
                .map(|(v, k)| v.into_iter().take(if k == 0 { n + 1 } else { n }).collect())
                .collect();
            let a = Prepared::new(SparseVector::from_dense(&left));
            let prepared: Vec<Prepared> =
                rights.iter().map(|v| Prepared::new(SparseVector::from_dense(v))).collect();
            let asked: Vec<&Prepared> = prepared.iter().collect();
            let mut spread = Spread::default();
            let mut out = vec![Ok(7.0)];
            spread.left(&a).cosines(&asked, &mut out);
            prop_assert_eq!(out.len(), rights.len() + 1);
            prop_assert_eq!(out.first().copied(), Some(Ok(7.0)));
            for (got, right) in out.iter().skip(1).zip(&rights) {
                let want = cosine(&left, right).map(f64::to_bits);
                prop_assert_eq!((*got).map(f64::to_bits), want);
            }
            prop_assert!(spread.dense.iter().all(|&x| x.to_bits() == 0));
        }
    }

    proptest! {
        /// Up to 14 vectors held as columns (some not finite, some of another length, so not
        /// held), and left vectors of every kind: each cosine a column gives has the dense
        /// cosine's bits.
        #[test]
        fn cosines_against_columns_have_the_bits_of_the_dense_ones(
            n in 1usize..160,
            columns in prop::collection::vec((vector(), 0usize..8), 0..15),
            lefts in prop::collection::vec((vector(), 0usize..8), 1..6),
        ) {
            let cut = |v: Vec<f64>, k: usize| -> Vec<f64> {
                v.into_iter().take(if k == 0 { n + 1 } else { n }).collect()
            };
            let columns: Vec<Vec<f64>> = columns.into_iter().map(|(v, k)| cut(v, k)).collect();
            let prepared: Vec<Prepared> =
                columns.iter().map(|v| Prepared::new(SparseVector::from_dense(v))).collect();
            let asked: Vec<&Prepared> = prepared.iter().collect();
            let (held, placed) = Columns::new(&asked);
            prop_assert_eq!(placed.len(), columns.len());
            prop_assert!(placed.iter().flatten().count() <= COLUMNS);
            for (left, k) in lefts {
                let left = cut(left, k);
                let a = Prepared::new(SparseVector::from_dense(&left));
                let Some(dots) = held.dots(&a) else {
                    prop_assert!(a.norm.is_none() || held.rows.len() != left.len());
                    continue;
                };
                for (column, place) in columns.iter().zip(&placed) {
                    let Some(k) = *place else { continue };
                    let want = cosine(&left, column).map(f64::to_bits);
                    let got = held.cosine(&a, k, &dots).map(|r| r.map(f64::to_bits));
                    prop_assert_eq!(got, Some(want));
                }
            }
        }
    }

    #[test]
    fn different_lengths_are_an_error() {
        let a = Prepared::new(SparseVector::from_dense(&[1.0, 2.0]));
        let b = Prepared::new(SparseVector::from_dense(&[1.0, 2.0, 3.0]));
        let mut spread = Spread::default();
        assert!(spread.left(&a).cosine(&b).is_err());
    }
}
