//! A string as JSON text, quoted and escaped as serde_json escapes it (and as canonical JSON,
//! RFC 8785, does): `"` and `\` with a backslash, the control characters `\b \t \n \f \r` by
//! name and the others as `\u00xx` (lowercase hex), everything else as is. Shared by the
//! influence ranking's text of a value and the ledger's canonical JSON.

/// Per byte: 0 when written as is, else the letter after the backslash (`u` for `\u00xx`).
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Appends `s` as a JSON string, quoted and escaped (see the module docs). Eight bytes are
/// checked at once while none of them needs an escape ([`needs_escape`]); the bytes of a word
/// that does are taken one by one.
pub fn write_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            && !needs_escape(u64::from_le_bytes(word))
        {
            i += 8;
            continue;
        }
        let escape = ESCAPE[usize::from(b)];
        if escape != 0 {
            // Every escaped byte is ASCII: both ends are character boundaries.
            out.push_str(s.get(start..i).unwrap_or_default());
            out.push('\\');
            if escape == b'u' {
                out.push_str("u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            } else {
                out.push(char::from(escape));
            }
            start = i + 1;
        }
        i += 1;
    }
    out.push_str(s.get(start..).unwrap_or_default());
    out.push('"');
}

/// True when one of the eight bytes of `word` needs an escape: a control character (below
/// 0x20), `"` or `\`. Each test is the exact "some byte is below n" (n at most 0x80) and "some
/// byte is zero" of the usual bit tricks: a byte of 0x80 or more is never below n.
pub(crate) fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) != 0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Strings with every kind of byte serde_json treats apart: controls, quotes,
    /// backslashes, DEL, non-ASCII letters and emoji.
    pub(crate) fn string() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => (0x20u8..0x7f).prop_map(char::from),
                2 => (0u8..0x20).prop_map(char::from),
                1 => prop::sample::select(vec!['"', '\\', '\u{7f}', '\u{e9}', '\u{2028}', '\u{1f600}', '/']),
            ],
            0..40,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    proptest! {
        /// Long strings too, with the bytes that need an escape anywhere in a word of eight.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(s in string(), pad in 0usize..9) {
            let s = format!("{}{s}{}", "p".repeat(pad), "q".repeat(pad));
            let mut out = String::new();
            write_json_string(&s, &mut out);
            prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }

        /// The word test is the byte test on any eight bytes.
        #[test]
        fn a_word_needs_an_escape_when_one_of_its_bytes_does(word in any::<[u8; 8]>(), at in 0usize..8, b in any::<u8>()) {
            let mut word = word;
            word[at] = b;
            let want = word.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
            prop_assert_eq!(needs_escape(u64::from_le_bytes(word)), want);
        }
    }

    #[test]
    fn every_control_character_and_the_quotes_are_escaped_as_serde_json_does() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let mut out = String::new();
        write_json_string(&all, &mut out);
        assert_eq!(out, serde_json::to_string(&all).unwrap());
        assert!(out.contains("\\u001b") && out.contains("\\n") && out.contains("\\\""));
    }
}
