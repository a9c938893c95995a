//! The composite of influence.md §2: weight validation, the per-item adaptation for items without
//! ancestors, and the weighted sum. Pure arithmetic on [`Weights`] and [`Signals`].

use super::types::{Signals, Weights};

/// Why a set of weights cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WeightsError {
    /// One weight is negative, NaN or infinite.
    #[error("the weight '{name}' is {value}; every weight must be a finite number >= 0")]
    Invalid {
        /// `fa`, `avg`, `persist` or `depth`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// All four are zero, so every composite would be 0.
    #[error(
        "all four weights (fa, avg, persist, depth) are 0, so every score would be 0; give at least one a value above 0"
    )]
    AllZero,
}

impl WeightsError {
    /// The weight at fault, or `None` when the fault is that all are zero.
    pub fn weight(&self) -> Option<&'static str> {
        match self {
            WeightsError::Invalid { name, .. } => Some(name),
            WeightsError::AllZero => None,
        }
    }
}

/// Weights after adaptation, as each scored item carries them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptedWeights {
    /// The weights in effect for the item.
    pub weights: Weights,
    /// True when AVG and PERSIST mass moved to FA and DEPTH.
    pub adapted: bool,
}

/// Every weight finite and >= 0 (checked in the order fa, avg, persist, depth), and not all zero.
pub fn validate_weights(w: &Weights) -> Result<(), WeightsError> {
    for (name, value) in [
        ("fa", w.fa),
        ("avg", w.avg),
        ("persist", w.persist),
        ("depth", w.depth),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(WeightsError::Invalid { name, value });
        }
    }
    if w.fa == 0.0 && w.avg == 0.0 && w.persist == 0.0 && w.depth == 0.0 {
        return Err(WeightsError::AllZero);
    }
    Ok(())
}

/// The weights in effect for an item with `ancestors` ancestors: unchanged when it has any;
/// otherwise AVG and PERSIST weight moves to FA and DEPTH in their ratio (unless both are 0).
pub fn adapt_weights(w: &Weights, ancestors: usize) -> AdaptedWeights {
    if ancestors > 0 {
        return AdaptedWeights {
            weights: *w,
            adapted: false,
        };
    }
    let base = w.fa + w.depth;
    if base == 0.0 {
        return AdaptedWeights {
            weights: *w,
            adapted: false,
        };
    }
    let mass = w.avg + w.persist;
    AdaptedWeights {
        weights: Weights {
            fa: w.fa + (mass * w.fa) / base,
            avg: 0.0,
            persist: 0.0,
            depth: w.depth + (mass * w.depth) / base,
        },
        adapted: mass > 0.0,
    }
}

/// `fa·FA + avg·AVG + persist·PERSIST + depth·DEPTH`, added left to right.
pub fn composite(s: &Signals, w: &Weights) -> f64 {
    w.fa * s.fa + w.avg * s.avg + w.persist * s.persist + w.depth * s.depth
}
