//! Turning untrusted run text into spans and lines that are safe to draw: every control
//! character and escape sequence is made visible (`analysis::model::inert_line`), tabs become
//! spaces, and long lines wrap to the pane's width. All run text reaches the screen through
//! here. Nothing here reads the run or the terminal.

use crate::analysis::model::{inert_block, inert_line};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::borrow::Cow;
use unicode_width::UnicodeWidthChar;

/// Spaces a tab becomes.
const TAB: &str = "    ";
/// A break is looked for this far back from the edge before a line is cut mid-word.
const WORD_BREAK_LOOKBACK: usize = 24;

/// One line of run text as a single span (newlines and tabs become visible escapes).
pub fn span<'a>(text: &'a str, style: Style) -> Span<'a> {
    Span::styled(inert_line(text), style)
}

/// One line of run text, owned.
pub fn owned_span(text: &str, style: Style) -> Span<'static> {
    Span::styled(inert_line(text).into_owned(), style)
}

/// The start of run text on one line: at most `max_bytes` of it read, whitespace runs (line
/// breaks too) made one space, made inert and cut to at most `max` columns.
pub fn one_line(text: &str, max_bytes: usize, max: usize) -> String {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or("");
    let joined = head.split_whitespace().collect::<Vec<_>>().join(" ");
    clipped(&joined, max).into_owned()
}

/// Run text cut to at most `max` columns (with `…` when cut), made inert.
pub fn clipped(text: &str, max: usize) -> Cow<'_, str> {
    let safe = inert_line(text);
    if width_of(&safe) <= max {
        return safe;
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut w = 0;
    for c in safe.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        w += cw;
        out.push(c);
    }
    out.push('…');
    Cow::Owned(out)
}

/// Display width of already-safe text.
pub fn width_of(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Multi-line run text as wrapped lines of one style.
pub fn wrapped(text: &str, style: Style, width: usize) -> Vec<Line<'static>> {
    let safe = inert_block(text);
    let mut out = Vec::new();
    for raw in safe.split('\n') {
        let line = raw.replace('\t', TAB);
        out.extend(wrap_spans(vec![(line, style)], width, ""));
    }
    out
}

/// Wraps one logical line made of styled pieces (already safe) to `width` columns. Continuation
/// lines start with `indent`. Prefers to break after a space near the edge.
pub fn wrap_spans(pieces: Vec<(String, Style)>, width: usize, indent: &str) -> Vec<Line<'static>> {
    let width = width.max(8);
    let indent_w = width_of(indent);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<(String, Style)> = Vec::new();
    let mut cur_w = 0usize;
    // Position (piece, byte) and width just after the last space on the current line.
    let mut last_space: Option<(usize, usize, usize)> = None;
    let flush = |cur: &mut Vec<(String, Style)>, lines: &mut Vec<Line<'static>>| {
        let spans: Vec<Span<'static>> = cur
            .drain(..)
            .filter(|(t, _)| !t.is_empty())
            .map(|(t, s)| Span::styled(t, s))
            .collect();
        lines.push(Line::from(spans));
    };
    for (text, style) in pieces {
        for c in text.chars() {
            let cw = c.width().unwrap_or(0);
            if cur_w + cw > width && cur_w > indent_w {
                let mut carry: Vec<(String, Style)> = Vec::new();
                if let Some((pi, byte, w_at)) = last_space
                    && cur_w - w_at <= WORD_BREAK_LOOKBACK
                    && w_at > indent_w
                {
                    // Move everything after the space to the next line.
                    let tail_pieces = cur.split_off(pi);
                    let mut iter = tail_pieces.into_iter();
                    if let Some((first, st)) = iter.next() {
                        let (keep, moved) = first.split_at(byte.min(first.len()));
                        cur.push((keep.to_owned(), st));
                        carry.push((moved.to_owned(), st));
                    }
                    carry.extend(iter);
                }
                flush(&mut cur, &mut lines);
                cur.push((indent.to_owned(), Style::default()));
                cur_w = indent_w;
                for (t, s) in carry {
                    cur_w += width_of(&t);
                    cur.push((t, s));
                }
                last_space = None;
            }
            match cur.last_mut() {
                Some((t, s)) if *s == style => t.push(c),
                _ => cur.push((c.to_string(), style)),
            }
            cur_w += cw;
            if c == ' ' {
                let pi = cur.len() - 1;
                let byte = cur.get(pi).map(|(t, _)| t.len()).unwrap_or(0);
                last_space = Some((pi, byte, cur_w));
            }
        }
    }
    flush(&mut cur, &mut lines);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn one_line_joins_lines_keeps_escapes_inert_and_cuts() {
        assert_eq!(
            one_line("Done.\n\n- **Flight 1:**\tHAT110", 100, 100),
            "Done. - **Flight 1:** HAT110"
        );
        let hostile = one_line("a\u{1b}[2Jb", 100, 100);
        assert!(!hostile.contains('\u{1b}'), "{hostile}");
        assert_eq!(one_line("héllo world", 2, 100), "h");
        assert_eq!(one_line("abcdef", 100, 4), "abc…");
    }

    #[test]
    fn escapes_never_reach_a_span() {
        let s = span("a\u{1b}[2Jb\u{7}", Style::default());
        assert_eq!(s.content, "a\\u{1b}[2Jb\\u{7}");
        let lines = wrapped("x\u{1b}]52;c;AAAA\u{7}\ny", Style::default(), 80);
        assert_eq!(texts(&lines), vec!["x\\u{1b}]52;c;AAAA\\u{7}", "y"]);
    }

    #[test]
    fn long_lines_wrap_at_a_space_when_one_is_near() {
        let lines = wrapped("the quick brown fox jumps over", Style::default(), 12);
        assert_eq!(
            texts(&lines),
            vec!["the quick ", "brown fox ", "jumps over"]
        );
        for l in &lines {
            assert!(l.width() <= 12);
        }
    }

    #[test]
    fn a_word_longer_than_the_width_is_cut() {
        let lines = wrapped("abcdefghijklmnopqrstuvwxyz", Style::default(), 10);
        assert_eq!(texts(&lines), vec!["abcdefghij", "klmnopqrst", "uvwxyz"]);
    }

    #[test]
    fn tabs_become_spaces_and_clipping_marks_the_cut() {
        assert_eq!(
            texts(&wrapped("a\tb", Style::default(), 40)),
            vec!["a    b"]
        );
        assert_eq!(clipped("abcdefgh", 5), "abcd…");
        assert_eq!(clipped("abc", 5), "abc");
        assert_eq!(clipped("abc", 0), "");
        assert_eq!(clipped("abc", 1), "…");
    }
}
