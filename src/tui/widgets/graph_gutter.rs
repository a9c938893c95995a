//! The timeline's dependency gutter: the report's links drawn as git-log-style lanes. Each step
//! whose output is reused gets a lane from its row to its last user's row: `●` at the source,
//! `├` at each user, `╰` at the last one, `│` between. Lanes are assigned once when a run opens
//! (greedy interval colouring, at most [`MAX_LANES`]); drawing a row is a few binary searches,
//! so only visible rows cost anything. Holds no run text and does no I/O.

use super::super::theme::Role;

/// The most lanes drawn; links beyond them are counted, not drawn.
pub const MAX_LANES: usize = 6;

/// One lane segment: a source step and the span to its last user.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Segment {
    start: usize,
    end: usize,
}

/// The link graph, indexed for drawing and for the selected step's inputs and outputs.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// For each step, where its targets start in `targets` (CSR layout; `n + 1` offsets).
    out_start: Vec<usize>,
    targets: Vec<usize>,
    in_start: Vec<usize>,
    sources: Vec<usize>,
    lanes: Vec<Vec<Segment>>,
    /// Sources whose lane did not fit.
    pub undrawn: usize,
}

impl Graph {
    /// Builds the graph of `n` steps from `(from, to)` index pairs; pairs out of range or not
    /// pointing forward are ignored, duplicates kept once.
    pub fn build(n: usize, links: impl IntoIterator<Item = (usize, usize)>) -> Graph {
        let mut edges: Vec<(usize, usize)> =
            links.into_iter().filter(|&(f, t)| f < t && t < n).collect();
        edges.sort_unstable();
        edges.dedup();
        let (out_start, targets) = csr(n, edges.iter().copied());
        let mut rev: Vec<(usize, usize)> = edges.iter().map(|&(f, t)| (t, f)).collect();
        rev.sort_unstable();
        let (in_start, sources) = csr(n, rev.iter().copied());

        let mut lanes: Vec<Vec<Segment>> = Vec::new();
        let mut undrawn = 0;
        for s in 0..n {
            let Some(end) = slice(&out_start, &targets, s).last().copied() else {
                continue;
            };
            let free = lanes
                .iter()
                .position(|l| l.last().is_none_or(|seg| seg.end < s));
            match free {
                Some(i) => {
                    if let Some(l) = lanes.get_mut(i) {
                        l.push(Segment { start: s, end });
                    }
                }
                None if lanes.len() < MAX_LANES => lanes.push(vec![Segment { start: s, end }]),
                None => undrawn += 1,
            }
        }
        Graph {
            out_start,
            targets,
            in_start,
            sources,
            lanes,
            undrawn,
        }
    }

    /// How many lanes are drawn.
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Steps that reuse a value of `step`'s output (later steps), ascending.
    pub fn outputs_to(&self, step: usize) -> &[usize] {
        slice(&self.out_start, &self.targets, step)
    }

    /// Steps whose output `step` reuses (earlier steps), ascending.
    pub fn inputs_from(&self, step: usize) -> &[usize] {
        slice(&self.in_start, &self.sources, step)
    }

    /// The gutter cells of row `step`, one `(glyph, role)` per lane, with `selected` the
    /// selected step (its output lane and the lanes feeding it are highlighted).
    pub fn row(&self, step: usize, selected: Option<usize>) -> Vec<(char, Role)> {
        self.lanes
            .iter()
            .map(|lane| {
                let idx = lane.partition_point(|seg| seg.start <= step);
                let Some(seg) = idx.checked_sub(1).and_then(|i| lane.get(i)) else {
                    return (' ', Role::Link);
                };
                if seg.end < step {
                    return (' ', Role::Link);
                }
                let glyph = if step == seg.start {
                    '●'
                } else if step == seg.end {
                    '╰'
                } else if self.outputs_to(seg.start).binary_search(&step).is_ok() {
                    '├'
                } else {
                    '│'
                };
                let role = match selected {
                    Some(sel) if sel == seg.start => Role::LinkOut,
                    Some(sel) if self.outputs_to(seg.start).binary_search(&sel).is_ok() => {
                        Role::LinkIn
                    }
                    _ => Role::Link,
                };
                (glyph, role)
            })
            .collect()
    }
}

fn csr(n: usize, sorted: impl Iterator<Item = (usize, usize)>) -> (Vec<usize>, Vec<usize>) {
    let mut start = vec![0usize; n + 1];
    let mut values = Vec::new();
    for (k, v) in sorted {
        if let Some(c) = start.get_mut(k + 1) {
            *c += 1;
        }
        values.push(v);
    }
    for i in 0..n {
        let prev = start.get(i).copied().unwrap_or(0);
        if let Some(c) = start.get_mut(i + 1) {
            *c += prev;
        }
    }
    (start, values)
}

fn slice<'a>(start: &[usize], values: &'a [usize], i: usize) -> &'a [usize] {
    match (start.get(i), start.get(i + 1)) {
        (Some(&a), Some(&b)) => values.get(a..b).unwrap_or(&[]),
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyphs(g: &Graph, step: usize) -> String {
        g.row(step, None).iter().map(|(c, _)| *c).collect()
    }

    #[test]
    fn a_source_and_its_users_form_one_lane() {
        // 0 feeds 2 and 4; 1 feeds 3 (overlaps, so a second lane).
        let g = Graph::build(6, [(0, 2), (0, 4), (1, 3)]);
        assert_eq!(g.lane_count(), 2);
        assert_eq!(glyphs(&g, 0), "● ");
        assert_eq!(glyphs(&g, 1), "│●");
        assert_eq!(glyphs(&g, 2), "├│");
        assert_eq!(glyphs(&g, 3), "│╰");
        assert_eq!(glyphs(&g, 4), "╰ ");
        assert_eq!(glyphs(&g, 5), "  ");
        assert_eq!(g.outputs_to(0), &[2, 4]);
        assert_eq!(g.inputs_from(3), &[1]);
    }

    #[test]
    fn a_lane_is_reused_once_free_and_bad_links_are_ignored() {
        let g = Graph::build(5, [(0, 1), (2, 3), (3, 3), (4, 2), (1, 99)]);
        assert_eq!(g.lane_count(), 1);
        assert_eq!(glyphs(&g, 2), "●");
    }

    #[test]
    fn the_selected_steps_lanes_are_highlighted() {
        let g = Graph::build(4, [(0, 2), (1, 3)]);
        let row = g.row(2, Some(2));
        assert_eq!(row.first(), Some(&('╰', Role::LinkIn)));
        let row = g.row(1, Some(1));
        assert_eq!(row.get(1), Some(&('●', Role::LinkOut)));
    }

    #[test]
    fn lanes_beyond_the_cap_are_counted() {
        let links: Vec<(usize, usize)> = (0..10).map(|i| (i, 20)).collect();
        let g = Graph::build(21, links);
        assert_eq!(g.lane_count(), MAX_LANES);
        assert_eq!(g.undrawn, 10 - MAX_LANES);
    }
}
