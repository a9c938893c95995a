//! A structural pre-scan of a native run's text (issue 11): where the top-level `"steps"` array
//! is and where each of its elements starts and ends, found without parsing any value, so that
//! the elements can then be parsed apart, on several threads (`parallel.rs`).
//!
//! The scan tracks only strings (with their escapes, exactly as JSON has them) and brackets. It
//! checks nothing else: every byte it skips is parsed afterwards by serde_json (the elements one
//! by one, the rest of the file with the array emptied), and any error there sends the file back
//! to the step-by-step reader. In valid JSON the scan's idea of nesting is the parser's, so when
//! all those parses succeed the pieces are exactly the elements the step-by-step reader sees.
//! A file it is not sure of gets `None`: one that does not open with `"format": "tdn.run/1"`
//! written plainly, whose first top-level `"steps"` is not written plainly or is not an array,
//! or that nests deeper than [`MAX_DEPTH`] anywhere before the array ends. Linear, no I/O.

use std::ops::Range;

/// The deepest nesting (the top-level object counts as 1) the scan accepts. serde_json refuses
/// values nested about 128 deep; a file anywhere near that is left to the step-by-step reader, so
/// an element parsed alone never gets past a limit the whole file would have hit.
pub(super) const MAX_DEPTH: usize = 64;

/// Where the steps are in a run's text.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StepsAt {
    /// The `"steps"` array's bytes, from its `[` to its `]` included.
    pub(super) array: Range<usize>,
    /// Each element's bytes in order, with the whitespace around it (none for `[]`).
    pub(super) elements: Vec<Range<usize>>,
}

/// Finds the top-level `"steps"` array of a native run and its elements.
pub(super) fn find_steps(text: &str) -> Option<StepsAt> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    i = expect(b, i, b"{")?;
    i = expect(b, skip_ws(b, i), b"\"format\"")?;
    i = expect(b, skip_ws(b, i), b":")?;
    i = expect(b, skip_ws(b, i), b"\"tdn.run/1\"")?;
    let mut depth = 1_usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                let end = string_end(b, i)?;
                if depth == 1 && b.get(i..end) == Some(b"\"steps\"") {
                    let colon = skip_ws(b, end);
                    if b.get(colon) == Some(&b':') {
                        let open = skip_ws(b, colon + 1);
                        return if b.get(open) == Some(&b'[') {
                            elements(b, open)
                        } else {
                            None
                        };
                    }
                }
                i = end;
            }
            b'{' | b'[' => {
                depth = deeper(depth)?;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return None;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The elements of the array opening at `open` (a `[` at depth 2: inside the top-level object).
fn elements(b: &[u8], open: usize) -> Option<StepsAt> {
    let mut elements = Vec::new();
    let mut start = open + 1;
    let mut i = start;
    let mut depth = 2_usize;
    loop {
        match *b.get(i)? {
            b'"' => i = string_end(b, i)?,
            b'{' | b'[' => {
                depth = deeper(depth)?;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 1 {
                    let last = start..i;
                    if !elements.is_empty() || skip_ws(b, start) < i {
                        elements.push(last);
                    }
                    return Some(StepsAt {
                        array: open..i + 1,
                        elements,
                    });
                }
                i += 1;
            }
            b',' if depth == 2 => {
                elements.push(start..i);
                start = i + 1;
                i = start;
            }
            _ => i += 1,
        }
    }
}

/// One level deeper than `depth`, or `None` past [`MAX_DEPTH`].
fn deeper(depth: usize) -> Option<usize> {
    Some(depth + 1).filter(|&d| d <= MAX_DEPTH)
}

/// The position just after the string opening at `open` (a `"`): a backslash always takes the
/// next byte with it (in JSON only `\uXXXX` takes more, and those are hex digits).
fn string_end(b: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let at = i + b.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

/// Past JSON's whitespace (space, tab, line feed, carriage return) from `i`.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Past `lit` when the text at `i` is exactly it.
fn expect(b: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    (b.get(i..i + lit.len())? == lit).then_some(i + lit.len())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn pieces(text: &str) -> Option<Vec<&str>> {
        let at = find_steps(text)?;
        assert_eq!(text.as_bytes()[at.array.start], b'[');
        assert_eq!(text.as_bytes()[at.array.end - 1], b']');
        Some(at.elements.into_iter().map(|r| &text[r]).collect())
    }

    #[test]
    fn it_splits_the_steps_array_at_its_own_commas() {
        let text = r#"{"format": "tdn.run/1", "x": {"steps": [9]}, "s": "\"steps\": [8]",
            "steps": [ {"id": "a,b", "t": "q\"]},\\"}, [1, [2, 3]] ,"]" ], "id": "r"}"#;
        assert_eq!(
            pieces(text).unwrap(),
            [
                r#" {"id": "a,b", "t": "q\"]},\\"}"#,
                " [1, [2, 3]] ",
                r#""]" "#
            ]
        );
    }

    #[test]
    fn empty_and_blank_arrays_have_no_elements_and_bad_commas_leave_an_empty_piece() {
        let head = r#"{"format":"tdn.run/1","steps":"#;
        assert_eq!(pieces(&format!("{head}[]}}")).unwrap(), Vec::<&str>::new());
        assert_eq!(
            pieces(&format!("{head}[ \n ]}}")).unwrap(),
            Vec::<&str>::new()
        );
        assert_eq!(pieces(&format!("{head}[1,]}}")).unwrap(), ["1", ""]);
        assert_eq!(pieces(&format!("{head}[,]}}")).unwrap(), ["", ""]);
    }

    /// Texts the scan is not sure of (the splitter's tests cut them at every block size too).
    pub(in crate::analysis::load::native) const REFUSED: [&str; 10] = [
        r#"{"id":"r","format":"tdn.run/1","steps":[]}"#,
        r#"{"format":"tdn.run\/1","steps":[]}"#,
        r#"{"format":"tdn.run/1","st\u0065ps":[]}"#,
        r#"{"format":"tdn.run/1","steps":{}}"#,
        r#"{"format":"tdn.run/1","x":[{"steps":[]}]}"#,
        r#"{"format":"tdn.run/1","steps":[{"a":"unterminated}]}"#,
        r#"{"format":"tdn.run/1","steps":[[1]"#,
        r#"{"format":"tdn.run/1"} {"steps":[]}"#,
        r#"[{"format":"tdn.run/1","steps":[]}]"#,
        "",
    ];

    #[test]
    fn files_it_is_not_sure_of_are_refused() {
        let deep = format!(
            r#"{{"format":"tdn.run/1","steps":[{}{}]}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        for text in REFUSED.into_iter().chain([deep.as_str()]) {
            assert_eq!(find_steps(text), None, "{text}");
        }
    }

    #[test]
    fn a_string_key_steps_is_a_key_only_when_a_colon_follows() {
        let text = r#"{"format":"tdn.run/1","title":"steps","steps":[1]}"#;
        assert_eq!(pieces(text).unwrap(), ["1"]);
    }
}
