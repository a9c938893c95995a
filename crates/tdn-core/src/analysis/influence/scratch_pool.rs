//! Scratch buffers kept from one embedding call to the next while a ranking runs (issue 11: the
//! hashed embedder is called once per part of a batch, and each call built its token cache
//! again from nothing). A ranking opens a [`Session`]; while any session is open, a call takes a
//! kept scratch (or makes one) and gives it back when done; when the last session closes, every
//! kept scratch is let go, so nothing is held once the ranking is over. Outside a session a call
//! makes its own scratch and drops it, as before. What a scratch holds never changes a result,
//! only how much is made again.

use std::sync::Mutex;

/// The kept scratches of one kind, and the number of sessions open.
pub(super) struct ScratchPool<T> {
    inner: Mutex<Kept<T>>,
}

struct Kept<T> {
    sessions: usize,
    free: Vec<T>,
}

/// An open session of a [`ScratchPool`]; closing it (dropping) lets the kept scratches go when
/// it was the last.
pub(super) struct Session<'p, T> {
    pool: &'p ScratchPool<T>,
}

impl<T> ScratchPool<T> {
    /// An empty pool with no session open.
    pub(super) const fn new() -> ScratchPool<T> {
        ScratchPool {
            inner: Mutex::new(Kept {
                sessions: 0,
                free: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept<T>> {
        // A panic elsewhere cannot leave the list half changed: take it as it is.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a session: scratches are kept until it and every other one are closed.
    pub(super) fn session(&self) -> Session<'_, T> {
        self.lock().sessions += 1;
        Session { pool: self }
    }

    /// A kept scratch when a session is open and one is free, else `None` (the caller makes
    /// one).
    pub(super) fn take(&self) -> Option<T> {
        let mut kept = self.lock();
        if kept.sessions == 0 {
            return None;
        }
        kept.free.pop()
    }

    /// Gives a scratch back: kept while a session is open, else dropped.
    pub(super) fn give_back(&self, scratch: T) {
        let mut kept = self.lock();
        if kept.sessions > 0 {
            kept.free.push(scratch);
            return;
        }
        drop(kept);
        drop(scratch);
    }

    /// How many scratches are kept now.
    #[cfg(test)]
    pub(super) fn kept(&self) -> usize {
        self.lock().free.len()
    }
}

impl<T> Drop for Session<'_, T> {
    fn drop(&mut self) {
        let mut kept = self.pool.lock();
        kept.sessions = kept.sessions.saturating_sub(1);
        if kept.sessions == 0 {
            let free = std::mem::take(&mut kept.free);
            // Dropped outside the lock.
            drop(kept);
            drop(free);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratches_are_kept_only_while_a_session_is_open() {
        let pool: ScratchPool<Vec<u8>> = ScratchPool::new();
        // No session: nothing is handed out or kept.
        assert_eq!(pool.take(), None);
        pool.give_back(vec![1]);
        assert_eq!(pool.kept(), 0);
        let outer = pool.session();
        assert_eq!(pool.take(), None);
        pool.give_back(vec![2]);
        {
            let _inner = pool.session();
            pool.give_back(vec![3]);
            assert_eq!(pool.kept(), 2);
        }
        // The outer session is still open: the scratches stay.
        assert_eq!(pool.take(), Some(vec![3]));
        pool.give_back(vec![3]);
        drop(outer);
        assert_eq!(pool.kept(), 0);
        assert_eq!(pool.take(), None);
    }
}
