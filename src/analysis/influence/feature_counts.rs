//! The distinct features of one text with their counts, in first-seen order, for the hashed
//! embedder. Features are told apart by their 64-bit mixed hash, which is already well spread,
//! so the table is a plain open-addressed array indexed by the hash's high bits: no hasher, no
//! per-text allocation, and a clear that touches only the slots the text used.

/// Slots kept from one text to the next (64 KiB); a longer text's table is let go after it.
const KEPT_SLOTS: usize = 1 << 14;
/// Slots of a fresh table.
const FIRST_SLOTS: usize = 1 << 10;

/// One distinct feature of a text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Feature {
    /// The mixed hash (bucket in the low bits, sign in the top bit).
    pub hash: u64,
    /// The weight of its kind.
    pub weight: f64,
    /// How many times the text has it.
    pub count: u32,
    /// Where it sits in the table.
    slot: u32,
}

/// The features of one text (see the module docs).
#[derive(Default)]
pub(super) struct FeatureCounts {
    /// 0 for an empty slot, else 1 + the feature's position in `list`.
    slots: Vec<u32>,
    list: Vec<Feature>,
}

impl FeatureCounts {
    /// The distinct features in first-seen order.
    pub(super) fn list(&self) -> &[Feature] {
        &self.list
    }

    /// Forgets the last text's features.
    pub(super) fn clear(&mut self) {
        if self.slots.len() > KEPT_SLOTS {
            *self = FeatureCounts::default();
            return;
        }
        for f in &self.list {
            if let Some(s) = self.slots.get_mut(f.slot as usize) {
                *s = 0;
            }
        }
        self.list.clear();
    }

    /// Counts one more of the feature with mixed hash `hash`; a new feature keeps `weight`.
    /// Returns the feature's position in [`FeatureCounts::list`] and whether it is new.
    #[inline]
    pub(super) fn add(&mut self, hash: u64, weight: f64) -> Option<(usize, bool)> {
        // At most half full, so a probe soon meets an empty slot.
        if (self.list.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = home(hash, mask);
        while let Some(&s) = self.slots.get(i) {
            if s == 0 {
                let at = self.list.len();
                let (Ok(next), Ok(slot)) = (u32::try_from(at + 1), u32::try_from(i)) else {
                    return None;
                };
                self.slots[i] = next;
                self.list.push(Feature {
                    hash,
                    weight,
                    count: 1,
                    slot,
                });
                return Some((at, true));
            }
            let at = s as usize - 1;
            if let Some(f) = self.list.get_mut(at)
                && f.hash == hash
            {
                f.count = f.count.saturating_add(1);
                return Some((at, false));
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Counts one more of the feature at position `at` of the list.
    #[inline]
    pub(super) fn bump(&mut self, at: usize) {
        if let Some(f) = self.list.get_mut(at) {
            f.count = f.count.saturating_add(1);
        }
    }

    /// Doubles the table and places every feature again (their order in `list` stays).
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let mask = size - 1;
        let mut slots = vec![0u32; size];
        for (k, f) in self.list.iter_mut().enumerate() {
            let mut i = home(f.hash, mask);
            while slots.get(i).is_some_and(|&s| s != 0) {
                i = (i + 1) & mask;
            }
            if let Some(s) = slots.get_mut(i) {
                *s = (k + 1) as u32;
                f.slot = i as u32;
            }
        }
        self.slots = slots;
    }
}

/// The slot a hash starts its probe at: its high bits (the low ones pick the vector bucket).
fn home(hash: u64, mask: usize) -> usize {
    (hash >> 32) as usize & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_keep_first_seen_order_across_growth_and_clears() {
        let mut f = FeatureCounts::default();
        // More than a fresh table holds, with hashes that share their high bits (one probe
        // chain) and repeats after the growth.
        let hashes: Vec<u64> = (0..3000u64).map(|k| (k % 7) << 32 | k).collect();
        for (k, &h) in hashes.iter().enumerate() {
            assert_eq!(f.add(h, 0.5), Some((k, true)));
        }
        for (k, &h) in hashes.iter().enumerate().take(10) {
            assert_eq!(f.add(h, 9.0), Some((k, false)));
        }
        let list = f.list();
        assert_eq!(list.len(), 3000);
        assert!(list.iter().zip(&hashes).all(|(x, &h)| x.hash == h));
        assert!(
            list.iter()
                .take(10)
                .all(|x| x.count == 2 && x.weight == 0.5)
        );
        assert!(list.iter().skip(10).all(|x| x.count == 1));
        f.bump(3);
        assert_eq!((f.list()[3].count, f.list()[4].count), (3, 2));
        f.clear();
        assert!(f.list().is_empty());
        f.add(5, 1.0);
        f.add(5, 1.0);
        assert_eq!(f.list().len(), 1);
        assert_eq!(f.list()[0].count, 2);
    }
}
