//! The timeline's waterfall: each step drawn as a bar on the run's clock, from its start to its
//! end, under an axis spanning the rows on screen (from the first start to the last end among
//! them), labelled in time since the run began. A container (a step with nested
//! steps) spans its nested steps too: folded, it is one shaded bar for all of them; unfolded, a
//! thin bracket over the bars of its nested steps. A failed step's bar is drawn in the error
//! role; a step without timestamps says so. Reads only what the document computed at open.

use super::super::super::theme::{Role, Theme};
use crate::analysis::count::step_duration;
use ratatui::text::Span;

/// Share of the timeline's width the bars take, in percent, and the bounds.
const SHARE: usize = 35;
const MIN_BARS: usize = 10;
const MAX_BARS: usize = 80;

/// Columns of bars for a timeline `width` columns wide.
pub fn bar_width(width: usize) -> usize {
    (width * SHARE / 100).clamp(MIN_BARS, MAX_BARS)
}

/// The run's clock mapped onto `width` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waterfall {
    start: i64,
    end: i64,
    origin: i64,
    width: usize,
}

impl Waterfall {
    /// A waterfall from `window.0` to `window.1` (milliseconds) in a run that began at `origin`.
    pub fn new(window: (i64, i64), origin: i64, width: usize) -> Waterfall {
        Waterfall {
            start: window.0,
            end: window.1.max(window.0),
            origin: origin.min(window.0),
            width: width.max(1),
        }
    }

    /// The column of a point in time (0..=width).
    fn column(&self, t: i64) -> usize {
        let total = i128::from(self.end - self.start).max(1);
        let at = i128::from(t.clamp(self.start, self.end) - self.start);
        usize::try_from(at * self.width as i128 / total).unwrap_or(0)
    }

    /// The axis over the bars, aligned with a row's duration column and bars:
    /// `  time 0s        1.2s        2.4s`.
    pub fn axis(&self) -> String {
        let total = self.end - self.start;
        let at = |t: i64| {
            let d = t - self.origin;
            if d == 0 {
                "0s".to_owned()
            } else {
                step_duration(d)
            }
        };
        let mut scale = vec![' '; self.width];
        let mut put = |at: usize, text: &str, right: bool| {
            let n = text.chars().count();
            let from = if right { at.saturating_sub(n) } else { at };
            for (k, c) in text.chars().enumerate() {
                if let Some(slot) = scale.get_mut(from + k) {
                    *slot = c;
                }
            }
        };
        let first = at(self.start);
        put(0, &first, false);
        let end = at(self.end);
        if self.width >= first.chars().count() + end.chars().count() + 2 {
            put(self.width, &end, true);
        }
        let mid = at(self.start + total / 2);
        if self.width >= 3 * first.chars().count().max(end.chars().count()) + 6 {
            put(self.width / 2 - mid.chars().count() / 2, &mid, false);
        }
        format!("{:>6} {}", "time", scale.into_iter().collect::<String>())
    }

    /// The bar of a step that ran over `span` (its own, or with its nested steps for a
    /// container): `folded` draws a container's bar for all it holds, `container` an unfolded
    /// one as a bracket.
    pub fn bar(
        &self,
        t: &Theme,
        span: Option<(i64, i64)>,
        folded: bool,
        container: bool,
        failed: bool,
    ) -> Vec<Span<'static>> {
        let Some((a, b)) = span else {
            return vec![Span::styled(
                format!("{:<w$}", "no time", w = self.width),
                t.style(Role::TextDim),
            )];
        };
        let x0 = self.column(a).min(self.width.saturating_sub(1));
        let x1 = self.column(b).max(x0 + 1).min(self.width);
        let len = x1 - x0;
        let (body, role) = if container && !folded {
            let body = if len <= 1 {
                "┃".to_owned()
            } else {
                format!("├{}┤", "─".repeat(len - 2))
            };
            (body, Role::Fold)
        } else if container {
            ("▓".repeat(len), Role::Fold)
        } else if failed {
            ("█".repeat(len), Role::StepError)
        } else {
            ("█".repeat(len), Role::Running)
        };
        let body = if len == 1 && !container {
            "▌".to_owned()
        } else {
            body
        };
        vec![
            Span::raw(" ".repeat(x0)),
            Span::styled(body, t.style(role)),
            Span::raw(" ".repeat(self.width - x1)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spans: &[Span<'_>]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn bars_sit_where_the_steps_ran_on_the_clock() {
        let t = Theme::bare();
        let w = Waterfall::new((1000, 2000), 1000, 10);
        assert_eq!(
            text(&w.bar(&t, Some((1000, 1500)), false, false, false)),
            "█████     "
        );
        assert_eq!(
            text(&w.bar(&t, Some((1500, 2000)), false, false, false)),
            "     █████"
        );
        assert_eq!(
            text(&w.bar(&t, Some((1200, 1200)), false, false, false)),
            "  ▌       "
        );
        assert_eq!(
            text(&w.bar(&t, Some((1000, 2000)), true, true, false)),
            "▓▓▓▓▓▓▓▓▓▓"
        );
        assert_eq!(
            text(&w.bar(&t, Some((1000, 2000)), false, true, false)),
            "├────────┤"
        );
        assert_eq!(text(&w.bar(&t, None, false, false, false)), "no time   ");
        assert_eq!(w.axis(), "  time 0s    1.0s");
        // Later in the run, the axis says how long after its start: labels at columns 0, the
        // middle (15, centred) and the end (30, right-aligned).
        let w = Waterfall::new((61_000, 62_000), 1000, 30);
        assert_eq!(
            w.axis(),
            format!("  time 1m00s{}1m00s{}1m01s", " ".repeat(8), " ".repeat(7))
        );
    }

    #[test]
    fn a_clock_of_one_instant_draws_without_dividing_by_zero() {
        let t = Theme::bare();
        let w = Waterfall::new((5, 5), 5, 4);
        assert_eq!(
            text(&w.bar(&t, Some((5, 5)), false, false, false))
                .chars()
                .count(),
            4
        );
    }
}
