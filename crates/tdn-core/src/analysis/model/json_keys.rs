//! Object keys of [`Json`](super::Json) payloads, shared (issue 11).
//!
//! A run's payloads repeat a handful of keys (`role`, `content`, `path`, ...) hundreds of
//! thousands of times; each as its own `Box<str>` cost a 32-byte heap chunk (7 MB on a
//! 100,000-step run). A key is an `Arc<str>` (the same 16 bytes), and a short key is handed out by
//! a per-thread table so that equal keys read on one thread share one allocation.
//!
//! The table is bounded: a key longer than [`MAX_KEY_LEN`] bytes, or a new key once the table
//! holds [`MAX_KEYS`], gets an allocation of its own and is not remembered, so a run with millions
//! of distinct keys costs what it did before plus one hash lookup a key. The table lives as long
//! as its thread (at most `MAX_KEYS` short keys, a few hundred KB).

use serde::de::{DeserializeSeed, Deserializer, Visitor};
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

/// A key shared by equal keys read on one thread.
pub type Key = Arc<str>;

/// Keys up to this many bytes are shared.
pub const MAX_KEY_LEN: usize = 32;

/// At most this many keys a thread are remembered.
pub const MAX_KEYS: usize = 4_096;

thread_local! {
    static KEYS: RefCell<hashbrown::HashSet<Key>> = RefCell::new(hashbrown::HashSet::new());
}

/// `s` as a key: the shared one when this thread has it, else a new one (remembered while the
/// table has room and `s` is short).
pub fn key(s: &str) -> Key {
    if s.len() > MAX_KEY_LEN {
        return Arc::from(s);
    }
    KEYS.try_with(|keys| {
        let mut keys = keys.borrow_mut();
        if let Some(k) = keys.get(s) {
            return Arc::clone(k);
        }
        let k: Key = Arc::from(s);
        if keys.len() < MAX_KEYS {
            keys.insert(Arc::clone(&k));
        }
        k
    })
    .unwrap_or_else(|_| Arc::from(s))
}

/// How many keys this thread remembers (for tests).
#[cfg(test)]
pub fn remembered() -> usize {
    KEYS.with(|keys| keys.borrow().len())
}

/// Reads an object key through [`key`].
#[derive(Clone, Copy, Debug, Default)]
pub struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(key(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_short_keys_share_one_allocation() {
        std::thread::spawn(|| {
            let a = key("content");
            let owned = String::from("content");
            let b = key(&owned);
            assert!(Arc::ptr_eq(&a, &b));
            assert_eq!(&*a, "content");
            assert!(!Arc::ptr_eq(&a, &key("role")));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn long_keys_are_not_remembered() {
        std::thread::spawn(|| {
            let long = "k".repeat(MAX_KEY_LEN + 1);
            let a = key(&long);
            let b = key(&long);
            assert_eq!(a, b);
            assert!(!Arc::ptr_eq(&a, &b));
            assert_eq!(remembered(), 0);
            let edge = "k".repeat(MAX_KEY_LEN);
            assert!(Arc::ptr_eq(&key(&edge), &key(&edge)));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_table_stays_bounded() {
        std::thread::spawn(|| {
            for i in 0..MAX_KEYS + 1_000 {
                assert_eq!(&*key(&format!("k{i}")), format!("k{i}"));
            }
            assert_eq!(remembered(), MAX_KEYS);
            // A key read once the table is full is still correct, just not shared.
            let late = format!("k{}", MAX_KEYS + 10);
            assert!(!Arc::ptr_eq(&key(&late), &key(&late)));
            assert!(Arc::ptr_eq(&key("k0"), &key("k0")));
        })
        .join()
        .unwrap();
    }
}
