//! The timeline's per-step look-ups of a [`Document`](super::Document): labels, spans and
//! nesting, read on the thread pool a part of the steps at a time.

use super::MAX_LABEL_WIDTH;
use crate::analysis::model::{Run, Step};
use crate::tui::widgets::inert_text::clipped;
use rayon::prelude::*;

/// The timeline's per-step look-ups, made in one pass over the steps.
pub(super) struct StepRows {
    pub(super) labels: Vec<String>,
    pub(super) label_parts: Vec<[u16; 3]>,
    pub(super) spans: Vec<Option<(i64, i64)>>,
    pub(super) depth: Vec<u16>,
    pub(super) parent: Vec<Option<usize>>,
    pub(super) has_children: Vec<bool>,
    pub(super) has_durations: bool,
    pub(super) has_tokens: bool,
}

impl StepRows {
    /// Each step's label, span and parent are read on the thread pool, a part of the steps at a
    /// time; the nesting depths then in one pass, in step order (a parent always comes first).
    pub(super) fn build(run: &Run) -> StepRows {
        let n = run.steps.len();
        let read: Vec<StepRead> = run
            .steps
            .par_iter()
            .enumerate()
            .with_min_len(STEPS_PER_PART)
            .map(|(i, step)| StepRead::of(run, i, step))
            .collect();
        let mut depth = vec![0u16; n];
        let mut parent = vec![None; n];
        let mut has_children = vec![false; n];
        let mut labels = Vec::with_capacity(n);
        let mut label_parts = Vec::with_capacity(n);
        let (mut has_durations, mut has_tokens) = (false, false);
        let mut spans: Vec<Option<(i64, i64)>> = Vec::with_capacity(n);
        for (i, r) in read.into_iter().enumerate() {
            if let Some(p) = r.parent {
                let d = depth.get(p).copied().unwrap_or(0).saturating_add(1);
                if let Some(slot) = depth.get_mut(i) {
                    *slot = d;
                }
                if let Some(slot) = has_children.get_mut(p) {
                    *slot = true;
                }
                if let Some(slot) = parent.get_mut(i) {
                    *slot = Some(p);
                }
            }
            labels.push(r.label);
            label_parts.push(r.parts);
            spans.push(r.span);
            has_durations |= r.has_duration;
            has_tokens |= r.has_tokens;
        }
        // A step's span takes in its nested steps' (parents always come first).
        for i in (0..n).rev() {
            if let (Some(p), Some((a, b))) = (
                parent.get(i).copied().flatten(),
                spans.get(i).copied().flatten(),
            ) && let Some(slot) = spans.get_mut(p)
            {
                *slot = Some(match *slot {
                    Some((c, d)) => (c.min(a), d.max(b)),
                    None => (a, b),
                });
            }
        }
        StepRows {
            labels,
            label_parts,
            spans,
            depth,
            parent,
            has_children,
            has_durations,
            has_tokens,
        }
    }
}

/// Steps read at once by [`StepRows::build`].
const STEPS_PER_PART: usize = 4096;

/// What the timeline reads of one step.
struct StepRead {
    label: String,
    parts: [u16; 3],
    span: Option<(i64, i64)>,
    /// The position of its parent step, when that comes before it.
    parent: Option<usize>,
    has_duration: bool,
    has_tokens: bool,
}

impl StepRead {
    fn of(run: &Run, i: usize, step: &Step) -> StepRead {
        let parent = step
            .parent
            .as_ref()
            .and_then(|p| run.step_index(p.as_str()))
            .filter(|&p| p < i);
        let made = super::names::step_label(step);
        // The label as made when it is short enough (no second copy); parts cut off by the
        // clip simply start past its end.
        let label = match clipped(&made.text, MAX_LABEL_WIDTH) {
            std::borrow::Cow::Borrowed(kept) if kept.len() == made.text.len() => made.text,
            clip => clip.into_owned(),
        };
        StepRead {
            label,
            parts: made.starts,
            span: match (step.started_at(), step.ended_at()) {
                (Some(a), Some(b)) if b.0 >= a.0 => Some((a.0, b.0)),
                (Some(a), _) => Some((a.0, a.0)),
                (None, Some(b)) => Some((b.0, b.0)),
                (None, None) => None,
            },
            parent,
            has_duration: step.duration_ms().is_some(),
            has_tokens: step
                .usage()
                .is_some_and(|u| u.input_tokens.is_some() || u.output_tokens.is_some()),
        }
    }
}
