//! Vectors kept by their non-zero entries, and their cosine. A hashed vector touches a few dozen
//! of its 1,024 buckets, so a dense copy per text cost 8 KiB and a cosine 1,024 steps (issue 11).
//!
//! The cosine here gives exactly the bits of [`super::cosine::cosine`] on the dense vectors: the
//! same three sums, accumulated in index order, and a zero entry adds nothing to a sum that
//! starts at `+0.0` (a product with zero is `±0.0`, and `x + ±0.0 == x` for every `x` such a
//! sum can hold). Non-finite entries fall to the same answer, 0. Pure; no I/O.

use super::cosine::LengthMismatch;

/// A vector of `dim` numbers, stored as its non-zero entries in index order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseVector {
    dim: usize,
    entries: Vec<(u32, f64)>,
}

impl SparseVector {
    /// The non-zero entries of `dense`.
    pub fn from_dense(dense: &[f64]) -> SparseVector {
        SparseVector {
            dim: dense.len(),
            entries: dense
                .iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .filter_map(|(i, &x)| u32::try_from(i).ok().map(|i| (i, x)))
                .collect(),
        }
    }

    /// A vector of `dim` numbers from `(index, value)` entries in strictly increasing index
    /// order, all below `dim`; entries out of order or out of range are dropped.
    pub fn from_entries(dim: usize, entries: Vec<(u32, f64)>) -> SparseVector {
        let mut entries = entries;
        let mut last: Option<u32> = None;
        entries.retain(|&(i, x)| {
            let ok = (i as usize) < dim && last.is_none_or(|l| i > l) && x != 0.0;
            if ok {
                last = Some(i);
            }
            ok
        });
        SparseVector { dim, entries }
    }

    /// A vector of `dim` numbers from entries a caller built in strictly increasing index
    /// order, all below `dim` and non-zero (what [`SparseVector::from_entries`] would keep of
    /// them, without checking them again).
    pub(super) fn from_ordered(dim: usize, entries: Vec<(u32, f64)>) -> SparseVector {
        debug_assert!(
            entries.windows(2).all(|w| w[0].0 < w[1].0)
                && entries.iter().all(|&(i, x)| (i as usize) < dim && x != 0.0)
        );
        SparseVector { dim, entries }
    }

    /// The number of dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The non-zero entries, in index order.
    pub fn entries(&self) -> &[(u32, f64)] {
        &self.entries
    }

    /// The dense vector.
    pub fn to_dense(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.dim];
        for &(i, x) in &self.entries {
            if let Some(slot) = v.get_mut(i as usize) {
                *slot = x;
            }
        }
        v
    }
}

/// The cosine of two sparse vectors; bit for bit [`super::cosine::cosine`] of their dense forms.
pub fn cosine_sparse(a: &SparseVector, b: &SparseVector) -> Result<f64, LengthMismatch> {
    if a.dim != b.dim {
        return Err(LengthMismatch {
            left: a.dim,
            right: b.dim,
        });
    }
    let (dot, na, nb) = sums(a, b, 1.0, 1.0);
    if na == 0.0 || nb == 0.0 {
        return Ok(0.0);
    }
    let plain = dot / (na.sqrt() * nb.sqrt());
    if plain.is_finite() && na.is_finite() && nb.is_finite() {
        return Ok(plain);
    }
    let max = |v: &SparseVector| v.entries.iter().fold(0.0_f64, |m, (_, x)| m.max(x.abs()));
    let (max_a, max_b) = (max(a), max(b));
    if !(max_a.is_finite() && max_b.is_finite()) {
        return Ok(0.0);
    }
    let (dot, na, nb) = sums(a, b, max_a, max_b);
    if na == 0.0 || nb == 0.0 {
        return Ok(0.0);
    }
    let again = dot / (na.sqrt() * nb.sqrt());
    Ok(if again.is_finite() { again } else { 0.0 })
}

/// Cosines among a batch of vectors, each norm summed once. Asked `(e, a1), (e, a2), ...` with
/// the same left vector, as a scorer asks, it spreads the left vector out once and each cosine
/// costs the right vector's entries. Bits as [`cosine_sparse`]: the same sums in the same order
/// (a product with a zero of the spread vector adds nothing); vectors with a non-finite entry
/// and overflowing sums take [`cosine_sparse`] itself.
pub struct Cosines<'v> {
    vectors: &'v [SparseVector],
    /// `Σx²` in index order, when every entry is finite.
    norms: Vec<Option<f64>>,
    left: std::cell::Cell<Option<usize>>,
    spread: std::cell::RefCell<Vec<f64>>,
}

impl<'v> Cosines<'v> {
    /// Prepares the batch.
    pub fn new(vectors: &'v [SparseVector]) -> Cosines<'v> {
        let norms = vectors
            .iter()
            .map(|v| {
                v.entries
                    .iter()
                    .all(|(_, x)| x.is_finite())
                    .then(|| v.entries.iter().fold(0.0_f64, |n, (_, x)| n + x * x))
            })
            .collect();
        Cosines {
            vectors,
            norms,
            left: std::cell::Cell::new(None),
            spread: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// The cosine of vectors `a` and `b` of the batch; `None` when either is not in it.
    pub fn get(&self, a: usize, b: usize) -> Option<Result<f64, LengthMismatch>> {
        let (va, vb) = (self.vectors.get(a)?, self.vectors.get(b)?);
        let (Some(na), Some(nb)) = (self.norms.get(a).copied()?, self.norms.get(b).copied()?)
        else {
            return Some(cosine_sparse(va, vb));
        };
        if va.dim != vb.dim {
            return Some(cosine_sparse(va, vb));
        }
        if na == 0.0 || nb == 0.0 {
            return Some(Ok(0.0));
        }
        let mut spread = self.spread.borrow_mut();
        if self.left.get() != Some(a) {
            if let Some(old) = self.left.get().and_then(|o| self.vectors.get(o)) {
                for &(i, _) in &old.entries {
                    if let Some(x) = spread.get_mut(i as usize) {
                        *x = 0.0;
                    }
                }
            }
            if spread.len() < va.dim {
                spread.resize(va.dim, 0.0);
            }
            for &(i, x) in &va.entries {
                if let Some(slot) = spread.get_mut(i as usize) {
                    *slot = x;
                }
            }
            self.left.set(Some(a));
        }
        let dot = vb.entries.iter().fold(0.0_f64, |d, &(i, y)| {
            d + spread.get(i as usize).copied().unwrap_or(0.0) * y
        });
        let plain = dot / (na.sqrt() * nb.sqrt());
        if plain.is_finite() && na.is_finite() && nb.is_finite() {
            Some(Ok(plain))
        } else {
            Some(cosine_sparse(va, vb))
        }
    }
}

/// `Σ(a/sa · b/sb)`, `Σ(a/sa)²`, `Σ(b/sb)²` in index order (no division when a scale is 1).
fn sums(a: &SparseVector, b: &SparseVector, sa: f64, sb: f64) -> (f64, f64, f64) {
    let scale = |x: f64, s: f64| if s == 1.0 { x } else { x / s };
    let (mut dot, mut na, mut nb) = (0.0_f64, 0.0_f64, 0.0_f64);
    let (mut i, mut j) = (0, 0);
    let (ea, eb) = (&a.entries, &b.entries);
    loop {
        match (ea.get(i), eb.get(j)) {
            (None, None) => break,
            (Some(&(ia, x)), Some(&(ib, y))) if ia == ib => {
                let (x, y) = (scale(x, sa), scale(y, sb));
                dot += x * y;
                na += x * x;
                nb += y * y;
                i += 1;
                j += 1;
            }
            (Some(&(ia, _)), Some(&(ib, y))) if ib < ia => {
                let y = scale(y, sb);
                nb += y * y;
                j += 1;
            }
            (None, Some(&(_, y))) => {
                let y = scale(y, sb);
                nb += y * y;
                j += 1;
            }
            (Some(&(_, x)), _) => {
                let x = scale(x, sa);
                na += x * x;
                i += 1;
            }
        }
    }
    (dot, na, nb)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::cosine::cosine;
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = f64> {
        entry_with_zeros(4)
    }

    /// One vector entry for the bit-for-bit cosine tests: zeros (`zeros` in 4 + zeros), plain
    /// values, and the edge cases (-0, huge, tiny, infinite, NaN) whose bits a sum can change.
    pub(in crate::analysis::influence) fn entry_with_zeros(
        zeros: u32,
    ) -> impl Strategy<Value = f64> {
        prop_oneof![
            zeros => Just(0.0),
            4 => -3.0..3.0_f64,
            1 => Just(-0.0),
            1 => Just(1e200),
            1 => Just(-1e-300),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NAN),
        ]
    }

    proptest! {
        #[test]
        fn the_sparse_cosine_has_the_bits_of_the_dense_one(
            pair in (1usize..24).prop_flat_map(|n| (
                prop::collection::vec(entry(), n),
                prop::collection::vec(entry(), n),
            ))
        ) {
            let (a, b) = pair;
            let dense = cosine(&a, &b).unwrap();
            let sparse =
                cosine_sparse(&SparseVector::from_dense(&a), &SparseVector::from_dense(&b)).unwrap();
            prop_assert_eq!(dense.to_bits(), sparse.to_bits(), "{:?} {:?}", a, b);
        }
    }

    proptest! {
        #[test]
        fn a_batch_of_cosines_has_the_bits_of_the_dense_ones(
            batch in (1usize..16).prop_flat_map(|n| prop::collection::vec(prop::collection::vec(entry(), n), 1..6)),
            asks in prop::collection::vec((0usize..6, 0usize..6), 1..20),
        ) {
            let sparse: Vec<SparseVector> = batch.iter().map(|v| SparseVector::from_dense(v)).collect();
            let c = Cosines::new(&sparse);
            for (a, b) in asks {
                let want = match (batch.get(a), batch.get(b)) {
                    (Some(x), Some(y)) => Some(cosine(x, y).unwrap().to_bits()),
                    _ => None,
                };
                prop_assert_eq!(c.get(a, b).map(|r| r.unwrap().to_bits()), want);
            }
        }
    }

    #[test]
    fn different_lengths_are_an_error_and_round_trips_keep_values() {
        let a = SparseVector::from_dense(&[0.0, 1.5, 0.0, -2.0]);
        assert_eq!(a.entries(), &[(1, 1.5), (3, -2.0)]);
        assert_eq!(a.to_dense(), vec![0.0, 1.5, 0.0, -2.0]);
        let b = SparseVector::from_dense(&[1.0, 2.0]);
        assert!(cosine_sparse(&a, &b).is_err());
        assert_eq!(
            SparseVector::from_entries(4, vec![(3, 1.0), (1, 2.0), (9, 1.0)]).entries(),
            &[(3, 1.0)]
        );
    }
}
