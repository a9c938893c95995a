//! Made-up data (docs/how-it-decides.md, "Detect"): in a failed multi-agent run (two or more
//! named agents), the first model step whose
//! own words say it is working from invented data: "hypothetical", "sample data", "simulated",
//! "mock", "dummy", "placeholder", "/path/to/", "for demonstration", ... A step that only says it
//! assumes something ("let's assume", "assuming") is a weaker suspect, scored lower. Phrases the
//! task itself uses are not counted (a task may ask to assume something). English only; one pass
//! over the steps. No I/O.

use super::answer::multi_agent;
use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::claims::words::lower_text;
use crate::analysis::params::{MADE_UP_ASSUMPTION, MADE_UP_DATA};
use crate::analysis::whole_words::{find_phrase, whole_word_matches};

/// Words with which a step says the data it works from is invented.
pub const MADE_UP_PHRASES: &[&str] = &[
    "hypothetical",
    "hypothetically",
    "sample data",
    "sample dataset",
    "sample dataframe",
    "simulated",
    "simulate",
    "simulating",
    "mock",
    "mocked",
    "mockup",
    "mock-up",
    "dummy",
    "placeholder",
    "placeholders",
    "/path/to/",
    "for demonstration",
    "demonstration purposes",
    "for illustration",
    "illustrative purposes",
    "example data",
    "fake data",
    "synthetic data",
    "made-up",
    "fabricated",
];

/// Words with which a step says it goes on from an assumption.
pub const ASSUMPTION_PHRASES: &[&str] = &[
    "let's assume",
    "let us assume",
    "we assume",
    "i assume",
    "assume that",
    "assuming",
    "assumption",
];

/// The first step working from invented data, and the first working from an assumption.
pub struct MadeUpData;

impl Detector for MadeUpData {
    fn id(&self) -> DetectorId {
        DetectorId::MadeUpData
    }

    fn doc(&self) -> &'static str {
        "In a failed run, the first model step that says it uses invented data (hypothetical, sample, simulated, placeholder), or an assumption."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() || !multi_agent(run) {
            return Vec::new();
        }
        let task = lower_text(run.task.as_deref().unwrap_or(""));
        let made_up: Vec<&str> = MADE_UP_PHRASES
            .iter()
            .copied()
            .filter(|p| find_phrase(&task, &[p]).is_none())
            .collect();
        let assumed: Vec<&str> = ASSUMPTION_PHRASES
            .iter()
            .copied()
            .filter(|p| find_phrase(&task, &[p]).is_none())
            .collect();
        let mut strong: Option<(usize, &str)> = None;
        let mut weak: Option<(usize, &str)> = None;
        // A text of several leaves is joined here, into one buffer for all steps.
        let mut joined = String::new();
        for (i, s) in run.steps.iter().enumerate() {
            if strong.is_some() {
                break;
            }
            if !super::decides(s) {
                continue;
            }
            let text = f.texts.produced_text(i).joined_in(&mut joined);
            if let Some(p) = said(text, &made_up) {
                strong = Some((i, p));
            } else if weak.is_none()
                && let Some(p) = said(text, &assumed)
            {
                weak = Some((i, p));
            }
        }
        let mut out = Vec::new();
        if let Some((i, p)) = strong {
            out.push(
                Finding::new(
                    i,
                    Category::MadeUpData,
                    DetectorId::MadeUpData,
                    MADE_UP_DATA,
                    Nature::Suspect,
                    "it works from invented data".to_owned(),
                )
                .because(format!(
                    "{} says {}: what follows from it rests on data no source gave",
                    step(run, i),
                    quote(p)
                )),
            );
        }
        if let Some((i, p)) = weak.filter(|&(i, _)| strong.is_none_or(|(s, _)| i < s)) {
            out.push(
                Finding::new(
                    i,
                    Category::MadeUpData,
                    DetectorId::MadeUpData,
                    MADE_UP_ASSUMPTION,
                    Nature::Suspect,
                    "it goes on from an assumption".to_owned(),
                )
                .because(format!(
                    "{} says {}: check that the assumption holds",
                    step(run, i),
                    quote(p)
                )),
            );
        }
        out
    }
}

/// The first of `phrases` that `text` says in its own words: as a whole word or phrase, in any
/// case, but not inside a Title Case name or heading it relays ("Dark Matter in a Simulated
/// Universe", "Search Bar Placeholder Text"): a capitalised match next to another capitalised
/// word does not count.
fn said<'p>(text: &str, phrases: &[&'p str]) -> Option<&'p str> {
    let lower = text.to_ascii_lowercase();
    phrases.iter().copied().find(|p| {
        whole_word_matches(&lower, p)
            .any(|(start, end)| !in_title(text, start, end) && !hedged(&lower, start))
    })
}

/// Words before a match, in its sentence, with which a step names inventing data as one option
/// of a plan rather than doing it ("it might be necessary to look up or simulate …", "If
/// needed, recalculate or simulate …", "Optionally, confirm (e.g., simulating a query)").
const HEDGES: &[&str] = &[
    "might",
    "may",
    "could",
    "if needed",
    "if necessary",
    "if required",
    "optionally",
    "e.g.",
    "for example",
];

/// At most this many bytes before a match are read for its sentence's start.
const HEDGE_SCAN_BYTES: usize = 400;

/// True when the sentence holding the match at `start` (in lower case) says before it that
/// the match is only a possibility ([`HEDGES`]). Reads at most [`HEDGE_SCAN_BYTES`] back.
fn hedged(lower: &str, start: usize) -> bool {
    let mut from = start.saturating_sub(HEDGE_SCAN_BYTES);
    while !lower.is_char_boundary(from) {
        from += 1;
    }
    let before = lower.get(from..start).unwrap_or("");
    // The sentence starts after the last full stop, '!' or '?' followed by a space, or a line
    // break ("e.g." keeps the sentence going).
    let cut = before
        .char_indices()
        .rev()
        .find(|&(k, c)| {
            c == '\n'
                || (matches!(c, '.' | '!' | '?')
                    && before.get(k + 1..).is_some_and(|r| r.starts_with(' '))
                    && !before.get(..=k).is_some_and(|b| b.ends_with("e.g.")))
        })
        .map_or(0, |(k, c)| k + c.len_utf8());
    let sentence = before.get(cut..).unwrap_or("");
    find_phrase(sentence, HEDGES).is_some()
}

/// True when the match at `start..end` is capitalised and a neighbouring word is too.
fn in_title(text: &str, start: usize, end: usize) -> bool {
    let capital = |w: Option<&str>| {
        w.and_then(|w| w.chars().find(|c| c.is_alphanumeric()))
            .is_some_and(char::is_uppercase)
    };
    if !capital(text.get(start..)) {
        return false;
    }
    let before = text
        .get(..start)
        .and_then(|b| b.split_whitespace().next_back());
    let after = text.get(end..).and_then(|a| a.split_whitespace().next());
    capital(before) || capital(after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::{facts_for, team};
    use crate::analysis::testutil::RunBuilder;

    #[test]
    fn the_first_step_that_invents_data_is_flagged() {
        let run = RunBuilder::failed()
            .task("Which country sent the fewest athletes?")
            .llm("s1", "Let's look for the official records.")
            .llm(
                "s2",
                "Let's create a sample dataset for this purpose and process it.",
            )
            .llm("s3", "Here is hypothetical data again.")
            .build();
        let found = facts_for(&team(run), |f| MadeUpData.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].step, found[0].confidence), (1, MADE_UP_DATA));
    }

    #[test]
    fn an_earlier_assumption_is_a_weaker_second_finding() {
        let run = RunBuilder::failed()
            .task("What is the area of the polygon?")
            .llm("s1", "Assuming the polygon is regular, the area is 259.81.")
            .llm("s2", "We can use a placeholder file.")
            .build();
        let found = facts_for(&team(run), |f| MadeUpData.detect(f));
        let got: Vec<(usize, f64)> = found.iter().map(|x| (x.step, x.confidence)).collect();
        assert_eq!(got, vec![(1, MADE_UP_DATA), (0, MADE_UP_ASSUMPTION)]);
    }

    #[test]
    fn a_relayed_title_is_not_the_step_s_own_words() {
        assert_eq!(
            said("Dark Matter in a Simulated Universe", MADE_UP_PHRASES),
            None
        );
        assert_eq!(
            said("**Search Bar Placeholder Text:**", MADE_UP_PHRASES),
            None
        );
        assert_eq!(said("**Input Placeholder:**", MADE_UP_PHRASES), None);
        assert_eq!(said("unsimulated", MADE_UP_PHRASES), None);
        assert_eq!(
            said("# Dummy list of eateries", MADE_UP_PHRASES),
            Some("dummy")
        );
        assert_eq!(
            said("A hypothetical solution was proposed.", MADE_UP_PHRASES),
            Some("hypothetical")
        );
    }

    #[test]
    fn inventing_data_named_as_an_option_of_a_plan_is_not_doing_it() {
        for t in [
            "Reasoning: it might be necessary to look up or simulate the link structure.",
            "• Optionally, confirm via a cross-check (e.g., simulating a search query).",
            "• If needed, recalculate or simulate any provided calculation steps.",
        ] {
            assert_eq!(said(t, MADE_UP_PHRASES), None, "{t}");
        }
        for t in [
            "The page may be down. Let's simulate this by creating a mockup script that might fail.",
            "Since we don't have the file, I will demonstrate the approach using sample data.",
            "video_path = \"/path/to/video.mp4\"  # e.g., \"/home/user/video.mp4\"",
        ] {
            assert!(said(t, MADE_UP_PHRASES).is_some(), "{t}");
        }
    }

    #[test]
    fn words_the_task_uses_and_successful_runs_are_not_flagged() {
        let run = RunBuilder::failed()
            .task("Assuming two penguins per breeding pair, how many penguins are there?")
            .llm("s1", "Assuming two penguins per pair, there are 8,000.")
            .build();
        assert!(facts_for(&team(run), |f| MadeUpData.detect(f)).is_empty());
        let ok = RunBuilder::succeeded()
            .llm("s1", "Here is a hypothetical example.")
            .build();
        assert!(facts_for(&team(ok), |f| MadeUpData.detect(f)).is_empty());
        let alone = RunBuilder::failed()
            .llm("s1", "Here is a hypothetical example.")
            .build();
        assert!(facts_for(&alone, |f| MadeUpData.detect(f)).is_empty());
    }
}
