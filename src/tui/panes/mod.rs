//! The panes: each file holds its state, its render function and the helpers its keys need.
//! Panes talk to each other only through actions (a suspect selects its step with
//! `Action::JumpTo`), never by calling each other.

pub mod claims;
pub mod detail;
pub mod dropped;
pub mod experiments;
pub mod suspects;
pub mod timeline;
