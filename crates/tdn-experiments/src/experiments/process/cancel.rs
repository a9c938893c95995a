//! A cancellation signal shared by a session and every sample it runs. Cloning shares it; once
//! fired it stays fired, with the first reason given. Holds no process: the code waiting on it
//! kills its own process group.

use std::sync::{Arc, OnceLock};
use tokio::sync::watch;

/// Fires once; every clone sees it.
#[derive(Clone, Debug)]
pub struct Cancel {
    tx: Arc<watch::Sender<bool>>,
    why: Arc<OnceLock<String>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    /// A signal that has not fired.
    pub fn new() -> Self {
        let (tx, _) = watch::channel(false);
        Cancel {
            tx: Arc::new(tx),
            why: Arc::new(OnceLock::new()),
        }
    }

    /// Fires the signal (idempotent), with no reason beyond "cancelled".
    pub fn cancel(&self) {
        self.cancel_because("cancelled");
    }

    /// Fires the signal saying why (the first reason given is kept).
    pub fn cancel_because(&self, why: &str) {
        let _ = self.why.set(why.to_owned());
        self.tx.send_replace(true);
    }

    /// Why it fired, once it has.
    pub fn reason(&self) -> Option<&str> {
        self.why.get().map(String::as_str)
    }

    /// True once fired.
    pub fn is_cancelled(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves when the signal fires (at once if it already has).
    pub async fn cancelled(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|fired| *fired).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_clone_sees_the_signal_and_it_stays_fired() {
        let c = Cancel::new();
        let d = c.clone();
        assert!(!d.is_cancelled());
        let waiter = tokio::spawn(async move { d.cancelled().await });
        c.cancel_because("the user pressed x");
        waiter.await.unwrap();
        assert!(c.is_cancelled());
        c.cancelled().await;
        c.cancel_because("a second reason");
        assert_eq!(
            c.reason(),
            Some("the user pressed x"),
            "the first reason stays"
        );
    }
}
