//! Whether the session that writes a batch is still alive: while a job runs, its process holds
//! an exclusive lock on a small lease file named after the ledger and the batch, in a folder of
//! the user's own under the system's temporary folder. The operating system drops the lock when
//! the process ends however it ends (a kill, a crash), so the next start can tell a batch a dead
//! debugger left open from one another debugger is still writing, without waiting out the
//! runner's time-out. A lease that cannot be taken (no temporary folder, another user's ledger)
//! is no lease: the time-out rule decides then.
//!
//! Creates, locks and removes files in that folder only; never touches the ledger.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// A held lease: the file is locked until this is dropped, then removed.
#[derive(Debug)]
pub struct Lease {
    path: PathBuf,
    file: File,
}

/// What a batch's lease says about its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// A process holds the lease: its session is running.
    Alive,
    /// The lease file is there but nobody holds it: its session ended without closing the batch.
    Gone,
    /// No lease file (an older version, another user or machine, or it was cleaned up).
    Unknown,
}

fn folder() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("tdn-tui-{uid}-leases"))
}

/// The lease file of `cohort` in the ledger at `ledger`.
pub(super) fn file_of(ledger: &Path, cohort: &str) -> PathBuf {
    let abs = std::fs::canonicalize(ledger).unwrap_or_else(|_| ledger.to_path_buf());
    let key = crate::experiments::ledger::digest::sha256_hex(abs.display().to_string().as_bytes());
    // Cohort names are `b-` + digits, `T`, `Z` and hex; anything else is replaced.
    let safe: String = cohort
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    folder().join(format!("{}-{safe}.lease", key.get(..16).unwrap_or(&key)))
}

impl Lease {
    /// Takes the lease of `cohort` for this process; `None` when it cannot be had.
    pub fn take(ledger: &Path, cohort: &str) -> Option<Lease> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let dir = folder();
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir);
        let path = file_of(ledger, cohort);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .ok()?;
        file.try_lock().ok()?;
        Some(Lease { path, file })
    }

    /// What the lease of `cohort` says.
    pub fn liveness(ledger: &Path, cohort: &str) -> Liveness {
        let Ok(file) = File::open(file_of(ledger, cohort)) else {
            return Liveness::Unknown;
        };
        match file.try_lock_shared() {
            Ok(()) => Liveness::Gone,
            Err(std::fs::TryLockError::WouldBlock) => Liveness::Alive,
            Err(std::fs::TryLockError::Error(_)) => Liveness::Unknown,
        }
    }

    /// Removes the lease file of a batch that is closed now.
    pub fn forget(ledger: &Path, cohort: &str) {
        let path = file_of(ledger, cohort);
        if Lease::liveness(ledger, cohort) == Liveness::Gone {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_is_alive_a_dropped_one_is_forgotten_and_a_stale_one_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("r.ledger.jsonl");
        std::fs::write(&ledger, "").unwrap();
        let cohort = format!("b-20260817T100000Z-{:08x}", std::process::id());
        assert_eq!(Lease::liveness(&ledger, &cohort), Liveness::Unknown);
        let lease = Lease::take(&ledger, &cohort).expect("a lease in the temporary folder");
        // Another open file description (as another process would) sees it held.
        assert_eq!(Lease::liveness(&ledger, &cohort), Liveness::Alive);
        drop(lease);
        assert_eq!(Lease::liveness(&ledger, &cohort), Liveness::Unknown);
        // A process killed while it held the lease leaves the file, unlocked.
        let stale = file_of(&ledger, &cohort);
        std::fs::write(&stale, "").unwrap();
        assert_eq!(Lease::liveness(&ledger, &cohort), Liveness::Gone);
        Lease::forget(&ledger, &cohort);
        assert!(!stale.exists());
    }
}
