//! The pre-scan of `scan.rs`, resumable: fed a native run's bytes block by block as they are
//! read from the file (issue 11: the whole text is never held at once), it keeps the text before
//! the top-level `"steps"` array and the text after it, and hands out the array's elements in
//! runs of whole elements as soon as they are complete.
//!
//! The rules are `find_steps`'s exactly (a property test compares the two): `"format":
//! "tdn.run/1"` written plainly first (after one optional byte-order mark, which the file reader
//! drops as `read_text` does), the first `"steps"` at depth 1 followed by a colon must open an
//! array, strings are skipped with a backslash always taking the next byte, and nothing may nest
//! deeper than [`MAX_DEPTH`] before the array ends. Everything is carried across blocks (the
//! header matched so far, the depth, being inside a string, a backslash at a block's end), so a
//! block may end anywhere, even inside a UTF-8 sequence. `None` from any method: the scan
//! refuses the file. No I/O, linear in the bytes fed.

use super::scan::MAX_DEPTH;
use std::ops::Range;

/// The tokens a run must open with, whitespace allowed before each.
const HEADER: [&[u8]; 4] = [b"{", b"\"format\"", b":", b"\"tdn.run/1\""];

/// UTF-8's byte-order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Where the scan is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the very start: `n` bytes of a byte-order mark seen.
    Bom(usize),
    /// In the header: token `tok` of [`HEADER`], `n` of its bytes matched.
    Header { tok: usize, n: usize },
    /// Before the array.
    Head,
    /// Just after a `"steps"` string at depth 1: a colon makes it the key.
    Key,
    /// After the `"steps"` key's colon: the array must open.
    Colon,
    /// Inside the array.
    Array,
    /// After the array's closing bracket: bytes are only kept.
    After,
}

/// A run's bytes split as they come.
pub(super) struct Splitter {
    state: State,
    /// Brackets open at the scan's position (the top-level object counts as 1).
    depth: usize,
    in_string: bool,
    /// The byte after a backslash is still to be skipped (the backslash ended a block).
    escape: bool,
    /// Where the string being read opened, in `before`.
    string_open: usize,
    /// The text before the array's `[` (without a byte-order mark).
    before: Vec<u8>,
    /// The array's bytes not handed out yet: whole elements with their separators, then the
    /// element being read.
    batch: Vec<u8>,
    /// The whole elements in `batch`, each with the whitespace around it.
    whole: Vec<Range<usize>>,
    /// Where the element being read starts in `batch`.
    start: usize,
    /// How far `before` (before the array) or `batch` (inside it) is scanned.
    pos: usize,
    /// Elements found so far, handed out or not.
    count: usize,
    /// The text after the array's closing bracket.
    after: Vec<u8>,
    /// A buffer handed out before and given back ([`Splitter::recycle`]): the next `batch`.
    spare: Vec<u8>,
}

/// Whole elements handed out: their bytes (with the separators between them) and where each is.
pub(super) struct Batch {
    pub(super) bytes: Vec<u8>,
    pub(super) elements: Vec<Range<usize>>,
}

impl Splitter {
    pub(super) fn new() -> Splitter {
        Splitter {
            state: State::Bom(0),
            depth: 0,
            in_string: false,
            escape: false,
            string_open: 0,
            before: Vec::new(),
            batch: Vec::new(),
            whole: Vec::new(),
            start: 0,
            pos: 0,
            count: 0,
            after: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// True once the array has opened: the bytes fed from now on are steps or what follows them.
    pub(super) fn in_steps(&self) -> bool {
        matches!(self.state, State::Array | State::After)
    }

    /// The text before the array's `[`, once the array has opened (it is whole then).
    pub(super) fn before_steps(&self) -> Option<&[u8]> {
        self.in_steps().then_some(self.before.as_slice())
    }

    /// True once the array has closed.
    pub(super) fn array_done(&self) -> bool {
        self.state == State::After
    }

    /// Bytes of whole elements (with their separators) waiting to be handed out.
    pub(super) fn whole_bytes(&self) -> usize {
        self.whole.last().map_or(0, |r| r.end)
    }

    /// Takes the next bytes of the file.
    pub(super) fn feed(&mut self, mut block: &[u8]) -> Option<()> {
        while let Some((&b, more)) = block.split_first() {
            match self.state {
                State::Bom(_) | State::Header { .. } => {
                    self.header_byte(b)?;
                    block = more;
                }
                State::Head | State::Key | State::Colon => {
                    self.before.extend_from_slice(block);
                    return self.scan();
                }
                State::Array => {
                    self.batch.extend_from_slice(block);
                    return self.scan();
                }
                State::After => {
                    self.after.extend_from_slice(block);
                    return Some(());
                }
            }
        }
        Some(())
    }

    /// The whole elements found so far, out of the splitter.
    pub(super) fn take_whole(&mut self) -> Batch {
        let cut = if self.state == State::After {
            self.batch.len()
        } else {
            self.start
        };
        let cut = cut.min(self.batch.len());
        // The element being read moves to the spare buffer, which takes the next blocks: two
        // buffers take turns, one parsed while the other fills (issue 11: a new buffer for
        // each batch, grown block by block, faulted in every page of the file again).
        let mut tail = std::mem::take(&mut self.spare);
        tail.clear();
        tail.extend_from_slice(self.batch.get(cut..).unwrap_or_default());
        self.batch.truncate(cut);
        let bytes = std::mem::replace(&mut self.batch, tail);
        self.start -= cut.min(self.start);
        self.pos -= cut.min(self.pos);
        Batch {
            bytes,
            elements: std::mem::take(&mut self.whole),
        }
    }

    /// Takes back the bytes of a batch handed out, once they are read: their room holds the
    /// next batch.
    pub(super) fn recycle(&mut self, bytes: Vec<u8>) {
        if bytes.capacity() > self.spare.capacity() {
            self.spare = bytes;
        }
    }

    /// The text before and after the array, once the array has closed (the caller checks that
    /// the file ended there).
    pub(super) fn into_rest(self) -> Option<(Vec<u8>, Vec<u8>)> {
        (self.state == State::After && self.whole.is_empty()).then_some((self.before, self.after))
    }

    fn header_byte(&mut self, b: u8) -> Option<()> {
        match self.state {
            State::Bom(n) => {
                if BOM.get(n) == Some(&b) {
                    self.state = if n + 1 == BOM.len() {
                        State::Header { tok: 0, n: 0 }
                    } else {
                        State::Bom(n + 1)
                    };
                    return Some(());
                }
                if n != 0 {
                    return None;
                }
                self.state = State::Header { tok: 0, n: 0 };
                self.header_byte(b)
            }
            State::Header { tok, n } => {
                self.before.push(b);
                if n == 0 && is_ws(b) {
                    return Some(());
                }
                let token = HEADER.get(tok)?;
                if token.get(n) != Some(&b) {
                    return None;
                }
                self.state = if n + 1 < token.len() {
                    State::Header { tok, n: n + 1 }
                } else if tok + 1 < HEADER.len() {
                    State::Header { tok: tok + 1, n: 0 }
                } else {
                    self.depth = 1;
                    self.pos = self.before.len();
                    State::Head
                };
                Some(())
            }
            _ => Some(()),
        }
    }

    /// Scans what was fed, moving on to the array and past it as they come.
    fn scan(&mut self) -> Option<()> {
        loop {
            let moved = match self.state {
                State::Head | State::Key | State::Colon => self.scan_head()?,
                State::Array => self.scan_array()?,
                _ => false,
            };
            if !moved {
                return Some(());
            }
        }
    }

    /// Skips the string being read in `buf` from `i`; returns where the scan goes on (the end
    /// of `buf` when the string is still open there).
    fn skip_string(&mut self, buf: &[u8], mut i: usize) -> usize {
        loop {
            if self.escape {
                if i >= buf.len() {
                    return buf.len();
                }
                i += 1;
                self.escape = false;
            }
            // memchr looks at many bytes at a time: most of a run's bytes are in strings.
            let Some(k) = buf
                .get(i..)
                .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
            else {
                return buf.len();
            };
            let at = i + k;
            if buf.get(at) == Some(&b'"') {
                self.in_string = false;
                return at + 1;
            }
            self.escape = true;
            i = at + 1;
        }
    }

    /// Scans `before` up to the array's `[`; true when it opened (its bytes after the `[` are
    /// then in `batch`).
    fn scan_head(&mut self) -> Option<bool> {
        let mut i = self.pos;
        let buf = std::mem::take(&mut self.before);
        let opened = loop {
            if self.in_string {
                i = self.skip_string(&buf, i);
                if self.in_string {
                    break None;
                }
                if self.depth == 1 && buf.get(self.string_open..i) == Some(b"\"steps\"".as_slice())
                {
                    self.state = State::Key;
                }
                continue;
            }
            let Some(&c) = buf.get(i) else {
                break None;
            };
            match self.state {
                State::Key => {
                    if c == b':' {
                        self.state = State::Colon;
                    } else if !is_ws(c) {
                        self.state = State::Head;
                        continue;
                    }
                    i += 1;
                }
                State::Colon => {
                    if c == b'[' {
                        break Some(i);
                    }
                    if !is_ws(c) {
                        return None;
                    }
                    i += 1;
                }
                _ => match c {
                    b'"' => {
                        self.in_string = true;
                        self.string_open = i;
                        i += 1;
                    }
                    b'{' | b'[' => {
                        self.depth = deeper(self.depth)?;
                        i += 1;
                    }
                    b'}' | b']' => {
                        self.depth = self.depth.checked_sub(1).filter(|&d| d > 0)?;
                        i += 1;
                    }
                    _ => i += 1,
                },
            }
        };
        self.before = buf;
        let Some(open) = opened else {
            self.pos = i;
            return Some(false);
        };
        self.batch = self.before.split_off(open + 1);
        self.before.truncate(open);
        self.state = State::Array;
        self.depth = 2;
        self.start = 0;
        self.pos = 0;
        Some(true)
    }

    /// Scans `batch`, noting each element as it ends; true when the array closed (its bytes
    /// after the `]` are then in `after`).
    fn scan_array(&mut self) -> Option<bool> {
        let mut i = self.pos;
        let buf = std::mem::take(&mut self.batch);
        let closed = loop {
            if self.in_string {
                i = self.skip_string(&buf, i);
                if self.in_string {
                    break None;
                }
                continue;
            }
            let Some(&c) = buf.get(i) else {
                break None;
            };
            match c {
                b'"' => {
                    self.in_string = true;
                    i += 1;
                }
                b'{' | b'[' => {
                    self.depth = deeper(self.depth)?;
                    i += 1;
                }
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 1 {
                        let last = self.start..i;
                        if self.count > 0 || skip_ws(&buf, self.start) < i {
                            self.whole.push(last);
                            self.count += 1;
                        }
                        break Some(i);
                    }
                    i += 1;
                }
                b',' if self.depth == 2 => {
                    self.whole.push(self.start..i);
                    self.count += 1;
                    self.start = i + 1;
                    i += 1;
                }
                _ => i += 1,
            }
        };
        self.batch = buf;
        let Some(close) = closed else {
            self.pos = i;
            return Some(false);
        };
        self.after = self.batch.split_off(close + 1);
        self.batch.truncate(close);
        self.state = State::After;
        Some(true)
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// One level deeper than `depth`, or `None` past [`MAX_DEPTH`].
fn deeper(depth: usize) -> Option<usize> {
    Some(depth + 1).filter(|&d| d <= MAX_DEPTH)
}

/// Past JSON's whitespace from `i`.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_ws) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::super::parallel::tests::run_text;
    use super::super::scan::find_steps;
    use super::*;
    use proptest::prelude::*;

    /// The text before the array, the elements and the text after it, as `find_steps` cuts
    /// `text`.
    fn by_scan(text: &str) -> Option<(String, Vec<String>, String)> {
        let at = find_steps(text)?;
        Some((
            text[..at.array.start].to_owned(),
            at.elements
                .iter()
                .map(|r| text[r.clone()].to_owned())
                .collect(),
            text[at.array.end..].to_owned(),
        ))
    }

    /// The same, from the splitter fed `block` bytes at a time, whole elements taken out after
    /// every `take_every`th block.
    fn by_splitter(
        text: &str,
        block: usize,
        take_every: usize,
    ) -> Option<(String, Vec<String>, String)> {
        let mut split = Splitter::new();
        let mut elements = Vec::new();
        let mut take = |split: &mut Splitter| {
            let batch = split.take_whole();
            for r in batch.elements {
                elements.push(String::from_utf8(batch.bytes[r].to_vec()).unwrap());
            }
        };
        for (n, piece) in text.as_bytes().chunks(block).enumerate() {
            split.feed(piece)?;
            if n % take_every == 0 {
                take(&mut split);
            }
        }
        take(&mut split);
        let (before, after) = split.into_rest()?;
        Some((
            String::from_utf8(before).unwrap(),
            elements,
            String::from_utf8(after).unwrap(),
        ))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_splitter_cuts_every_text_as_the_scan_does(
            text in run_text(),
            at in any::<prop::sample::Index>(),
            how in 0..3_u8,
            insert in prop_oneof![Just("\""), Just("\\"), Just("]"), Just(","), Just("}"), Just("["), Just(" ")],
            block in 1..40_usize,
            take_every in 1..5_usize,
        ) {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let text = match how {
                0 => text,
                1 => text[..at].to_owned(),
                _ => format!("{}{insert}{}", &text[..at], &text[at..]),
            };
            prop_assert_eq!(by_splitter(&text, block, take_every), by_scan(&text), "{}", text);
        }
    }

    #[test]
    fn it_cuts_the_scans_own_cases_alike_at_any_block_size() {
        let deep = |d: usize| {
            format!(
                r#"{{"format":"tdn.run/1","steps":[{}{}]}}"#,
                "[".repeat(d),
                "]".repeat(d)
            )
        };
        let cases = [
            r#"{"format": "tdn.run/1", "x": {"steps": [9]}, "s": "\"steps\": [8]",
            "steps": [ {"id": "a,b", "t": "q\"]},\\"}, [1, [2, 3]] ,"]" ], "id": "r"}"#,
            r#"{"format":"tdn.run/1","steps":[]}"#,
            r#"{"format":"tdn.run/1","steps":[ 
             ]} "#,
            r#"{"format":"tdn.run/1","steps":[1,]}"#,
            r#"{"format":"tdn.run/1","steps":[,]}"#,
            r#"{"format":"tdn.run/1","title":"steps","steps":[1]}"#,
            r#"{"format":"tdn.run/1","title":"steps" ,"steps"  :  [1]}"#,
            " \n{ \"format\" :\t\"tdn.run/1\" , \"steps\":[\"\\\\\",\"\\\"\"]}",
            &deep(MAX_DEPTH - 2),
            &deep(MAX_DEPTH - 1),
            &deep(MAX_DEPTH),
        ];
        for text in cases.into_iter().chain(super::super::scan::tests::REFUSED) {
            for block in 1..=text.len().max(1) {
                assert_eq!(by_splitter(text, block, 1), by_scan(text), "{text} {block}");
                assert_eq!(by_splitter(text, block, 3), by_scan(text), "{text} {block}");
            }
        }
        assert!(by_scan(&deep(MAX_DEPTH - 2)).is_some());
        assert!(by_scan(&deep(MAX_DEPTH)).is_none());
    }

    #[test]
    fn a_byte_order_mark_is_dropped_once() {
        let text = r#"{"format":"tdn.run/1","steps":[1]}"#;
        let with = format!("\u{feff}{text}");
        for block in 1..5 {
            assert_eq!(by_splitter(&with, block, 1), by_scan(text));
            assert_eq!(by_splitter(&format!("\u{feff}{with}"), block, 1), None);
        }
    }
}
