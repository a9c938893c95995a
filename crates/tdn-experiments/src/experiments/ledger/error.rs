//! The ledger's error type: what went wrong, on which file, and what to do about it.

use super::bundle::BundleError;
use super::canonical::CanonError;
use super::naming::RandomError;
use std::path::PathBuf;

/// Everything opening, reading or appending to a ledger can fail with.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The file could not be opened, read, written or synced.
    #[error("{}: cannot {action} the ledger: {source}", path.display())]
    Io {
        /// The ledger.
        path: PathBuf,
        /// What was being done ("open", "read", "write", "sync").
        action: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// Another process held the lock for longer than the limit.
    #[error(
        "{}: the ledger is locked: another process has held its lock for more than {secs} s, so nothing was read or written; try again once that process is done",
        path.display()
    )]
    Busy {
        /// The ledger.
        path: PathBuf,
        /// How long we waited.
        secs: u64,
    },
    /// The file exists but is no ledger.
    #[error("{}: not a tdn-tui ledger: {why}", path.display())]
    NotALedger {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        why: String,
    },
    /// The file is too big to read.
    #[error("{}: the ledger is {bytes} bytes, more than the {max} this tool reads", path.display())]
    TooBig {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// A run-scope ledger belongs to another run.
    #[error(
        "{}: this ledger holds the evidence of run '{name}', not of run '{run_id}'; choose another ledger file for this run",
        path.display()
    )]
    WrongRun {
        /// The ledger.
        path: PathBuf,
        /// Its run.
        name: String,
        /// The sample's run.
        run_id: String,
    },
    /// The cohort already holds attributions that are not what its trials yield.
    #[error(
        "{}: cohort '{cohort}' already holds attributions that its trials do not reproduce; run 'tdn-tui ledger verify' on it",
        path.display()
    )]
    CohortMismatch {
        /// The ledger.
        path: PathBuf,
        /// The cohort.
        cohort: String,
    },
    /// A value cannot be written canonically (an integer above 2^53 − 1, a non-finite number).
    #[error(transparent)]
    Canon(#[from] CanonError),
    /// A bundle cannot be formed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// No random bytes for an id.
    #[error(transparent)]
    Random(#[from] RandomError),
}

impl LedgerError {
    pub(super) fn io(path: &std::path::Path, action: &'static str, source: std::io::Error) -> Self {
        LedgerError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}
