//! How evidence sentences name things: steps as `step 's4' (position 4)`, values quoted in single
//! quotes, made inert and shortened, so a person can find them in the run and a terminal shows
//! them safely.

use crate::analysis::model::{Run, inert_line};
use crate::analysis::params::QUOTE_CHARS;
use std::borrow::Cow;

/// A stranger's value, quoted: `'Friday'`, cut to [`QUOTE_CHARS`] characters, inert.
pub fn quote(s: &str) -> String {
    format!("'{}'", short(s, QUOTE_CHARS))
}

/// A stranger's text, one line, inert, cut to `max` characters with an ellipsis.
pub fn short(s: &str, max: usize) -> String {
    let mut chars = s.trim().chars();
    let mut out: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    // Text with nothing to escape (nearly all) is kept as it is, not copied again.
    if let Cow::Owned(escaped) = inert_line(&out) {
        return escaped;
    }
    out
}

/// `step 's4' (position 4)` for the step at position `i` (by its name when its id is a span id:
/// [`Step::describe`](crate::analysis::model::Step::describe)).
pub fn step(run: &Run, i: usize) -> String {
    match run.steps.get(i) {
        Some(s) => s.describe(),
        None => format!("the step at position {}", i + 1),
    }
}

/// How verdicts name a step after a noun (`model call 's3'`): its id quoted; for a step whose
/// id nobody chose to read (a span id) but that has a name, the name quoted with its position,
/// `'ChatOpenAI' (position 8)`. An id the run does not hold is quoted as it is. Made inert.
pub fn step_label(run: &Run, id: &str) -> String {
    match run
        .step(id)
        .and_then(|s| s.readable_name().map(|n| (n, s.index)))
    {
        Some((name, index)) => format!("'{}' (position {})", inert_line(&name), index + 1),
        None => format!("'{}'", inert_line(id)),
    }
}

/// The tool name of a tool step, quoted, or `a tool`.
pub fn tool_of(run: &Run, i: usize) -> String {
    run.steps
        .get(i)
        .and_then(|s| s.tool.as_ref())
        .map_or_else(|| "a tool".to_owned(), |t| quote(&t.name))
}

/// "the tool 'x'" for a tool step with a name, else "a tool".
pub fn tool_phrase(run: &Run, i: usize) -> String {
    match run.steps.get(i).and_then(|s| s.tool.as_ref()) {
        Some(t) if !t.name.trim().is_empty() => format!("the tool {}", quote(&t.name)),
        _ => "a tool".to_owned(),
    }
}

/// "a" or "an" before a word, by its first letter (a vowel letter takes "an").
pub fn article(word: &str) -> &'static str {
    match word.trim_start().chars().next() {
        Some(c) if "aeiouAEIOU".contains(c) => "an",
        _ => "a",
    }
}

/// The arguments of a tool step as compact JSON, quoted, or `no arguments`.
pub fn args_of(run: &Run, i: usize) -> String {
    match run.steps.get(i).and_then(|s| s.tool.as_ref()) {
        Some(c) if !c.arguments.is_null() => quote(&c.arguments.to_string()),
        _ => "no arguments".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_inert_and_short() {
        assert_eq!(quote("Fri\u{1b}[2Jday"), "'Fri\\u{1b}[2Jday'");
        let long = "x".repeat(200);
        let q = quote(&long);
        assert_eq!(q.chars().count(), QUOTE_CHARS + 3);
        assert!(q.ends_with("…'"));
    }

    #[test]
    fn short_cuts_at_the_limit_and_marks_only_a_cut() {
        assert_eq!(short("  abc  ", 3), "abc");
        assert_eq!(short("abcd", 3), "abc…");
        assert_eq!(short("é\u{7}x", 2), "é\\u{7}…");
        assert_eq!(short("ab", 0), "…");
        assert_eq!(short("", 0), "");
    }
}
