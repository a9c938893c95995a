//! The choice of a new value's anchor (see the parent module): its candidates, each two
//! neighbouring whole words or else each whole word, and the one filed with the fewest values,
//! found with few look-ups (issue 11). Pure; no I/O.

use crate::analysis::links::values::ValueKind;

/// A piece of a new value that could be its anchor: bytes `a..b` of it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    pub(super) a: usize,
    pub(super) b: usize,
    /// The order of candidates filed with as many values, as one number (compared at the
    /// cost of one, issue 11): one that holds a digit, then a longer one, then the one that
    /// comes first (no two candidates start at one byte, so no two rank the same).
    rank: u128,
}

/// The top bit of [`Candidate::rank`]: set for a candidate without an ASCII digit.
const PLAIN: u128 = 1 << 127;

impl Candidate {
    /// Bytes `a..b`; `plain` when no ASCII digit is in them.
    fn new(a: usize, b: usize, plain: bool) -> Candidate {
        // 63 bits for the length, counted down (a longer one ranks first), 64 for the start
        const LONGEST: u64 = u64::MAX >> 1;
        let len = u64::try_from(b.saturating_sub(a)).map_or(LONGEST, |l| l.min(LONGEST));
        let start = u64::try_from(a).unwrap_or(u64::MAX);
        let rank =
            if plain { PLAIN } else { 0 } | u128::from(LONGEST - len) << 64 | u128::from(start);
        Candidate { a, b, rank }
    }

    /// No ASCII digit in it.
    #[cfg(test)]
    fn plain(&self) -> bool {
        self.rank & PLAIN != 0
    }
}

/// The anchor candidates of value `text` whose words are `words` (each with whether it holds
/// an ASCII digit, [`super::each_word`]) into `out`: each two neighbouring whole words (see
/// the module docs), else each whole word (what lies between two words is no digit: it is not
/// alphanumeric).
#[inline]
pub(super) fn candidates_of(
    text: &str,
    kind: ValueKind,
    words: &[(usize, usize, bool)],
    out: &mut Vec<Candidate>,
) {
    out.clear();
    let whole = |a: usize, b: usize| kind != ValueKind::Sentence || (a > 0 && b < text.len());
    // the word before the one at hand, when whole, and whether it holds a digit
    let mut before: Option<(usize, bool)> = None;
    for &(a, b, digit) in words {
        let whole_here = whole(a, b);
        if whole_here && let Some((start, digit_before)) = before {
            out.push(Candidate::new(start, b, !(digit_before || digit)));
        }
        before = whole_here.then_some((a, digit));
    }
    if out.is_empty() {
        for &(a, b, digit) in words {
            if whole(a, b) {
                out.push(Candidate::new(a, b, !digit));
            }
        }
    }
}

/// The best of `candidates` for an anchor: the one filed with the fewest values so far, then
/// the first by [`Candidate::rank`], with what `look` found for it (`look` gives a candidate's
/// load). The first by rank is the best when it is filed with no value yet (as a new value's
/// is, most often); else the candidates are looked up in rank order and the first filed with
/// no value ends the search (none can be better): a sentence whose first choice is a common
/// pair of words looks up a few of its pairs, not all (issue 11). May reorder `candidates`.
pub(super) fn choose<T>(
    candidates: &mut [Candidate],
    mut look: impl FnMut(Candidate) -> (u32, T),
) -> Option<(u32, Candidate, T)> {
    // (a plain loop: `min_by_key` here compiled to copies that stalled)
    let mut first: Option<Candidate> = None;
    for &c in candidates.iter() {
        if first.is_none_or(|f| c.rank < f.rank) {
            first = Some(c);
        }
    }
    let c = first?;
    let (load, found) = look(c);
    let mut best = (load, c, found);
    if load == 0 {
        return Some(best);
    }
    // The next few by rank are picked one by one (one is filed with no value, most often);
    // the rest, if need be, in sorted order (so the search stays within n log n).
    let mut last = c.rank;
    for _ in 0..PICKED_ONE_BY_ONE {
        let mut next: Option<Candidate> = None;
        for &c in candidates.iter() {
            if c.rank > last && next.is_none_or(|n| c.rank < n.rank) {
                next = Some(c);
            }
        }
        let Some(c) = next else {
            return Some(best);
        };
        last = c.rank;
        let (load, found) = look(c);
        if load < best.0 {
            best = (load, c, found);
            if load == 0 {
                return Some(best);
            }
        }
    }
    candidates.sort_unstable_by_key(|c| c.rank);
    for &c in candidates.iter().filter(|c| c.rank > last) {
        let (load, found) = look(c);
        if load < best.0 {
            best = (load, c, found);
            if load == 0 {
                break;
            }
        }
    }
    Some(best)
}

/// Candidates [`choose`] picks by rank one by one before it sorts the rest.
const PICKED_ONE_BY_ONE: usize = 4;

#[cfg(test)]
mod tests {
    use super::super::each_word;
    use super::super::tests::words_by_chars;
    use super::*;
    use proptest::prelude::*;

    /// Candidates at distinct starts, with and without digits, and a load for each.
    fn candidates_and_loads() -> impl Strategy<Value = Vec<(Candidate, u32)>> {
        proptest::collection::vec((0usize..40, 1usize..6, any::<bool>(), 0u32..4), 0..16).prop_map(
            |parts| {
                let mut out: Vec<(Candidate, u32)> = Vec::new();
                for (a, len, plain, load) in parts {
                    if out.iter().all(|(c, _)| c.a != a) {
                        out.push((Candidate::new(a, a + len, plain), load));
                    }
                }
                out
            },
        )
    }

    /// The candidates as a plain reading gives them: each pair of neighbouring whole words
    /// (else each whole word), its bytes read for a digit.
    fn candidates_by_reading(text: &str, kind: ValueKind) -> Vec<(usize, usize, bool)> {
        let words = words_by_chars(text);
        let whole =
            |&(a, b): &(usize, usize)| kind != ValueKind::Sentence || (a > 0 && b < text.len());
        let plain = |a: usize, b: usize| !text[a..b].bytes().any(|c| c.is_ascii_digit());
        let mut out: Vec<(usize, usize, bool)> = words
            .windows(2)
            .filter(|p| whole(&p[0]) && whole(&p[1]))
            .map(|p| (p[0].0, p[1].1, plain(p[0].0, p[1].1)))
            .collect();
        if out.is_empty() {
            out = words
                .iter()
                .filter(|w| whole(w))
                .map(|&(a, b)| (a, b, plain(a, b)))
                .collect();
        }
        out
    }

    proptest! {
        #[test]
        fn candidates_are_those_of_a_plain_reading(
            text in "[a-c0-9 .\u{e9}\u{4e00}\u{0663}-]{0,30}",
            sentence in any::<bool>(),
        ) {
            let kind = if sentence { ValueKind::Sentence } else { ValueKind::Id };
            let mut words = Vec::new();
            each_word(&text, |a, b, digit| words.push((a, b, digit)));
            let mut got = Vec::new();
            candidates_of(&text, kind, &words, &mut got);
            let got: Vec<(usize, usize, bool)> = got.iter().map(|c| (c.a, c.b, c.plain())).collect();
            prop_assert_eq!(got, candidates_by_reading(&text, kind));
        }

        #[test]
        fn the_chosen_anchor_is_the_least_loaded_then_first_by_rank(
            given in candidates_and_loads()
        ) {
            let load_of = |c: Candidate| {
                given.iter().find(|(d, _)| d.a == c.a).map_or(u32::MAX, |&(_, l)| l)
            };
            // plain: every candidate looked up, the least by (load, rank)
            let want = given
                .iter()
                .map(|&(c, l)| (l, (c.plain(), std::cmp::Reverse(c.b - c.a), c.a), c.a))
                .min()
                .map(|(l, _, a)| (l, a));
            let mut candidates: Vec<Candidate> = given.iter().map(|&(c, _)| c).collect();
            let mut looked: Vec<usize> = Vec::new();
            let got = choose(&mut candidates, |c| {
                looked.push(c.a);
                (load_of(c), c.a)
            });
            prop_assert_eq!(got.map(|(l, c, found)| {
                assert_eq!(found, c.a, "what was found for it");
                (l, c.a)
            }), want);
            // each looked up once at most
            let n = looked.len();
            looked.sort_unstable();
            looked.dedup();
            prop_assert_eq!(looked.len(), n);
        }
    }
}
