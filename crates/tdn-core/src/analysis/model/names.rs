//! Which ids a person can read, and what a step is called (issue 26): a span id
//! (`c8fddf8a758b15ca`), a trace id, a UUID or a prefixed random id (`span_62c8c4960656…`) says
//! nothing to a reader, so evidence and the screen name such a step by its name instead. Short
//! ids a person chose (`s4`, `cal-0007`) are kept.

use super::Step;

/// Fewest hex digits (dashes aside) that make an id opaque.
const OPAQUE_HEX: usize = 12;
/// Fewest characters of a mixed letters-and-digits token that make it opaque (`toolu_01A0…`).
const OPAQUE_TOKEN: usize = 16;

/// True for an id nobody chose to read: a UUID, a run of at least [`OPAQUE_HEX`] hex digits, or
/// a random token of letters and digits of at least [`OPAQUE_TOKEN`] characters, each possibly
/// after a word prefix (`span_`, `trace-`, `call_`, `chatcmpl-`).
pub fn is_opaque_id(id: &str) -> bool {
    let body = strip_word_prefix(id);
    is_opaque_token(body)
}

/// `span_62c8…` → `62c8…`; an id without such a prefix is returned whole.
pub fn strip_word_prefix(id: &str) -> &str {
    let letters = id.bytes().take_while(u8::is_ascii_alphabetic).count();
    match id.as_bytes().get(letters) {
        Some(b'_' | b'-' | b'.') if letters > 0 => id.get(letters + 1..).unwrap_or(id),
        _ => id,
    }
}

/// True for a token (no prefix) nobody chose to read: see [`is_opaque_id`].
pub fn is_opaque_token(t: &str) -> bool {
    let digits = t.bytes().filter(u8::is_ascii_digit).count();
    let hex = t.bytes().filter(u8::is_ascii_hexdigit).count();
    let all_hex = t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if all_hex && hex >= OPAQUE_HEX && digits > 0 {
        return true;
    }
    let alnum = t.bytes().all(|b| b.is_ascii_alphanumeric());
    let letters = t.len() - digits;
    alnum && t.len() >= OPAQUE_TOKEN && digits >= 2 && letters >= 2
}

/// What a step is called: its name, else its tool's name; `None` when it has neither.
pub fn step_name(step: &Step) -> Option<&str> {
    step.name
        .as_deref()
        .or(step.tool.as_ref().map(|t| t.name.as_str()))
        .filter(|n| !n.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_ids_uuids_and_random_tokens_are_opaque_chosen_ids_are_not() {
        for id in [
            "c8fddf8a758b15ca",
            "ba8ab01bf086833c989ce2a7a29eee31",
            "171105b7-59dd-49c0-9677-0b95395aa46a",
            "span_62c8c4960656481aa44a01e3",
            "trace_98b1922f8dc0455daf6191f1167901de",
            "toolu_01A09q90qw90lq917835lq9",
        ] {
            assert!(is_opaque_id(id), "{id}");
        }
        for id in [
            "s4",
            "cal-0007",
            "refund-outdated-policy",
            "2.1",
            "s01",
            "messages",
            "deadbeef",
            "ChatCompletion",
        ] {
            assert!(!is_opaque_id(id), "{id}");
        }
    }
}
