//! Links between steps by verbatim value reuse (docs/how-it-decides.md, "Link"): step B depends
//! on step A when a value of A's output (an id, a date, a sentence, a number of 100 or more)
//! appears word for word in B's input.
//!
//! Found with one multi-pattern index (aho-corasick) over every value any step produced, and one
//! scan of each step's input: never by comparing pairs of steps. Against quadratic blow-up a use
//! links only to the latest earlier producer of its value, each step gives at most
//! [`LINK_MAX_VALUES_PER_STEP`] + [`LINK_MAX_SENTENCES_PER_STEP`] values, each step receives at
//! most [`LINK_MAX_PER_STEP`] links, and all values together are capped at
//! [`LINK_MAX_PATTERN_BYTES`]. So the graph has at most 32 edges per step whatever the run.
//! Pure; no I/O.

mod texts;
pub(crate) mod tokens;
mod values;

pub use texts::{StepTexts, flat_text, flat_text_into};
pub use values::ValueKind;
pub(crate) use values::{link_values, number_value};

use crate::analysis::model::Run;
use crate::analysis::rank::params::{
    LINK_MAX_MATCHES_PER_STEP, LINK_MAX_PATTERN_BYTES, LINK_MAX_PER_STEP,
    LINK_MAX_SENTENCES_PER_STEP, LINK_MAX_VALUES_PER_STEP,
};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::collections::{HashMap, HashSet};

/// One use of a value: `from`'s output holds it and `to`'s input holds it verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    /// The producing step (position); the latest one before `to` that produced the value.
    pub from: usize,
    /// The consuming step (position).
    pub to: usize,
    /// The value's id in the graph ([`LinkGraph::value`]).
    pub value: usize,
}

/// Which step used which earlier step's output.
#[derive(Debug, Default)]
pub struct LinkGraph {
    values: Vec<(String, ValueKind)>,
    by_text: HashMap<String, usize>,
    producers: Vec<Vec<usize>>,
    /// Every use, grouped by consumer in step order.
    uses: Vec<Use>,
    /// `uses[into_start[j]..into_start[j + 1]]` are the uses into step `j`.
    into_start: Vec<usize>,
    /// For each producer, the positions in `uses` of its uses, in consumer order.
    out_of: Vec<Vec<usize>>,
    /// Values left out because the run held more than the cap.
    pub truncated: bool,
}

impl LinkGraph {
    /// Finds every link of `run`, reading the texts in `texts`.
    pub fn build(run: &Run, texts: &StepTexts) -> LinkGraph {
        let n = run.steps.len().min(texts.len());
        let mut g = LinkGraph {
            out_of: vec![Vec::new(); n],
            ..LinkGraph::default()
        };
        let mut pattern_bytes = 0usize;
        for p in 0..n {
            let mut atoms = 0usize;
            let mut sentences = 0usize;
            let mut seen_here: HashSet<usize> = HashSet::new();
            link_values(texts.produced(p), |v, kind| {
                let room = if kind == ValueKind::Sentence {
                    &mut sentences
                } else {
                    &mut atoms
                };
                let cap = if kind == ValueKind::Sentence {
                    LINK_MAX_SENTENCES_PER_STEP
                } else {
                    LINK_MAX_VALUES_PER_STEP
                };
                if *room >= cap {
                    return kind != ValueKind::Sentence || sentences < cap;
                }
                let id = match g.by_text.get(v) {
                    Some(&id) => id,
                    None => {
                        if pattern_bytes + v.len() > LINK_MAX_PATTERN_BYTES {
                            g.truncated = true;
                            return true;
                        }
                        pattern_bytes += v.len();
                        let id = g.values.len();
                        g.values.push((v.to_owned(), kind));
                        g.by_text.insert(v.to_owned(), id);
                        g.producers.push(Vec::new());
                        id
                    }
                };
                if seen_here.insert(id) {
                    *room += 1;
                    if let Some(list) = g.producers.get_mut(id) {
                        list.push(p);
                    }
                }
                true
            });
        }
        g.into_start.push(0);
        let ac = if g.values.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(g.values.iter().map(|(s, _)| s.as_str()))
                .or_else(|_| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::Standard)
                        .build(g.values.iter().map(|(s, _)| s.as_str()))
                })
                .ok()
        };
        for j in 0..n {
            if let Some(ac) = &ac {
                g.scan_consumer(ac, j, texts.consumed(j));
            }
            g.into_start.push(g.uses.len());
        }
        for (k, u) in g.uses.iter().enumerate() {
            if let Some(list) = g.out_of.get_mut(u.from) {
                list.push(k);
            }
        }
        g
    }

    fn scan_consumer(&mut self, ac: &AhoCorasick, j: usize, text: &str) {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut linked = 0usize;
        for m in ac
            .find_overlapping_iter(text)
            .take(LINK_MAX_MATCHES_PER_STEP)
        {
            let id = m.pattern().as_usize();
            if seen.contains(&id) {
                continue;
            }
            let Some((_, kind)) = self.values.get(id) else {
                continue;
            };
            if *kind != ValueKind::Sentence && !at_boundaries(text, m.start(), m.end()) {
                continue;
            }
            seen.insert(id);
            let Some(prods) = self.producers.get(id) else {
                continue;
            };
            let before = prods.partition_point(|&p| p < j);
            let Some(&from) = before.checked_sub(1).and_then(|k| prods.get(k)) else {
                continue;
            };
            self.uses.push(Use {
                from,
                to: j,
                value: id,
            });
            linked += 1;
            if linked >= LINK_MAX_PER_STEP {
                break;
            }
        }
    }

    /// The uses into step `j`.
    pub fn into_step(&self, j: usize) -> &[Use] {
        match (self.into_start.get(j), self.into_start.get(j + 1)) {
            (Some(&a), Some(&b)) => self.uses.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The uses of step `p`'s output by later steps.
    pub fn out_of_step(&self, p: usize) -> impl Iterator<Item = &Use> + '_ {
        self.out_of
            .get(p)
            .into_iter()
            .flatten()
            .filter_map(|&k| self.uses.get(k))
    }

    /// True when a later step used something of step `p`'s output.
    pub fn is_used(&self, p: usize) -> bool {
        self.out_of.get(p).is_some_and(|v| !v.is_empty())
    }

    /// A value's text.
    pub fn value(&self, id: usize) -> &str {
        self.values.get(id).map_or("", |(s, _)| s.as_str())
    }

    /// A value's kind.
    pub fn value_kind(&self, id: usize) -> Option<ValueKind> {
        self.values.get(id).map(|(_, k)| *k)
    }

    /// The steps whose output holds this value, in order (empty when no step produced it).
    pub fn producers_of(&self, value: &str) -> &[usize] {
        self.by_text
            .get(value)
            .and_then(|&id| self.producers.get(id))
            .map_or(&[], Vec::as_slice)
    }

    /// Every use, grouped by consumer in step order.
    pub fn uses(&self) -> &[Use] {
        &self.uses
    }

    /// The links for the report: one per (from, to) pair, with the first value found.
    pub fn pairs(&self) -> Vec<Use> {
        let mut out = Vec::with_capacity(self.uses.len());
        for j in 0..self.into_start.len().saturating_sub(1) {
            let uses = self.into_step(j);
            for (k, u) in uses.iter().enumerate() {
                if uses
                    .get(..k)
                    .is_some_and(|before| before.iter().any(|b| b.from == u.from))
                {
                    continue;
                }
                out.push(*u);
            }
        }
        out
    }
}

/// True when the match is not part of a longer word or number.
fn at_boundaries(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn graph(run: &Run) -> LinkGraph {
        LinkGraph::build(run, &StepTexts::build(run))
    }

    #[test]
    fn a_value_links_to_its_latest_earlier_producer() {
        let run = RunBuilder::failed()
            .user("s1", "Book a call with Dana next Friday at 10")
            .llm(
                "s2",
                json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday"}}}),
            )
            .tool_err(
                "s3",
                "create_event",
                json!({"start": "Friday"}),
                "invalid start",
            )
            .build();
        let g = graph(&run);
        let pairs = g.pairs();
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].from, pairs[0].to), (1, 2));
        assert_eq!(g.value(pairs[0].value), "Friday");
        assert_eq!(g.producers_of("Friday"), &[0, 1]);
    }

    #[test]
    fn partial_tokens_and_common_values_do_not_link() {
        let run = RunBuilder::failed()
            .llm("s1", json!({"amount": 120, "flag": "true", "who": "user"}))
            .tool_ok(
                "s2",
                "refund",
                json!({"amount": 1200, "flag": "true", "who": "user"}),
                json!("ok"),
            )
            .build();
        assert!(graph(&run).uses().is_empty());
    }

    #[test]
    fn many_producers_and_consumers_of_one_value_stay_linear() {
        let mut b = RunBuilder::failed();
        for i in 0..2_000 {
            b = b.llm(&format!("p{i}"), json!("order ORD-77123 again"));
            b = b.tool_ok(
                &format!("c{i}"),
                "lookup",
                json!({"id": "ORD-77123"}),
                json!("x"),
            );
        }
        let g = graph(&b.build());
        // one use per consumer (each tool step and each later model step), never one per pair
        assert!(g.uses().len() <= 4_000, "{}", g.uses().len());
        for u in g.uses() {
            assert_eq!(
                u.from + 1,
                u.to,
                "each use links to the step just before it"
            );
        }
    }
}
