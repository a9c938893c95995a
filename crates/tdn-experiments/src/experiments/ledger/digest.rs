//! Digests (attribution-ledger.md §2): SHA-256 hex of bytes and of canonical JSON, the checks on
//! digest-shaped strings, and the sorted-unique string arrays that digests bind. No I/O.

use super::canonical::{CanonError, canonical, utf16_cmp};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes` (64 characters, no prefix).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in hash {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `digest(v)`: SHA-256 hex of the UTF-8 bytes of `canonical(v)`.
pub fn digest(v: &Value) -> Result<String, CanonError> {
    Ok(sha256_hex(canonical(v)?.as_bytes()))
}

/// True for exactly `len` lowercase hex digits.
pub fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// True for a SHA-256 hex digest as the ledger writes them.
pub fn is_sha256_hex(s: &str) -> bool {
    is_lower_hex(s, 64)
}

/// Sorts by UTF-16 code units and drops repeats: the form of every string array bound into a
/// digest.
pub fn sorted_unique(mut v: Vec<String>) -> Vec<String> {
    v.sort_by(|a, b| utf16_cmp(a, b));
    v.dedup();
    v
}

/// True when `v` is strictly increasing in UTF-16 order (sorted, no repeats).
pub fn is_sorted_unique(v: &[String]) -> bool {
    v.windows(2)
        .all(|w| matches!(w, [a, b] if utf16_cmp(a, b).is_lt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty_input_is_the_known_value() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn sorted_unique_uses_utf16_order() {
        let v = sorted_unique(vec![
            "\u{e000}".to_owned(),
            "😀".to_owned(),
            "a".to_owned(),
            "a".to_owned(),
        ]);
        assert_eq!(v, ["a", "😀", "\u{e000}"]);
        assert!(is_sorted_unique(&v));
        assert!(!is_sorted_unique(&["b".to_owned(), "a".to_owned()]));
        assert!(!is_sorted_unique(&["a".to_owned(), "a".to_owned()]));
    }

    #[test]
    fn hex_checks_want_lowercase_and_length() {
        assert!(is_sha256_hex(&sha256_hex(b"x")));
        assert!(!is_sha256_hex(&sha256_hex(b"x").to_uppercase()));
        assert!(!is_lower_hex("abc", 4));
    }
}
