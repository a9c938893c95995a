//! One message text cut into the units it holds: the documents and tool results found in it,
//! and the text around them that says something, or the whole text as one unit.

use super::find::{Finder, MIN_FOUND};
use super::{Source, Units};
use hashbrown::HashMap;

/// One piece of a message's text: a byte range and the unit it is.
#[derive(Clone, Copy)]
pub(super) struct Piece {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Its place in chars, when it is not the whole text.
    pub(super) chars: Option<(usize, usize)>,
    pub(super) unit: usize,
    /// The source it is, when it is one.
    pub(super) source: Option<usize>,
}

/// A message text cut into pieces, once per distinct (text, kind).
pub(super) struct Split {
    pub(super) pieces: Vec<Piece>,
    /// The tool whose result a tool-result message holds inside it (found by content).
    pub(super) tool: Option<usize>,
}

/// A text between two sources found in a message is a unit of its own when it says something:
/// at least this many words, or [`GAP_CHARS`] characters (labels such as `Document 2:` are not).
const GAP_WORDS: usize = 3;
/// See [`GAP_WORDS`].
const GAP_CHARS: usize = 24;

fn says_something(t: &str) -> bool {
    t.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
        >= GAP_WORDS
        || t.chars().count() >= GAP_CHARS
}

/// The pieces of one message text of one kind: the sources found in it (documents anywhere;
/// tool results only in a message that is not itself a tool result) and the text around them
/// that says something, or the whole text as one unit.
pub(super) fn pieces_of(
    content: &str,
    kind: &'static str,
    finder: &Finder<'_>,
    sources: &[Source],
    units: &mut Units,
    written_by: &HashMap<String, usize>,
) -> Split {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Split {
            pieces: Vec::new(),
            tool: None,
        };
    }
    let mut found = finder.find(content);
    let mut tool = None;
    if kind == "tool_result" {
        // A tool result fed back is one unit, whatever tool output it holds; the documents
        // inside it are units of their own.
        tool = found
            .iter()
            .filter_map(|f| sources.get(f.source))
            .find(|s| s.kind == "tool_result")
            .map(|s| s.producer);
        found.retain(|f| sources.get(f.source).is_some_and(|s| s.kind == "document"));
    }
    let mut ranges: Vec<(usize, usize, Option<usize>)> = Vec::new();
    if found.is_empty() {
        let start = content.len() - content.trim_start().len();
        let source = finder.whole(trimmed).filter(|&s| {
            trimmed.len() >= MIN_FOUND || sources.get(s).is_some_and(|x| x.kind == kind)
        });
        ranges.push((start, start + trimmed.len(), source));
    } else {
        let mut cursor = 0;
        let gap = |from: usize, to: usize, ranges: &mut Vec<(usize, usize, Option<usize>)>| {
            let Some(g) = content.get(from..to) else {
                return;
            };
            let t = g.trim();
            if says_something(t) {
                let a = from + (g.len() - g.trim_start().len());
                ranges.push((a, a + t.len(), None));
            }
        };
        for f in &found {
            gap(cursor, f.start, &mut ranges);
            ranges.push((f.start, f.end, Some(f.source)));
            cursor = f.end;
        }
        gap(cursor, content.len(), &mut ranges);
    }
    let chars = char_offsets(content, &ranges);
    let pieces = ranges
        .iter()
        .zip(chars)
        .map(|(&(start, end, source), chars)| {
            let text = content.get(start..end).unwrap_or_default();
            let unit = match source.and_then(|s| sources.get(s)) {
                Some(src) => {
                    let u = units.get(src.kind, &src.text, src.own_id.as_deref());
                    if let Some(unit) = units.list.get_mut(u) {
                        unit.produced_by.get_or_insert(src.producer);
                    }
                    u
                }
                None => {
                    let u = units.get(kind, text, None);
                    if kind == "message"
                        && let Some(&w) = written_by.get(text)
                        && let Some(unit) = units.list.get_mut(u)
                    {
                        unit.produced_by.get_or_insert(w);
                    }
                    u
                }
            };
            let whole = start == 0 && end == content.len();
            Piece {
                start,
                end,
                chars: (!whole).then_some(chars),
                unit,
                source,
            }
        })
        .collect();
    Split { pieces, tool }
}

/// The char offsets of byte ranges given in order (one pass over the text).
fn char_offsets(content: &str, ranges: &[(usize, usize, Option<usize>)]) -> Vec<(usize, usize)> {
    let mut bounds: Vec<usize> = ranges.iter().flat_map(|&(a, b, _)| [a, b]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut at: HashMap<usize, usize> = HashMap::with_capacity(bounds.len());
    let mut next = bounds.iter().peekable();
    let ends = content.char_indices().map(|(b, _)| b);
    for (count, byte) in ends.chain(std::iter::once(content.len())).enumerate() {
        while let Some(&&b) = next.peek() {
            if b > byte {
                break;
            }
            at.insert(b, count);
            next.next();
        }
    }
    ranges
        .iter()
        .map(|&(a, b, _)| {
            (
                at.get(&a).copied().unwrap_or(0),
                at.get(&b).copied().unwrap_or(0),
            )
        })
        .collect()
}
