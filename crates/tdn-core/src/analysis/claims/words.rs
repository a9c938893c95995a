//! Words for matching claims to sources: content words lightly stemmed, numbers in one canonical
//! form, ids and addresses in lower case, and names (capitalised words inside a sentence) marked
//! so they count double. Pure functions over text; no I/O.

use crate::analysis::links::tokens::{Token, TokenClass, tokens};
use crate::analysis::params::CLAIM_KEY_WEIGHT;
use hashbrown::{HashMap, HashSet};

/// Common English words left out of word matching.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by",
    "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it",
    "its", "it's", "this", "that", "these", "those", "there", "here", "i", "me", "my", "we", "our",
    "us", "you", "your", "yours", "he", "she", "him", "her", "his", "they", "them", "their",
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "both",
    "each", "few", "more", "most", "other", "some", "such", "only", "own", "same", "than", "too",
    "very", "just", "also", "has", "have", "had", "having", "do", "does", "did", "doing", "will",
    "would", "can", "could", "should", "shall", "may", "might", "must", "into", "about", "over",
    "under", "again", "up", "down", "out", "off", "now", "yet", "already", "still", "via", "per",
    "i'm", "i've", "i'd", "i'll", "you're", "you've", "you'll", "we're", "we've", "we'll", "let's",
    "get", "got", "gets", "s", "t", "re", "ve", "ll", "d", "m", "not", "no", "yes", "n't", "never",
    "one", "able", "after", "before", "during", "while", "until", "within", "without", "because",
    "since",
];

/// Contractions of a negation: function words, left out of word matching like the stop words.
pub const NEGATION_CONTRACTIONS: &[&str] = &[
    "cannot",
    "can't",
    "couldn't",
    "won't",
    "wouldn't",
    "shouldn't",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "hasn't",
    "haven't",
    "hadn't",
    "mustn't",
];

/// True when `word` (lower case) is a stop word. One look-up in a set built on first use (it
/// is asked for every word of every passage of evidence).
pub fn is_stopword(word: &str) -> bool {
    static SET: std::sync::OnceLock<hashbrown::HashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        STOPWORDS
            .iter()
            .chain(NEGATION_CONTRACTIONS.iter())
            .copied()
            .collect()
    })
    .contains(word)
}

/// What a term is; numbers, ids and names count double.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// An ordinary content word.
    Word,
    /// A capitalised word inside a sentence.
    Name,
    /// A number.
    Number,
    /// An id, date, address or link.
    Id,
}

/// One term of a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The matching key (stem, canonical number, lower-case id).
    pub key: String,
    /// Its kind.
    pub kind: TermKind,
}

impl Term {
    /// Its weight in word matching.
    pub fn weight(&self) -> f64 {
        match self.kind {
            TermKind::Word => 1.0,
            _ => CLAIM_KEY_WEIGHT,
        }
    }

    /// True for numbers and ids, which a source must hold for the claim to be supported.
    pub fn is_key(&self) -> bool {
        matches!(self.kind, TermKind::Number | TermKind::Id)
    }
}

/// The distinct terms of `text`, in order of first appearance. Stop words are left out.
pub fn terms(text: &str) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    // key -> position in `out`: one pass, so a text of many distinct words stays linear
    let mut at: HashMap<String, usize> = HashMap::new();
    each_term(text, |key, kind| match at.get(key) {
        Some(&k) => {
            if let Some(t) = out.get_mut(k)
                && kind == TermKind::Name
                && t.kind == TermKind::Word
            {
                t.kind = TermKind::Name;
            }
        }
        None => {
            at.insert(key.to_owned(), out.len());
            out.push(Term {
                key: key.to_owned(),
                kind,
            });
        }
    });
    out
}

/// Calls `f` with the key and kind of every term of `text` (repeats included). The key is
/// lent, not allocated: one buffer serves every token.
pub fn each_term(text: &str, f: impl FnMut(&str, TermKind)) {
    each_term_except(text, &HashSet::new(), f);
}

/// [`each_term`], leaving out tokens written exactly as one of `skip` (tool names): one set
/// lookup per token.
pub fn each_term_except(text: &str, skip: &HashSet<&str>, mut f: impl FnMut(&str, TermKind)) {
    let mut key = String::new();
    let mut scratch = String::new();
    for t in tokens(text) {
        if skip.contains(t.text) {
            continue;
        }
        let name_here = t.class == TokenClass::Word
            && starts_upper(t.text)
            && !at_sentence_start(text, t.start);
        token_terms(&t, name_here, &mut key, &mut scratch, &mut f);
    }
}

/// The terms of one token (what [`each_term`] reads of it): `name_here` when it is a
/// capitalised word inside a sentence. `key` and `scratch` are buffers lent for the call.
pub(super) fn token_terms(
    t: &Token<'_>,
    name_here: bool,
    key: &mut String,
    scratch: &mut String,
    f: &mut impl FnMut(&str, TermKind),
) {
    match t.class {
        TokenClass::Number => match number_of(t.text, scratch) {
            Some(x) => {
                number_key(x, key);
                f(key, TermKind::Number);
            }
            // Digits that are not one number (a version, an EC number "3.1.3.1", a dotted
            // code) are an id: left out, a claim made only of them would assert nothing.
            None => {
                lower_into(t.text, key);
                f(key, TermKind::Id);
            }
        },
        TokenClass::Id | TokenClass::Email | TokenClass::Url | TokenClass::Date => {
            lower_into(t.text, key);
            f(key, TermKind::Id);
        }
        TokenClass::Word => {
            for part in t.text.split(['-', '_']) {
                lower_word_into(part, key);
                if key.chars().count() < 2 || is_stopword(key) {
                    continue;
                }
                let kind = if name_here && starts_upper(part) {
                    TermKind::Name
                } else {
                    TermKind::Word
                };
                stem_in_place(key);
                f(key, kind);
            }
        }
    }
}

/// `s` in lower case, into `out` (ASCII byte by byte; other text as `str::to_lowercase`).
fn lower_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.extend(s.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// A word in lower case with typographic apostrophes made plain, into `out`.
fn lower_word_into(s: &str, out: &mut String) {
    lower_into(s, out);
    if out.contains('\u{2019}') {
        *out = out.replace('\u{2019}', "'");
    }
}

/// The numeric value of a number token (`1,200.50` is 1200.5), reading the digits through
/// `scratch` only when a group separator has to go.
fn number_of(s: &str, scratch: &mut String) -> Option<f64> {
    let parsed = if s.contains(',') {
        scratch.clear();
        scratch.extend(s.chars().filter(|&c| c != ','));
        scratch.parse::<f64>()
    } else {
        s.parse::<f64>()
    };
    parsed.ok().filter(|x| x.is_finite())
}

/// The canonical form of a number (`1200`, `19.5`), into `out`.
fn number_key(x: f64, out: &mut String) {
    use std::fmt::Write as _;
    out.clear();
    // Writing to a String cannot fail.
    let _ = write!(out, "{x}");
}

/// Currency signs that make the number after them an amount of money.
const CURRENCY_SIGNS: &[char] = &['$', '€', '£', '¥'];
/// Words that make the number before them an amount of money.
const CURRENCY_WORDS: &[&str] = &["dollars", "dollar", "usd", "eur", "euros", "euro", "gbp"];

/// The numbers of `text`, canonical, each with whether it is written as money (`$120`,
/// `120 dollars`).
pub fn numbers_in(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    each_number(text, |n, money| out.push((n.to_owned(), money)));
    out
}

/// Calls `f` with each number of `text`, canonical (lent, not allocated), and whether it is
/// written as money.
pub fn each_number(text: &str, mut f: impl FnMut(&str, bool)) {
    let mut key = String::new();
    let mut scratch = String::new();
    for t in tokens(text) {
        if t.class != TokenClass::Number {
            continue;
        }
        if let Some(x) = number_of(t.text, &mut scratch) {
            number_key(x, &mut key);
            f(&key, written_as_money(text, &t));
        }
    }
}

/// The canonical form of a number token, into `key`; false when its digits are not one
/// number (then [`each_number`] passes it over).
pub(super) fn number_token_key(t: &Token<'_>, key: &mut String, scratch: &mut String) -> bool {
    match number_of(t.text, scratch) {
        Some(x) => {
            number_key(x, key);
            true
        }
        None => false,
    }
}

/// True when the number token `t` of `text` is written as money: a currency sign before it
/// (white space between allowed), or a currency word after it.
pub(super) fn written_as_money(text: &str, t: &Token<'_>) -> bool {
    let before = text
        .get(..t.start)
        .and_then(|b| b.trim_end().chars().next_back());
    let after = text
        .get(t.start + t.text.len()..)
        .unwrap_or("")
        .trim_start()
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    before.is_some_and(|c| CURRENCY_SIGNS.contains(&c)) || currency_word(after)
}

/// True when a text ending in `c` may change how a number right after it (a currency sign)
/// or right before it (a digit) reads: the money test of [`written_as_money`] looks across
/// the space that joins two sentences only there.
pub(super) fn money_reads_across(c: char) -> bool {
    c.is_ascii_digit() || CURRENCY_SIGNS.contains(&c)
}

/// True when `word` names a currency, in any case.
fn currency_word(word: &str) -> bool {
    if word.is_ascii() {
        CURRENCY_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
    } else {
        // Some letters outside ASCII lower-case into it (the Kelvin sign gives 'k').
        CURRENCY_WORDS.contains(&word.to_lowercase().as_str())
    }
}

/// Calls `f` with the terms inside the ids of `text`: `certificate_7504069` gives the word
/// `certificate` and the number `7504069`, so a claim naming the number finds the id. The
/// evidence index reads them token by token ([`id_part_terms`]); this is its reference.
#[cfg(test)]
pub fn each_id_part(text: &str, mut f: impl FnMut(&str, TermKind)) {
    let mut key = String::new();
    let mut scratch = String::new();
    for t in tokens(text) {
        id_part_terms(&t, &mut key, &mut scratch, &mut f);
    }
}

/// The terms inside one id token (what [`each_id_part`] reads of it).
pub(super) fn id_part_terms(
    t: &Token<'_>,
    key: &mut String,
    scratch: &mut String,
    f: &mut impl FnMut(&str, TermKind),
) {
    if t.class != TokenClass::Id || !t.text.contains(['_', '-']) {
        return;
    }
    for part in t.text.split(['_', '-']) {
        if part.chars().all(|c| c.is_ascii_digit()) {
            if part.len() >= 2
                && let Some(x) = number_of(part, scratch)
            {
                number_key(x, key);
                f(key, TermKind::Number);
            }
        } else if part.chars().all(char::is_alphabetic) {
            lower_into(part, key);
            if key.chars().count() >= 2 && !is_stopword(key) {
                stem_in_place(key);
                f(key, TermKind::Word);
            }
        }
    }
}

fn starts_upper(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

/// True when the token at byte `start` opens a sentence (only white space or opening marks
/// since the last `.`, `!`, `?` or `:`, or since the start of the text).
fn at_sentence_start(text: &str, start: usize) -> bool {
    let before = text.get(..start).unwrap_or("");
    match before
        .chars()
        .rev()
        .find(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '(' | '*' | '-' | '•'))
    {
        None => true,
        Some(c) => matches!(c, '.' | '!' | '?' | ':' | '\n'),
    }
}

/// A light English stemmer: `booked`, `booking` and `book` give `book`; `policies` gives
/// `policy`; `scheduled` and `schedule` give `schedul`. Both sides of a match use it, so it only
/// needs to be consistent, not linguistically right.
pub fn stem(w: &str) -> String {
    let mut s = w.to_owned();
    stem_in_place(&mut s);
    s
}

/// [`stem`] of the word in `s`, in place.
pub fn stem_in_place(s: &mut String) {
    let len = s.chars().count();
    if len > 4 && s.ends_with("ies") {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if (len >= 6 && s.ends_with("ing"))
        || (len >= 5
            && s.ends_with("es")
            && (s.ends_with("shes")
                || s.ends_with("ches")
                || s.ends_with("xes")
                || s.ends_with("zes")))
    {
        s.truncate(s.len() - if s.ends_with("ing") { 3 } else { 2 });
    } else if len >= 5 && s.ends_with("ed") {
        s.truncate(s.len() - 2);
    } else if len >= 4
        && s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
    {
        s.truncate(s.len() - 1);
    }
    if s.chars().count() >= 5 && s.ends_with('e') {
        s.pop();
    }
    let b = s.as_bytes();
    if b.len() >= 4
        && let (Some(&x), Some(&y)) = (b.last(), b.get(b.len() - 2))
        && x == y
        && x.is_ascii_alphabetic()
        && !matches!(x, b'a' | b'e' | b'i' | b'o' | b'u' | b's')
    {
        s.pop();
    }
}

/// The words of `text` in lower case (for vocabulary checks), with typographic apostrophes
/// made plain.
pub fn lower_text(text: &str) -> String {
    text.to_lowercase().replace('\u{2019}', "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_agree_across_forms() {
        for (a, b) in [
            ("booked", "book"),
            ("booking", "book"),
            ("scheduled", "schedule"),
            ("refunds", "refund"),
            ("policies", "policy"),
            ("cancelled", "cancel"),
            ("created", "create"),
            ("arrives", "arrive"),
            ("shipped", "ship"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("book"), stem("boot"));
    }

    #[test]
    fn names_numbers_and_ids_count_double() {
        let t = terms("Your call with Dana is booked for $1,200.00 on ORD-77.");
        let keys: Vec<_> = t.iter().map(|t| (t.key.as_str(), t.kind)).collect();
        assert_eq!(
            keys,
            vec![
                ("cal", TermKind::Word),
                ("dana", TermKind::Name),
                ("book", TermKind::Word),
                ("1200", TermKind::Number),
                ("ord-77", TermKind::Id),
            ]
        );
        assert_eq!(t[1].weight(), CLAIM_KEY_WEIGHT);
        assert_eq!(t[0].weight(), 1.0);
    }

    #[test]
    fn digits_that_are_not_one_number_are_an_id() {
        let t = terms("3.1.3.1;1.11.1.7");
        let keys: Vec<_> = t.iter().map(|t| (t.key.as_str(), t.kind)).collect();
        assert_eq!(
            keys,
            vec![("3.1.3.1", TermKind::Id), ("1.11.1.7", TermKind::Id)]
        );
    }

    #[test]
    fn the_first_word_of_a_sentence_is_not_a_name() {
        let t = terms("Refunds are due. Dana agrees.");
        assert_eq!(t[0].kind, TermKind::Word);
        assert_eq!(
            t.iter().find(|t| t.key == "dana").map(|t| t.kind),
            Some(TermKind::Word)
        );
    }

    #[test]
    fn many_distinct_words_keep_their_order_once_each_and_a_later_name_counts() {
        // 20,000 distinct ids, each written twice, then a word that reappears as a name
        let ids: Vec<String> = (0..20_000).map(|i| format!("ZX{i:05}Q")).collect();
        let text = format!(
            "the carrier {} {} for Carrier.",
            ids.join(" "),
            ids.join(" ")
        );
        let t = terms(&text);
        assert_eq!(t.len(), 20_001, "carrier once, each id once");
        assert_eq!(t[0].key, "carrier");
        assert_eq!(t[0].kind, TermKind::Name, "promoted by the later 'Carrier'");
        assert_eq!(t[1].key, "zx00000q");
        assert_eq!(t[20_000].key, "zx19999q");
    }
}
