//! Verification (attribution-ledger.md §6): recompute every bound field of every line from the
//! durable lines above it, fail closed on any mismatch, cascade failures to the records that
//! depend on them, and classify each line as verified, legacy_unverified, unbound, torn or failed.
//! Pure over a read [`LedgerFile`]; `plan`, `select`, `show` and the screen all read through it.

mod attribution;
mod records;

use super::attribute::ComponentKey;
use super::bundle::{Bundle, IndexedDiff};
use super::error::LedgerError;
use super::file::{Content, LedgerFile, Line, read_file};
use super::parse::Parsed;
use super::record::{Header, Record, RecordType};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;

/// What verification concluded about one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Every bound field recomputed.
    Verified,
    /// Schema-1 history without the bindings: kept, never a cause.
    LegacyUnverified,
    /// A verified trial of a cohort not yet aggregated.
    Unbound,
    /// A verified trial of a cancelled batch: history that concludes nothing.
    Cancelled,
    /// A torn write (the tail, or a sealed line): ignored.
    Torn,
    /// Something did not reconstruct.
    Failed,
}

impl Status {
    /// The name used in JSON and counts.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Verified => "verified",
            Status::LegacyUnverified => "legacy_unverified",
            Status::Unbound => "unbound",
            Status::Cancelled => "cancelled",
            Status::Torn => "torn",
            Status::Failed => "failed",
        }
    }

    /// What the status means, in plain words, to be shown beside its name.
    pub fn meaning(self) -> &'static str {
        match self {
            Status::Verified => "every bound field recomputed from the lines above",
            Status::LegacyUnverified => {
                "written by an older tdn-tui without the bindings that can be checked: kept as history, never counted as a cause"
            }
            Status::Unbound => "its batch was never closed (a crash or a kill): no conclusion yet",
            Status::Cancelled => {
                "its batch was cancelled before every sample ran: it concludes nothing"
            }
            Status::Torn => "a line a crash cut short: ignored",
            Status::Failed => "it does not recompute from the lines above: never used",
        }
    }
}

/// A failure makes `verify` exit 1; a warning does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The line failed.
    Failure,
    /// Reported, not fatal.
    Warning,
}

/// One problem: `PATH:LINE: TYPE ID8: message`.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// The record type, when known.
    pub record_type: Option<String>,
    /// The record's id, when known.
    pub id: Option<String>,
    /// A stable code (`chain`, `effect`, `depends`, `torn`, ...).
    pub code: &'static str,
    /// What failed, for people.
    pub message: String,
    /// Failure or warning.
    pub severity: Severity,
}

/// Line counts by status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// All lines.
    pub lines: usize,
    /// Verified.
    pub verified: usize,
    /// Legacy.
    pub legacy_unverified: usize,
    /// Unbound trials.
    pub unbound: usize,
    /// Trials of cancelled batches.
    pub cancelled: usize,
    /// Torn lines.
    pub torn: usize,
    /// Failed.
    pub failed: usize,
}

/// A verified ledger: the file, each line's status, and the problems found.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The file as read.
    pub file: LedgerFile,
    /// Per line (same index as `file.lines`).
    pub status: Vec<Status>,
    /// In line order.
    pub problems: Vec<Problem>,
}

impl Checked {
    /// Counts by status.
    pub fn counts(&self) -> Counts {
        let mut c = Counts {
            lines: self.status.len(),
            ..Counts::default()
        };
        for s in &self.status {
            match s {
                Status::Verified => c.verified += 1,
                Status::LegacyUnverified => c.legacy_unverified += 1,
                Status::Unbound => c.unbound += 1,
                Status::Cancelled => c.cancelled += 1,
                Status::Torn => c.torn += 1,
                Status::Failed => c.failed += 1,
            }
        }
        c
    }

    /// No line failed.
    pub fn ok(&self) -> bool {
        !self.status.contains(&Status::Failed)
    }

    /// The header, when line 1 holds one.
    pub fn header(&self) -> Option<&Header> {
        match self.file.lines.first()?.parsed()?.record {
            Record::Header(ref h) => Some(h),
            _ => None,
        }
    }

    /// Every parsed record with its line and status, in file order.
    pub fn records(&self) -> impl Iterator<Item = (&Line, &Parsed, Status)> {
        self.file
            .lines
            .iter()
            .zip(&self.status)
            .filter_map(|(l, s)| Some((l, l.parsed()?, *s)))
    }
}

/// Reads and verifies the ledger at `path`. An unreadable file or one that is not a ledger is an
/// error (exit 2); everything else is in the result.
pub fn verify_path(path: &Path) -> Result<Checked, LedgerError> {
    check(read_file(path)?)
}

/// Verifies a read ledger.
pub fn check(file: LedgerFile) -> Result<Checked, LedgerError> {
    let first_ok = match file.lines.first().map(|l| &l.content) {
        None => Err("the file is empty".to_owned()),
        Some(Content::Record { parsed, .. }) => {
            if matches!(parsed.record, Record::Header(_)) || parsed.schema == 1 {
                Ok(())
            } else {
                Err(format!(
                    "line 1 is a '{}' record, not the ledger header",
                    parsed.record.kind().as_str()
                ))
            }
        }
        Some(Content::Invalid { invalid, .. }) if invalid.kind.as_deref() == Some("ledger") => {
            Ok(())
        }
        Some(Content::Invalid { .. }) => {
            Err("line 1 is a JSON object but not a ledger header".to_owned())
        }
        Some(Content::Unparsable { reason }) => Err(format!("line 1 is not JSON ({reason})")),
    };
    if let Err(why) = first_ok {
        return Err(LedgerError::NotALedger {
            path: file.path.clone(),
            why,
        });
    }
    let mut v = V::new(&file);
    for idx in 0..file.lines.len() {
        v.line(idx);
    }
    v.cohorts();
    v.unbound();
    let V {
        status,
        mut problems,
        ..
    } = v;
    problems.sort_by_key(|p| p.line);
    Ok(Checked {
        status,
        problems,
        file,
    })
}

/// The (tested, comparison) bundle digests §3 derives for a trial, or why none.
type Derived = Result<(String, String), String>;

/// A sample's `remove` and `restore` ids as sets.
type Members<'f> = (HashSet<&'f str>, HashSet<&'f str>);

/// The verifier's state while walking the file.
struct V<'f> {
    lines: &'f [Line],
    status: Vec<Status>,
    problems: Vec<Problem>,
    header: Option<&'f Header>,
    /// Bundle digest → (first line index, the bundle when it recomputed).
    bundles: HashMap<&'f str, (usize, Option<Rc<Bundle>>)>,
    /// (experiment sample line, baseline, tested) → the (tested, comparison) digests §3 derives.
    derived: HashMap<(usize, &'f str, &'f str), Derived>,
    /// (tested, comparison) → their diff, shared by every trial over that pair.
    diffs: HashMap<(&'f str, &'f str), Rc<IndexedDiff>>,
    /// Sample line → its `remove` and `restore` ids as sets.
    members: HashMap<usize, Rc<Members<'f>>>,
    samples: HashMap<&'f str, usize>,
    trials: HashMap<&'f str, usize>,
    attributions: HashMap<&'f str, usize>,
    pair_keys: HashMap<String, usize>,
    /// Trial id → the attribution line listing it.
    listed: HashMap<&'f str, usize>,
    /// Cohort → its first (non-legacy) attribution line.
    closed: HashMap<&'f str, usize>,
    /// Cohort → its `cancel` line.
    cancelled: HashMap<&'f str, usize>,
    /// Cohort → the ids of its trials so far, in file order.
    cohort_trials: HashMap<&'f str, Vec<&'f str>>,
    /// Cohorts holding a legacy attribution (their trials are history, not unbound).
    legacy_cohorts: std::collections::HashSet<&'f str>,
    latest: HashMap<ComponentKey, String>,
}

impl<'f> V<'f> {
    fn new(file: &'f LedgerFile) -> Self {
        V {
            lines: &file.lines,
            status: vec![Status::Verified; file.lines.len()],
            problems: Vec::new(),
            header: None,
            bundles: HashMap::new(),
            derived: HashMap::new(),
            diffs: HashMap::new(),
            members: HashMap::new(),
            samples: HashMap::new(),
            trials: HashMap::new(),
            attributions: HashMap::new(),
            pair_keys: HashMap::new(),
            listed: HashMap::new(),
            closed: HashMap::new(),
            cancelled: HashMap::new(),
            cohort_trials: HashMap::new(),
            legacy_cohorts: std::collections::HashSet::new(),
            latest: HashMap::new(),
        }
    }

    fn problem(&mut self, idx: usize, code: &'static str, message: String, severity: Severity) {
        let (record_type, id) = match self.lines.get(idx) {
            Some(l) => describe(l),
            None => (None, None),
        };
        self.problems.push(Problem {
            line: idx + 1,
            record_type,
            id,
            code,
            message,
            severity,
        });
    }

    fn fail(&mut self, idx: usize, code: &'static str, message: String) {
        if let Some(s) = self.status.get_mut(idx) {
            *s = Status::Failed;
        }
        self.problem(idx, code, message, Severity::Failure);
    }

    fn warn(&mut self, idx: usize, code: &'static str, message: String) {
        self.problem(idx, code, message, Severity::Warning);
    }

    fn failed(&self, idx: usize) -> bool {
        self.status.get(idx) == Some(&Status::Failed)
    }

    /// Fails `idx` when the record it depends on (`on`) failed; true when it may go on.
    fn depends(&mut self, idx: usize, on: usize) -> bool {
        if self.failed(on) {
            self.fail(
                idx,
                "depends",
                format!("depends on line {}, which failed", on + 1),
            );
            false
        } else {
            true
        }
    }

    fn line(&mut self, idx: usize) {
        let lines = self.lines;
        let Some(line) = lines.get(idx) else { return };
        match &line.content {
            Content::Unparsable { reason } => self.unparsable(idx, line, reason),
            Content::Invalid { invalid, .. } => {
                let msg = invalid.reason.clone();
                self.fail(idx, "field", msg);
            }
            Content::Record { parsed, .. } => {
                if parsed.schema == 2 {
                    self.chain(idx, parsed);
                }
                self.record(idx, parsed);
            }
        }
    }

    fn unparsable(&mut self, idx: usize, line: &Line, reason: &str) {
        let sealed = matches!(
            self.lines.get(idx + 1).and_then(Line::parsed).map(|p| &p.record),
            Some(Record::Torn(t)) if usize::try_from(t.line).ok() == Some(idx + 1)
                && usize::try_from(t.bytes).ok() == Some(line.len)
        );
        if let Some(s) = self.status.get_mut(idx) {
            *s = Status::Torn;
        }
        if sealed {
            self.warn(
                idx,
                "torn_sealed",
                format!("sealed torn line, {} bytes, ignored", line.len),
            );
        } else if idx + 1 == self.lines.len() {
            self.warn(
                idx,
                "torn",
                format!(
                    "line {}: torn, {} bytes, ignored (the next append seals it)",
                    idx + 1,
                    line.len
                ),
            );
        } else {
            self.fail(
                idx,
                "unparsable",
                format!("not a ledger record and not sealed as torn: {reason}"),
            );
        }
    }

    fn chain(&mut self, idx: usize, parsed: &Parsed) {
        let want = idx
            .checked_sub(1)
            .and_then(|p| self.lines.get(p))
            .map(|l| l.hash.as_str());
        if parsed.prev.as_deref() != want {
            let msg = match want {
                None => "'prev' must be null on the first line".to_owned(),
                Some(_) => format!(
                    "'prev' does not match the hash of line {}: a line above was edited, inserted or deleted",
                    idx
                ),
            };
            self.fail(idx, "chain", msg);
        }
    }

    fn record(&mut self, idx: usize, parsed: &'f Parsed) {
        match &parsed.record {
            Record::Header(h) => {
                if idx == 0 {
                    self.header = Some(h);
                } else {
                    self.fail(idx, "header", "a ledger header after line 1".to_owned());
                }
            }
            Record::Torn(t) => self.torn(idx, t.line, t.bytes),
            Record::Bundle(b) => self.bundle(idx, b),
            Record::Sample(s) => self.sample(idx, s),
            Record::Trial(t) => self.trial(idx, t, parsed.schema),
            Record::Attribution(a) => self.attribution(idx, a, parsed),
            Record::Cancel(c) => self.cancel(idx, c),
        }
    }

    fn torn(&mut self, idx: usize, line: u64, bytes: u64) {
        let prev = idx.checked_sub(1).and_then(|p| self.lines.get(p));
        let ok = prev.is_some_and(|p| {
            matches!(p.content, Content::Unparsable { .. })
                && usize::try_from(line).ok() == Some(p.number)
                && usize::try_from(bytes).ok() == Some(p.len)
        });
        if !ok {
            self.fail(
                idx,
                "torn",
                format!(
                    "the torn record names line {line} ({bytes} bytes), which is not the torn line just above"
                ),
            );
        }
    }
}

/// The record type and id of a line, for problem reports.
fn describe(l: &Line) -> (Option<String>, Option<String>) {
    match &l.content {
        Content::Record { parsed, .. } => (
            Some(parsed.record.kind().as_str().to_owned()),
            match parsed.record.kind() {
                RecordType::Ledger | RecordType::Torn => None,
                _ => parsed.record.id().map(str::to_owned),
            },
        ),
        Content::Invalid { value, invalid } => {
            let id = ["sample_id", "trial_id", "attribution_id", "digest"]
                .iter()
                .find_map(|k| value.get(*k).and_then(|v| v.as_str()).map(str::to_owned));
            (invalid.kind.clone(), id)
        }
        Content::Unparsable { .. } => (Some("line".to_owned()), None),
    }
}

#[cfg(test)]
mod tests;
