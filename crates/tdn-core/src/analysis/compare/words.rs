//! Word-level differences of two texts (the `similar` crate's Myers diff over words), bounded:
//! the common start and end are set aside first, and a middle longer than [`MAX_TOKENS`] on
//! either side is shown as removed whole and added whole rather than diffed.

use similar::{Algorithm, DiffTag, capture_diff_slices};

/// The most tokens (words and the spaces between them) of a middle that is diffed.
const MAX_TOKENS: usize = 4_000;
/// Tokens of context shown before a change in an excerpt (three words and their spaces).
const CONTEXT: usize = 6;
/// Tokens shown after a change in an excerpt.
const AFTER: usize = 4;
/// The most characters of an excerpt's changed part.
const CHANGED_CHARS: usize = 120;

/// One stretch of a word-level diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordChange {
    /// In both texts.
    Same(String),
    /// Only in the good run's text.
    Removed(String),
    /// Only in the bad run's text.
    Added(String),
}

/// Words and the white space between them, in order.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space: Option<bool> = None;
    for (i, c) in s.char_indices() {
        let space = c.is_whitespace();
        if in_space.is_some_and(|w| w != space) {
            out.push(&s[start..i]);
            start = i;
        }
        in_space = Some(space);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Token-level operations: (tag, good range, bad range), in order.
fn ops(g: &[&str], b: &[&str]) -> Vec<(DiffTag, std::ops::Range<usize>, std::ops::Range<usize>)> {
    let pre = g.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = g[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ge, be) = (g.len() - suf, b.len() - suf);
    let mut out = Vec::new();
    if pre > 0 {
        out.push((DiffTag::Equal, 0..pre, 0..pre));
    }
    if ge - pre > MAX_TOKENS || be - pre > MAX_TOKENS {
        out.push((DiffTag::Replace, pre..ge, pre..be));
    } else if ge > pre || be > pre {
        for op in capture_diff_slices(Algorithm::Myers, &g[pre..ge], &b[pre..be]) {
            let (tag, x, y) = op.as_tag_tuple();
            out.push((tag, x.start + pre..x.end + pre, y.start + pre..y.end + pre));
        }
    }
    if suf > 0 {
        out.push((DiffTag::Equal, ge..g.len(), be..b.len()));
    }
    out
}

/// The word-level diff of `good` and `bad`: stretches the same, removed (only in the good run's
/// text) and added (only in the bad run's).
pub fn word_diff(good: &str, bad: &str) -> Vec<WordChange> {
    let (g, b) = (tokens(good), tokens(bad));
    let mut out: Vec<WordChange> = Vec::new();
    let mut push = |c: WordChange| {
        let merged = match (out.last_mut(), &c) {
            (Some(WordChange::Same(a)), WordChange::Same(t))
            | (Some(WordChange::Removed(a)), WordChange::Removed(t))
            | (Some(WordChange::Added(a)), WordChange::Added(t)) => {
                a.push_str(t);
                true
            }
            _ => false,
        };
        if !merged
            && !matches!(&c, WordChange::Same(t) | WordChange::Removed(t) | WordChange::Added(t) if t.is_empty())
        {
            out.push(c);
        }
    };
    for (tag, x, y) in ops(&g, &b) {
        let (gs, bs) = (g[x].concat(), b[y].concat());
        match tag {
            DiffTag::Equal => push(WordChange::Same(gs)),
            DiffTag::Delete => push(WordChange::Removed(gs)),
            DiffTag::Insert => push(WordChange::Added(bs)),
            DiffTag::Replace => {
                push(WordChange::Removed(gs));
                push(WordChange::Added(bs));
            }
        }
    }
    out
}

/// The first place two texts differ, as a short excerpt of each: a few words before, the words
/// that differ, a few after (`…` where cut).
pub fn changed_words(good: &str, bad: &str) -> (String, String) {
    let (g, b) = (tokens(good), tokens(bad));
    let all = ops(&g, &b);
    let Some(first) = all.iter().position(|(t, _, _)| *t != DiffTag::Equal) else {
        return (clip(good), clip(bad));
    };
    let last = all[first..]
        .iter()
        .position(|(t, _, _)| *t == DiffTag::Equal)
        .map_or(all.len(), |n| first + n);
    let (gx, bx) = (all[first].1.start, all[first].2.start);
    let (gy, by) = (all[last - 1].1.end, all[last - 1].2.end);
    let side = |t: &[&str], from: usize, to: usize| {
        let lo = from.saturating_sub(CONTEXT);
        let hi = (to + AFTER).min(t.len());
        let mut s = String::new();
        if lo > 0 {
            s.push('…');
        }
        s.push_str(t[lo..from].concat().trim_start());
        s.push_str(&clip(&t[from..to].concat()));
        s.push_str(t[to..hi].concat().trim_end());
        if hi < t.len() {
            s.push('…');
        }
        s.replace(['\n', '\r'], " ")
    };
    (side(&g, gx, gy), side(&b, bx, by))
}

fn clip(s: &str) -> String {
    super::normalize::excerpt(s, CHANGED_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_word_is_removed_and_added_in_place() {
        let d = word_diff(
            "the weather in New York today",
            "the weather in Newark today",
        );
        assert_eq!(
            d,
            vec![
                WordChange::Same("the weather in ".into()),
                WordChange::Removed("New York".into()),
                WordChange::Added("Newark".into()),
                WordChange::Same(" today".into()),
            ]
        );
        assert_eq!(
            word_diff("same", "same"),
            vec![WordChange::Same("same".into())]
        );
        assert_eq!(word_diff("", "new"), vec![WordChange::Added("new".into())]);
    }

    #[test]
    fn the_excerpt_shows_the_first_change_with_a_little_context() {
        let (g, b) = changed_words(
            "one two three four five six seven eight nine ten eleven twelve",
            "one two three four five six SEVEN eight nine ten eleven twelve",
        );
        assert_eq!(g, "…four five six seven eight nine…");
        assert_eq!(b, "…four five six SEVEN eight nine…");
    }

    #[test]
    fn long_texts_that_differ_throughout_are_not_diffed_word_by_word() {
        let g: String = (0..50_000).map(|i| format!("w{i} ")).collect();
        let b: String = (0..50_000).map(|i| format!("v{i} ")).collect();
        let d = word_diff(&g, &b);
        assert!(
            matches!(&d[..], [WordChange::Removed(_), WordChange::Added(_), WordChange::Same(s)] if s == " ")
        );
        let (ge, be) = changed_words(&g, &b);
        assert!(ge.chars().count() < 200 && be.chars().count() < 200);
        assert!(
            ge.starts_with("w0 w1") && be.starts_with("v0 v1"),
            "{ge} / {be}"
        );
    }
}
