//! Every glyph the screen gives a meaning to, in one table, one meaning per glyph: the panes, the
//! help and the docs read them from here, so the same mark never says two things (a failed step
//! and a contradicted claim, a waiting sample and an unconfirmed verdict). Draws nothing.

/// A step that failed (it has an `error`).
pub const FAILED: &str = "✗";
/// A suspect on the shortlist.
pub const SHORTLIST: &str = "★";
/// A step whose nested steps are shown.
pub const UNFOLDED: &str = "▾";
/// A step whose nested steps are hidden.
pub const FOLDED: &str = "▸";
/// The selected row.
pub const CURSOR: &str = "▶";
/// This step feeds the selected step.
pub const FEEDS: &str = "▲";
/// This step uses the selected step's output.
pub const USES: &str = "▼";
/// A step whose output later steps reuse (the start of a dependency lane).
pub const LANE_SOURCE: &str = "●";
/// A loader warning.
pub const WARNING: &str = "⚠";
/// A document marked outdated.
pub const OUTDATED: &str = "⌁";
/// A ranking with a clear lead.
pub const CLEAR_WINNER: &str = "◆";
/// A ranking too close to call.
pub const TOO_CLOSE: &str = "≈";
/// The run open in the run list.
pub const OPEN_RUN: &str = "»";

/// A claim a source says.
pub const CLAIM_SUPPORTED: &str = "✓";
/// A claim a source says part of.
pub const CLAIM_PARTIAL: &str = "◐";
/// A claim no source says.
pub const CLAIM_UNSUPPORTED: &str = "?";
/// A claim a close source contradicts.
pub const CLAIM_CONTRADICTED: &str = "≠";
/// A claim only an outdated source supports.
pub const CLAIM_STALE: &str = "~";
/// A pleasantry, not a claim.
pub const CLAIM_NONE: &str = "·";

/// A re-run verdict: a majority of re-runs changed the answer.
pub const VERDICT_CAUSAL: &str = "✔";
/// A re-run verdict: the answer did not change.
pub const VERDICT_NOT_CONFIRMED: &str = "∅";
/// A re-run verdict: below majority, errors or an unstable baseline.
pub const VERDICT_INCONCLUSIVE: &str = "±";
/// A re-run verdict (or a sample): nothing was measured.
pub const VERDICT_ERROR: &str = "!";
/// Listed, not re-run within the budget.
pub const NOT_PROBED: &str = "–";

/// A sample not started.
pub const SAMPLE_WAITING: &str = "○";
/// A sample running.
pub const SAMPLE_RUNNING: &str = "◌";
/// A sample that gave the same answer.
pub const SAMPLE_SAME: &str = "=";
/// A sample whose answer changed.
pub const SAMPLE_FLIPPED: &str = "Δ";
/// A sample held back until the ledger's lock is granted.
pub const SAMPLE_HELD: &str = "⧗";
/// A sample stopped by a cancel while it ran (recorded as cancelled; counts for nothing).
pub const SAMPLE_CANCELLED: &str = "⊘";

/// A ledger disposition: the unit harmed the answer (removing it changed the answer).
pub const HARMFUL: &str = "⊗";
/// A ledger disposition: the unit is kept.
pub const RETAINED: &str = "⊕";
/// A ledger disposition: a candidate for demotion.
pub const DEMOTION: &str = "↓";

/// Before a dollar amount: an estimate from tokens and a price table, not a recorded cost.
pub const ESTIMATE: &str = "~$";

/// Every glyph with its meaning, as the help lists them.
pub const ALL: &[(&str, &str)] = &[
    (FAILED, "failed step"),
    (SHORTLIST, "shortlisted"),
    (UNFOLDED, "nested steps shown"),
    (FOLDED, "nested steps folded"),
    (CURSOR, "selected row"),
    (FEEDS, "feeds the selected step"),
    (USES, "uses the selected step's output"),
    (LANE_SOURCE, "output reused by later steps"),
    (WARNING, "loader warning"),
    (OUTDATED, "outdated document"),
    (
        ESTIMATE,
        "cost estimated from tokens (a bare $ was recorded)",
    ),
    (CLEAR_WINNER, "clear winner"),
    (TOO_CLOSE, "too close to call"),
    (OPEN_RUN, "the open run"),
    (CLAIM_SUPPORTED, "claim supported"),
    (CLAIM_PARTIAL, "claim partly supported"),
    (CLAIM_UNSUPPORTED, "claim unsupported"),
    (CLAIM_CONTRADICTED, "claim contradicted"),
    (CLAIM_STALE, "claim stale"),
    (CLAIM_NONE, "not a claim"),
    (VERDICT_CAUSAL, "causal"),
    (VERDICT_NOT_CONFIRMED, "not confirmed"),
    (VERDICT_INCONCLUSIVE, "inconclusive"),
    (VERDICT_ERROR, "error"),
    (NOT_PROBED, "not probed"),
    (SAMPLE_WAITING, "sample waiting"),
    (SAMPLE_RUNNING, "sample running"),
    (SAMPLE_SAME, "sample gave the same answer"),
    (SAMPLE_FLIPPED, "sample's answer changed"),
    (SAMPLE_HELD, "sample waiting for the ledger lock"),
    (SAMPLE_CANCELLED, "sample cancelled"),
    (HARMFUL, "ledger: harmful"),
    (RETAINED, "ledger: retained"),
    (DEMOTION, "ledger: demotion candidate"),
];

/// The legend of the sample glyphs.
pub fn sample_legend() -> String {
    format!(
        "{SAMPLE_WAITING} waiting  {SAMPLE_RUNNING} running  {SAMPLE_SAME} same answer  {SAMPLE_FLIPPED} answer changed  {VERDICT_ERROR} error  {SAMPLE_CANCELLED} cancelled  {SAMPLE_HELD} waiting for ledger lock"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_glyph_has_two_meanings() {
        for (i, (g, m)) in ALL.iter().enumerate() {
            for (h, n) in ALL.iter().skip(i + 1) {
                assert_ne!(g, h, "'{g}' means both '{m}' and '{n}'");
            }
        }
    }
}
