//! The append-only store (attribution-ledger.md §7, "Crash safety" and "Concurrency"): open in
//! append mode, take the exclusive advisory lock (10 s limit), catch up with what other writers
//! appended, seal a torn tail, write the new lines in one `write_all`, `sync_data`, fsync the
//! folder when the file was created, release the lock. Never rewrites, reorders or deletes a line.
//! Blocking I/O: call it from `spawn_blocking`, never from a UI task.

use super::attribute::ComponentKey;
use super::canonical::canonical;
use super::digest::sha256_hex;
use super::error::LedgerError;
use super::file::{Content, LOCK_POLL, Line, MAX_LEDGER_BYTES, lock, parse_line, split_lines};
use super::naming::{created_by, timestamp};
use super::record::Policy;
use super::record::{Header, Record, RecordType, Sample, Scope, Torn, Trial, line_value};
use super::session::{self, Appended, Closed, NewSample};
use crate::experiments::spec::ExperimentKind;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How an append waits for the file lock when another process holds it (attribution-ledger.md
/// §7, "Concurrency": the sample is held back until it is written). Without one, an append gives
/// up after the usual 10 s.
pub struct LockWait<'a> {
    /// After this long without the lock, `on_wait` is told once; the append keeps waiting.
    pub patience: Duration,
    /// Told, with who holds the lock and for how long, that the sample is being held back.
    pub on_wait: &'a (dyn Fn(&str) + Sync),
    /// Asked while waiting; true gives up (the append fails with [`LedgerError::Busy`]).
    pub give_up: &'a (dyn Fn() -> bool + Sync),
}

/// A ledger open for appending. Cheap to share between threads (`&self` methods, one internal
/// mutex); other processes are kept apart by the file lock.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    scope: Scope,
    name: String,
    state: Mutex<State>,
}

/// What the writer knows of the file, caught up incrementally under the lock so that a session's
/// appends stay linear in the ledger's size.
#[derive(Debug, Default)]
pub(super) struct State {
    offset: u64,
    lines: usize,
    last_hash: Option<String>,
    /// The hash of the line before the last one.
    prev_of_last: Option<String>,
    /// The last complete line did not parse and is not sealed: (line number, bytes).
    unsealed: Option<(usize, usize)>,
    first_ok: Option<bool>,
    pub(super) header: Option<Header>,
    pub(super) bundles: HashSet<String>,
    pub(super) pair_keys: HashSet<String>,
    pub(super) closed: HashSet<String>,
    /// Cohorts closed by a `cancel` record: no attribution, ever.
    pub(super) cancelled: HashSet<String>,
    pub(super) cohort_attributions: HashMap<String, Vec<String>>,
    pub(super) latest: HashMap<ComponentKey, String>,
    /// (cohort, seed, run id) → the first successful baseline and the successful experiments.
    pub(super) slots: HashMap<(String, u64, String), Slot>,
    pub(super) cohort_trials: HashMap<String, Vec<Trial>>,
    pub(super) cohort_epoch: HashMap<String, String>,
    /// The epoch and policy of each closed cohort's first attribution: what the rest of an
    /// aggregation cut short by a crash is computed with.
    pub(super) cohort_closing: HashMap<String, (String, Policy)>,
}

/// The samples a pairing needs.
#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) baseline: Option<Sample>,
    pub(super) experiments: Vec<Sample>,
}

impl State {
    fn feed(&mut self, line: &Line) {
        self.lines = line.number;
        self.prev_of_last = self.last_hash.replace(line.hash.clone());
        self.unsealed = match line.content {
            Content::Unparsable { .. } => Some((line.number, line.len)),
            _ => None,
        };
        let parsed = line.parsed();
        if line.number == 1 {
            self.first_ok = Some(
                parsed.is_some_and(|p| matches!(p.record, Record::Header(_)) || p.schema == 1),
            );
        }
        let Some(p) = parsed else { return };
        match &p.record {
            Record::Header(h) if line.number == 1 => self.header = Some(h.clone()),
            Record::Bundle(b) => {
                self.bundles.insert(b.digest.clone());
            }
            Record::Sample(s) => self.feed_sample(s),
            Record::Trial(t) => {
                if let Ok(k) = super::attribute::matched_pair_key(t) {
                    self.pair_keys.insert(k);
                }
                self.cohort_trials
                    .entry(t.cohort.clone())
                    .or_default()
                    .push((**t).clone());
            }
            Record::Attribution(a) => {
                self.latest
                    .insert(super::attribute::component_key(a), a.attribution_id.clone());
                if p.missing.is_empty() {
                    self.closed.insert(a.cohort.clone());
                    self.cohort_attributions
                        .entry(a.cohort.clone())
                        .or_default()
                        .push(a.attribution_id.clone());
                    self.cohort_closing
                        .entry(a.cohort.clone())
                        .or_insert_with(|| (a.evaluator_epoch.clone(), a.policy));
                }
            }
            Record::Cancel(c) => {
                self.closed.insert(c.cohort.clone());
                self.cancelled.insert(c.cohort.clone());
            }
            Record::Header(_) | Record::Torn(_) => {}
        }
    }

    fn feed_sample(&mut self, s: &Sample) {
        self.cohort_epoch
            .entry(s.cohort.clone())
            .or_insert_with(|| s.evaluator_epoch.clone());
        if s.outcome.is_none() {
            return;
        }
        let slot = self
            .slots
            .entry((s.cohort.clone(), s.seed, s.run_id.clone()))
            .or_default();
        if s.experiment == ExperimentKind::Baseline {
            if slot.baseline.is_none() {
                slot.baseline = Some(s.clone());
            }
        } else {
            slot.experiments.push(s.clone());
        }
    }
}

/// One locked append in progress: the lines to write and the state they extend.
pub(super) struct Tx<'a> {
    pub(super) state: &'a mut State,
    out: Vec<u8>,
    next_start: u64,
}

impl Tx<'_> {
    /// Appends a record (its `prev` from the line above) and returns its line number.
    pub(super) fn push(&mut self, kind: RecordType, fields: Value) -> Result<usize, LedgerError> {
        let v = line_value(kind, self.state.last_hash.as_deref(), fields);
        let text = canonical(&v)?;
        let bytes = text.as_bytes();
        let line = Line {
            number: self.state.lines + 1,
            start: self.next_start,
            len: bytes.len(),
            hash: sha256_hex(bytes),
            terminated: true,
            content: parse_line(bytes),
        };
        debug_assert!(
            matches!(line.content, Content::Record { .. }),
            "the writer emitted a line its reader refuses: {text}"
        );
        self.state.feed(&line);
        self.out.extend_from_slice(bytes);
        self.out.push(b'\n');
        self.next_start += u64::try_from(bytes.len() + 1).unwrap_or(u64::MAX);
        Ok(line.number)
    }

    /// Writes raw bytes (a `\n` completing a torn tail).
    fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.next_start += u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    }
}

impl Ledger {
    /// Opens the ledger at `path`, creating it with its header line when absent (`scope` and
    /// `name` are used only then). Seals a torn tail left by a crash. Fails when the file is not
    /// a ledger, or its lock stays taken for more than 10 s.
    pub fn open(path: &Path, scope: Scope, name: &str) -> Result<Ledger, LedgerError> {
        let l = Ledger {
            path: path.to_path_buf(),
            scope,
            name: name.to_owned(),
            state: Mutex::new(State::default()),
        };
        l.transact(|_| Ok(()))?;
        Ok(l)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header as read (scope and name of the ledger).
    pub fn header(&self) -> Option<Header> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .header
            .clone()
    }

    /// Appends one finished sample (and the bundle records it names first), then the trials it
    /// completes. Returns after `sync_data`: only then may the sample be shown.
    pub fn append_sample(&self, s: &NewSample<'_>) -> Result<Appended, LedgerError> {
        self.transact(|tx| session::append(tx, &self.path, s))
    }

    /// As [`Ledger::append_sample`], waiting for the file lock as `wait` says instead of giving
    /// up after 10 s.
    pub fn append_sample_waiting(
        &self,
        s: &NewSample<'_>,
        wait: &LockWait<'_>,
    ) -> Result<Appended, LedgerError> {
        self.transact_with(Some(wait), |tx| session::append(tx, &self.path, s))
    }

    /// Aggregates every trial of `cohort` under `policy` and appends the attributions not yet
    /// written (all of them, or the rest after a crash cut an earlier aggregation short). Closes
    /// the cohort: later trials of it are refused.
    pub fn close_cohort(&self, cohort: &str, policy: &Policy) -> Result<Closed, LedgerError> {
        self.transact(|tx| session::close(tx, &self.path, cohort, policy))
    }

    /// Closes `cohort` as cancelled: appends a `cancel` record listing its trials, which then
    /// conclude nothing; no attribution is written for it, now or later. A cohort already
    /// closed (with attributions, or cancelled) is left as it is.
    pub fn cancel_cohort(
        &self,
        cohort: &str,
        reason: &str,
    ) -> Result<session::Cancelled, LedgerError> {
        self.transact(|tx| session::cancel(tx, cohort, reason))
    }

    fn transact<T>(
        &self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        self.transact_with(None, f)
    }

    fn transact_with<T>(
        &self,
        wait: Option<&LockWait<'_>>,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let path = &self.path;
        let existed = match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(LedgerError::NotALedger {
                    path: path.clone(),
                    why: "it is not a regular file".to_owned(),
                });
            }
            Ok(_) => true,
            Err(_) => false,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| LedgerError::io(path, "open", e))?;
        match wait {
            Some(w) => lock_waiting(&file, path, w)?,
            None => lock(&file, path, true)?,
        }
        // The file lock first, then our state: an append waiting for another process holds
        // nothing that the appends of this one need, so each of them can say it is waiting.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let r = self.locked(&mut file, &mut state, existed, f);
        let _ = file.unlock();
        if r.is_err() {
            // Forget what may not have reached the disk; the next call reads the file again.
            *state = State::default();
        }
        r
    }

    fn locked<T>(
        &self,
        file: &mut File,
        state: &mut State,
        existed: bool,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let path = &self.path;
        let io = |action| move |e| LedgerError::io(path, action, e);
        let len = file.metadata().map_err(io("read"))?.len();
        if len > MAX_LEDGER_BYTES {
            return Err(LedgerError::TooBig {
                path: path.clone(),
                bytes: len,
                max: MAX_LEDGER_BYTES,
            });
        }
        if len < state.offset || !ends_a_line(file, state.offset).map_err(io("read"))? {
            // Not the file we read before (truncated or replaced): read it again from the start.
            *state = State::default();
        }
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(state.offset))
            .map_err(io("read"))?;
        file.take(len - state.offset)
            .read_to_end(&mut tail)
            .map_err(io("read"))?;
        let lines = split_lines(&tail, state.offset, state.lines + 1);
        let mut tx = Tx {
            state,
            out: Vec::new(),
            next_start: len,
        };
        for line in &lines {
            tx.state.feed(line);
        }
        if let Some(last) = lines.last().filter(|l| !l.terminated) {
            tx.raw(b"\n");
            let before = tx.state.prev_of_last.clone();
            let completes = last
                .parsed()
                .is_some_and(|p| p.schema == 2 && p.prev == before);
            if !completes {
                seal(&mut tx, last.number, last.len)?;
            }
        } else if let Some((number, bytes)) = tx.state.unsealed {
            seal(&mut tx, number, bytes)?;
        }
        if tx.state.lines == 0 {
            let header = Header {
                scope: self.scope,
                name: self.name.clone(),
                created_at: timestamp(time::OffsetDateTime::now_utc()),
                created_by: created_by(),
            };
            tx.push(RecordType::Ledger, header.fields())?;
        }
        if tx.state.first_ok != Some(true) {
            return Err(LedgerError::NotALedger {
                path: path.clone(),
                why: "line 1 is not a ledger header; it was not created by tdn-tui, or its first write was cut short".to_owned(),
            });
        }
        let result = f(&mut tx)?;
        let Tx { state, out, .. } = tx;
        if !out.is_empty() {
            file.write_all(&out).map_err(io("write"))?;
            file.sync_data().map_err(io("sync"))?;
            if !existed || len == 0 {
                sync_folder(path)?;
            }
        }
        state.offset = len + u64::try_from(out.len()).unwrap_or(u64::MAX);
        Ok(result)
    }
}

/// Takes the exclusive lock, telling `wait.on_wait` once when `wait.patience` passes without it,
/// and waiting on until it is granted or `wait.give_up` says to stop.
fn lock_waiting(f: &File, path: &Path, wait: &LockWait<'_>) -> Result<(), LedgerError> {
    let start = Instant::now();
    let mut told = false;
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(LedgerError::io(path, "lock", e)),
            Err(TryLockError::WouldBlock) => {}
        }
        let waited = start.elapsed();
        if (wait.give_up)() {
            return Err(LedgerError::Busy {
                path: path.to_path_buf(),
                secs: waited.as_secs(),
            });
        }
        if !told && waited >= wait.patience {
            told = true;
            (wait.on_wait)(&format!(
                "another process has held the lock on '{}' for more than {} s",
                path.display(),
                wait.patience.as_secs()
            ));
        }
        std::thread::sleep(LOCK_POLL);
    }
}

/// True when the byte before `offset` is a `\n` (or `offset` is 0): where our last read ended.
fn ends_a_line(file: &mut File, offset: u64) -> std::io::Result<bool> {
    if offset == 0 {
        return Ok(true);
    }
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::Start(offset - 1))?;
    file.read_exact(&mut byte)?;
    Ok(byte == *b"\n")
}

fn seal(tx: &mut Tx<'_>, number: usize, bytes: usize) -> Result<usize, LedgerError> {
    let torn = Torn {
        line: u64::try_from(number).unwrap_or(u64::MAX),
        bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
    };
    tx.push(RecordType::Torn, torn.fields())
}

fn sync_folder(path: &Path) -> Result<(), LedgerError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LedgerError::io(&dir, "sync the folder of", e))
}
