//! Sparse vectors made ready for many cosines, and the cosines of one left vector against many.
//! A hashed vector has a hundred or two of its 1,024 buckets set, but two texts share only a
//! few dozen; a dot product that walks every entry of one side spends most of its additions on
//! zeros, one after the other. Here each vector carries a bit set of its buckets, so a dot
//! product visits only the buckets both sides have.
//!
//! Bits as [`super::sparse::Cosines`] and [`cosine_sparse`]: the products of the shared buckets
//! are summed in bucket order, starting from `+0.0`; the terms left out are products with zero,
//! which add nothing to such a sum (it can never be `-0.0`). Vectors with a non-finite entry and
//! overflowing sums take [`cosine_sparse`] itself.

use super::cosine::LengthMismatch;
use super::sparse::{SparseVector, cosine_sparse};

/// A vector with its norm and its bucket bit set.
pub(super) struct Prepared {
    vector: SparseVector,
    /// `Σx²` in index order, when every entry is finite.
    norm: Option<f64>,
    /// Per 64 indices, which have an entry.
    words: Vec<u64>,
    /// Per index, the position of its entry (only the indices with one are read); empty for a
    /// vector prepared for the left side only, or when a position does not fit in 16 bits, and
    /// a cosine with it on the right then takes [`cosine_sparse`].
    at: Vec<u16>,
}

impl Prepared {
    /// Prepares `vector`; `right` when it will be the right side of cosines (only that side
    /// needs the positions of its entries).
    pub(super) fn new(vector: SparseVector, right: bool) -> Prepared {
        let entries = vector.entries();
        let norm = entries
            .iter()
            .all(|(_, x)| x.is_finite())
            .then(|| entries.iter().fold(0.0_f64, |n, (_, x)| n + x * x));
        let mut words = vec![0u64; vector.dim().div_ceil(64)];
        for &(i, _) in entries {
            if let Some(w) = words.get_mut(i as usize / 64) {
                *w |= 1u64 << (i % 64);
            }
        }
        let mut at = Vec::new();
        if right && entries.len() <= usize::from(u16::MAX) {
            at.resize(vector.dim(), 0u16);
            for (k, &(i, _)) in entries.iter().enumerate() {
                if let Some(slot) = at.get_mut(i as usize) {
                    *slot = k as u16;
                }
            }
        }
        Prepared {
            vector,
            norm,
            words,
            at,
        }
    }

    /// The number of dimensions.
    pub(super) fn dim(&self) -> usize {
        self.vector.dim()
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

impl Left<'_> {
    /// The cosine of the left vector and `right`.
    pub(super) fn cosine(&self, right: &Prepared) -> Result<f64, LengthMismatch> {
        let (a, b) = (self.left, right);
        let (Some(na), Some(nb)) = (a.norm, b.norm) else {
            return cosine_sparse(&a.vector, &b.vector);
        };
        if a.dim() != b.dim() {
            return cosine_sparse(&a.vector, &b.vector);
        }
        if na == 0.0 || nb == 0.0 {
            return Ok(0.0);
        }
        if b.at.is_empty() {
            return cosine_sparse(&a.vector, &b.vector);
        }
        let values = b.vector.entries();
        let mut dot = 0.0_f64;
        for (w, (&wa, &wb)) in a.words.iter().zip(&b.words).enumerate() {
            let mut shared = wa & wb;
            while shared != 0 {
                let i = w * 64 + shared.trailing_zeros() as usize;
                shared &= shared - 1;
                let x = self.dense.get(i).copied();
                let y = b.at.get(i).and_then(|&k| values.get(usize::from(k)));
                if let (Some(x), Some(&(_, y))) = (x, y) {
                    dot += x * y;
                }
            }
        }
        let plain = dot / (na.sqrt() * nb.sqrt());
        if plain.is_finite() && na.is_finite() && nb.is_finite() {
            Ok(plain)
        } else {
            cosine_sparse(&a.vector, &b.vector)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::super::cosine::cosine;
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = f64> {
        super::super::sparse::tests::entry_with_zeros(6)
    }

    proptest! {
        /// Lengths past 64 so the bit sets have several words; vectors asked in any order,
        /// against themselves too.
        #[test]
        fn cosines_against_a_spread_vector_have_the_bits_of_the_dense_ones(
            batch in (1usize..200).prop_flat_map(|n| prop::collection::vec(prop::collection::vec(entry(), n), 1..6)),
            asks in prop::collection::vec((0usize..6, 0usize..6), 1..20),
        ) {
            let prepared: Vec<Prepared> =
                batch.iter().enumerate().map(|(k, v)| Prepared::new(SparseVector::from_dense(v), k % 3 != 2)).collect();
            let mut spread = Spread::default();
            for (a, b) in asks {
                let (Some(x), Some(y)) = (batch.get(a), batch.get(b)) else { continue };
                let want = cosine(x, y).unwrap().to_bits();
                let left = spread.left(&prepared[a]);
                prop_assert_eq!(left.cosine(&prepared[b]).unwrap().to_bits(), want);
            }
            prop_assert!(spread.dense.iter().all(|&x| x.to_bits() == 0));
        }
    }

    #[test]
    fn different_lengths_are_an_error() {
        let a = Prepared::new(SparseVector::from_dense(&[1.0, 2.0]), true);
        let b = Prepared::new(SparseVector::from_dense(&[1.0, 2.0, 3.0]), true);
        let mut spread = Spread::default();
        assert!(spread.left(&a).cosine(&b).is_err());
    }
}
