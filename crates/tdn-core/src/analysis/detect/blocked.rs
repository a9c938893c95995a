//! Blocked page (docs/how-it-decides.md, "Detect"): in a failed run, a page a tool or browsing
//! agent fetched was a bot check or an access block ("Just a moment...", "verify you are human",
//! a captcha, "access denied") instead of the content: the tool or the site failed, and whatever
//! the agents did next worked without what they went to read. Read from the start of what the
//! step returned: a tool call's or search's result, or the report of a browsing agent (a step
//! that records the page it is on, `attributes.url`). Linear in the run. No I/O.

use super::prescan::List;
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::links::tokens::clip;
use crate::analysis::model::StepKind;
use crate::analysis::params::BLOCKED_PAGE;
use crate::analysis::whole_words::PhraseSet;

/// How much of a result is read for the block page's words (its title and first lines).
const HEAD_BYTES: usize = 1_500;

/// What a bot check or access block says instead of the page.
pub(super) const BLOCK_PHRASES: &[&str] = &[
    "just a moment...",
    "verify you are human",
    "verifying you are human",
    "are you a robot",
    "captcha",
    "unusual traffic",
    "checking your browser",
    "access denied",
    "enable javascript and cookies",
];

static BLOCKS: PhraseSet = PhraseSet::new(BLOCK_PHRASES);

/// A fetched page that was a bot check or an access block.
pub struct BlockedPage;

impl Detector for BlockedPage {
    fn id(&self) -> DetectorId {
        DetectorId::BlockedSource
    }

    fn doc(&self) -> &'static str {
        "In a failed run, a fetched page that was a bot check or an access block instead of the content."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            let reads = match s.kind {
                StepKind::Tool | StepKind::Retrieval => true,
                StepKind::Agent => s.attributes().contains_key("url") && !s.is_container(),
                _ => false,
            };
            // No block phrase anywhere in what it returned: none in its head either.
            if !reads || s.failed() || !f.marks().may_hold(i, List::Block) {
                continue;
            }
            let text = f.texts.produced(i);
            let head = clip(&text, HEAD_BYTES);
            let Some(phrase) = BLOCKS.find_any_case(head) else {
                continue;
            };
            // Not scored down when nothing used it: a block page has nothing to use.
            out.push(
                Finding::new(
                    i,
                    Category::BlockedPage,
                    DetectorId::BlockedSource,
                    BLOCKED_PAGE,
                    Nature::Suspect,
                    "the page it fetched was a bot check or an access block".to_owned(),
                )
                .because(format!(
                    "what {} got back is a block page ({}), not the content: {}",
                    step(run, i),
                    quote(phrase),
                    quote(head)
                )),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn a_bot_check_instead_of_the_page_is_flagged_and_real_content_is_not() {
        let run = RunBuilder::failed()
            .llm("m0", "visit the dictionary")
            .tool_ok(
                "t1",
                "visit_page",
                json!({"url": "https://x.example"}),
                "Title: Just a moment...\nVerify you are human by completing the action below.",
            )
            .llm("m2", "read another page")
            .tool_ok(
                "t3",
                "visit_page",
                json!({"url": "https://y.example"}),
                "Title: Caminata - Spanish dictionary\nA long walk.",
            )
            .llm("m4", "The captcha stopped me earlier.")
            .build();
        let found = facts_for(&run, |f| BlockedPage.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [1]);
    }
}
