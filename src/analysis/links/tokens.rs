//! Tokens of run text: words, numbers, ids, addresses, links and ISO dates, as spans of the
//! original text, plus sentence splitting. Shared by the links (which need verbatim spans) and the
//! claim check (which needs words). One pass, linear in the text; no allocation per token.

/// What a token looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum TokenClass {
    /// Letters only (apostrophes and inner hyphens or underscores allowed).
    Word,
    /// Digits, with inner `,` or `.` (`1,200.50`).
    Number,
    /// Letters and digits mixed, or digits with inner separators (`ORD-1042`, `555-0142`, `10:00`).
    Id,
    /// `name@host.tld`.
    Email,
    /// `http://` or `https://` up to white space.
    Url,
    /// Starts `YYYY-MM-DD` (a date or date-time).
    Date,
}

impl TokenClass {
    /// An address or link: what a prompt injection would ask a tool to use.
    pub(crate) fn is_address(self) -> bool {
        matches!(self, TokenClass::Email | TokenClass::Url)
    }
}

/// One token: a span of the original text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    /// The text as written.
    pub text: &'a str,
    /// Byte offset in the scanned text.
    pub start: usize,
    /// Its shape.
    pub class: TokenClass,
}

/// Characters that may join two alphanumeric runs into one token.
fn is_joiner(c: char) -> bool {
    matches!(
        c,
        '-' | '_' | '.' | '@' | '/' | ':' | '+' | ',' | '\'' | '\u{2019}'
    )
}

/// The tokens of `text`, in order.
pub(crate) fn tokens(text: &str) -> Tokens<'_> {
    Tokens { text, pos: 0 }
}

/// Iterator of [`tokens`].
pub(crate) struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let text = self.text;
        let rest = text.get(self.pos..)?;
        let skip = first_alphanumeric(rest)?;
        let start = self.pos + skip;
        let tail = text.get(start..)?;
        if starts_with_ignore_case(tail, "http://") || starts_with_ignore_case(tail, "https://") {
            let len = tail
                .find(|c: char| {
                    c.is_whitespace()
                        || c.is_control()
                        || matches!(
                            c,
                            '"' | '\'' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '`' | '|'
                        )
                })
                .unwrap_or(tail.len());
            let url = tail
                .get(..len)
                .unwrap_or(tail)
                .trim_end_matches(['.', ',', ';', ':', '!', '?']);
            self.pos = start + len.max(1);
            return Some(Token {
                text: url,
                start,
                class: TokenClass::Url,
            });
        }
        // The leading run of ASCII letters and digits, byte by byte; the loop below reads on
        // from there as it would have.
        let run = tail.bytes().take_while(u8::is_ascii_alphanumeric).count();
        let mut end = start + run;
        let mut prev: Option<char> = run
            .checked_sub(1)
            .and_then(|last| tail.as_bytes().get(last))
            .map(|&b| char::from(b));
        let mut chars = tail
            .get(run..)
            .unwrap_or_default()
            .char_indices()
            .map(|(i, c)| (i + run, c))
            .peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_alphanumeric() {
                end = start + i + c.len_utf8();
                prev = Some(c);
                continue;
            }
            let next = chars.peek().map(|&(_, n)| n);
            let joins = is_joiner(c)
                && next.is_some_and(char::is_alphanumeric)
                && match c {
                    ',' => {
                        prev.is_some_and(|p| p.is_ascii_digit())
                            && next.is_some_and(|n| n.is_ascii_digit())
                    }
                    '\'' | '\u{2019}' => {
                        prev.is_some_and(char::is_alphabetic)
                            && next.is_some_and(char::is_alphabetic)
                    }
                    _ => true,
                };
            if !joins {
                break;
            }
            prev = Some(c);
        }
        let tok = text.get(start..end)?;
        self.pos = end.max(start + 1);
        Some(Token {
            text: tok,
            start,
            class: classify(tok),
        })
    }
}

/// The byte offset of the first alphanumeric character of `s`: ASCII bytes are read as bytes,
/// and from the first other character on, characters are decoded.
fn first_alphanumeric(s: &str) -> Option<usize> {
    let ascii = s
        .bytes()
        .take_while(|b| b.is_ascii() && !b.is_ascii_alphanumeric())
        .count();
    match s.as_bytes().get(ascii) {
        None => None,
        Some(b) if b.is_ascii() => Some(ascii),
        Some(_) => s
            .get(ascii..)?
            .find(|c: char| c.is_alphanumeric())
            .map(|k| ascii + k),
    }
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.as_bytes()
            .get(..prefix.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(prefix.as_bytes()))
}

fn classify(tok: &str) -> TokenClass {
    let b = tok.as_bytes();
    // '@' and '.' are single bytes: looked for byte by byte (a token is short).
    if let Some(at) = b.iter().position(|&c| c == b'@')
        && at > 0
        && b.get(at + 1..).is_some_and(|d| {
            d.contains(&b'.') && !d.starts_with(b".") && !d.ends_with(b".") && !d.contains(&b'@')
        })
    {
        return TokenClass::Email;
    }
    if b.len() >= 10
        && b.get(..4).is_some_and(|x| x.iter().all(u8::is_ascii_digit))
        && b.get(4) == Some(&b'-')
        && b.get(5..7)
            .is_some_and(|x| x.iter().all(u8::is_ascii_digit))
        && b.get(7) == Some(&b'-')
        && b.get(8..10)
            .is_some_and(|x| x.iter().all(u8::is_ascii_digit))
    {
        return TokenClass::Date;
    }
    let mut digits = false;
    let mut letters = false;
    let mut other = false;
    for c in tok.chars() {
        if c.is_ascii_digit() {
            digits = true;
        } else if c.is_alphabetic() || c.is_numeric() {
            letters = true;
        } else if c != ',' && c != '.' {
            other = true;
        }
    }
    match (digits, letters, other) {
        (true, false, false) => TokenClass::Number,
        (true, _, _) => TokenClass::Id,
        _ => TokenClass::Word,
    }
}

/// The sentences of `text`: split after `.`, `!` or `?` followed by white space, and at line
/// breaks; trimmed, empty ones left out.
pub(crate) fn sentences(text: &str) -> Sentences<'_> {
    Sentences { text, pos: 0 }
}

/// Iterator of [`sentences`].
pub(crate) struct Sentences<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Sentences<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            let rest = self.text.get(self.pos..)?;
            if rest.is_empty() {
                return None;
            }
            let mut end = rest.len();
            let mut next_pos = rest.len();
            let mut it = rest.char_indices().peekable();
            while let Some((i, c)) = it.next() {
                if c == '\n' || c == '\r' {
                    end = i;
                    next_pos = i + c.len_utf8();
                    break;
                }
                if matches!(c, '.' | '!' | '?' | ';')
                    && it.peek().is_none_or(|&(_, n)| n.is_whitespace())
                {
                    end = i + c.len_utf8();
                    next_pos = end;
                    break;
                }
            }
            let s = rest.get(..end).unwrap_or("").trim();
            self.pos += next_pos.max(1);
            if !s.is_empty() {
                return Some(s);
            }
        }
    }
}

/// `s` cut to at most `max` bytes, at a character boundary.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while cut > 0 && !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.get(..cut).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tokens as a plain reading decodes them, character by character from each token's
    /// start (what [`Tokens`] does with its ASCII shortcuts). Links are left out: the texts
    /// below hold none.
    fn by_chars(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(rest) = text.get(pos..) {
            let Some(skip) = rest.find(|c: char| c.is_alphanumeric()) else {
                break;
            };
            let start = pos + skip;
            let tail = &text[start..];
            let mut end = start;
            let mut prev: Option<char> = None;
            let mut chars = tail.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c.is_alphanumeric() {
                    end = start + i + c.len_utf8();
                    prev = Some(c);
                    continue;
                }
                let next = chars.peek().map(|&(_, n)| n);
                let joins = is_joiner(c)
                    && next.is_some_and(char::is_alphanumeric)
                    && match c {
                        ',' => {
                            prev.is_some_and(|p| p.is_ascii_digit())
                                && next.is_some_and(|n| n.is_ascii_digit())
                        }
                        '\'' | '\u{2019}' => {
                            prev.is_some_and(char::is_alphabetic)
                                && next.is_some_and(char::is_alphabetic)
                        }
                        _ => true,
                    };
                if !joins {
                    break;
                }
                prev = Some(c);
            }
            out.push((start, &text[start..end]));
            pos = end.max(start + 1);
        }
        out
    }

    proptest! {
        #[test]
        fn the_ascii_shortcuts_read_what_decoding_every_character_reads(
            text in "[a-cA-C0-9 ,.'@:/_\u{e9}\u{2019}\u{4e00}\u{00a0}\u{2014}-]{0,40}"
        ) {
            let got: Vec<(usize, &str)> = tokens(&text).map(|t| (t.start, t.text)).collect();
            prop_assert_eq!(got, by_chars(&text));
        }
    }

    fn classes(s: &str) -> Vec<(&str, TokenClass)> {
        tokens(s).map(|t| (t.text, t.class)).collect()
    }

    #[test]
    fn tokens_keep_ids_dates_numbers_and_addresses_whole() {
        use TokenClass::*;
        assert_eq!(
            classes("Refund ORD-1042 for $1,200.50 on 2026-11-06T10:00Z, mail a.b@x.org."),
            vec![
                ("Refund", Word),
                ("ORD-1042", Id),
                ("for", Word),
                ("1,200.50", Number),
                ("on", Word),
                ("2026-11-06T10:00Z", Date),
                ("mail", Word),
                ("a.b@x.org", Email),
            ]
        );
        assert_eq!(
            classes("see https://evil.example/x?y=1. Don't"),
            vec![
                ("see", Word),
                ("https://evil.example/x?y=1", Url),
                ("Don't", Word)
            ]
        );
        assert_eq!(
            classes("at 10:00 or 555-0142"),
            vec![("at", Word), ("10:00", Id), ("or", Word), ("555-0142", Id)]
        );
    }

    #[test]
    fn sentences_split_on_stops_and_lines_but_not_decimals() {
        let s: Vec<_> = sentences("Refunds are $120.00 now. Really?\nYes; ok").collect();
        assert_eq!(s, vec!["Refunds are $120.00 now.", "Really?", "Yes;", "ok"]);
    }

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(clip("abc", 10), "abc");
    }
}
