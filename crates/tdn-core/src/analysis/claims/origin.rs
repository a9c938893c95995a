//! The origin of a claim: the earliest model step (`llm`, `agent`, `decision`) whose output
//! already held it, meaning every number and id of the claim and at least [`ORIGIN_SHARE`] of its
//! weighted words (tool names in the output left out, looked up in a set). One pass over the
//! model steps with an index from term to claims, so the cost is the size of the outputs, not
//! outputs times claims or words times tool names. When every claim names an id, an output is
//! read word by word only once it holds all the ids of some claim ([`IdFilter`]), so the words of
//! outputs that cannot be an origin are never read.

use super::words::{Term, TermKind, each_term_except};
use crate::analysis::links::StepTexts;
use crate::analysis::model::Run;
use crate::analysis::params::ORIGIN_SHARE;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use hashbrown::{HashMap, HashSet};
use memchr::memmem;

/// At most this many tool names are left out of model outputs.
const MAX_TOOL_NAMES: usize = 1_000;

/// For each claim (given by its terms; `None` to skip it), the position of its origin step.
pub fn origins(run: &Run, texts: &StepTexts, claims: &[Option<Vec<Term>>]) -> Vec<Option<usize>> {
    origins_with(run, texts, claims, true)
}

/// [`origins`], with or without the [`IdFilter`] (the same answer either way).
fn origins_with(
    run: &Run,
    texts: &StepTexts,
    claims: &[Option<Vec<Term>>],
    filtered: bool,
) -> Vec<Option<usize>> {
    let mut out = vec![None; claims.len()];
    let mut by_key: HashMap<&str, Vec<(usize, f64, bool)>> = HashMap::new();
    let mut need: Vec<(f64, usize)> = Vec::with_capacity(claims.len());
    let mut open = 0usize;
    for (c, ts) in claims.iter().enumerate() {
        let ts = ts.as_deref().unwrap_or(&[]);
        let total: f64 = ts.iter().map(Term::weight).sum();
        let keys = ts.iter().filter(|t| t.is_key()).count();
        need.push((total, keys));
        if total > 0.0 {
            open += 1;
        }
        for t in ts {
            by_key
                .entry(t.key.as_str())
                .or_default()
                .push((c, t.weight(), t.is_key()));
        }
    }
    // A tool call's name ("schedule_meeting") is not the model saying the claim's words. A set,
    // so each word of each output is one lookup however many tools the run has.
    let mut tool_names: HashSet<&str> = run.tools.iter().map(|t| t.name.as_str()).collect();
    for s in &run.steps {
        if let Some(c) = &s.tool
            && tool_names.len() < MAX_TOOL_NAMES
        {
            tool_names.insert(&c.name);
        }
    }
    let mut acc = vec![(0.0f64, 0usize); claims.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut filter = IdFilter::new(claims).filter(|_| filtered);
    // A text of several leaves is joined here, into one buffer for all steps, once it passed
    // the filter (which reads it leaf by leaf).
    let mut joined = String::new();
    for (i, step) in run.steps.iter().enumerate() {
        if open == 0 {
            break;
        }
        if !crate::analysis::model::decides(step) {
            continue;
        }
        let text = texts.produced_text(i);
        if let Some(f) = filter.as_mut()
            && !f.may_hold_leaves(text.leaves())
        {
            continue;
        }
        let text = text.joined_in(&mut joined);
        // The claims' keys this output held, once each: borrowed from the index, so a word no
        // claim has costs one lookup and no allocation.
        let mut seen: HashSet<&str> = HashSet::new();
        each_term_except(text, &tool_names, |k, _| {
            let Some((&key, list)) = by_key.get_key_value(k) else {
                return;
            };
            if !seen.insert(key) {
                return;
            }
            for &(c, w, is_key) in list {
                if let Some(a) = acc.get_mut(c) {
                    if a.0 == 0.0 && a.1 == 0 {
                        touched.push(c);
                    }
                    a.0 += w;
                    a.1 += usize::from(is_key);
                }
            }
        });
        for c in touched.drain(..) {
            let (w, k) = acc.get(c).copied().unwrap_or_default();
            if let Some(a) = acc.get_mut(c) {
                *a = (0.0, 0);
            }
            let Some(&(total, keys)) = need.get(c) else {
                continue;
            };
            if total > 0.0
                && k == keys
                && w / total >= ORIGIN_SHARE
                && let Some(slot) = out.get_mut(c)
                && slot.is_none()
            {
                *slot = Some(i);
                open = open.saturating_sub(1);
            }
        }
    }
    out
}

/// The ids of the claims, looked for in an output in one pass before its words are read. An
/// output is the origin of a claim only when it holds every id of the claim, and an id term is
/// the output's token in lower case; so an output that lacks, in any case, one id of each claim
/// is none's origin.
///
/// Only ids written in ASCII with a digit are looked for: no word of an output (its letters
/// hold no digit) and no number (written with digits and at most one point) has such a key, so
/// it can only come from a token spelling it. A token lower-cases into ASCII only when it is
/// ASCII itself or holds the Kelvin sign, so an output holding that sign is always read.
struct IdFilter {
    ids: AhoCorasick,
    /// For each id, the claims naming it.
    claims_of: Vec<Vec<usize>>,
    /// For each claim, how many ids it names.
    wanted: Vec<usize>,
    /// Per output: the ids found and, for each claim, how many of its ids.
    found: Vec<bool>,
    hits: Vec<usize>,
    seen: Vec<usize>,
    /// When the ids are few ([`MAX_CASELESS_PARTS`]): each one's longest run of bytes that
    /// are no ASCII letter, which an occurrence of the id in any case holds as it is. An
    /// output that lacks such a part of one id of each claim lacks the ids, and is told so by
    /// a vectorised search for the parts (issue 11: the automaton stopped at each byte it
    /// could not rule out, a digit most often, and read on from there). Empty otherwise.
    caseless: Vec<memmem::Finder<'static>>,
}

/// Ids whose parts without letters are looked for first, at most (each is one more pass over
/// an output).
const MAX_CASELESS_PARTS: usize = 4;

/// The longest run of `id`'s bytes that are no ASCII letter (the first of the longest).
fn caseless_part(id: &str) -> &[u8] {
    let b = id.as_bytes();
    let (mut best, mut start) = (0..0, 0);
    for (i, c) in b.iter().enumerate() {
        if c.is_ascii_alphabetic() {
            start = i + 1;
        } else if i + 1 - start > best.len() {
            best = start..i + 1;
        }
    }
    b.get(best).unwrap_or_default()
}

/// The one character outside ASCII that lower-cases into ASCII (`'\u{212A}'` gives `'k'`).
const KELVIN: char = '\u{212A}';

impl IdFilter {
    /// The filter for these claims; `None` when a claim that can have an origin names no id.
    fn new(claims: &[Option<Vec<Term>>]) -> Option<IdFilter> {
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut needles: Vec<&str> = Vec::new();
        let mut claims_of: Vec<Vec<usize>> = Vec::new();
        let mut wanted = vec![0usize; claims.len()];
        for (c, ts) in claims.iter().enumerate() {
            let ts = ts.as_deref().unwrap_or(&[]);
            if ts.iter().map(Term::weight).sum::<f64>() <= 0.0 {
                continue;
            }
            for t in ts.iter().filter(|t| {
                t.kind == TermKind::Id
                    && t.key.is_ascii()
                    && t.key.bytes().any(|b| b.is_ascii_digit())
            }) {
                let n = *at.entry(t.key.as_str()).or_insert_with(|| {
                    needles.push(t.key.as_str());
                    claims_of.push(Vec::new());
                    needles.len() - 1
                });
                if let Some(list) = claims_of.get_mut(n) {
                    list.push(c);
                }
                if let Some(w) = wanted.get_mut(c) {
                    *w += 1;
                }
            }
            if wanted.get(c).is_none_or(|&w| w == 0) {
                return None;
            }
        }
        // A contiguous NFA builds in time linear in the ids (see `detect::facts`).
        let ids = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&needles)
            .ok()?;
        let caseless = if needles.len() <= MAX_CASELESS_PARTS {
            needles
                .iter()
                .map(|n| memmem::Finder::new(caseless_part(n)).into_owned())
                .collect()
        } else {
            Vec::new()
        };
        Some(IdFilter {
            ids,
            caseless,
            found: vec![false; needles.len()],
            claims_of,
            hits: vec![0; claims.len()],
            wanted,
            seen: Vec::new(),
        })
    }

    /// False when `text` lacks an id of every claim.
    #[cfg(test)]
    fn may_hold(&mut self, text: &str) -> bool {
        self.may_hold_leaves(std::iter::once(text))
    }

    /// False when the leaves lack the part without letters ([`IdFilter::caseless`]) of an id
    /// of every claim (and so the id in any case).
    fn caseless_parts_may_hold<'a>(
        &mut self,
        leaves: impl Iterator<Item = &'a str> + Clone,
    ) -> bool {
        let mut any = false;
        for (n, part) in self.caseless.iter().enumerate() {
            if !leaves
                .clone()
                .any(|text| part.find(text.as_bytes()).is_some())
            {
                continue;
            }
            for &c in self.claims_of.get(n).map_or(&[][..], Vec::as_slice) {
                if let Some(h) = self.hits.get_mut(c) {
                    *h += 1;
                    any |= self.wanted.get(c).is_some_and(|w| *w == *h);
                }
            }
        }
        for n in 0..self.caseless.len() {
            for &c in self.claims_of.get(n).map_or(&[][..], Vec::as_slice) {
                if let Some(h) = self.hits.get_mut(c) {
                    *h = 0;
                }
            }
        }
        any
    }

    /// [`IdFilter::may_hold`] of the text that `leaves` make joined by newlines, read leaf by
    /// leaf (issue 11: each output was joined first, a copy of most model outputs): no id
    /// holds a newline (an id is a token), so each lies in one leaf.
    fn may_hold_leaves<'a>(&mut self, leaves: impl Iterator<Item = &'a str> + Clone) -> bool {
        if leaves
            .clone()
            .any(|text| !text.is_ascii() && text.contains(KELVIN))
        {
            return true;
        }
        if !self.caseless.is_empty() && !self.caseless_parts_may_hold(leaves.clone()) {
            return false;
        }
        let mut any = false;
        for text in leaves {
            for m in self.ids.find_overlapping_iter(text) {
                let n = m.pattern().as_usize();
                match self.found.get_mut(n) {
                    Some(f) if !*f => *f = true,
                    _ => continue,
                }
                self.seen.push(n);
                for &c in self.claims_of.get(n).map_or(&[][..], Vec::as_slice) {
                    if let Some(h) = self.hits.get_mut(c) {
                        *h += 1;
                        any |= self.wanted.get(c).is_some_and(|w| *w == *h);
                    }
                }
            }
        }
        for n in self.seen.drain(..) {
            if let Some(f) = self.found.get_mut(n) {
                *f = false;
            }
            for &c in self.claims_of.get(n).map_or(&[][..], Vec::as_slice) {
                if let Some(h) = self.hits.get_mut(c) {
                    *h = 0;
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::label::claim_terms;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn tool_names_are_left_out_however_many_tools_the_run_has() {
        let mut b = RunBuilder::failed();
        for k in 0..(MAX_TOOL_NAMES - 1) {
            b = b.tool_def(&format!("tool_{k}"), "", json!(null), false);
        }
        let run = b
            .llm("s1", "schedule_meeting")
            .tool_ok("s2", "schedule_meeting", json!({}), json!({"ok": true}))
            .llm("s3", "Your call with Dana is set.")
            .build();
        let texts = StepTexts::build(&run);
        let claims = vec![Some(claim_terms("schedule meeting"))];
        // s1 wrote only the tool's name, which is not the claim's words.
        assert_eq!(origins(&run, &texts, &claims), vec![None]);
        let claims = vec![Some(claim_terms("Your call with Dana is set."))];
        assert_eq!(origins(&run, &texts, &claims), vec![Some(2)]);
    }

    #[test]
    fn only_the_kelvin_sign_lower_cases_into_ascii() {
        let into_ascii: Vec<char> = (0x80..=0x10_FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| c.to_lowercase().all(|l| l.is_ascii()))
            .collect();
        assert_eq!(into_ascii, vec![KELVIN]);
    }

    #[test]
    fn outputs_lacking_a_claims_id_are_skipped_with_the_same_origins() {
        let run = RunBuilder::failed()
            .llm("s1", "Your refund for order 77 was issued.")
            .llm("s2", "Next is order ord-77.")
            .llm("s3", "your REFUND for ord-77 was issued")
            .llm("s4", "Booked room \u{212A}9 at 10:00.")
            .llm("s5", "Booked room K9 for you.")
            .build();
        let texts = StepTexts::build(&run);
        let claims = vec![
            Some(claim_terms("Your refund for ORD-77 was issued.")),
            Some(claim_terms("Room K9 is booked.")),
            None,
        ];
        let found = origins(&run, &texts, &claims);
        // s1 lacks the id, s2 holds it but too few of the words; s3 holds it in other case.
        // The Kelvin sign of s4 lower-cases to 'k': s4 holds 'k9'.
        assert_eq!(found, vec![Some(2), Some(3), None]);
        assert_eq!(found, origins_with(&run, &texts, &claims, false));
        let mut f = IdFilter::new(&claims).expect("every claim names an id");
        assert!(!f.may_hold(&texts.produced(0)));
        assert!(f.may_hold(&texts.produced(1)));
        assert!(f.may_hold(&texts.produced(3)));
    }

    #[test]
    fn the_part_of_an_id_without_letters_is_its_longest() {
        assert_eq!(caseless_part("ord-33806170"), b"-33806170");
        assert_eq!(caseless_part("a1b22c"), b"22");
        assert_eq!(caseless_part("12ab"), b"12");
        assert_eq!(caseless_part("k9"), b"9");
        assert_eq!(caseless_part("abc"), b"");
    }

    proptest::proptest! {
        #[test]
        fn outputs_told_by_the_parts_without_letters_pass_as_by_the_automaton(
            text in "(ord-77|ORD-77|oRd-77|ord-78|Ord-78|K9|k9|\u{212A}9|room|[a-z0-9 .-]{0,6}|\n)*",
            claims in proptest::collection::vec(
                proptest::sample::select(vec![
                    "Your refund for ORD-77 was issued.",
                    "ORD-77 and ORD-78 were refunded.",
                    "Room K9 is booked.",
                    "Room K9 and ORD-78 are booked.",
                ]),
                1..4,
            ),
        ) {
            let claims: Vec<_> = claims.iter().map(|c| Some(claim_terms(c))).collect();
            let mut f = IdFilter::new(&claims).expect("every claim names an id");
            proptest::prop_assert!(!f.caseless.is_empty());
            let mut plain = IdFilter::new(&claims).expect("every claim names an id");
            plain.caseless.clear();
            proptest::prop_assert_eq!(f.may_hold(&text), plain.may_hold(&text));
            // and the filter is left clean for the next output
            proptest::prop_assert_eq!(f.may_hold(&text), plain.may_hold(&text));
        }

        #[test]
        fn outputs_filtered_leaf_by_leaf_pass_as_joined(
            leaves in proptest::collection::vec(
                "(ord-77|ORD-78|k9|\u{212A}9|room|[a-z0-9 .-]{0,6}|\n)*", 0..4,
            )
        ) {
            let claims = vec![
                Some(claim_terms("Your refund for ORD-77 and ORD-78 was issued.")),
                Some(claim_terms("Room K9 is booked.")),
            ];
            let mut f = IdFilter::new(&claims).expect("every claim names an id");
            let joined = leaves.join("\n");
            let want = f.may_hold(&joined);
            proptest::prop_assert_eq!(f.may_hold_leaves(leaves.iter().map(String::as_str)), want);
            // and the filter is left clean for the next output
            proptest::prop_assert_eq!(f.may_hold(&joined), want);
        }
    }

    #[test]
    fn a_claim_naming_no_id_leaves_every_output_to_be_read() {
        let claims = vec![
            Some(claim_terms("Your refund for ORD-77 was issued.")),
            Some(claim_terms("The refund was issued.")),
        ];
        assert!(IdFilter::new(&claims).is_none());
    }
}
