//! Splitting the final answer into claims: sentences, then clauses joined by "and" or "but" when
//! both sides are long enough to stand alone. Pure; bounded by [`MAX_CLAIMS`] and
//! [`MAX_ANSWER_BYTES`].

use crate::analysis::links::tokens::{clip, sentences, tokens};
use crate::analysis::rank::params::{CLAUSE_MIN_WORDS, MAX_ANSWER_BYTES, MAX_CLAIMS};

/// Clause separators, tried in this order.
const SEPARATORS: &[&str] = &[", and ", ", but ", " but ", " and "];

/// The claims of `answer`, in order.
pub fn split_claims(answer: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in sentences(clip(answer, MAX_ANSWER_BYTES)) {
        let s = s.trim_start_matches(['-', '*', '•', ' ']).trim();
        if s.is_empty() {
            continue;
        }
        split_clauses(s, &mut out);
        if out.len() >= MAX_CLAIMS {
            out.truncate(MAX_CLAIMS);
            break;
        }
    }
    out
}

/// Splits one sentence at separators whose both sides hold at least [`CLAUSE_MIN_WORDS`] words;
/// one pass, word counts by binary search over token starts.
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
                cuts.push((i, i + sep.len()));
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
        if words_in(seg, at) >= CLAUSE_MIN_WORDS && words_in(after, s.len()) >= CLAUSE_MIN_WORDS {
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

    #[test]
    fn a_huge_answer_gives_a_bounded_number_of_claims() {
        let answer = "It is done. ".repeat(100_000);
        assert_eq!(split_claims(&answer).len(), MAX_CLAIMS);
        let one_sentence = "we went there and ".repeat(10_000);
        assert_eq!(split_claims(&one_sentence).len(), MAX_CLAIMS);
    }
}
