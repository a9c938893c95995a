//! Sentence splitting of run text: after `.`, `!`, `?` or `;` followed by white space, and at
//! line breaks. One pass, linear in the text; the marks are found with `memchr` (issue 11).

use super::char_at;

/// The sentences of `text`: split after `.`, `!` or `?` followed by white space, and at line
/// breaks; trimmed, empty ones left out.
pub(crate) fn sentences(text: &str) -> Sentences<'_> {
    Sentences {
        text,
        pos: 0,
        stops: Search::new([b'.', b'!', b'?']),
        lines: Search::new([b'\n', b'\r', b';']),
    }
}

/// Iterator of [`sentences`].
pub(crate) struct Sentences<'a> {
    text: &'a str,
    pos: usize,
    /// Where the next `.`, `!` or `?` is.
    stops: Search,
    /// Where the next line break or `;` is.
    lines: Search,
}

/// A search for any of three bytes whose last answer is kept, so no byte is searched twice
/// (a text of many lines and one full stop at its end would else be read to its end once a
/// line), and one search serves every mark before the byte it found (issue 11: a search cost
/// more than the few bytes most sentences hold between two marks).
struct Search {
    needles: [u8; 3],
    /// Where the last search started, and the first byte found at or after that (None:
    /// none).
    last: Option<(usize, Option<usize>)>,
}

impl Search {
    fn new(needles: [u8; 3]) -> Search {
        Search {
            needles,
            last: None,
        }
    }

    /// The first of the bytes at or after byte `from` of `bytes` (always the same text).
    fn first_from(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.last
            && searched <= from
            && found.is_none_or(|at| at >= from)
        {
            return found;
        }
        let [a, b, c] = self.needles;
        let found = bytes
            .get(from..)
            .and_then(|tail| memchr::memchr3(a, b, c, tail))
            .map(|k| from + k);
        self.last = Some((from, found));
        found
    }
}

impl<'a> Sentences<'a> {
    /// The next sentence and its byte offset in the text.
    pub(crate) fn next_at(&mut self) -> Option<(usize, &'a str)> {
        loop {
            let rest = self.text.get(self.pos..)?;
            if rest.is_empty() {
                return None;
            }
            let (end, next_pos) = self.end_from(self.pos);
            let raw = self.text.get(self.pos..end).unwrap_or("");
            let s = raw.trim_start();
            let at = self.pos + (raw.len() - s.len());
            let s = s.trim_end();
            self.pos = next_pos.max(self.pos + 1);
            if !s.is_empty() {
                return Some((at, s));
            }
        }
    }

    /// Where the sentence that starts at byte `pos` ends, and where the next one starts (both
    /// from the text's start). The marks looked for are ASCII, found with `memchr` (issue 11:
    /// most bytes are none); a character is decoded only to tell whether one of 128 or more
    /// after a stop is white space.
    fn end_from(&mut self, pos: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        let mut from = pos;
        loop {
            let stop = self.stops.first_from(bytes, from);
            let line = self.lines.first_from(bytes, from);
            let first = match (stop, line) {
                (Some(s), Some(l)) => Some(s.min(l)),
                (s, l) => s.or(l),
            };
            let Some(i) = first else {
                return (bytes.len(), bytes.len());
            };
            if matches!(bytes.get(i), Some(b'\n' | b'\r')) {
                return (i, i + 1);
            }
            let spaced = match bytes.get(i + 1) {
                None => true,
                Some(&n) if n.is_ascii() => matches!(n, b'\t'..=b'\r' | b' '),
                Some(_) => char_at(self.text, i + 1).is_none_or(|(c, _)| c.is_whitespace()),
            };
            if spaced {
                return (i + 1, i + 1);
            }
            from = i + 1;
        }
    }
}

impl<'a> Iterator for Sentences<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.next_at().map(|(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The sentences as a plain reading splits them, character by character.
    fn sentences_by_chars(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(rest) = text.get(pos..) {
            if rest.is_empty() {
                break;
            }
            let (mut end, mut next_pos) = (rest.len(), rest.len());
            let mut it = rest.char_indices().peekable();
            while let Some((i, c)) = it.next() {
                if c == '\n' || c == '\r' {
                    (end, next_pos) = (i, i + 1);
                    break;
                }
                if matches!(c, '.' | '!' | '?' | ';')
                    && it.peek().is_none_or(|&(_, n)| n.is_whitespace())
                {
                    (end, next_pos) = (i + 1, i + 1);
                    break;
                }
            }
            let s = rest[..end].trim();
            pos += next_pos.max(1);
            if !s.is_empty() {
                out.push(s);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn sentences_read_what_decoding_every_character_reads(
            text in "[a-c .!?;\n\r\t\u{0b}\u{85}\u{a0}\u{2003}\u{e9}\u{4e00}]{0,40}"
        ) {
            let got: Vec<&str> = sentences(&text).collect();
            prop_assert_eq!(got, sentences_by_chars(&text));
        }

        /// Long texts of many marks and few stops (where the search for a stop is kept from
        /// sentence to sentence), each sentence at its offset.
        #[test]
        fn long_texts_split_as_a_plain_reading_splits_them(
            text in "([a-b]{1,3}|[ .;!\n]|\u{a0}|\u{e9}|\\.x|\\. ){0,120}"
        ) {
            let mut it = sentences(&text);
            let mut got = Vec::new();
            while let Some((at, s)) = it.next_at() {
                prop_assert_eq!(text.get(at..at + s.len()), Some(s));
                got.push(s);
            }
            prop_assert_eq!(got, sentences_by_chars(&text));
        }
    }

    #[test]
    fn sentences_split_on_stops_and_lines_but_not_decimals() {
        let s: Vec<_> = sentences("Refunds are $120.00 now. Really?\nYes; ok").collect();
        assert_eq!(s, vec!["Refunds are $120.00 now.", "Really?", "Yes;", "ok"]);
    }
}
