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
