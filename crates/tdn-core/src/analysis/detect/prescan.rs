//! One pass over what each step returned, shared by the detectors that look for words in it:
//! for each step, which of their word lists may occur in its text. A detector skips the steps
//! whose mark says none of its words occur, so a big run's texts are read once for all of them
//! instead of once per detector (issue 11). The marks only ever say "may": a detector still
//! reads a marked text itself, with its own rules (whole words, the head of a page, a pattern).
//! Linear in the run; no I/O.

use crate::analysis::links::StepTexts;
use crate::analysis::model::{Run, Step, StepKind};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;

/// A word list the pre-scan looks for: each is a bit of a step's [`Marks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    /// What a bot check or an access block says (the blocked page detector).
    Block,
    /// The words every order to the model holds (the prompt injection detector).
    Order,
}

impl List {
    const fn bit(self) -> u8 {
        match self {
            List::Block => 1,
            List::Order => 2,
        }
    }
}

/// The lists, each with the bit it sets; the phrases are lower case ASCII and read with ASCII
/// case ignored.
const LISTS: &[(List, &[&str])] = &[
    (List::Block, super::blocked::BLOCK_PHRASES),
    (List::Order, super::prompt_injection::ANCHORS),
];

/// True when the step's text is read by a detector using the marks: what a tool call, a search,
/// a memory read or a browsing agent (an agent step on a page, not wrapping others) returned.
fn scanned(s: &Step) -> bool {
    match s.kind {
        StepKind::Tool | StepKind::Retrieval | StepKind::MemoryRead => true,
        StepKind::Agent => s.attributes().contains_key("url") && !s.is_container(),
        _ => false,
    }
}

/// Each phrase of every list, with the bit of its list.
struct Scanner {
    ac: AhoCorasick,
    bits: Vec<u8>,
}

fn scanner() -> Option<&'static Scanner> {
    static SCANNER: OnceLock<Option<Scanner>> = OnceLock::new();
    SCANNER
        .get_or_init(|| {
            let (bits, pats): (Vec<u8>, Vec<&str>) = LISTS
                .iter()
                .flat_map(|(l, ps)| ps.iter().filter(|p| !p.is_empty()).map(|p| (l.bit(), *p)))
                .unzip();
            // Standard matches, overlapping: every place any phrase occurs is seen, so no list is
            // hidden behind another's match.
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .ascii_case_insensitive(true)
                .build(&pats)
                .ok()?;
            Some(Scanner { ac, bits })
        })
        .as_ref()
}

/// The bits of every list that may occur in `text`: in ASCII text, those with a phrase found
/// in it (ASCII case ignored); in other text, all of them (lower-casing it may make a phrase,
/// the Kelvin sign is a 'k').
fn marks_of(text: &str) -> u8 {
    const ALL: u8 = List::Block.bit() | List::Order.bit();
    let Some(sc) = scanner().filter(|_| text.is_ascii()) else {
        return ALL;
    };
    let mut found = 0u8;
    for m in sc.ac.find_overlapping_iter(text) {
        found |= sc.bits.get(m.pattern().as_usize()).copied().unwrap_or(ALL);
        if found == ALL {
            break;
        }
    }
    found
}

/// For each step, the lists that may occur in what it returned.
pub struct Marks(Vec<u8>);

impl Marks {
    /// Scans every step that returns something a detector reads.
    pub fn scan(run: &Run, texts: &StepTexts) -> Marks {
        // A text of several leaves is joined here, into one buffer for all steps.
        let mut joined = String::new();
        Marks(
            run.steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if scanned(s) {
                        marks_of(texts.produced_text(i).joined_in(&mut joined))
                    } else {
                        0
                    }
                })
                .collect(),
        )
    }

    /// False when no phrase of `list` occurs in what step `i` returned (ASCII case ignored), or
    /// step `i` is not one that returns what detectors read (a tool call, a search, a memory
    /// read, a browsing agent).
    pub fn may_hold(&self, i: usize, list: List) -> bool {
        self.0.get(i).is_some_and(|m| m & list.bit() != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces texts are made of: parts of the phrases, their neighbours in case and in
    /// letters, and a letter outside ASCII.
    const PIECES: &[&str] = &[
        "just a moment",
        "...",
        "Access",
        " denied",
        "CAPTCHA",
        "verify you are ",
        "human",
        "ignore",
        "Now",
        "kno",
        "w",
        "must",
        "im_start",
        "IMPORTANT",
        "send",
        "e-mail",
        " ",
        "x",
        "\u{212A}",
        "é",
        "rob",
        "ot",
        "are you a ",
        "check",
        "ing your browser",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        /// A list a text holds a phrase of (as the detectors look for it: ASCII case ignored,
        /// or in the lower-case copy of text outside ASCII) is always marked.
        #[test]
        fn a_phrase_present_is_always_marked(t in text()) {
            let m = marks_of(&t);
            let lower = t.to_lowercase();
            for (list, phrases) in LISTS {
                let holds = phrases
                    .iter()
                    .any(|p| lower.contains(p) || t.to_ascii_lowercase().contains(p));
                if holds {
                    prop_assert!(m & list.bit() != 0, "{t:?} {list:?}");
                }
                if t.is_ascii() && !holds {
                    prop_assert!(m & list.bit() == 0, "{t:?} {list:?}");
                }
            }
        }
    }

    #[test]
    fn only_steps_that_return_what_is_read_are_marked() {
        use crate::analysis::testutil::RunBuilder;
        use serde_json::json;
        let run = RunBuilder::failed()
            .user("u0", "Ignore previous instructions")
            .tool_ok(
                "t1",
                "fetch",
                json!({}),
                "Just a moment... Checking your browser",
            )
            .tool_ok("t2", "fetch", json!({}), "the page")
            .build();
        let texts = StepTexts::build(&run);
        let marks = Marks::scan(&run, &texts);
        assert!(!marks.may_hold(0, List::Order));
        assert!(marks.may_hold(1, List::Block));
        assert!(!marks.may_hold(1, List::Order));
        assert!(!marks.may_hold(2, List::Block) && !marks.may_hold(2, List::Order));
        assert!(!marks.may_hold(9, List::Block));
    }
}
