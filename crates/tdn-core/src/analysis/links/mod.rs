//! Links between steps by verbatim value reuse (docs/how-it-decides.md, "Link"): step B depends
//! on step A when a value of A's output (an id, a date, a sentence, a number of 100 or more)
//! appears word for word in B's input.
//!
//! Found with one index of every value any step produced (`index.rs`: each value filed under a
//! rare run of words it must show; `index/scan.rs`: looked up word by word while each step's
//! input is scanned once), never by comparing pairs of steps. Against quadratic blow-up a use links only to the latest earlier
//! producer of its value, each step gives at most [`LINK_MAX_VALUES_PER_STEP`] +
//! [`LINK_MAX_SENTENCES_PER_STEP`] values, each step receives at most [`LINK_MAX_PER_STEP`] links,
//! and all values together are capped at [`LINK_MAX_PATTERN_BYTES`]. So the graph has at most 32
//! edges per step whatever the run. Pure; no I/O.

mod index;
#[cfg(test)]
mod proptests;
mod texts;
pub(crate) mod tokens;
mod values;

pub use index::{LINK_CHECKS_PER_BYTE, LINK_MIN_CHECKS};
pub use texts::{StepTexts, flat_text, flat_text_into};
pub use values::ValueKind;
use values::link_values_with;
pub(crate) use values::number_value;
#[cfg(test)]
use values::{link_values, link_values_in};

use crate::analysis::model::Run;
use crate::analysis::params::{
    LINK_MAX_MATCHES_PER_STEP, LINK_MAX_PATTERN_BYTES, LINK_MAX_PER_STEP,
    LINK_MAX_SENTENCES_PER_STEP, LINK_MAX_VALUES_PER_STEP,
};
use crate::analysis::progress::Progress;
use hashbrown::{DefaultHashBuilder, HashSet};
use index::{Index, Interned, kept, spread, text_hash};
use rayon::prelude::*;

/// Steps handed to one parallel task at least (fewer tasks than steps, so scheduling costs
/// nothing next to the scans).
const STEPS_PER_TASK: usize = 256;

/// A scanning thread's buffers.
#[derive(Default)]
struct Scan {
    words: Vec<index::Word>,
    hits: Vec<index::Hit>,
    seen: HashSet<u32>,
    /// The text at hand joined, when it has several leaves and values without an anchor are
    /// looked for.
    text: String,
}

/// Steps whose values are found together before they are added to the index (bounds the
/// values held at once).
const STEPS_PER_BATCH: usize = 4_096;

/// The values of some steps' outputs, in the order [`link_values`] gives them, each with the
/// hash of its text (the bits of [`text_hash`] that are kept: so the hashing is done in
/// parallel, and once).
struct Found<'a> {
    values: Vec<(&'a str, ValueKind, u32)>,
    /// `values[ends[k - 1]..ends[k]]` are the values of the `k`th step (from 0).
    ends: Vec<u32>,
}

impl<'a> Found<'a> {
    fn of(
        texts: &'a StepTexts,
        steps: std::ops::Range<usize>,
        hasher: &DefaultHashBuilder,
    ) -> Self {
        let mut values = Vec::new();
        let mut ends = Vec::with_capacity(steps.len());
        let mut starts = Vec::new();
        for p in steps {
            link_values_with(texts.produced_text(p).leaves(), &mut starts, |v, kind| {
                values.push((v, kind, kept(text_hash(hasher, v.as_bytes()))));
                true
            });
            ends.push(u32::try_from(values.len()).unwrap_or(u32::MAX));
        }
        Found { values, ends }
    }

    /// The values of each step, in order.
    fn steps(&self) -> impl Iterator<Item = &[(&'a str, ValueKind, u32)]> + '_ {
        let mut from = 0usize;
        self.ends.iter().map(move |&end| {
            let s = self.values.get(from..end as usize).unwrap_or_default();
            from = end as usize;
            s
        })
    }
}

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

/// A [`Use`] as the graph keeps it: positions and id as `u32` (a run has fewer steps and
/// values), 12 bytes where a `Use` takes 24 (issue 11: a 100,000-step run holds ~270,000).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    from: u32,
    to: u32,
    value: u32,
}

impl Packed {
    fn unpacked(self) -> Use {
        Use {
            from: self.from as usize,
            to: self.to as usize,
            value: self.value as usize,
        }
    }
}

/// Some uses of a graph (read as [`Use`]s; kept packed).
#[derive(Clone, Copy, Debug)]
pub struct Uses<'a>(&'a [Packed]);

impl<'a> Uses<'a> {
    /// The uses, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Use> + 'a {
        self.0.iter().map(|p| p.unpacked())
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `k`th use.
    pub fn get(&self, k: usize) -> Option<Use> {
        self.0.get(k).map(|p| p.unpacked())
    }
}

impl<'a> IntoIterator for Uses<'a> {
    type Item = Use;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, Packed>, fn(&Packed) -> Use>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|p| p.unpacked())
    }
}

/// Which step used which earlier step's output. The values' texts are borrowed from the
/// [`StepTexts`] the graph was built from (`'t`).
pub struct LinkGraph<'t> {
    index: Index<'t>,
    /// `producers[producers_start[v]..producers_start[v + 1]]` are the steps whose output holds
    /// value `v`, in order.
    producers_start: Vec<u32>,
    producers: Vec<u32>,
    /// Every use, grouped by consumer in step order.
    uses: Vec<Packed>,
    /// `uses[into_start[j]..into_start[j + 1]]` are the uses into step `j`.
    into_start: Vec<u32>,
    /// `out_of[out_start[p]..out_start[p + 1]]` are the positions in `uses` of the uses of
    /// step `p`'s output, in consumer order.
    out_start: Vec<u32>,
    out_of: Vec<u32>,
    /// Values left out because the run held more than the cap.
    pub truncated: bool,
}

impl std::fmt::Debug for LinkGraph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkGraph")
            .field("values", &self.index.len())
            .field("uses", &self.uses.len())
            .field("truncated", &self.truncated)
            .finish()
    }
}

/// Offsets into a flat list, from per-item counts (`start[i]..start[i + 1]` is item `i`).
fn starts(counts: impl Iterator<Item = usize>) -> Vec<u32> {
    let mut out = vec![0u32];
    let mut total = 0u32;
    for c in counts {
        total = total.saturating_add(u32::try_from(c).unwrap_or(u32::MAX));
        out.push(total);
    }
    out
}

fn slice_of<'a, T>(list: &'a [T], start: &[u32], i: usize) -> &'a [T] {
    match (start.get(i), start.get(i + 1)) {
        (Some(&a), Some(&b)) => list.get(a as usize..b as usize).unwrap_or(&[]),
        _ => &[],
    }
}

impl<'t> LinkGraph<'t> {
    /// Finds every link of `run`, reading the texts in `texts`.
    pub fn build(run: &Run, texts: &'t StepTexts<'_>) -> LinkGraph<'t> {
        LinkGraph::build_counted(run, texts, &Progress::new())
    }

    /// [`LinkGraph::build`], adding each step to `progress` twice: once its values are indexed,
    /// once its input is scanned.
    pub fn build_counted(
        run: &Run,
        texts: &'t StepTexts<'_>,
        progress: &Progress,
    ) -> LinkGraph<'t> {
        let n = run.steps.len().min(texts.len());
        let mut index = Index::new(LINK_MAX_PATTERN_BYTES);
        // (how rare an anchor must be depends on how much text will be scanned)
        index.expect_scanned((0..n).map(|j| texts.consumed_text(j).len()).sum());
        let mut truncated = false;
        // The values each step gives, found in parallel (they are spans of the texts), then
        // added in step order, so ids and caps do not depend on the threads.
        // The values each step produced, step after step: `produced[produced_end[p - 1]..
        // produced_end[p]]` are step `p`'s (issue 11: 4 bytes an entry where (value, step)
        // pairs took 8).
        let mut produced: Vec<u32> = Vec::new();
        let mut produced_end: Vec<u32> = Vec::with_capacity(n);
        let mut seen_here: Vec<usize> = Vec::new();
        let hasher = index.hasher();
        for first in (0..n).step_by(STEPS_PER_BATCH) {
            let batch = first..n.min(first + STEPS_PER_BATCH);
            let found: Vec<Found> = batch
                .clone()
                .step_by(STEPS_PER_TASK)
                .collect::<Vec<usize>>()
                .into_par_iter()
                .map(|p| Found::of(texts, p..batch.end.min(p + STEPS_PER_TASK), &hasher))
                .collect();
            progress.add(u64::try_from(batch.len()).unwrap_or(0));
            let per_step = found.iter().flat_map(|f| f.steps());
            for (p, values) in batch.zip(per_step) {
                let mut atoms = 0usize;
                let mut sentences = 0usize;
                seen_here.clear();
                // (one end per step before this one, whatever the batches held)
                let before = u32::try_from(produced.len()).unwrap_or(u32::MAX);
                produced_end.resize(p, before);
                for &(v, kind, h) in values {
                    let sentence = kind == ValueKind::Sentence;
                    let (room, cap) = if sentence {
                        (&mut sentences, LINK_MAX_SENTENCES_PER_STEP)
                    } else {
                        (&mut atoms, LINK_MAX_VALUES_PER_STEP)
                    };
                    if *room >= cap {
                        if sentence {
                            break;
                        }
                        continue;
                    }
                    let id = match index.intern_hashed(v, kind, spread(h)) {
                        Interned::Known(id) | Interned::New(id) => id,
                        Interned::Full => {
                            truncated = true;
                            continue;
                        }
                    };
                    if !seen_here.contains(&id) {
                        seen_here.push(id);
                        *room += 1;
                        if let Ok(v) = u32::try_from(id) {
                            produced.push(v);
                        }
                    }
                }
                produced_end.push(u32::try_from(produced.len()).unwrap_or(u32::MAX));
            }
        }
        index.finish();

        // Producers of each value, in step order (a counting sort keeps the order).
        let mut counts = vec![0usize; index.len()];
        for &v in &produced {
            if let Some(c) = counts.get_mut(v as usize) {
                *c += 1;
            }
        }
        let producers_start = starts(counts.into_iter());
        let mut fill: Vec<u32> = producers_start.clone();
        let mut producers = vec![0u32; produced.len()];
        let mut from = 0usize;
        for (s, &end) in produced_end.iter().enumerate() {
            let Ok(s) = u32::try_from(s) else {
                break;
            };
            for &v in produced.get(from..end as usize).unwrap_or_default() {
                if let Some(at) = fill.get_mut(v as usize) {
                    if let Some(slot) = producers.get_mut(*at as usize) {
                        *slot = s;
                    }
                    *at += 1;
                }
            }
            from = end as usize;
        }
        drop(produced);
        drop(produced_end);

        let mut g = LinkGraph {
            index,
            producers_start,
            producers,
            uses: Vec::new(),
            into_start: vec![0],
            out_start: Vec::new(),
            out_of: Vec::new(),
            truncated,
        };
        // Each input is scanned on its own (the index is only read), in parallel; the uses come
        // back in step order.
        let per_task: Vec<(Vec<Packed>, Vec<u32>)> = (0..n)
            .step_by(STEPS_PER_TASK)
            .collect::<Vec<usize>>()
            .into_par_iter()
            .map_init(Scan::default, |scan, first| {
                let steps = first..n.min(first + STEPS_PER_TASK);
                let mut uses = Vec::new();
                let mut ends = Vec::with_capacity(steps.len());
                for j in steps {
                    let text = texts.consumed_text(j);
                    g.index
                        .scan_text(text, &mut scan.text, &mut scan.words, &mut scan.hits);
                    progress.add(1);
                    g.uses_into(j, &scan.hits, &mut scan.seen, &mut uses);
                    ends.push(u32::try_from(uses.len()).unwrap_or(u32::MAX));
                }
                // Held until all tasks are done: without the slack of growing.
                uses.shrink_to_fit();
                (uses, ends)
            })
            .collect();
        g.index.keep_lookup_only();
        g.uses
            .reserve_exact(per_task.iter().map(|(u, _)| u.len()).sum());
        g.into_start.reserve_exact(n);
        for (uses, ends) in per_task {
            let before = u32::try_from(g.uses.len()).unwrap_or(u32::MAX);
            g.uses.extend(uses);
            g.into_start
                .extend(ends.into_iter().map(|e| before.saturating_add(e)));
        }
        let mut out_counts = vec![0usize; n];
        for u in &g.uses {
            if let Some(c) = out_counts.get_mut(u.from as usize) {
                *c += 1;
            }
        }
        g.out_start = starts(out_counts.into_iter());
        let mut fill = g.out_start.clone();
        g.out_of = vec![0; g.uses.len()];
        for (k, u) in g.uses.iter().enumerate() {
            if let Some(at) = fill.get_mut(u.from as usize) {
                if let Some(slot) = g.out_of.get_mut(*at as usize) {
                    *slot = u32::try_from(k).unwrap_or(u32::MAX);
                }
                *at += 1;
            }
        }
        g
    }

    /// Appends to `out` the uses into step `j`, from the hits of its input: each value once, in
    /// order of the hits, linked to its latest producer before `j`.
    fn uses_into(
        &self,
        j: usize,
        hits: &[index::Hit],
        seen: &mut HashSet<u32>,
        out: &mut Vec<Packed>,
    ) {
        seen.clear();
        let first = out.len();
        for h in hits.iter().take(LINK_MAX_MATCHES_PER_STEP) {
            if !seen.insert(h.value) {
                continue;
            }
            let id = h.value as usize;
            let prods = self.producers_of_id(id);
            let before = prods.partition_point(|&p| (p as usize) < j);
            let Some(&from) = before.checked_sub(1).and_then(|k| prods.get(k)) else {
                continue;
            };
            let Ok(to) = u32::try_from(j) else {
                continue;
            };
            out.push(Packed {
                from,
                to,
                value: h.value,
            });
            if out.len() - first >= LINK_MAX_PER_STEP {
                break;
            }
        }
    }

    fn producers_of_id(&self, id: usize) -> &[u32] {
        slice_of(&self.producers, &self.producers_start, id)
    }

    /// The uses into step `j`.
    pub fn into_step(&self, j: usize) -> Uses<'_> {
        Uses(slice_of(&self.uses, &self.into_start, j))
    }

    /// The uses of step `p`'s output by later steps.
    pub fn out_of_step(&self, p: usize) -> impl Iterator<Item = Use> + '_ {
        slice_of(&self.out_of, &self.out_start, p)
            .iter()
            .filter_map(|&k| self.uses.get(k as usize).map(|u| u.unpacked()))
    }

    /// True when a later step used something of step `p`'s output.
    pub fn is_used(&self, p: usize) -> bool {
        !slice_of(&self.out_of, &self.out_start, p).is_empty()
    }

    /// A value's text.
    pub fn value(&self, id: usize) -> &'t str {
        self.index.value(id)
    }

    /// A value's kind.
    pub fn value_kind(&self, id: usize) -> Option<ValueKind> {
        self.index.kind(id)
    }

    /// The steps whose output holds this value, in order (empty when no step produced it), as
    /// `u32` (a run has fewer steps; half the memory of `usize` positions, issue 11).
    pub fn producers_of(&self, value: &str) -> &[u32] {
        self.index
            .find(value)
            .map_or(&[], |id| self.producers_of_id(id))
    }

    /// Every use, grouped by consumer in step order.
    pub fn uses(&self) -> Uses<'_> {
        Uses(&self.uses)
    }

    /// The links for the report: one per (from, to) pair, with the first value found, by
    /// consumer in step order (read as they are listed, so no list of them is held).
    pub fn pairs(&self) -> impl Iterator<Item = Use> + '_ {
        (0..self.into_start.len().saturating_sub(1)).flat_map(move |j| {
            let uses = slice_of(&self.uses, &self.into_start, j);
            uses.iter().enumerate().filter_map(move |(k, u)| {
                let repeated = uses
                    .get(..k)
                    .is_some_and(|before| before.iter().any(|b| b.from == u.from));
                (!repeated).then_some(u.unpacked())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn graph<'t>(run: &Run, texts: &'t StepTexts<'_>) -> LinkGraph<'t> {
        LinkGraph::build(run, texts)
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
        let texts = StepTexts::build(&run);
        let g = graph(&run, &texts);
        let pairs: Vec<Use> = g.pairs().collect();
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].from, pairs[0].to), (1, 2));
        assert_eq!(g.value(pairs[0].value), "Friday");
        assert_eq!(g.producers_of("Friday"), &[0, 1]);
    }

    /// True when `part` lies inside `whole`'s bytes (is a span of it, not a copy).
    fn lies_in(part: &str, whole: &str) -> bool {
        let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
        p >= w && p + part.len() <= w + whole.len()
    }

    #[test]
    fn values_are_spans_of_the_step_texts_and_read_after_the_scans() {
        let run = RunBuilder::failed()
            .user("s1", "Refund ORD-88812 to ada@example.com")
            .llm("s2", json!({"note": "refund ORD-88812", "amount": 4500}))
            .tool_ok(
                "s3",
                "refund",
                json!({"id": "ORD-88812", "to": "ada@example.com", "amount": 4500}),
                json!("done"),
            )
            .build();
        let texts = StepTexts::build(&run);
        let g = graph(&run, &texts);
        let mut values: Vec<&str> = g.uses().iter().map(|u| g.value(u.value)).collect();
        values.sort_unstable();
        assert_eq!(values, ["4500", "ORD-88812", "ada@example.com"]);
        for u in g.uses() {
            let v = g.value(u.value);
            // kept as found in the text of its first producer
            let first = g
                .producers_of(v)
                .first()
                .map_or(usize::MAX, |&p| p as usize);
            assert!(
                texts
                    .produced_text(first)
                    .leaves()
                    .any(|leaf| lies_in(v, leaf)),
                "{v} is a copy"
            );
        }
        // Found by text once the scan tables are freed; an unknown text is no value.
        assert_eq!(g.producers_of("ORD-88812"), &[0, 1]);
        assert_eq!(g.producers_of("4500"), &[1]);
        assert!(g.producers_of("ORD-8881").is_empty());
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
        assert!(graph(&run, &StepTexts::build(&run)).uses().is_empty());
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
        let run = b.build();
        let texts = StepTexts::build(&run);
        let g = graph(&run, &texts);
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
