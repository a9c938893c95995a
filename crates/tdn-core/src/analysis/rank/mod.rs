//! From findings to a verdict (docs/how-it-decides.md, "Walk back", "Rank", "Who was at fault"):
//! the walk back from symptoms to causes, the ranking multipliers, one suspect per step, and the
//! fault verdict. Every tuning number is in [`crate::analysis::params`]. Pure; no I/O.

mod decision;
mod fault;
mod ranking;
mod walk_back;

pub use decision::{decider, is_container};
pub use fault::{Fault, Party, fault};
pub use ranking::{Ranked, Scored, SuspectEntry, listed, rank_steps, score_all, suspects};
pub use walk_back::{Walked, walk_back};

use crate::analysis::detect::{Facts, Finding};
use serde::{Deserialize, Serialize};

/// Walks back, scores and groups the findings: the suspects, best first.
pub fn rank(facts: &Facts<'_>, findings: Vec<Finding>) -> Vec<SuspectEntry> {
    suspects(score_all(facts, walk_back(facts, findings)))
}

/// How a suspect was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Found by walking back from a symptom.
    RootCause,
    /// Where a failure showed up; has a known `cause`.
    Symptom,
    /// Looks wrong on its own.
    Suspect,
}
