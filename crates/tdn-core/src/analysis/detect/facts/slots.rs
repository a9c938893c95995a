//! One optional position per step, packed.

/// One optional position per step (a step, a tool), four bytes each instead of the sixteen of an
/// `Option<usize>`: the facts hold several such tables for every step of a big run (issue 11).
/// A position that does not fit in 32 bits is kept as none; no run that fits in memory has
/// that many steps or tools.
#[derive(Default)]
pub(super) struct Slots(Vec<u32>);

impl Slots {
    pub(super) const NONE: u32 = u32::MAX;

    pub(super) fn with_capacity(n: usize) -> Slots {
        Slots(Vec::with_capacity(n))
    }

    pub(super) fn nones(n: usize) -> Slots {
        Slots(vec![Slots::NONE; n])
    }

    pub(super) fn packed(p: Option<usize>) -> u32 {
        p.and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p != Slots::NONE)
            .unwrap_or(Slots::NONE)
    }

    pub(super) fn push(&mut self, p: Option<usize>) {
        self.0.push(Slots::packed(p));
    }

    /// Sets slot `i` (when it exists) to `p`.
    pub(super) fn set(&mut self, i: usize, p: usize) {
        if let Some(slot) = self.0.get_mut(i) {
            *slot = Slots::packed(Some(p));
        }
    }

    pub(super) fn get(&self, i: usize) -> Option<usize> {
        self.0
            .get(i)
            .filter(|&&p| p != Slots::NONE)
            .and_then(|&p| usize::try_from(p).ok())
    }
}
