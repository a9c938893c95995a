//! Hallucination (docs/how-it-decides.md, "Detect" and "Claims"): claims of the final answer that
//! no source supports, that a close source contradicts, or that only an outdated source supports.
//! Each is a symptom placed on the claim's origin step (the earliest model step whose output held
//! it; else the last model step), and the walk back looks through its evidence step. These are
//! wording problems: they rank below a state-changing run's tool findings. In a conversation with
//! a user (two user messages or more), unsupported claims are not findings: the last message
//! recaps the conversation in other words. No I/O.

use super::conversation::is_conversation;
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::claims::SupportLabel;
use crate::analysis::params::{
    CONTRADICTED_CLAIM, STALE_CLAIM, UNSUPPORTED_CLAIM, UNSUPPORTED_OPENING,
};

/// Claims of the answer that no source supports, or one contradicts.
pub struct Hallucination;

impl Detector for Hallucination {
    fn id(&self) -> DetectorId {
        DetectorId::Hallucination
    }

    fn doc(&self) -> &'static str {
        "Claims of the final answer that no source supports, that a source contradicts, or that only an outdated source supports."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let fallback = run
            .steps
            .iter()
            .rposition(super::decides)
            .or_else(|| run.steps.len().checked_sub(1));
        // In a conversation the last message recaps what was said and done in the user's words:
        // a claim no source holds word for word is no sign of a fault there (measured on
        // conversations that went right, it is found as often as on ones that went wrong).
        let conversation = is_conversation(run);
        // The run's first decision, when a later one follows: it wrote before the agent read
        // anything but the task.
        let first = run.steps.iter().position(super::decides).filter(|&k| {
            run.steps
                .get(k + 1..)
                .is_some_and(|rest| rest.iter().any(super::decides))
        });
        // The decision that committed the final answer, when a call did.
        let commit = super::final_answer::commit(f).map(|(m, _)| m);
        let mut out = Vec::new();
        for c in f.claims {
            let (category, confidence, says) = match c.label {
                SupportLabel::Unsupported if conversation => continue,
                SupportLabel::Unsupported => (
                    Category::UnsupportedClaim,
                    UNSUPPORTED_CLAIM,
                    "no source supports",
                ),
                SupportLabel::Contradicted => (
                    Category::ContradictedClaim,
                    CONTRADICTED_CLAIM,
                    "a source contradicts",
                ),
                SupportLabel::Stale => (
                    Category::StaleClaim,
                    STALE_CLAIM,
                    "only an outdated source supports",
                ),
                _ => continue,
            };
            let Some(at) = c.origin_step.or(fallback) else {
                continue;
            };
            // A claim first written by the run's first decision, before any source was read, is
            // mostly the task or a plan in other words: a guess. The decision that gave it as
            // the final answer without checking it is where it went wrong; with no such
            // decision, the guess is a weak reading of where it came from.
            let opening = category == Category::UnsupportedClaim && Some(at) == first;
            let (at, confidence) = match commit {
                Some(m) if opening && m > at => (m, confidence),
                _ if opening => (at, UNSUPPORTED_OPENING),
                _ => (at, confidence),
            };
            let mut fi = Finding::new(
                at,
                category,
                DetectorId::Hallucination,
                confidence,
                Nature::Symptom,
                format!("the answer says {}, which {says}", quote(&c.text)),
            )
            .because(format!(
                "the final answer says {}: {}",
                quote(&c.text),
                c.why
            ));
            match c.origin_step {
                Some(o) if opening && o != at => fi = fi.because(format!(
                    "{} first wrote it, as the run's first decision, before any source was read (a guess); {} gave it as the final answer with no source that holds it",
                    step(run, o),
                    step(run, at)
                )),
                Some(o) if opening => fi = fi.because(format!(
                    "{} first wrote it, as the run's first decision, before any source was read: \
                         it may only restate the task or a plan",
                    step(run, o)
                )),
                Some(o) => fi = fi.because(format!("{} first wrote it", step(run, o))),
                None => {
                    fi = fi.because(
                        "no model step's output held it before the final answer".to_owned(),
                    )
                }
            }
            if let Some(e) = c.evidence_step
                && e < at
            {
                fi.upstream.push(e);
            }
            fi.wording = true;
            out.push(fi);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::{RunBuilder, doc};

    #[test]
    fn a_stale_claim_is_a_symptom_at_its_origin_looking_through_its_source() {
        let run = RunBuilder::failed()
            .retrieval(
                "s1",
                "refund",
                vec![doc("p23", "Annual plans are refunded $120.", true)],
            )
            .llm("s2", "You will get a refund of $120.")
            .answer("You will get a refund of $120.")
            .build();
        let found = facts_for(&run, |f| Hallucination.detect(f));
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(
            (f.step, f.category, f.nature),
            (1, Category::StaleClaim, Nature::Symptom)
        );
        assert_eq!(f.upstream, vec![0]);
        assert!(f.wording);
    }

    #[test]
    fn supported_claims_and_pleasantries_are_not_findings() {
        let run = RunBuilder::failed()
            .retrieval(
                "s1",
                "refund",
                vec![doc("p25", "Annual plans are refunded $80.", false)],
            )
            .llm("s2", "Annual plans are refunded $80. Thanks!")
            .answer("Annual plans are refunded $80. Thanks!")
            .build();
        assert!(facts_for(&run, |f| Hallucination.detect(f)).is_empty());
    }

    #[test]
    fn a_claim_first_written_by_the_opening_decision_is_a_weak_reading() {
        let claim = "The bridge opened to traffic in 1937.";
        let found = |run| {
            facts_for(&run, |f| Hallucination.detect(f))
                .into_iter()
                .map(|x| (x.step, x.category, x.confidence))
                .collect::<Vec<_>>()
        };
        let opening = RunBuilder::failed()
            .task("When did the bridge open?")
            .llm("s1", claim)
            .llm("s2", "Let me write the answer.")
            .answer(claim)
            .build();
        assert_eq!(
            found(opening),
            vec![(0, Category::UnsupportedClaim, UNSUPPORTED_OPENING)]
        );
        // Written later, after another decision: the usual weight.
        let later = RunBuilder::failed()
            .task("When did the bridge open?")
            .llm("s1", "Let me look it up.")
            .llm("s2", claim)
            .answer(claim)
            .build();
        assert_eq!(
            found(later),
            vec![(1, Category::UnsupportedClaim, UNSUPPORTED_CLAIM)]
        );
        // The only decision of the run is not an opening one.
        let alone = RunBuilder::failed()
            .task("When did the bridge open?")
            .llm("s1", claim)
            .answer(claim)
            .build();
        assert_eq!(
            found(alone),
            vec![(0, Category::UnsupportedClaim, UNSUPPORTED_CLAIM)]
        );
        // A guess of the opening decision that a later decision committed as the final answer
        // (through a final-answer call), unchecked: the commit is where it went wrong.
        let committed = RunBuilder::failed()
            .task("When did the bridge open?")
            .llm("s1", claim)
            .llm("s2", format!("Code: final_answer(\"{claim}\")"))
            .tool_ok(
                "s3",
                "final_answer",
                serde_json::json!({"answer": claim}),
                serde_json::json!(null),
            )
            .answer(claim)
            .build();
        assert_eq!(
            found(committed),
            vec![(1, Category::UnsupportedClaim, UNSUPPORTED_CLAIM)]
        );
    }
}
