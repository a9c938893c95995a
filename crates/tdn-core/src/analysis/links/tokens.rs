//! Tokens of run text: words, numbers, ids, addresses, links and ISO dates, as spans of the
//! original text, plus sentence splitting. Shared by the links (which need verbatim spans) and the
//! claim check (which needs words). One pass, linear in the text; no allocation per token.

mod sentences;

pub(crate) use sentences::sentences;

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

/// Whether the joiner `c`, between `prev` and `next`, joins them into one token: a comma only
/// between digits (1,000), an apostrophe only between letters (don't), any other joiner before
/// a letter or digit.
fn joins(prev: Option<char>, c: char, next: Option<char>) -> bool {
    next.is_some_and(char::is_alphanumeric)
        && match c {
            ',' => {
                prev.is_some_and(|p| p.is_ascii_digit()) && next.is_some_and(|n| n.is_ascii_digit())
            }
            '\'' | '\u{2019}' => {
                prev.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic)
            }
            _ => true,
        }
}

/// What a byte is, as bits of [`BYTE_CLASS`].
pub(super) const ALPHANUMERIC: u8 = 1;
pub(super) const DIGIT: u8 = 2;
const LETTER: u8 = 4;
/// A byte of 128 or more: part of a character that must be decoded.
pub(super) const HIGH: u8 = 8;
/// A joiner other than `,` and `.` (in a token, it makes an id of digits).
const OTHER: u8 = 16;
/// An `@`.
const AT: u8 = 32;
/// Any ASCII joiner ([`is_joiner`]), `,` and `.` included.
const JOINER: u8 = 64;

const fn byte_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            HIGH
        } else if b.is_ascii_digit() {
            ALPHANUMERIC | DIGIT
        } else if b.is_ascii_alphabetic() {
            ALPHANUMERIC | LETTER
        } else if b == b'@' {
            OTHER | AT | JOINER
        } else if matches!(b, b'-' | b'_' | b'/' | b':' | b'+' | b'\'') {
            OTHER | JOINER
        } else if b == b',' || b == b'.' {
            JOINER
        } else {
            0
        };
        i += 1;
    }
    t
}

/// The class bits of each byte.
static BYTE_CLASS: [u8; 256] = byte_classes();

#[inline]
pub(super) fn class_of(b: u8) -> u8 {
    BYTE_CLASS[usize::from(b)]
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
        let bytes = text.as_bytes();
        let start = first_alphanumeric(text, self.pos)?;
        if bytes.get(start).is_some_and(|&b| b | 0x20 == b'h')
            && let Some(tail) = text.get(start..)
            && (starts_with_ignore_case(tail, "http://")
                || starts_with_ignore_case(tail, "https://"))
        {
            let len = url_len(tail);
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
        // Byte by byte while the bytes are ASCII; a character is decoded only where one starts
        // with a byte of 128 or more. What the token holds (digits, letters, other joiners, an
        // `@`) is noted on the way, for its class.
        let mut i = start;
        let mut end = start;
        let mut prev: Option<char> = None;
        let mut seen = 0u8;
        loop {
            let run = i;
            while let Some(&b) = bytes.get(i) {
                let c = class_of(b);
                if c & ALPHANUMERIC == 0 {
                    break;
                }
                seen |= c;
                i += 1;
            }
            if i > run {
                end = i;
                prev = bytes.get(i - 1).map(|&b| char::from(b));
            }
            // An ASCII byte that is no joiner ends the token (white space, most often): told
            // by its class, without reading it as a character.
            match bytes.get(i) {
                Some(&b) if class_of(b) & (JOINER | HIGH) != 0 => {}
                _ => break,
            }
            let Some((c, len)) = char_at(text, i) else {
                break;
            };
            if !c.is_ascii() && c.is_alphanumeric() {
                seen |= LETTER;
                i += len;
                end = i;
                prev = Some(c);
                continue;
            }
            if !is_joiner(c) {
                break;
            }
            let next = char_at(text, i + len).map(|(n, _)| n);
            if !joins(prev, c, next) {
                break;
            }
            seen |= if c.is_ascii() {
                class_of(c as u8)
            } else {
                OTHER
            };
            prev = Some(c);
            i += len;
        }
        let tok = text.get(start..end)?;
        self.pos = end.max(start + 1);
        Some(Token {
            text: tok,
            start,
            class: class_from(tok, seen),
        })
    }
}

/// The character starting at byte `i` of `text` and its length in bytes (an ASCII byte is
/// read as it is, without decoding).
#[inline]
pub(super) fn char_at(text: &str, i: usize) -> Option<(char, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b.is_ascii() {
        return Some((char::from(b), 1));
    }
    let c = text.get(i..)?.chars().next()?;
    Some((c, c.len_utf8()))
}

/// The length of the link at the start of `tail`: up to white space, a control character or a
/// bracket or quote.
fn url_len(tail: &str) -> usize {
    let bytes = tail.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii() {
            if b <= b' '
                || b == 0x7f
                || matches!(
                    b,
                    b'"' | b'\''
                        | b'<'
                        | b'>'
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'{'
                        | b'}'
                        | b'`'
                        | b'|'
                )
            {
                return i;
            }
            i += 1;
            continue;
        }
        let Some((c, len)) = char_at(tail, i) else {
            return i;
        };
        if c.is_whitespace() || c.is_control() {
            return i;
        }
        i += len;
    }
    tail.len()
}

/// The byte offset of the first alphanumeric character of `text` from byte `from` on: ASCII
/// bytes are read as bytes, other characters are decoded.
fn first_alphanumeric(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        let c = class_of(b);
        if c & ALPHANUMERIC != 0 {
            return Some(i);
        }
        if c & HIGH == 0 {
            i += 1;
            continue;
        }
        let (ch, len) = char_at(text, i)?;
        if ch.is_alphanumeric() {
            return Some(i);
        }
        i += len;
    }
    None
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.as_bytes()
            .get(..prefix.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The class of token `tok`, given what it holds (`seen`: [`DIGIT`] for an ASCII digit,
/// [`LETTER`] for any other alphanumeric character, [`OTHER`] for a joiner other than `,` and
/// `.`, [`AT`] for an `@`).
fn class_from(tok: &str, seen: u8) -> TokenClass {
    let b = tok.as_bytes();
    // '@' and '.' are single bytes: looked for byte by byte (a token is short).
    if seen & AT != 0
        && let Some(at) = b.iter().position(|&c| c == b'@')
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
    match (seen & DIGIT != 0, seen & LETTER != 0, seen & OTHER != 0) {
        (true, false, false) => TokenClass::Number,
        (true, _, _) => TokenClass::Id,
        _ => TokenClass::Word,
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
                if !(is_joiner(c) && joins(prev, c, next)) {
                    break;
                }
                prev = Some(c);
            }
            out.push((start, &text[start..end]));
            pos = end.max(start + 1);
        }
        out
    }

    /// A token's class as a plain reading gives it, from its characters.
    fn classify_by_chars(tok: &str) -> TokenClass {
        let b = tok.as_bytes();
        if let Some(at) = tok.find('@')
            && at > 0
            && b.get(at + 1..).is_some_and(|d| {
                d.contains(&b'.')
                    && !d.starts_with(b".")
                    && !d.ends_with(b".")
                    && !d.contains(&b'@')
            })
        {
            return TokenClass::Email;
        }
        let digits_at = |r: std::ops::Range<usize>| {
            tok.get(r)
                .is_some_and(|x| x.chars().all(|c| c.is_ascii_digit()))
        };
        if b.len() >= 10
            && digits_at(0..4)
            && b[4] == b'-'
            && digits_at(5..7)
            && b[7] == b'-'
            && digits_at(8..10)
        {
            return TokenClass::Date;
        }
        let (mut digits, mut letters, mut other) = (false, false, false);
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

    proptest! {
        #[test]
        fn classes_are_what_the_characters_say(
            text in "[a-cA-C0-9 ,.'@:/_+\u{e9}\u{2019}\u{4e00}\u{0663}\u{00bd}-]{0,40}"
        ) {
            for t in tokens(&text).filter(|t| t.class != TokenClass::Url) {
                prop_assert_eq!(t.class, classify_by_chars(t.text), "{}", t.text);
            }
        }

        #[test]
        fn the_ascii_shortcuts_read_what_decoding_every_character_reads(
            text in "[a-cA-C0-9 ,.'@:/_\u{e9}\u{2019}\u{4e00}\u{00a0}\u{2014}-]{0,40}"
        ) {
            let got: Vec<(usize, &str)> = tokens(&text).map(|t| (t.start, t.text)).collect();
            prop_assert_eq!(got, by_chars(&text));
        }
    }

    /// A link's end as a plain reading finds it: the first white space, control character,
    /// bracket or quote.
    fn url_len_by_chars(tail: &str) -> usize {
        tail.find(|c: char| {
            c.is_whitespace()
                || c.is_control()
                || matches!(
                    c,
                    '"' | '\'' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '`' | '|'
                )
        })
        .unwrap_or(tail.len())
    }

    proptest! {
        #[test]
        fn links_end_where_decoding_every_character_ends_them(
            text in "[a-c/.:\"'<>(){}|` \t\u{0b}\u{7f}\u{85}\u{9f}\u{a0}\u{2003}\u{e9}\u{4e00}]{0,30}"
        ) {
            prop_assert_eq!(url_len(&text), url_len_by_chars(&text));
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
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(clip("abc", 10), "abc");
    }
}
