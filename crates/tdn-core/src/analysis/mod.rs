//! The analysis: plain synchronous library code with no terminal, process or screen in it.
//!
//! `model` is the run, `load` and `import` read it, `links`, `detect`, `rank` and `claims` find
//! what went wrong, `influence` ranks context, and `report` puts it all in the one structure that
//! `analyze --json`, the text output and the screen share; `eval` scores reports against labelled
//! runs; `progress` counts how far a load and an analysis have come, for whoever shows it.

pub mod claims;
pub mod compare;
pub mod cost;
pub mod count;
pub mod detect;
pub mod eval;
pub mod import;
pub mod influence;
pub mod js_number;
pub mod judge;
pub mod links;
pub mod load;
pub mod model;
pub mod progress;
pub mod rank;
pub mod report;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
