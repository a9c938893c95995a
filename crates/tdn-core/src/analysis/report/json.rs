//! The report as JSON (`analyze --json`): one compact line (with a newline) per report, written
//! straight into any writer. A 100,000-step run's report is about 25 MB: `analyze` streams it to
//! stdout instead of building it as one string first (issue 11). Characters that could drive a
//! terminal (C1 controls, DEL, bidirectional overrides, invisible format characters) are written
//! as `\u` escapes, which JSON reads back as the same text.

use super::{InfluenceSection, Report};
use crate::analysis::model::next_hazard;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io::{self, Write};

/// serde_json's compact layout, with every hazard character
/// ([`is_hazard`](crate::analysis::model::is_hazard)) inside a string
/// written as a `\u` escape. Outside strings compact JSON is ASCII without controls, and serde
/// writes the controls below 32 inside strings as escapes itself, so the string fragments are
/// the only place a hazard can reach the output.
struct Inert;

/// A hazard that the escaping writes as `\u` (newline, tab and carriage return are JSON's own
/// layout characters and are left to serde): the reference the writer is tested against.
#[cfg(test)]
fn escaped(c: char) -> bool {
    crate::analysis::model::is_hazard(c) && c != '\n' && c != '\t' && c != '\r'
}

impl Formatter for Inert {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Nearly every byte is printable ASCII, which is no hazard: passed over, and written
        // with the bytes around it.
        let layout = |c: char| c == '\n' || c == '\t' || c == '\r';
        let mut from = 0;
        while let Some((i, c)) = next_hazard(fragment, from, layout) {
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
///
/// The line is made in [`pieces`], a few at a time in parallel, and written in order (issue 11:
/// a 100,000-step run's report is 25 MB of JSON, made at the end of the analysis when the other
/// cores are idle). At most [`PIECES_AT_ONCE`] pieces are held at once.
pub fn write_json<W: Write>(report: &Report, out: &mut W) -> io::Result<()> {
    write_json_in(report, out, ENTRIES_PER_PIECE)
}

/// Entries of a long list (links, influence scores) made as one piece: a few hundred kilobytes.
const ENTRIES_PER_PIECE: usize = 1024;
/// Pieces made at once before they are written: a few megabytes at most.
const PIECES_AT_ONCE: usize = 8;

/// [`write_json`] with `per_piece` entries of a long list in a piece (a parameter for tests).
fn write_json_in<W: Write>(report: &Report, out: &mut W, per_piece: usize) -> io::Result<()> {
    let pieces = pieces(report, per_piece.max(1));
    // One buffer per piece of a group, kept from group to group (a buffer of 256 KiB or more
    // would otherwise be mapped and unmapped for each piece).
    let mut texts: Vec<Vec<u8>> = (0..PIECES_AT_ONCE).map(|_| Vec::new()).collect();
    for group in pieces.chunks(PIECES_AT_ONCE) {
        let done: Vec<Result<(), serde_json::Error>> = group
            .par_iter()
            .zip(texts.par_iter_mut())
            .map(|(piece, text)| {
                text.clear();
                piece.make(text)
            })
            .collect();
        for (text, done) in texts.iter().zip(done) {
            out.write_all(text)?;
            if let Err(e) = done {
                serialize_into(&failed(&e), out).map_err(io::Error::from)?;
                return out.write_all(b"\n");
            }
        }
    }
    out.write_all(b"\n")
}

/// A part of the report's line: layout text, one value, or some entries of a list.
enum Piece<'a> {
    /// Text of the layout (`{"format":`, `,"links":[`, `]`, ...).
    Layout(&'static str),
    /// One value as serde writes it.
    Value(&'a (dyn ErasedValue + Sync)),
    /// Entries of a list, each preceded by a comma unless it is the list's first.
    Entries(&'a (dyn ErasedEntries + Sync), std::ops::Range<usize>),
}

impl Piece<'_> {
    fn make(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        match self {
            Piece::Layout(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(())
            }
            Piece::Value(v) => v.write(out),
            Piece::Entries(list, range) => list.write(range.clone(), out),
        }
    }
}

/// A value serde can write, behind a pointer (`Serialize` itself is not object safe).
trait ErasedValue {
    fn write(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error>;
}

impl<T: Serialize> ErasedValue for T {
    fn write(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serialize_into(self, out)
    }
}

/// A list whose entries serde can write, some at a time.
trait ErasedEntries {
    fn write(
        &self,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error>;
}

impl<T: Serialize> ErasedEntries for Vec<T> {
    fn write(
        &self,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let first = range.start;
        for (k, entry) in self.get(range).unwrap_or_default().iter().enumerate() {
            if first + k > 0 {
                out.push(b',');
            }
            serialize_into(entry, out)?;
        }
        Ok(())
    }
}

/// A list as serde writes it (`[`, the entries joined by commas, `]`), `per_piece` entries a
/// piece.
#[allow(
    clippy::ptr_arg,
    reason = "a slice is not sized: it cannot stand behind `dyn`"
)]
fn list<'a, T: Serialize + Sync>(items: &'a Vec<T>, per_piece: usize, pieces: &mut Vec<Piece<'a>>) {
    pieces.push(Piece::Layout("["));
    for start in (0..items.len()).step_by(per_piece) {
        let end = items.len().min(start + per_piece);
        pieces.push(Piece::Entries(items, start..end));
    }
    pieces.push(Piece::Layout("]"));
}

/// The report's line in pieces, in order: the layout serde's derived `Serialize` writes for
/// [`Report`] and [`InfluenceSection`] (fields in declaration order, `cost` and `experiments`
/// only when present), with the long lists cut into pieces. The fields are named one by one below, so a
/// field added to either struct fails to compile here until it is written; a test compares
/// the line with serde's own.
fn pieces(report: &Report, per_piece: usize) -> Vec<Piece<'_>> {
    let Report {
        format,
        run,
        verdict,
        fault,
        suspects,
        leads,
        confidence,
        links,
        claims,
        influence,
        dropped,
        judge,
        against,
        cost,
        experiments,
    } = report;
    let mut p = vec![
        Piece::Layout("{\"format\":"),
        Piece::Value(format),
        Piece::Layout(",\"run\":"),
        Piece::Value(run),
        Piece::Layout(",\"verdict\":"),
        Piece::Value(verdict),
        Piece::Layout(",\"fault\":"),
        Piece::Value(fault),
        Piece::Layout(",\"suspects\":"),
    ];
    list(suspects, per_piece, &mut p);
    p.push(Piece::Layout(",\"leads\":"));
    list(leads, per_piece, &mut p);
    p.push(Piece::Layout(",\"confidence\":"));
    p.push(Piece::Value(confidence));
    p.push(Piece::Layout(",\"links\":"));
    list(links, per_piece, &mut p);
    p.push(Piece::Layout(",\"claims\":"));
    list(claims, per_piece, &mut p);
    p.push(Piece::Layout(",\"influence\":"));
    match influence {
        None => p.push(Piece::Layout("null")),
        Some(InfluenceSection {
            ranked_by,
            embedder,
            scores,
            confidence,
        }) => {
            p.push(Piece::Layout("{\"ranked_by\":"));
            p.push(Piece::Value(ranked_by));
            p.push(Piece::Layout(",\"embedder\":"));
            p.push(Piece::Value(embedder));
            p.push(Piece::Layout(",\"scores\":"));
            list(scores, per_piece, &mut p);
            p.push(Piece::Layout(",\"confidence\":"));
            p.push(Piece::Value(confidence));
            p.push(Piece::Layout("}"));
        }
    }
    p.push(Piece::Layout(",\"dropped\":"));
    p.push(Piece::Value(dropped));
    p.push(Piece::Layout(",\"judge\":"));
    p.push(Piece::Value(judge));
    if let Some(against) = against {
        p.push(Piece::Layout(",\"against\":"));
        p.push(Piece::Value(against));
    }
    if let Some(cost) = cost {
        p.push(Piece::Layout(",\"cost\":"));
        p.push(Piece::Value(cost));
    }
    if let Some(experiments) = experiments {
        p.push(Piece::Layout(",\"experiments\":"));
        p.push(Piece::Value(experiments));
    }
    p.push(Piece::Layout("}"));
    p
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
            "../../../../../tests/fixtures/tui/calendar.report.json"
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
            r.run.id = id.clone();
            if let Some(s) = r.suspects.first_mut() {
                s.title = text.clone();
                s.evidence = vec![text.clone(), format!("{text}{text}")];
            }
            // The influence entries: every kind of string, numbers that
            // are not finite, weights and `adapted` there or not, and one entry with a probe.
            if let Some(scores) = r.influence.as_mut().map(|i| &mut i.scores) {
                prop_assert!(scores.len() >= 3);
                let weights = crate::analysis::influence::Weights::default();
                scores[0].id = text.clone().into();
                scores[0].unit = None;
                scores[0].step = Some(id.clone().into());
                // Not NaN: the line is read back below, and NaN is not equal to itself (a test
                // below writes NaN).
                scores[0].score = if chunk % 2 == 0 { 1e300 } else { -0.0 };
                scores[0].signals.fa = [f64::INFINITY, f64::NEG_INFINITY, 1e-300, -2.5][chunk % 4];
                scores[0].weights = Some(std::sync::Arc::new(weights));
                scores[0].adapted = Some(chunk % 3 == 0);
                scores[1].unit = Some(format!("{id}{text}").into());
                scores[1].probe = Some(Box::new(
                    serde_json::from_str(r#"{"verdict": null, "flips": 1, "samples": 3}"#)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?,
                ));
                scores[2].adapted = Some(false);
                scores[2].signals.depth = 1.0 / 3.0;
            }
            // A link: every kind of character here.
            prop_assert!(!r.links.is_empty());
            if let Some(l) = r.links.first_mut() {
                l.from = id.clone();
                l.to = format!("{text}{id}");
                l.value = text.clone();
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

    /// `list` repeated `times` times over.
    fn repeated<T: Clone>(list: &[T], times: usize) -> Vec<T> {
        let n = list.len().saturating_mul(times);
        list.iter().cycle().take(n).cloned().collect()
    }

    /// The calendar report with each list `times` as long (entries repeated), so that the
    /// lists are cut into several pieces.
    fn long_calendar(times: usize) -> Report {
        let mut r = calendar();
        r.suspects = repeated(&r.suspects, times);
        r.links = repeated(&r.links, times);
        r.claims = repeated(&r.claims, times);
        if let Some(inf) = r.influence.as_mut() {
            inf.scores = repeated(&inf.scores, times);
        }
        r
    }

    proptest! {
        #[test]
        fn the_line_made_in_pieces_is_serdes_own(
            times in 0usize..5,
            per_piece in 1usize..7,
            no_influence in any::<bool>(),
            with_experiments in any::<bool>(),
            text in "[a-z\u{1b}\u{202e}\u{e9}]{0,12}",
        ) {
            let mut r = long_calendar(times);
            if no_influence {
                r.influence = None;
            }
            if let Some(l) = r.links.last_mut() {
                l.value = text.clone();
            }
            if with_experiments {
                r.experiments = Some(crate::analysis::report::ExperimentsSummary {
                    baseline: None,
                    flags: vec![text.clone()],
                    runner_calls: times,
                    ledger: Some(text),
                });
            }
            let mut got = Vec::new();
            write_json_in(&r, &mut got, per_piece).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(String::from_utf8(got).ok(), Some(plain(&r)));
        }
    }

    /// A score that is not a number is written as serde writes it: `null` for the score, the
    /// name for a signal or a weight.
    #[test]
    fn influence_entries_that_are_not_numbers_are_written_as_serde_writes_them() {
        let mut r = calendar();
        let scores = &mut r
            .influence
            .as_mut()
            .expect("the fixture ranks influence")
            .scores;
        scores[0].score = f64::NAN;
        scores[0].signals.avg = f64::NAN;
        let weights = crate::analysis::influence::Weights {
            persist: f64::NEG_INFINITY,
            ..Default::default()
        };
        scores[1].weights = Some(std::sync::Arc::new(weights));
        let mut got = Vec::new();
        write_json_in(&r, &mut got, 2).expect("a Vec takes every byte");
        let got = String::from_utf8(got).expect("UTF-8");
        assert_eq!(got, plain(&r));
        assert!(got.contains(r#""score":null,"signals":{"fa":"#), "{got}");
        assert!(got.contains(r#""avg":"NaN""#) && got.contains(r#""persist":"-Infinity""#));
    }

    #[test]
    fn long_lists_are_cut_into_pieces_in_order() {
        // 6 links a copy, 40 copies: 240 links, so 3 pieces of 100 for the links alone.
        let r = long_calendar(40);
        assert_eq!(r.links.len(), 240);
        let pieces = pieces(&r, 100);
        let cut: Vec<usize> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Entries(_, range) => Some(range.len()),
                _ => None,
            })
            .collect();
        // suspects 120, links 240, claims 120, scores 160
        assert_eq!(cut, vec![100, 20, 100, 100, 40, 100, 20, 100, 60]);
        let mut got = Vec::new();
        write_json_in(&r, &mut got, 100).expect("a Vec takes every byte");
        assert_eq!(String::from_utf8(got).ok(), Some(plain(&r)));
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
