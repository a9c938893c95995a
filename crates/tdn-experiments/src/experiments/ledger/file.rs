//! The ledger file as lines (attribution-ledger.md §7): splitting bytes into lines with their
//! hashes, strict parsing of each, reading a whole file under a shared lock, and taking the
//! advisory lock with a time limit. Reads only; appending is `store.rs`.

use super::canonical::parse_strict;
use super::digest::sha256_hex;
use super::error::LedgerError;
use super::parse::{Invalid, Parsed, parse_record};
use serde_json::Value;
use std::fs::{File, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest ledger this tool reads (1 GiB).
pub const MAX_LEDGER_BYTES: u64 = 1 << 30;
/// How long an append or a read waits for the lock before giving up.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);
/// How often a waiting process retries the lock.
pub const LOCK_POLL: Duration = Duration::from_millis(20);

/// What one line holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// A valid record.
    Record {
        /// The line's JSON.
        value: Value,
        /// The typed record.
        parsed: Parsed,
    },
    /// A JSON object that is not a valid record.
    Invalid {
        /// The line's JSON.
        value: Value,
        /// What is wrong.
        invalid: Invalid,
    },
    /// Not strict JSON (a torn write, or damage).
    Unparsable {
        /// The parser's message.
        reason: String,
    },
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// 1-based.
    pub number: usize,
    /// Byte offset of its start.
    pub start: u64,
    /// Its length in bytes, without the `\n`.
    pub len: usize,
    /// SHA-256 hex of its bytes without the `\n` (the next line's `prev`).
    pub hash: String,
    /// False for a last line with no `\n`.
    pub terminated: bool,
    /// What it holds.
    pub content: Content,
}

impl Line {
    /// The parsed record, when the line is one.
    pub fn parsed(&self) -> Option<&Parsed> {
        match &self.content {
            Content::Record { parsed, .. } => Some(parsed),
            _ => None,
        }
    }

    /// The line's JSON, when it parsed.
    pub fn value(&self) -> Option<&Value> {
        match &self.content {
            Content::Record { value, .. } | Content::Invalid { value, .. } => Some(value),
            Content::Unparsable { .. } => None,
        }
    }
}

/// A whole ledger as read.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Every line, the unterminated tail included.
    pub lines: Vec<Line>,
    /// The file's length when read.
    pub bytes: u64,
}

/// Parses one line's bytes.
pub fn parse_line(bytes: &[u8]) -> Content {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            return Content::Unparsable {
                reason: "the line is not valid UTF-8".to_owned(),
            };
        }
    };
    match parse_strict(text) {
        Err(e) => Content::Unparsable {
            reason: e.to_string(),
        },
        Ok(value) => match parse_record(&value) {
            Ok(parsed) => Content::Record { value, parsed },
            Err(invalid) => Content::Invalid { value, invalid },
        },
    }
}

/// Splits `bytes` (starting at file offset `base`, line number `first`) into lines. The last
/// line is included unterminated when the bytes do not end in `\n`.
pub fn split_lines(bytes: &[u8], base: u64, first: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut number = first;
    while start < bytes.len() {
        let rest = bytes.get(start..).unwrap_or(&[]);
        let (len, terminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(p) => (p, true),
            None => (rest.len(), false),
        };
        let body = rest.get(..len).unwrap_or(&[]);
        out.push(Line {
            number,
            start: base + u64::try_from(start).unwrap_or(u64::MAX),
            len,
            hash: sha256_hex(body),
            terminated,
            content: parse_line(body),
        });
        number += 1;
        start += len + usize::from(terminated);
    }
    out
}

/// Reads the whole ledger at `path` under a shared lock.
pub fn read_file(path: &Path) -> Result<LedgerFile, LedgerError> {
    let mut f = File::open(path).map_err(|e| LedgerError::io(path, "open", e))?;
    let meta = f.metadata().map_err(|e| LedgerError::io(path, "read", e))?;
    if !meta.is_file() {
        return Err(LedgerError::NotALedger {
            path: path.to_path_buf(),
            why: "it is not a regular file".to_owned(),
        });
    }
    lock(&f, path, false)?;
    let len = f
        .metadata()
        .map_err(|e| LedgerError::io(path, "read", e))?
        .len();
    if len > MAX_LEDGER_BYTES {
        return Err(LedgerError::TooBig {
            path: path.to_path_buf(),
            bytes: len,
            max: MAX_LEDGER_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.read_to_end(&mut bytes)
        .map_err(|e| LedgerError::io(path, "read", e))?;
    let _ = f.unlock();
    let total = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    Ok(LedgerFile {
        path: path.to_path_buf(),
        lines: split_lines(&bytes, 0, 1),
        bytes: total,
    })
}

/// Takes the advisory lock (exclusive or shared), retrying for up to [`LOCK_WAIT`].
pub fn lock(f: &File, path: &Path, exclusive: bool) -> Result<(), LedgerError> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        let r = if exclusive {
            f.try_lock()
        } else {
            f.try_lock_shared()
        };
        match r {
            Ok(()) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(LedgerError::io(path, "lock", e)),
            Err(TryLockError::WouldBlock) if Instant::now() >= deadline => {
                return Err(LedgerError::Busy {
                    path: path.to_path_buf(),
                    secs: LOCK_WAIT.as_secs(),
                });
            }
            Err(TryLockError::WouldBlock) => std::thread::sleep(LOCK_POLL),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_offsets_hashes_and_the_unterminated_tail() {
        let bytes = b"{\"a\":1}\nxx\n{\"b\"";
        let lines = split_lines(bytes, 0, 1);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].start, 8);
        assert_eq!(lines[1].len, 2);
        assert_eq!(lines[1].hash, sha256_hex(b"xx"));
        assert!(lines[1].terminated);
        assert!(!lines[2].terminated);
        assert!(matches!(lines[1].content, Content::Unparsable { .. }));
        assert!(matches!(lines[0].content, Content::Invalid { .. }));
    }

    #[test]
    fn an_empty_line_is_a_line() {
        let lines = split_lines(b"\n\n", 0, 1);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len, 0);
    }
}
