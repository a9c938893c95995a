//! Turning a step's `input`/`output` (a string or any JSON) into text for matching and display.

use super::json::Json;
use serde_json::Value;
use std::borrow::Cow;

/// A string that holds a JSON object or array, parsed (recorders often store arguments and
/// results as JSON text); anything else is `None`.
pub fn embedded_json(s: &str) -> Option<Value> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<Value>(s)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

/// A JSON value that has a text: a `serde_json::Value` or a step's [`Json`].
pub trait AsText {
    /// Appends the text (see [`value_text`]) to `out`.
    fn text_into(&self, out: &mut String);
}

impl AsText for Value {
    fn text_into(&self, out: &mut String) {
        match self {
            Value::String(s) => out.push_str(s),
            Value::Null => {}
            other => out.push_str(&other.to_string()),
        }
    }
}

impl AsText for Json {
    fn text_into(&self, out: &mut String) {
        match self {
            Json::String(s) => out.push_str(s),
            Json::Null => {}
            other => out.push_str(&other.to_string()),
        }
    }
}

/// The text of a JSON value: a string as itself, anything else as compact JSON.
pub fn value_text<V: AsText + ?Sized>(v: &V) -> String {
    let mut out = String::new();
    v.text_into(&mut out);
    out
}

/// Appends the text of `v` to `out` (see [`value_text`]).
pub fn value_text_into<V: AsText + ?Sized>(v: &V, out: &mut String) {
    v.text_into(out);
}

/// True for characters that must never reach a terminal raw: C0 and C1 controls, DEL, the
/// bidirectional overrides and isolates that can reorder what a reader sees, and the invisible
/// format characters that hide text or make two names look alike (zero-width spaces and joiners,
/// the byte-order mark, soft hyphen, line and paragraph separators, tag characters).
pub fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// The first character of `s` at or after byte `from` that is a hazard and not one `keep`
/// keeps, with its byte offset. Printable ASCII bytes, which are no hazard, are passed over
/// without decoding (issue 28: a text of ASCII with one `…` was read character by character).
pub(crate) fn next_hazard(
    s: &str,
    from: usize,
    keep: impl Fn(char) -> bool,
) -> Option<(usize, char)> {
    let bytes = s.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        if (0x20..0x7f).contains(&b) {
            i += 1;
            continue;
        }
        let c = s.get(i..)?.chars().next()?;
        if is_hazard(c) && !keep(c) {
            return Some((i, c));
        }
        i += c.len_utf8();
    }
    None
}

/// Run text made safe for one line of a terminal: a line break (`\n`, `\r\n`, `\r`) or a tab
/// becomes one space, so prose reads as prose (issue 26: a literal `\u{a}` in a sentence read as
/// noise); every other control character, escape sequence introducer, bidi override and
/// invisible format character is written as a visible `\u{..}` escape.
/// Text written by a stranger goes through this (or [`inert_block`]) before it is printed.
pub fn inert_line(s: &str) -> Cow<'_, str> {
    inert(s, false)
}

/// Like [`inert_line`], but keeps newlines and tabs, for multi-line output (`\r\n` and a lone
/// `\r` become a newline).
pub fn inert_block(s: &str) -> Cow<'_, str> {
    inert(s, true)
}

fn inert(s: &str, keep_layout: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_layout && (c == '\n' || c == '\t');
    if next_hazard(s, 0, keep).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if keep(c) || !is_hazard(c) {
            out.push(c);
        } else if matches!(c, '\n' | '\r' | '\t') {
            // One space (one line break on several lines) for a line break, `\r\n` included.
            if c == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push(if keep_layout { '\n' } else { ' ' });
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    proptest::proptest! {
        /// Passing over printable ASCII finds the hazards a reading of every character finds.
        #[test]
        fn hazards_are_found_as_reading_every_character_finds_them(
            s in "[a-c ~\u{7f}\n\t\u{1b}\u{85}\u{ad}\u{e9}\u{2026}\u{200b}\u{202e}\u{e0041}]{0,24}",
            keep_layout in proptest::bool::ANY,
        ) {
            let keep = |c: char| keep_layout && (c == '\n' || c == '\t');
            let want: Vec<(usize, char)> = s
                .char_indices()
                .filter(|&(_, c)| is_hazard(c) && !keep(c))
                .collect();
            let mut got = Vec::new();
            let mut from = 0;
            while let Some((i, c)) = next_hazard(&s, from, keep) {
                got.push((i, c));
                from = i + c.len_utf8();
            }
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn strings_holding_json_are_recognised() {
        assert!(embedded_json(" {\"a\": 1}").is_some());
        assert!(embedded_json("[1, 2]").is_some());
        assert!(embedded_json("{not json").is_none());
        assert!(embedded_json("42").is_none());
    }

    #[test]
    fn inert_text_escapes_terminal_controls() {
        assert_eq!(inert_line("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(inert_block("x\ny\u{7}"), "x\ny\\u{7}");
        assert_eq!(inert_line("\u{9b}31m\u{202e}"), "\\u{9b}31m\\u{202e}");
        assert!(matches!(inert_line("plain text"), Cow::Borrowed(_)));
    }

    /// Issue 26: a line break in run text reads as a space on one line, never as `\u{a}`;
    /// the other controls stay visible escapes.
    #[test]
    fn line_breaks_become_spaces_on_one_line() {
        assert_eq!(inert_line("x\ny"), "x y");
        assert_eq!(
            inert_line("type: text\r\ntext: Berlin\tsunny"),
            "type: text text: Berlin sunny"
        );
        assert_eq!(inert_line("a\rb"), "a b");
        assert_eq!(inert_line("a\n\u{1b}[2J\u{b}"), "a \\u{1b}[2J\\u{b}");
        // On several lines a line break is one: `\r\n` and a lone `\r` too.
        assert_eq!(inert_block("a\r\nb\rc\u{1b}"), "a\nb\nc\\u{1b}");
    }

    #[test]
    fn invisible_format_characters_are_made_visible() {
        // Zero-width space, joiner, byte-order mark, a tag character: `look\u{200b}up` must not
        // print as `lookup`.
        assert_eq!(inert_line("look\u{200b}up"), "look\\u{200b}up");
        assert_eq!(
            inert_block("a\u{200d}b\u{feff}c\u{e0041}\n"),
            "a\\u{200d}b\\u{feff}c\\u{e0041}\n"
        );
        assert_eq!(inert_line("p\u{2028}q\u{2029}"), "p\\u{2028}q\\u{2029}");
        assert_eq!(inert_line("soft\u{ad}hyphen"), "soft\\u{ad}hyphen");
        assert!(matches!(inert_line("café ünïcödé 東京"), Cow::Borrowed(_)));
    }

    #[test]
    fn strings_are_kept_verbatim_and_objects_compact() {
        assert_eq!(value_text(&json!("a \"b\"")), "a \"b\"");
        assert_eq!(value_text(&json!({"a": [1, "x"]})), r#"{"a":[1,"x"]}"#);
        assert_eq!(value_text(&Value::Null), "");
        for v in [
            json!("a \"b\""),
            json!({"a": [1, "x"]}),
            Value::Null,
            json!(2.5),
        ] {
            assert_eq!(value_text(&Json::from(v.clone())), value_text(&v));
        }
    }
}
