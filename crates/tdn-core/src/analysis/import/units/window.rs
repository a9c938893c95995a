//! Texts found by a window of their bytes: a Rabin-Karp rolling hash over a fixed number of
//! bytes, looked up in a bit set (most places of a text are passed over at one bit test) and a
//! sorted table of the keys' hashes. Small enough to stay in the processor's cache however many
//! keys there are (an Aho-Corasick automaton over 100,000 anchors did not), and built in one
//! sort. Linear in the text searched.

/// The base of the rolling hash (an odd 64-bit constant; arithmetic wraps).
const BASE: u64 = 0x100_0000_01b3;

/// Bits of the bit set per key (a power of two of at least this many bits in all).
const BITS_PER_KEY: usize = 16;

/// Keys of `w` bytes, each with a number, findable in texts.
pub struct Windows {
    w: usize,
    /// `BASE` to the power `w - 1`, to take the byte leaving the window out.
    out: u64,
    /// One bit per possible hash (its low bits), set for the keys'.
    bits: Vec<u64>,
    mask: u64,
    /// (hash, key number), sorted.
    keys: Vec<(u64, u32)>,
}

fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |h, &b| {
        h.wrapping_mul(BASE).wrapping_add(u64::from(b) + 1)
    })
}

impl Windows {
    /// An index of `keys`, each `w` bytes or longer (only its first `w` bytes count), with its
    /// number. `w` is at least 1.
    pub fn new<'k>(w: usize, keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> Windows {
        let w = w.max(1);
        let mut list: Vec<(u64, u32)> = keys
            .into_iter()
            .filter_map(|(k, n)| k.get(..w).map(|b| (hash(b), n)))
            .collect();
        list.sort_unstable();
        list.dedup();
        let size = (list.len() * BITS_PER_KEY).next_power_of_two().max(64);
        let mut bits = vec![0u64; size / 64];
        let mask = (size as u64) - 1;
        for &(h, _) in &list {
            let b = (h & mask) as usize;
            if let Some(word) = bits.get_mut(b / 64) {
                *word |= 1 << (b % 64);
            }
        }
        let out = (1..w).fold(1u64, |p, _| p.wrapping_mul(BASE));
        Windows {
            w,
            out,
            bits,
            mask,
            keys: list,
        }
    }

    /// The numbers of the keys whose first bytes hash as `h` (a key's own window among them,
    /// others rarely).
    fn numbers(&self, h: u64) -> impl Iterator<Item = u32> + '_ {
        let from = self.keys.partition_point(|&(k, _)| k < h);
        self.keys
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .map(|&(_, n)| n)
    }

    /// Walks `text` from `from`: at each place whose window may start a key, `hit(place, numbers)`
    /// is called with the numbers of the keys whose window hashes alike (the caller checks the
    /// bytes); it returns where to go on from (a place after `place`: the end of what it took,
    /// or `place + 1`), or `None` to stop.
    pub fn scan(
        &self,
        text: &[u8],
        mut hit: impl FnMut(usize, &mut dyn Iterator<Item = u32>) -> Option<usize>,
    ) {
        let w = self.w;
        if self.keys.is_empty() || text.len() < w {
            return;
        }
        let mut at = 0;
        let mut h = match text.get(..w) {
            Some(b) => hash(b),
            None => return,
        };
        loop {
            let b = (h & self.mask) as usize;
            let set = self
                .bits
                .get(b / 64)
                .is_some_and(|word| word & (1 << (b % 64)) != 0);
            let mut next = at + 1;
            if set {
                let mut numbers = self.numbers(h);
                match hit(at, &mut numbers) {
                    Some(n) => next = n.max(at + 1),
                    None => return,
                }
            }
            if next + w > text.len() {
                return;
            }
            if next == at + 1 {
                let (Some(&old), Some(&new)) = (text.get(at), text.get(at + w)) else {
                    return;
                };
                h = h
                    .wrapping_sub((u64::from(old) + 1).wrapping_mul(self.out))
                    .wrapping_mul(BASE)
                    .wrapping_add(u64::from(new) + 1);
            } else {
                h = match text.get(next..next + w) {
                    Some(b) => hash(b),
                    None => return,
                };
            }
            at = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(ix: &Windows, text: &str) -> Vec<(usize, Vec<u32>)> {
        let mut out = Vec::new();
        ix.scan(text.as_bytes(), |at, ns| {
            let mut list = Vec::new();
            for n in ns {
                list.push(n);
            }
            out.push((at, list));
            Some(at + 1)
        });
        out
    }

    #[test]
    fn every_place_a_key_starts_is_found_by_the_rolling_hash() {
        let ix = Windows::new(4, [(b"abcd".as_slice(), 0), (b"cdxyz".as_slice(), 1)]);
        let hits = places(&ix, "zzabcdxyzabcd");
        let real: Vec<(usize, Vec<u32>)> = hits
            .into_iter()
            .filter(|(at, ns)| {
                ns.iter().any(|&n| {
                    let key: &[u8] = if n == 0 { b"abcd" } else { b"cdxy" };
                    "zzabcdxyzabcd".as_bytes().get(*at..at + 4) == Some(key)
                })
            })
            .collect();
        assert_eq!(real, vec![(2, vec![0]), (4, vec![1]), (9, vec![0])]);
        assert!(places(&ix, "abc").is_empty(), "shorter than a window");
        assert!(Windows::new(4, [(b"ab".as_slice(), 0)]).keys.is_empty());
    }

    #[test]
    fn a_jump_recomputes_the_window() {
        let ix = Windows::new(3, [(b"aaa".as_slice(), 7)]);
        let mut seen = Vec::new();
        ix.scan(b"aaaaaaa", |at, ns| {
            for n in ns {
                if n == 7 {
                    seen.push(at);
                }
            }
            Some(at + 3)
        });
        assert_eq!(seen, vec![0, 3]);
    }
}
