//! Text held once however often a run records it: the content of a model call's messages. Each
//! call sends the system prompt and the conversation so far again, so a run of thousands of calls
//! holds the same texts thousands of times; a [`SharedText`] is one counted pointer to a text,
//! and a [`TextTable`] gives every equal text the same one while a run is built.

use hashbrown::HashSet;
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable text that clones by reference. Reads as a `&str` (it derefs to one), compares
/// with strings, and is written to JSON as a string.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedText(Arc<str>);

impl SharedText {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when both hold the same allocation (not only equal texts).
    pub fn same_place(&self, other: &SharedText) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<String> for SharedText {
    fn from(s: String) -> SharedText {
        SharedText(Arc::from(s))
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> SharedText {
        SharedText(Arc::from(s))
    }
}

impl From<&String> for SharedText {
    fn from(s: &String) -> SharedText {
        SharedText(Arc::from(s.as_str()))
    }
}

impl From<SharedText> for String {
    fn from(t: SharedText) -> String {
        t.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedText {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedText> for &str {
    fn eq(&self, other: &SharedText) -> bool {
        **self == *other.0
    }
}

impl PartialEq<SharedText> for String {
    fn eq(&self, other: &SharedText) -> bool {
        **self == *other.0
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// The texts met so far while a run is built, each once: equal texts handed to it come back as
/// one [`SharedText`]. Linear in the texts' length (each is hashed once).
#[derive(Debug, Default)]
pub struct TextTable {
    held: HashSet<SharedText>,
}

impl TextTable {
    /// The shared text equal to `text` (made from it when it is new; `text` is let go when an
    /// equal one is held).
    pub fn text(&mut self, text: String) -> SharedText {
        if let Some(t) = self.held.get(text.as_str()) {
            return t.clone();
        }
        let t = SharedText::from(text);
        self.held.insert(t.clone());
        t
    }

    /// Puts the held text equal to `text` in its place (keeping it when it is new).
    pub fn share(&mut self, text: &mut SharedText) {
        match self.held.get(text.as_str()) {
            Some(t) => {
                if !t.same_place(text) {
                    *text = t.clone();
                }
            }
            None => {
                self.held.insert(text.clone());
            }
        }
    }

    /// How many distinct texts it holds.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_come_back_as_one() {
        let mut table = TextTable::default();
        let a = table.text("You are the support agent.".to_owned());
        let b = table.text("You are the support agent.".to_owned());
        let c = table.text("Something else".to_owned());
        assert!(a.same_place(&b));
        assert!(!a.same_place(&c));
        let mut d = SharedText::from("You are the support agent.");
        assert!(!d.same_place(&a));
        table.share(&mut d);
        assert!(d.same_place(&a));
        let mut e = SharedText::from("new");
        let before = e.clone();
        table.share(&mut e);
        assert!(e.same_place(&before));
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn it_reads_and_writes_as_a_string() {
        let t = SharedText::from("Grüße \"x\"");
        assert_eq!(t, "Grüße \"x\"");
        assert_eq!(t.chars().count(), 9);
        assert_eq!(format!("{t:?}"), format!("{:?}", "Grüße \"x\""));
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""Grüße \"x\"""#);
        assert_eq!(SharedText::default(), "");
    }
}
