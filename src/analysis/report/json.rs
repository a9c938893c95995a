//! The report as JSON (`analyze --json`): one compact line (with a newline) per report, written
//! straight into any writer. A 100,000-step run's report is about 25 MB: `analyze` streams it to
//! stdout instead of building it as one string first (issue 11). Characters that could drive a
//! terminal (C1 controls, DEL, bidirectional overrides, invisible format characters) are written
//! as `\u` escapes, which JSON reads back as the same text.

use super::Report;
use crate::analysis::model::is_hazard;
use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io::{self, Write};

/// serde_json's compact layout, with every hazard character ([`is_hazard`]) inside a string
/// written as a `\u` escape. Outside strings compact JSON is ASCII without controls, and serde
/// writes the controls below 32 inside strings as escapes itself, so the string fragments are
/// the only place a hazard can reach the output.
struct Inert;

/// A hazard that the escaping writes as `\u` (newline, tab and carriage return are JSON's own
/// layout characters and are left to serde).
fn escaped(c: char) -> bool {
    is_hazard(c) && c != '\n' && c != '\t' && c != '\r'
}

impl Formatter for Inert {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Nearly every fragment is printable ASCII, which holds no hazard: written as it is.
        if fragment.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return w.write_all(fragment.as_bytes());
        }
        let mut from = 0;
        for (i, c) in fragment.char_indices() {
            if !escaped(c) {
                continue;
            }
            w.write_all(fragment.get(from..i).unwrap_or_default().as_bytes())?;
            // A JSON escape holds one UTF-16 unit: a tag character takes a surrogate pair.
            for unit in c.encode_utf16(&mut [0; 2]) {
                write!(w, "\\u{unit:04x}")?;
            }
            from = i + c.len_utf8();
        }
        w.write_all(fragment.get(from..).unwrap_or_default().as_bytes())
    }
}

/// Serializes `value` into `out` with the escaping above (no newline).
fn serialize_into<W: Write, T: Serialize + ?Sized>(
    value: &T,
    out: &mut W,
) -> Result<(), serde_json::Error> {
    value.serialize(&mut Serializer::with_formatter(out, Inert))
}

/// What stands for a report serde could not write: its format and the error.
fn failed(e: &serde_json::Error) -> serde_json::Value {
    serde_json::json!({"format": super::REPORT_FORMAT, "error": e.to_string()})
}

/// Writes the report as one compact line of JSON, with a newline, into `out` (the bytes of
/// [`render_json`]). Only the writer's own errors are returned. serde fails on nothing else for a
/// [`Report`] (it has no map with keys other than strings, and its fields' serializers cannot
/// fail); should it, what was written so far is followed by the object [`render_json`] writes
/// in its place.
pub fn write_json<W: Write>(report: &Report, out: &mut W) -> io::Result<()> {
    match serialize_into(report, out) {
        Ok(()) => {}
        Err(e) if e.is_io() => return Err(e.into()),
        Err(e) => serialize_into(&failed(&e), out).map_err(io::Error::from)?,
    }
    out.write_all(b"\n")
}

/// The report as one compact line of JSON (with a newline); see [`write_json`]. When serde
/// cannot write it, the line is `{"format": ..., "error": ...}` instead.
pub fn render_json(report: &Report) -> String {
    let mut out = Vec::new();
    if let Err(e) = serialize_into(report, &mut out) {
        out.clear();
        let _ = serialize_into(&failed(&e), &mut out);
    }
    out.push(b'\n');
    // serde writes UTF-8 and the escapes are ASCII: this never replaces anything.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::fmt::Write as _;

    /// The JSON line as it was made before it was streamed: the whole text from serde, then
    /// every hazard outside the JSON layout characters escaped.
    fn plain(report: &Report) -> String {
        let raw = serde_json::to_string(report).unwrap_or_else(|e| failed(&e).to_string());
        let mut out = String::with_capacity(raw.len() + 1);
        for c in raw.chars() {
            if escaped(c) {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            } else {
                out.push(c);
            }
        }
        out.push('\n');
        out
    }

    fn calendar() -> Report {
        serde_json::from_str(include_str!(
            "../../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("the report fixture is a Report")
    }

    /// A writer that takes at most `chunk` bytes per call and fails after `limit` bytes.
    struct Trickle {
        got: Vec<u8>,
        chunk: usize,
        limit: usize,
        kind: io::ErrorKind,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.got.len() >= self.limit {
                return Err(io::Error::new(self.kind, "closed"));
            }
            let n = buf.len().min(self.chunk).min(self.limit - self.got.len());
            self.got.extend_from_slice(buf.get(..n).unwrap_or_default());
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    proptest! {
        #[test]
        fn the_streamed_line_is_the_plain_one(
            text in "[a-z \"\\\\\n\t\r\u{1b}\u{7f}\u{85}\u{9b}\u{a0}\u{e9}\u{200b}\u{202e}\u{2066}\u{feff}\u{e0041}\u{1f600}]{0,40}",
            id in "[a-z0-9\u{0}\u{7}\u{9f}\u{2028}]{0,8}",
            chunk in 1usize..64,
        ) {
            let mut r = calendar();
            r.run.id = id;
            if let Some(s) = r.suspects.first_mut() {
                s.title = text.clone();
                s.evidence = vec![text.clone(), format!("{text}{text}")];
            }
            let want = plain(&r);
            prop_assert_eq!(render_json(&r), want.clone());
            let mut w = Trickle { got: Vec::new(), chunk, limit: usize::MAX, kind: io::ErrorKind::Other };
            write_json(&r, &mut w).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(String::from_utf8(w.got).ok(), Some(want));
            let back: Report = serde_json::from_str(&render_json(&r)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back, r);
        }
    }

    #[test]
    fn a_failed_write_is_returned_with_its_kind() {
        let r = calendar();
        for kind in [io::ErrorKind::BrokenPipe, io::ErrorKind::Other] {
            let mut w = Trickle {
                got: Vec::new(),
                chunk: 7,
                limit: 100,
                kind,
            };
            let e = write_json(&r, &mut w).expect_err("the writer closes after 100 bytes");
            assert_eq!(e.kind(), kind);
            assert_eq!(w.got.len(), 100);
        }
    }
}
