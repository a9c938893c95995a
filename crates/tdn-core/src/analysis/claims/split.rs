//! Splitting the final answer into claims: sentences, then clauses joined by "and" or "but" when
//! both sides are long enough to stand alone and, after "and", the right side opens a clause of
//! its own (a subject: a pronoun, an article, a name, a number), not a second verb or a list's
//! next item sharing the left side's subject ("helps developers monitor and debug apps"). Fenced
//! code blocks and bare list markers ("1.")
//! are not claims; a sentence does not end after an abbreviation ("St.", "Dr.") or an initial
//! ("Susan L.") or inside a parenthesis; a clause opening with "that" stays with the one before
//! it; a short line with more under it is a heading. Pure; bounded by
//! [`MAX_CLAIMS`] and [`MAX_ANSWER_BYTES`].

use crate::analysis::links::tokens::{clip, sentences, tokens};
use crate::analysis::params::{CLAUSE_MIN_WORDS, MAX_ANSWER_BYTES, MAX_CLAIMS};

/// Clause separators, tried in this order.
const SEPARATORS: &[&str] = &[", and ", ", but ", " but ", " and "];

/// Words after which a full stop does not end a sentence (compared in lower case, without the
/// stop).
const ABBREVIATIONS: &[&str] = &[
    "st", "dr", "mr", "mrs", "ms", "mt", "jr", "sr", "prof", "vs", "e.g", "i.e", "approx", "dept",
    "fig", "ft", "gen", "gov", "lt", "col", "sgt", "rev", "hon", "ave", "blvd", "u.s", "u.k",
    "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
];

/// One claim and the sentence it came from (its position among the answer's sentences).
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// The claim as written.
    pub text: String,
    /// The sentence it belongs to.
    pub sentence: usize,
    /// The whole sentence, when the claim is one clause of it.
    pub whole: String,
    /// The line is a heading: short, with no sentence's end, and more of the answer under it
    /// ("Links", "Minimal example (Python)").
    pub heading: bool,
}

/// A heading line has at most this many words.
const HEADING_MAX_WORDS: usize = 6;

/// The claims of `answer`, in order.
pub fn split_claims(answer: &str) -> Vec<String> {
    split_parts(answer).into_iter().map(|p| p.text).collect()
}

/// The claims of `answer` with their sentences, in order.
pub fn split_parts(answer: &str) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    let mut in_code = false;
    let mut k = 0usize;
    let text = clip(answer, MAX_ANSWER_BYTES);
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let bare = line.trim();
        if bare.starts_with("```") || bare.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let more_below = lines
            .get(n + 1..)
            .is_some_and(|rest| rest.iter().any(|l| !l.trim().is_empty()));
        let heading = more_below && is_heading_line(bare);
        for s in joined_sentences(line) {
            // Markdown bold markers are not part of what the answer says ("**Flight 1:** …").
            let unbolded = s.replace("**", "");
            let s = unbolded.trim_start_matches(['-', '*', '•', ' ']).trim();
            if s.is_empty() || is_list_marker(s) {
                continue;
            }
            let mut clauses = Vec::new();
            if heading {
                clauses.push(s.to_owned());
            } else {
                split_clauses(s, &mut clauses);
            }
            for c in clauses {
                out.push(Part {
                    text: c,
                    sentence: k,
                    whole: s.to_owned(),
                    heading,
                });
            }
            k += 1;
            if out.len() >= MAX_CLAIMS {
                out.truncate(MAX_CLAIMS);
                return out;
            }
        }
    }
    out
}

/// A line that reads as a heading: no list marker, at most [`HEADING_MAX_WORDS`] words, no
/// sentence's end or lead-in colon, no comma (a list of items), no digit (a figure is a claim),
/// and a capital letter first ("Links", "Minimal example (Python)").
fn is_heading_line(bare: &str) -> bool {
    let t = bare.trim_end();
    let words = t.split_whitespace().count();
    let starts_upper = t.chars().next().is_some_and(char::is_uppercase);
    words > 0
        && words <= HEADING_MAX_WORDS
        && starts_upper
        && !t.ends_with(['.', '!', '?', ';', ':'])
        && !t.contains(',')
        && !t.chars().any(|c| c.is_ascii_digit())
}

/// The sentences of one line, joined again where a full stop ended an abbreviation or an
/// initial rather than the sentence.
fn joined_sentences(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut carry = false;
    for s in sentences(line) {
        match out.last_mut() {
            Some(prev) if carry => {
                prev.push(' ');
                prev.push_str(s);
            }
            _ => out.push(s.to_owned()),
        }
        carry = out
            .last()
            .is_some_and(|p| ends_abbreviated(p) || open_bracket(p));
    }
    out
}

/// At most this many bytes of a sentence are kept together for a bracket left open.
const MAX_BRACKET_BYTES: usize = 1_000;

/// True when `s` leaves a parenthesis or a square bracket open: the sentence goes on after the
/// full stop inside it ("(the SDK creates a run for you. Each run is scored.)"). Bounded: a
/// bracket never closed does not glue a whole answer together.
fn open_bracket(s: &str) -> bool {
    if s.len() > MAX_BRACKET_BYTES {
        return false;
    }
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// True when `s` ends with an abbreviation's or an initial's full stop ("St.", "L.").
pub(crate) fn ends_abbreviated(s: &str) -> bool {
    let Some(body) = s.strip_suffix('.') else {
        return false;
    };
    let last = body
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    let initial = last.chars().count() == 1 && last.chars().all(char::is_uppercase);
    initial || ABBREVIATIONS.contains(&last.to_lowercase().as_str())
}

/// "1.", "2)", "a.", "iv." or "-": a marker with nothing after it.
fn is_list_marker(s: &str) -> bool {
    let body = s.trim_end_matches(['.', ')', ':']);
    if body.len() == s.len() {
        return false;
    }
    let numeric = !body.is_empty() && body.chars().all(|c| c.is_ascii_digit());
    let letter = body.chars().count() == 1 && body.chars().all(char::is_alphabetic);
    let roman = !body.is_empty() && body.len() <= 4 && body.chars().all(|c| "ivxIVX".contains(c));
    numeric || letter || roman
}

/// Words that open a clause with a subject of its own after "and" (compared in lower case).
const SUBJECT_OPENERS: &[&str] = &[
    "a", "all", "an", "both", "each", "every", "he", "her", "his", "i", "it", "its", "my", "no",
    "our", "she", "some", "the", "their", "there", "these", "they", "this", "those", "we", "you",
    "your",
];

/// True when `rest` (what follows "and") opens with a subject: one of [`SUBJECT_OPENERS`], a
/// word with a capital letter first (a name), or a number or an amount.
fn opens_clause(rest: &str) -> bool {
    let word: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '$' | '€' | '£' | '\''))
        .collect();
    let Some(first) = word.chars().next() else {
        return false;
    };
    first.is_uppercase()
        || first.is_ascii_digit()
        || matches!(first, '$' | '€' | '£')
        || SUBJECT_OPENERS.contains(&word.to_lowercase().as_str())
}

/// Splits one sentence at separators whose both sides hold at least [`CLAUSE_MIN_WORDS`] words,
/// whose right side does not open with "that", and, after "and", opens a clause
/// ([`opens_clause`]); one pass, word counts by binary search over token starts.
fn split_clauses(s: &str, out: &mut Vec<String>) {
    let starts: Vec<usize> = tokens(s).map(|t| t.start).collect();
    let words_in = |a: usize, b: usize| {
        starts.partition_point(|&x| x < b) - starts.partition_point(|&x| x < a)
    };
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let rest = s.get(i..).unwrap_or("");
        match SEPARATORS.iter().find(|sep| rest.starts_with(**sep)) {
            Some(sep) => {
                let after = rest.get(sep.len()..).unwrap_or("");
                if !sep.ends_with(" and ") || opens_clause(after) {
                    cuts.push((i, i + sep.len()));
                }
                i += sep.len();
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    let mut seg = 0;
    for (at, after) in cuts {
        if out.len() >= MAX_CLAIMS {
            return;
        }
        let subordinate = s
            .get(after..)
            .is_some_and(|r| r.to_lowercase().starts_with("that "));
        if !subordinate
            && words_in(seg, at) >= CLAUSE_MIN_WORDS
            && words_in(after, s.len()) >= CLAUSE_MIN_WORDS
        {
            if let Some(part) = s.get(seg..at) {
                out.push(part.trim().to_owned());
            }
            seg = after;
        }
    }
    if let Some(part) = s.get(seg..)
        && !part.trim().is_empty()
        && out.len() < MAX_CLAIMS
    {
        out.push(part.trim().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_and_long_clauses_become_claims() {
        assert_eq!(
            split_claims("Your call with Dana is booked and an invite was sent. Thanks!"),
            vec![
                "Your call with Dana is booked",
                "an invite was sent.",
                "Thanks!"
            ]
        );
        assert_eq!(
            split_claims("Dana and I will talk."),
            vec!["Dana and I will talk."]
        );
    }

    /// "and" between two verbs or list items of one subject is not a clause boundary (a real
    /// LlamaIndex answer was cut into "… help developers monitor" and "debug applications …").
    #[test]
    fn and_splits_only_before_a_clause_with_its_own_subject() {
        assert_eq!(
            split_claims(
                "Langfuse is a tool designed to help developers monitor and debug applications that use LLMs."
            ),
            vec![
                "Langfuse is a tool designed to help developers monitor and debug applications that use LLMs."
            ]
        );
        assert_eq!(
            split_claims(
                "It is useful for finding issues, tuning prompts, and keeping costs down."
            ),
            vec!["It is useful for finding issues, tuning prompts, and keeping costs down."]
        );
        assert_eq!(
            split_claims("The refund was issued today and it reaches your card in 3 days."),
            vec![
                "The refund was issued today",
                "it reaches your card in 3 days."
            ]
        );
        assert_eq!(
            split_claims("The order ships on Monday and $20 was refunded to your card."),
            vec![
                "The order ships on Monday",
                "$20 was refunded to your card."
            ]
        );
    }

    #[test]
    fn a_huge_answer_gives_a_bounded_number_of_claims() {
        let answer = "It is done. ".repeat(100_000);
        assert_eq!(split_claims(&answer).len(), MAX_CLAIMS);
        let one_sentence = "we went there and ".repeat(10_000);
        assert_eq!(split_claims(&one_sentence).len(), MAX_CLAIMS);
    }

    #[test]
    fn parts_know_their_sentence() {
        let p = split_parts("A is on and B is off. C is on.");
        let at: Vec<_> = p.iter().map(|p| (p.text.as_str(), p.sentence)).collect();
        assert_eq!(at, vec![("A is on", 0), ("B is off.", 0), ("C is on.", 1)]);
        assert_eq!(p[1].whole, "A is on and B is off.");
    }
}
