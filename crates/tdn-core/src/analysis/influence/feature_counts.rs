//! The distinct features of one text with their counts, in first-seen order, for the hashed
//! embedder. Features are told apart by their 64-bit mixed hash, which is already well spread,
//! so the table is a plain open-addressed array indexed by the hash's high bits: no hasher and no
//! per-text allocation. A slot holds the number of the text that filled it, so a slot of an
//! earlier text reads as empty and clearing for the next text touches no slot (issue 11:
//! zeroing each feature's slot again was a tenth of the embedder's work).

/// Slots kept from one text to the next (128 KiB); a longer text's table is let go after it.
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
}

/// The features of one text (see the module docs).
pub(super) struct FeatureCounts {
    /// The number of the text that filled the slot (high 32 bits) and the feature's position in
    /// `list` (low 32 bits); a slot whose number is not `text`'s is empty.
    slots: Vec<u64>,
    /// The number of the text at hand; never 0, so a zeroed slot is empty.
    text: u32,
    list: Vec<Feature>,
}

impl Default for FeatureCounts {
    fn default() -> Self {
        FeatureCounts {
            slots: Vec::new(),
            text: 1,
            list: Vec::new(),
        }
    }
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
        self.list.clear();
        if self.text == u32::MAX {
            // The numbers start again: every slot is emptied once.
            self.slots.fill(0);
            self.text = 0;
        }
        self.text += 1;
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
        let text = u64::from(self.text) << 32;
        let mut i = home(hash, mask);
        while let Some(&s) = self.slots.get(i) {
            if s & !u64::from(u32::MAX) != text {
                let at = self.list.len();
                let Ok(pos) = u32::try_from(at) else {
                    return None;
                };
                self.slots[i] = text | u64::from(pos);
                self.list.push(Feature {
                    hash,
                    weight,
                    count: 1,
                });
                return Some((at, true));
            }
            let at = (s & u64::from(u32::MAX)) as usize;
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
        let text = u64::from(self.text) << 32;
        let mut slots = vec![0u64; size];
        for (k, f) in self.list.iter().enumerate() {
            let mut i = home(f.hash, mask);
            while slots.get(i).is_some_and(|&s| s != 0) {
                i = (i + 1) & mask;
            }
            if let Some(s) = slots.get_mut(i) {
                // Positions fit in 32 bits: `add` numbers no more.
                *s = text | k as u64;
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
        // A feature of an earlier text is new to this one, with its own weight.
        f.clear();
        assert_eq!(f.add(hashes[0], 0.25), Some((0, true)));
        assert_eq!(f.add(5, 1.0), Some((1, true)));
        assert_eq!(f.add(hashes[0], 1.0), Some((0, false)));
        assert_eq!((f.list()[0].count, f.list()[0].weight), (2, 0.25));
    }

    #[test]
    fn the_text_numbers_start_again_without_mixing_texts() {
        let mut f = FeatureCounts::default();
        // Feature 3's slot is filled by text 1 only: after the numbers wrap it must read empty.
        f.add(3, 1.0);
        f.add(1, 1.0);
        f.text = u32::MAX - 1;
        f.clear();
        f.add(1, 1.0);
        f.add(2, 1.0);
        f.clear();
        // The numbers wrapped: features 1 and 2, counted by earlier texts, are new to this one.
        assert_eq!(f.add(2, 0.5), Some((0, true)));
        assert_eq!(f.add(1, 0.5), Some((1, true)));
        assert_eq!(f.add(2, 0.5), Some((0, false)));
        assert_eq!(f.add(3, 0.25), Some((2, true)));
    }
}
