//! The model outputs at the start of the ancestor windows, held side by side as the windows
//! slide (issue 11). The ranking takes the pieces in the order of their first ancestor, so the
//! first half of one piece's window (the outputs not held as [`super::prepared::Columns`]) is
//! mostly the next piece's: each output is laid out by bucket once, in the lane its position
//! picks, beside the columns in the [`Columns`]' rows, and a piece's dot products with all of
//! them are summed in one walk over its own entries ([`Columns::dots`]), instead of one walk
//! over each ancestor's entries per piece.
//!
//! Bits as [`super::prepared::Columns`]: each dot product is the sum, in bucket order from
//! `+0.0`, of the products at the buckets both sides have (the others add a product with zero,
//! which changes no such sum); only vectors whose entries are all finite are held, and only such
//! left vectors are walked. The rest, and a position whose lane another position of the same
//! window took, take [`super::prepared::Left::cosines`].

use super::cosine::LengthMismatch;
use super::evidence::MAX_ANCESTORS;
use super::prepared::{COLUMNS, Columns, Prepared, ROW, cosine_of_dot};

/// Lanes: an ancestor window's first half. Position `p` goes to lane `p % LANES`, so the
/// positions of one first half (consecutive, at most this many) never share a lane.
pub(super) const LANES: usize = MAX_ANCESTORS / 2;

/// The held outputs (see the module docs); their numbers are in the rows of a [`Columns`].
pub(super) struct Ring {
    /// Per lane, the output position it holds and its vector.
    held: [Option<(usize, Prepared)>; LANES],
}

impl Ring {
    /// An empty ring.
    pub(super) fn new() -> Ring {
        Ring {
            held: std::array::from_fn(|_| None),
        }
    }

    /// Holds `vector`, the output at position `p`, in its lane of `rows` (letting go of the
    /// one there) unless it is held already; `None` when it does not take this path (an entry
    /// not finite, or another length).
    pub(super) fn hold(
        &mut self,
        rows: &mut Columns,
        p: usize,
        vector: &Prepared,
    ) -> Option<usize> {
        let lane = p % LANES;
        let slot = self.held.get_mut(lane)?;
        if slot.as_ref().is_some_and(|(q, _)| *q == p) {
            return Some(lane);
        }
        let rows = &mut rows.rows;
        let at = COLUMNS + lane;
        if let Some((_, old)) = slot.take() {
            for &(i, _) in old.entries() {
                if let Some(cell) = rows.get_mut(i as usize).and_then(|r| r.0.get_mut(at)) {
                    *cell = 0.0;
                }
            }
        }
        if !vector.finite() || vector.dim() != rows.len() {
            return None;
        }
        for &(i, x) in vector.entries() {
            if let Some(cell) = rows.get_mut(i as usize).and_then(|r| r.0.get_mut(at)) {
                *cell = x;
            }
        }
        *slot = Some((p, vector.clone()));
        Some(lane)
    }

    /// True when `lane` holds position `p`.
    pub(super) fn holds(&self, lane: usize, p: usize) -> bool {
        self.held
            .get(lane)
            .is_some_and(|h| h.as_ref().is_some_and(|(q, _)| *q == p))
    }

    /// The cosine of `left` and the vector in `lane`, from the dot products
    /// [`Columns::dots`] gave.
    pub(super) fn cosine(
        &self,
        left: &Prepared,
        lane: usize,
        dots: &[f64; ROW],
    ) -> Option<Result<f64, LengthMismatch>> {
        let (_, right) = self.held.get(lane)?.as_ref()?;
        Some(cosine_of_dot(left, right, *dots.get(COLUMNS + lane)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::cosine::cosine;
    use super::super::sparse::SparseVector;
    use super::*;
    use proptest::prelude::*;

    use super::super::prepared::tests::vector_of as vector;

    proptest! {
        /// Outputs held at positions that slide forward, jump and go back (lanes let go and
        /// taken again), some not finite or of another length (not held), and left vectors of
        /// every kind: each cosine a lane gives has the dense cosine's bits, and a lane holds
        /// only the position it was last given.
        #[test]
        fn cosines_against_held_outputs_have_the_bits_of_the_dense_ones(
            n in 1usize..120,
            outputs in prop::collection::vec((vector(120), 0usize..8), 1..30),
            steps in prop::collection::vec((0usize..40, 1usize..=LANES, vector(120), 0usize..8), 1..12),
        ) {
            let cut = |v: &[f64], k: usize| -> Vec<f64> {
                v.iter().copied().take(if k == 0 { n + 1 } else { n }).collect()
            };
            let dense: Vec<Vec<f64>> = outputs.iter().map(|(v, k)| cut(v, *k)).collect();
            let prepared: Vec<Prepared> =
                dense.iter().map(|v| Prepared::new(SparseVector::from_dense(v))).collect();
            // Columns of one zero vector of the length asked, so the rows have `n` buckets.
            let zero = Prepared::new(SparseVector::from_dense(&vec![0.0; n]));
            let (mut rows, _) = Columns::new(&[&zero]);
            let mut ring = Ring::new();
            for (first, width, left, k) in steps {
                let positions: Vec<usize> =
                    (first..first + width).filter(|&p| p < dense.len()).collect();
                let lanes: Vec<Option<usize>> =
                    positions.iter().map(|&p| ring.hold(&mut rows, p, &prepared[p])).collect();
                let left = cut(&left, k);
                let a = Prepared::new(SparseVector::from_dense(&left));
                let Some(dots) = rows.dots(&a) else {
                    prop_assert!(!a.finite() || left.len() != n);
                    continue;
                };
                for (&p, lane) in positions.iter().zip(lanes) {
                    let Some(lane) = lane else {
                        prop_assert!(!prepared[p].finite() || dense[p].len() != n);
                        continue;
                    };
                    prop_assert!(ring.holds(lane, p));
                    let want = cosine(&left, &dense[p]).map(f64::to_bits);
                    let got = ring.cosine(&a, lane, &dots).map(|r| r.map(f64::to_bits));
                    prop_assert_eq!(got, Some(want));
                }
            }
        }
    }
}
