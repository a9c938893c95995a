//! Vector arithmetic of influence.md §1-2: cosine similarity and the three ancestor signals
//! (AVG, PERSIST, DEPTH). Pure functions over slices; nothing here embeds text or allocates per
//! call beyond what the caller hands in.

/// Two vectors of different lengths were compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot compare vectors of different lengths ({left} and {right})")]
pub struct LengthMismatch {
    /// Length of the first vector.
    pub left: usize,
    /// Length of the second vector.
    pub right: usize,
}

/// `depth(n)` was asked for a count that is negative or not whole.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("the ancestor count '{0}' must be a whole number >= 0")]
pub struct BadCount(pub f64);

/// The default persistence threshold `T` (influence.md §2).
pub const DEFAULT_PERSISTENCE_THRESHOLD: f64 = 0.3;

/// `dot / (sqrt(Σa²) · sqrt(Σb²))`, the three sums accumulated together in index order.
///
/// Different lengths are an error (checked first, so `[]` against `[1]` is one). Empty vectors or
/// a zero sum of squares on either side give `0`. Never NaN: when the plain formula overflows
/// (squares past `f64::MAX`), both vectors are scaled by their largest magnitude and the formula
/// is applied again, which changes nothing for vectors that did not overflow.
pub fn cosine(a: &[f64], b: &[f64]) -> Result<f64, LengthMismatch> {
    if a.len() != b.len() {
        return Err(LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    let (mut dot, mut na, mut nb) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return Ok(0.0);
    }
    let plain = dot / (na.sqrt() * nb.sqrt());
    if plain.is_finite() && na.is_finite() && nb.is_finite() {
        return Ok(plain);
    }
    // Overflow (or a non-finite element). Scaling keeps the direction; an element that is itself
    // not finite leaves no direction to measure, so the answer is 0.
    let max_a = a.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let max_b = b.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if !(max_a.is_finite() && max_b.is_finite()) {
        return Ok(0.0);
    }
    let again = cosine_scaled(a, b, max_a, max_b);
    Ok(if again.is_finite() { again } else { 0.0 })
}

fn cosine_scaled(a: &[f64], b: &[f64], sa: f64, sb: f64) -> f64 {
    let (mut dot, mut na, mut nb) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (x / sa, y / sb);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// AVG: the mean of `cos(e, a_i)`, summed in ancestor order; 0 without ancestors.
pub fn average_relevancy(e: &[f64], ancestors: &[&[f64]]) -> Result<f64, LengthMismatch> {
    if ancestors.is_empty() {
        return Ok(0.0);
    }
    let mut sum = 0.0;
    for a in ancestors {
        sum += cosine(e, a)?;
    }
    Ok(sum / ancestors.len() as f64)
}

/// PERSIST: the share of ancestors with `cos(e, a_i) > threshold` (strictly); 0 without
/// ancestors. The threshold is never validated.
pub fn persistence(e: &[f64], ancestors: &[&[f64]], threshold: f64) -> Result<f64, LengthMismatch> {
    if ancestors.is_empty() {
        return Ok(0.0);
    }
    let mut above = 0usize;
    for a in ancestors {
        if cosine(e, a)? > threshold {
            above += 1;
        }
    }
    Ok(above as f64 / ancestors.len() as f64)
}

/// DEPTH: `1 / (1 + n)`.
pub fn depth(n: usize) -> f64 {
    1.0 / (1.0 + n as f64)
}

/// DEPTH for a count given as a number, as the library API of influence.md §2 allows: a negative
/// or fractional count is an error.
pub fn depth_of(n: f64) -> Result<f64, BadCount> {
    if !n.is_finite() || n < 0.0 || n.fract() != 0.0 {
        return Err(BadCount(n));
    }
    Ok(1.0 / (1.0 + n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_vectors_still_give_their_direction() {
        let big = [1e200, 0.0];
        let c = cosine(&big, &[1e200, 1e200]).unwrap();
        assert!((c - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12, "{c}");
        assert_eq!(cosine(&[f64::INFINITY, 1.0], &[1.0, 1.0]).unwrap(), 0.0);
        assert_eq!(cosine(&[f64::NAN, 1.0], &[1.0, 1.0]).unwrap(), 0.0);
    }

    #[test]
    fn depth_of_rejects_negative_and_fractional_counts() {
        assert_eq!(depth_of(2.0), Ok(1.0 / 3.0));
        assert!(depth_of(-1.0).is_err());
        assert!(depth_of(1.5).is_err());
        assert!(depth_of(f64::NAN).is_err());
        assert!(depth_of(f64::INFINITY).is_err());
    }
}
