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
use crate::analysis::rank::params::{CONTRADICTED_CLAIM, STALE_CLAIM, UNSUPPORTED_CLAIM};
use crate::analysis::report::SupportLabel;

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
}
