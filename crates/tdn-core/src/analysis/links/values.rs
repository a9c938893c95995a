//! Which parts of a text count as link values (docs/how-it-decides.md, "Link"): ids, addresses,
//! dates, numbers of 100 or more, and sentences of six words or more. Short and common values
//! ("true", "user", "v1") are ignored so they do not create false links. Pure; no I/O.

use super::tokens::{TokenClass, clip, sentences, tokens};
use crate::analysis::params::{
    LINK_MIN_ID_CHARS, LINK_MIN_NUMBER, LINK_SENTENCE_MAX_BYTES, LINK_SENTENCE_MIN_WORDS,
};

/// The kind of a link value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// An id, an e-mail address or a link.
    Id,
    /// A date, a date-time, a weekday or a "6 November".
    Date,
    /// A number of 100 or more.
    Number,
    /// A sentence of six words or more.
    Sentence,
}

/// Values too common to mean anything when they recur (compared in lower case).
const COMMON_VALUES: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "user",
    "assistant",
    "system",
    "tool",
    "http",
    "https",
    "utf-8",
    "utf8",
    "v1",
    "v2",
    "v3",
    "gpt-4",
    "gpt-4o",
    "base64",
    "sha256",
    "iso-8601",
    "mp3",
    "mp4",
    "200",
    "404",
    "500",
];

const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Longest of [`COMMON_VALUES`], [`WEEKDAYS`] and [`MONTHS`] (a longer word is none of them).
const LONGEST_LISTED: usize = 9;

fn is_common(s: &str) -> bool {
    s.len() <= LONGEST_LISTED && COMMON_VALUES.iter().any(|c| c.eq_ignore_ascii_case(s))
}

fn is_month(s: &str) -> bool {
    (3..=LONGEST_LISTED).contains(&s.len()) && MONTHS.iter().any(|m| m.eq_ignore_ascii_case(s))
}

fn is_weekday(s: &str) -> bool {
    // Every weekday ends in "day": one test turns away nearly every other word.
    (6..=LONGEST_LISTED).contains(&s.len())
        && s.as_bytes()
            .get(s.len() - 3..)
            .is_some_and(|end| end.eq_ignore_ascii_case(b"day"))
        && WEEKDAYS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

fn day_of_month(s: &str) -> bool {
    s.len() <= 2 && s.parse::<u8>().is_ok_and(|d| (1..=31).contains(&d))
}

/// The numeric value of a number token (`1,200.50` is 1200.5).
pub(crate) fn number_value(s: &str) -> Option<f64> {
    let parsed = if s.contains(',') {
        let cleaned: String = s.chars().filter(|&c| c != ',').collect();
        cleaned.parse::<f64>()
    } else {
        s.parse::<f64>()
    };
    parsed.ok().filter(|x| x.is_finite())
}

/// True when an id token is long and distinctive enough to be a link value.
fn id_counts(s: &str) -> bool {
    let (mut chars, mut digits, mut letters) = (0usize, 0usize, 0usize);
    for c in s.chars() {
        chars += 1;
        if c.is_ascii_digit() {
            digits += 1;
        } else if c.is_alphabetic() {
            letters += 1;
        }
    }
    (chars >= LINK_MIN_ID_CHARS || (chars == 3 && digits >= 2 && letters >= 1)) && !is_common(s)
}

/// Calls `f` with each link value of `text`, atoms (ids, dates, numbers) first, then
/// sentences; stops when `f` returns false.
#[cfg(test)]
pub(crate) fn link_values<'a>(text: &'a str, f: impl FnMut(&'a str, ValueKind) -> bool) {
    link_values_in(std::iter::once(text), f);
}

/// [`link_values`] of the text that `leaves` make joined by newlines, read leaf by leaf: no
/// value holds a newline (a token ends at one, a sentence too, and a span of two tokens holds
/// none), so each value lies inside one leaf and is given as a span of it, in the order of the
/// joined text.
#[cfg(test)]
pub(crate) fn link_values_in<'a>(
    leaves: impl Iterator<Item = &'a str> + Clone,
    f: impl FnMut(&'a str, ValueKind) -> bool,
) {
    link_values_with(leaves, &mut Vec::new(), f);
}

/// Marks the end of a leaf's token starts in the buffer of [`link_values_with`] (a leaf is
/// shorter).
const LEAF_END: u32 = u32::MAX;

/// [`link_values_in`], keeping in `starts` (a buffer reused from call to call) where each
/// token of each leaf starts, so a sentence's words are counted from the tokens the atoms
/// were read from rather than by reading the sentence again (issue 11). The same count: no
/// token crosses a sentence's end (a line break is no joiner, and a stop mark ends a sentence
/// only before white space, which neither joins a token nor lies in a link), so the tokens of
/// a sentence read alone are the tokens of its leaf that start inside it.
pub(crate) fn link_values_with<'a>(
    leaves: impl Iterator<Item = &'a str> + Clone,
    starts: &mut Vec<u32>,
    mut f: impl FnMut(&'a str, ValueKind) -> bool,
) {
    starts.clear();
    for text in leaves.clone() {
        if !atoms(text, starts, &mut f) {
            return;
        }
        starts.push(LEAF_END);
    }
    let mut t = 0usize;
    for text in leaves {
        let mut it = sentences(text);
        while let Some((at, s)) = it.next_at() {
            let (at, end) = (at as u64, (at + s.len()) as u64);
            while starts.get(t).is_some_and(|&x| u64::from(x) < at) {
                t += 1;
            }
            let words = starts
                .get(t..)
                .unwrap_or_default()
                .iter()
                .take(LINK_SENTENCE_MIN_WORDS)
                .take_while(|&&x| u64::from(x) < end)
                .count();
            if words < LINK_SENTENCE_MIN_WORDS {
                continue;
            }
            let s = cut_at_word(s, LINK_SENTENCE_MAX_BYTES);
            if !f(s, ValueKind::Sentence) {
                return;
            }
        }
        // past this leaf's starts and its end mark
        while starts.get(t).is_some_and(|&x| x != LEAF_END) {
            t += 1;
        }
        t += 1;
    }
}

/// Calls `f` with each atom of `text` (ids, dates, numbers), noting in `starts` where each
/// token starts; false once `f` returned false.
fn atoms<'a>(
    text: &'a str,
    starts: &mut Vec<u32>,
    f: &mut impl FnMut(&'a str, ValueKind) -> bool,
) -> bool {
    // (the next token read ahead by hand: a `Peekable` here compiled to copies that stalled)
    let mut toks = tokens(text);
    let mut ahead = toks.next();
    while let Some(t) = ahead {
        ahead = toks.next();
        starts.push(u32::try_from(t.start).unwrap_or(LEAF_END - 1));
        let next = ahead.as_ref();
        let keep_going = match t.class {
            TokenClass::Email | TokenClass::Url => f(t.text, ValueKind::Id),
            TokenClass::Id => !id_counts(t.text) || f(t.text, ValueKind::Id),
            TokenClass::Date => {
                let whole = f(t.text, ValueKind::Date);
                whole && (t.text.len() <= 10 || f(clip(t.text, 10), ValueKind::Date))
            }
            TokenClass::Number => {
                let big = number_value(t.text).is_some_and(|x| x >= LINK_MIN_NUMBER);
                !big || is_common(t.text) || f(t.text, ValueKind::Number)
            }
            TokenClass::Word => {
                if is_weekday(t.text) {
                    f(t.text, ValueKind::Date)
                } else {
                    // "November 6": a month only matters before a day (asked second: most
                    // words are followed by no number).
                    match next {
                        Some(n)
                            if n.class == TokenClass::Number
                                && day_of_month(n.text)
                                && is_month(t.text) =>
                        {
                            span(text, t.start, n.start + n.text.len())
                                .is_none_or(|s| f(s, ValueKind::Date))
                        }
                        _ => true,
                    }
                }
            }
        };
        if !keep_going {
            return false;
        }
        // "6 November"
        if t.class == TokenClass::Number
            && day_of_month(t.text)
            && let Some(m) = next
            && m.class == TokenClass::Word
            && is_month(m.text)
            && let Some(s) = span(text, t.start, m.start + m.text.len())
            && !f(s, ValueKind::Date)
        {
            return false;
        }
    }
    true
}

/// A short span of `text` between two tokens, only when they are separated by one space.
fn span(text: &str, start: usize, end: usize) -> Option<&str> {
    let s = text.get(start..end)?;
    (s.len() <= 24 && s.matches(' ').count() == 1 && !s.contains(['\n', '\t'])).then_some(s)
}

/// `s` cut to at most `max` bytes at a word boundary.
fn cut_at_word(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let c = clip(s, max);
    match c.rfind(' ') {
        Some(i) if i > max / 2 => c.get(..i).unwrap_or(c),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(String, ValueKind)> {
        let mut v = Vec::new();
        link_values(text, |s, k| {
            v.push((s.to_owned(), k));
            true
        });
        v
    }

    #[test]
    fn ids_dates_big_numbers_and_long_sentences_are_values() {
        let v = all("Book ORD-1042 on Friday, 6 November, for 120 dollars and 30 minutes at 10.");
        let names: Vec<_> = v.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "ORD-1042",
                "Friday",
                "6 November",
                "120",
                "Book ORD-1042 on Friday, 6 November, for 120 dollars and 30 minutes at 10."
            ]
        );
    }

    #[test]
    fn short_and_common_values_are_ignored() {
        for s in [
            "true", "user", "v1", "42", "99", "ok", "s4", "abc", "gpt-4o",
        ] {
            assert!(all(s).is_empty(), "{s}");
        }
        assert!(
            all("the status is shipped now").is_empty(),
            "five words: no sentence"
        );
    }

    #[test]
    fn the_length_bounds_of_the_word_lists_hold() {
        let all = COMMON_VALUES.iter().chain(WEEKDAYS).chain(MONTHS);
        assert!(all.clone().all(|w| w.len() <= LONGEST_LISTED));
        assert!(MONTHS.iter().all(|w| w.len() >= 3));
        assert!(WEEKDAYS.iter().all(|w| w.len() >= 6));
        assert!(is_month("MAY") && is_weekday("Wednesday") && is_common("Assistant"));
        assert!(!is_month("mayday") && !is_weekday("fridays"));
    }

    #[test]
    fn number_values_drop_thousands_separators() {
        assert_eq!(number_value("1,200.50"), Some(1200.5));
        assert_eq!(number_value("120"), Some(120.0));
        assert_eq!(number_value("1.2.3"), None);
    }

    /// [`link_values_in`] as a plain reading gives it: each sentence's words counted by
    /// reading the sentence alone.
    fn by_reading_each_sentence(leaves: &[String]) -> Vec<(String, ValueKind)> {
        let mut out = Vec::new();
        for text in leaves {
            atoms(text, &mut Vec::new(), &mut |v, k| {
                out.push((v.to_owned(), k));
                true
            });
        }
        for text in leaves {
            for s in sentences(text) {
                if tokens(s).count() >= LINK_SENTENCE_MIN_WORDS {
                    let s = cut_at_word(s, LINK_SENTENCE_MAX_BYTES);
                    out.push((s.to_owned(), ValueKind::Sentence));
                }
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn sentence_words_counted_from_the_leaf_tokens_are_those_of_the_sentence(
            leaves in proptest::collection::vec(
                "([a-c0-9]{1,3}|[ .!?;:,'@/_-]|\n|\r|\t|\u{a0}|\u{2003}|\u{e9}|\u{2019}|http://a.b|https://x/y?)*",
                0..4,
            )
        ) {
            let mut got = Vec::new();
            link_values_in(leaves.iter().map(String::as_str), |v, k| {
                got.push((v.to_owned(), k));
                true
            });
            proptest::prop_assert_eq!(got, by_reading_each_sentence(&leaves));
        }
    }

    #[test]
    fn a_date_time_also_gives_its_date() {
        let v = all("2026-11-06T10:00:00Z");
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].0, "2026-11-06");
    }
}
