//! The analysis: plain synchronous library code with no terminal, process or screen in it.
//!
//! `model` is the run, `import` and `load` read it, `links`, `claims`, `detect` and `rank` find
//! what went wrong, `influence` ranks context, and `report` puts it all in the one structure that
//! `analyze --json`, the text output and the screen share; `eval` scores reports against labelled
//! runs; `progress` counts how far a load and an analysis have come, for whoever shows it.

pub mod claims;
pub mod compare;
pub mod cost;
pub mod count;
pub mod detect;
pub mod document;
pub mod eval;
pub mod import;
pub mod influence;
pub mod js_number;
pub mod judge;
pub mod links;
pub mod load;
pub mod model;
pub mod params;
pub mod probe;
pub mod progress;
pub mod rank;
pub mod report;
pub mod say;
pub mod state_change;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod warning;
pub mod whole_words;
