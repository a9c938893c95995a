//! Every tuning number of the diagnosis, in one place (docs/how-it-decides.md lists each one).
//!
//! None of these is calibrated to be a probability: they put findings in order. Changing one
//! changes verdicts, so each change needs a test that shows why. Holds constants only.

// ---- Detector confidences (before the ranking multipliers) --------------------------------
//
// One derivation for every rule (docs/how-it-decides.md, "Weights"): a rule's confidence is its
// measured precision over every labelled development set it fires on (how often its own best
// finding was a labelled step, `tdn-tui eval --rules`, the `all` table), pulled towards the
// precision of all rules together by [`PRIOR_RUNS`] runs' worth of that prior, so that a rule
// measured on a handful of runs stays near the prior. A rule never measured (it fired on no
// labelled run) weighs the prior. The counts are written beside each rule; re-measure them when
// rules change.

/// Precision of every rule's best finding together, over the development sets (206 of 499).
pub const PRIOR: f64 = 0.41;
/// How many runs of the prior a rule's own counts are weighed against.
pub const PRIOR_RUNS: f64 = 10.0;

/// A rule's confidence from its counts: `(hits + PRIOR_RUNS * PRIOR) / (fired + PRIOR_RUNS)`.
pub const fn measured(hits: u32, fired: u32) -> f64 {
    (hits as f64 + PRIOR_RUNS * PRIOR) / (fired as f64 + PRIOR_RUNS)
}

/// A tool call that failed (`error` set): where a failure surfaced. Not measured.
pub const TOOL_ERROR: f64 = PRIOR;
/// A failed step that is not a tool call (a model, retrieval or memory step): 3 of 4.
pub const STEP_ERROR: f64 = measured(3, 4);
/// A tool call whose arguments its schema rejects, though the call did not fail. Not measured.
pub const INVALID_ARGUMENTS: f64 = PRIOR;
/// Wrong tool: the arguments fail the called tool's schema but fit another tool's (1 of 4, both
/// ways together).
pub const WRONG_TOOL_SCHEMA: f64 = measured(1, 4);
/// Wrong tool: the request matches another tool's description far better.
pub const WRONG_TOOL_DESCRIPTION: f64 = WRONG_TOOL_SCHEMA;
/// The first state-changing call of a failed run: a lead, 4 of 14.
pub const POINT_OF_NO_RETURN: f64 = measured(4, 14);
/// The same call made three or more times with identical arguments: 7 of 8.
pub const REPEATED_CALL: f64 = measured(7, 8);
/// The run used up or exceeded its step budget. Not measured.
pub const STEP_BUDGET: f64 = PRIOR;
/// A retrieval that found nothing. Not measured.
pub const EMPTY_RETRIEVAL: f64 = PRIOR;
/// A retrieval that returned a source marked outdated. Not measured.
pub const OUTDATED_SOURCE: f64 = PRIOR;
/// Retrieved text or a tool result that gives the model orders. Not measured.
pub const PROMPT_INJECTION: f64 = PRIOR;
/// ... and a later tool call uses an address or link found only in that text.
pub const PROMPT_INJECTION_STRONG: f64 = PROMPT_INJECTION;
/// A prompt that filled [`CONTEXT_FULL_SHARE`] or more of the model's window. Not measured.
pub const CONTEXT_FULL: f64 = PRIOR;
/// A memory read that returned something other than what was written. Not measured.
pub const MEMORY_MISMATCH: f64 = PRIOR;
/// A decision that chose an option whose required step failed. Not measured.
pub const FAILED_PRECONDITION: f64 = PRIOR;
/// A claim of the answer that a close source contradicts: 10 of 20.
pub const CONTRADICTED_CLAIM: f64 = measured(10, 20);
/// A claim of the answer that only an outdated source supports. Not measured.
pub const STALE_CLAIM: f64 = PRIOR;
/// A claim of the answer that no source supports: 52 of 143.
pub const UNSUPPORTED_CLAIM: f64 = measured(52, 143);
/// An unsupported claim first written by the run's first decision (before any source was read,
/// when a later decision follows) and given as the answer by no later call: measured apart, 3 of
/// 38.
pub const UNSUPPORTED_OPENING: f64 = measured(3, 38);
/// The run ended in an error and no step failed: a lead. Not measured.
pub const RUN_ERROR: f64 = PRIOR;
/// The run opens with a model's brief that leaves out the task: 4 of 5.
pub const TASK_DRIFT: f64 = measured(4, 5);
/// A model step says it works from invented data ("hypothetical", "sample data", ...): 13 of 31,
/// both ways together.
pub const MADE_UP_DATA: f64 = measured(13, 31);
/// A model step says it goes on from an assumption ("let's assume", "assuming").
pub const MADE_UP_ASSUMPTION: f64 = MADE_UP_DATA;
/// The step that first stated the final answer's values: 32 of 87.
pub const ANSWER_ORIGIN: f64 = measured(32, 87);
/// The step that wrote the code of the first code run that failed: 17 of 36.
pub const CODE_FAILURE: f64 = measured(17, 36);
/// A fetched page that was a bot check or an access block: 3 of 6.
pub const BLOCKED_PAGE: f64 = measured(3, 6);
/// An agent's action after which its coordinator asked it again for much the same thing: 7 of 38.
pub const REISSUED_INSTRUCTION: f64 = measured(7, 38);
/// ... when the new instruction holds at least this share of the previous one's content words
pub const REISSUE_SHARE: f64 = 0.4;
/// ... and the previous one had at least this many.
pub const REISSUE_MIN_TERMS: usize = 5;
/// A change made in a conversation before the user confirmed it: 3 of 6.
pub const UNCONFIRMED_ACTION: f64 = measured(3, 6);
/// A conversation that ends on the user's yes to a change the agent proposed, never made: 1 of 1.
pub const CONFIRMED_NOT_DONE: f64 = measured(1, 1);
/// A number the agent stated, or passed to a change, that nothing before it gives: 2 of 2.
pub const UNGROUNDED_NUMBER: f64 = measured(2, 2);
/// The earlier change that made a later call on the same thing fail: 1 of 1.
pub const CONFLICTING_CHANGE: f64 = measured(1, 1);
/// A decision right after a failure of its agent whose own action failed again: 10 of 14.
pub const REPEATED_FAILURE: f64 = measured(10, 14);
/// The decision that committed the final answer of a failed run: a lead, 42 of 71.
pub const FINAL_ANSWER: f64 = measured(42, 71);
/// A decision that gave the final answer with nothing looked up, run or asked before it: 19 of 22.
pub const UNSOURCED_ANSWER: f64 = measured(19, 22);
/// The agent's last action before the decision that committed a failed final answer: a lead,
/// 16 of 47.
pub const ANSWER_BASIS: f64 = measured(16, 47);
/// The plan the agent followed to a failed final answer: a lead, 20 of 63.
pub const FOLLOWED_PLAN: f64 = measured(20, 63);
/// A step of the agent loop (a container) that failed on its own: the latest decision inside it,
/// 5 of 14.
pub const EXECUTION_ERROR: f64 = measured(5, 14);
/// The step that opened the page the team was stuck on when its coordinator first saw no
/// progress (or, without a page, the step that review judged): 7 of 28.
pub const STALL_START: f64 = measured(7, 28);
/// The coordinator's instruction that sent the agent to the page the team got stuck on: a lead
/// (the other reading of a stall), 4 of 28.
pub const STALL_INSTRUCTION: f64 = measured(4, 28);
/// The first step of another agent that took up the final answer's value from its origin: a
/// lead, 10 of 86 for both hand-offs.
pub const HANDOFF_OUT: f64 = measured(10, 86);
/// The last step of another agent before the final answer's origin: a lead.
pub const HANDOFF_IN: f64 = HANDOFF_OUT;

/// The step where the run first does something else than a good run of the same task
/// (`--against`): a suspect of its own when no rule blamed it. Not measured (the labelled sets
/// hold no good run to compare with), so it weighs the prior, as every rule never measured does;
/// a divergence in what the runs said, when they acted alike, weighs that times
/// [`WORDING_FACTOR`].
pub const FIRST_DIVERGENCE: f64 = PRIOR;

// ---- Walk back ------------------------------------------------------------------------------

/// The model step whose value reached a failing tool, when the tool's error names that value
/// (`wrong_value`, 8 of 25, both ways together).
pub const WALK_BACK_NAMED: f64 = measured(8, 25);
/// The model step whose value reached a failing tool, otherwise.
pub const WALK_BACK_UNNAMED: f64 = WALK_BACK_NAMED;
/// The walk back's model step when the failing value is one the user gave, passed as given to a
/// call that changes nothing and matched nothing (a look-up of what the user said): the evidence
/// says the decision was fair, so it weighs what a guess written before any source weighs.
pub const WALK_BACK_USER_VALUE: f64 = UNSUPPORTED_OPENING;
/// A failing tool with valid arguments and an error that does not mention them: the tool or the
/// service behind it is blamed (the finding stays on the tool step as `service_error`): 0 of 3.
pub const SERVICE_ERROR: f64 = measured(0, 3);

// ---- Ranking multipliers --------------------------------------------------------------------

/// A root cause found by the walk back.
pub const ROOT_CAUSE_FACTOR: f64 = 1.2;
/// A symptom with a known cause, so the cause ranks above it.
pub const SYMPTOM_FACTOR: f64 = 0.8;
/// A document or memory read that no later step used.
pub const UNUSED_READ_FACTOR: f64 = 0.6;
/// A wording problem (a claim of the answer) in a run that also changed something.
pub const WORDING_FACTOR: f64 = 0.7;
/// How far below the best finding on a tool call a wording problem is capped.
pub const WORDING_CAP_GAP: f64 = 0.01;
/// No score goes above this.
pub const SCORE_CAP: f64 = 0.99;
/// A suspect scoring above this has strong evidence (its rule was measured more precise than the
/// rules on average): the earliest such suspect leads the ranking.
pub const STRONG: f64 = PRIOR;
/// The 0-based place the earliest of the other suspects moves up to when it ranks below it.
pub const EARLIEST_SLOT: usize = 2;

// ---- The judge ------------------------------------------------------------------------------

/// The judge is asked only when the best rule score is at most this: no suspect has strong
/// evidence.
pub const JUDGE_BELOW: f64 = STRONG;
/// The judge's finding never scores above this (and takes it when it gives no confidence).
pub const JUDGE_CAP: f64 = 0.9;
/// Each transcript text sent to the judge is cut to this many characters.
pub const JUDGE_TEXT_CHARS: usize = 2_000;
/// A longer run sends the judge its first steps, the flagged ones and its last steps, up to this.
pub const JUDGE_MAX_TRANSCRIPT: usize = 200;
/// Of [`JUDGE_MAX_TRANSCRIPT`], how many come from the start of the run.
pub const JUDGE_TRANSCRIPT_HEAD: usize = 20;
/// Of [`JUDGE_MAX_TRANSCRIPT`], how many come from the end of the run.
pub const JUDGE_TRANSCRIPT_TAIL: usize = 100;
/// At most this many rule findings are sent to the judge.
pub const JUDGE_MAX_FINDINGS: usize = 50;

// ---- Detector thresholds --------------------------------------------------------------------

/// A prompt this full (input tokens / window) is flagged by the context-window detector.
pub const CONTEXT_FULL_SHARE: f64 = 0.95;
/// Identical calls from this many on are a loop.
pub const LOOP_MIN_CALLS: usize = 3;
/// Wrong tool by description: the other tool shares at least this many request words ...
pub const WRONG_TOOL_MIN_SHARED: usize = 2;
/// ... and at least this many times as many as the called tool (a called tool sharing none
/// counts as half a word).
pub const WRONG_TOOL_FACTOR: f64 = 2.0;
/// Wrong tool by description is judged only for a request of at most this many distinct content
/// words: a longer one is a whole task that many calls serve in parts.
pub const WRONG_TOOL_MAX_REQUEST_TERMS: usize = 40;

/// Task drift: the task needs at least this many distinct content words to be judged ...
pub const TASK_DRIFT_MIN_TASK_TERMS: usize = 5;
/// ... and the brief at least this many (a greeting is not a brief) ...
pub const TASK_DRIFT_MIN_BRIEF_TERMS: usize = 20;
/// ... and the brief holds under this share of the task's content words.
pub const TASK_DRIFT_MAX_SHARE: f64 = 0.2;
/// An answer of at most this many words is short: it and its parts are traced whole.
pub const ANSWER_SHORT_WORDS: usize = 15;
/// A marked span of a long answer (bold, quoted, code) is traced when at most this long.
pub const ANSWER_ITEM_MAX_CHARS: usize = 60;
/// At most this many items of an answer are traced.
pub const ANSWER_MAX_ITEMS: usize = 16;
/// A step of fewer words is a routing note ("Next speaker WebSurfer"), not the hand-off into the
/// answer's origin.
pub const HANDOFF_MIN_WORDS: usize = 5;

// ---- Claims ---------------------------------------------------------------------------------

/// Supported: the best source holds at least this share of the claim's weighted words, and all
/// of its numbers.
pub const CLAIM_SUPPORTED: f64 = 0.6;
/// Partial: the best source holds at least this share (but not enough to support it).
pub const CLAIM_PARTIAL: f64 = 0.3;
/// Contradicted: a source holding at least this share of the claim's words (numbers left out)
/// gives a different number.
pub const CLAIM_CLOSE: f64 = 0.5;
/// Weight of a number, id or name in word matching (other words weigh 1).
pub const CLAIM_KEY_WEIGHT: f64 = 2.0;
/// A model step's output "already held" a claim when it holds every number and id of the claim
/// and at least this share of its weighted words.
pub const ORIGIN_SHARE: f64 = 0.75;
/// A clause shorter than this many words stays with its neighbour.
pub const CLAUSE_MIN_WORDS: usize = 3;
/// At most this many claims are checked.
pub const MAX_CLAIMS: usize = 200;
/// The final answer is read up to this many bytes.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// At most this many evidence passages are indexed.
pub const MAX_EVIDENCE_PASSAGES: usize = 200_000;

// ---- Links ----------------------------------------------------------------------------------

/// A number is a link value from this value on.
pub const LINK_MIN_NUMBER: f64 = 100.0;
/// An id shorter than this is ignored (unless it has 2 digits and a letter in 3 characters).
pub const LINK_MIN_ID_CHARS: usize = 4;
/// A sentence is a link value from this many words on.
pub const LINK_SENTENCE_MIN_WORDS: usize = 6;
/// A sentence value is cut to this many bytes (a verbatim reuse holds its start too).
pub const LINK_SENTENCE_MAX_BYTES: usize = 160;
/// Values taken from one step's output: ids, dates and numbers ...
pub const LINK_MAX_VALUES_PER_STEP: usize = 24;
/// ... and sentences.
pub const LINK_MAX_SENTENCES_PER_STEP: usize = 8;
/// Links kept into one step (each to the latest earlier producer of its value).
pub const LINK_MAX_PER_STEP: usize = 32;
/// Matches looked at in one step's input.
pub const LINK_MAX_MATCHES_PER_STEP: usize = 4_096;
/// Bytes of one step's output or input that are read for values.
pub const LINK_SCAN_BYTES: usize = 64 * 1024;
/// All distinct values of a run together, in bytes; later values are left out.
pub const LINK_MAX_PATTERN_BYTES: usize = 16 * 1024 * 1024;

// ---- Output ---------------------------------------------------------------------------------

/// A value quoted in evidence is cut to this many characters.
pub const QUOTE_CHARS: usize = 80;
/// Evidence sentences kept per suspect.
pub const MAX_EVIDENCE_LINES: usize = 12;
/// Suspects kept in the report (the rest are counted in a warning).
pub const MAX_SUSPECTS: usize = 1_000;

#[cfg(test)]
mod tests {
    #[test]
    fn a_rule_weighs_its_shrunk_precision_and_an_unmeasured_one_the_prior() {
        use super::*;
        // No runs: the prior. Many runs: close to the rule's own precision.
        assert!((measured(0, 0) - PRIOR).abs() < 1e-12);
        assert!((measured(900, 1000) - 0.9).abs() < 0.01);
        // A handful of runs moves it only part of the way: 2 of 2 is not 100%.
        assert!(measured(2, 2) < 0.6 && measured(2, 2) > PRIOR);
        assert!(measured(0, 3) < PRIOR && measured(0, 3) > 0.25);
        // More evidence of the same precision moves it further from the prior.
        assert!(measured(20, 22) > measured(10, 11));
    }

    const DOC: &str = include_str!("../../../../docs/how-it-decides.md");
    const SRC: &str = include_str!("params.rs");

    #[test]
    fn every_number_is_in_the_docs() {
        for line in SRC.lines() {
            if let Some(rest) = line.trim().strip_prefix("pub const ")
                && !rest.starts_with("fn ")
            {
                let name = rest.split(':').next().unwrap_or("");
                assert!(
                    DOC.contains(&format!("`{name}`")),
                    "{name} is not in docs/how-it-decides.md"
                );
            }
        }
    }
}
