//! Context window (docs/how-it-decides.md, "Detect"): a model step whose prompt filled
//! [`CONTEXT_FULL_SHARE`] or more of its window. The prompt size is `usage.input_tokens`, else
//! the sum of the `tokens` of the units it was sent; the window is the step's `context_window`,
//! else the run's `model.context_window`. No I/O.

use super::say::step;
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::{Run, Step, StepKind};
use crate::analysis::params::{CONTEXT_FULL, CONTEXT_FULL_SHARE};

/// A nearly full context window.
pub struct ContextWindow;

fn prompt_tokens(run: &Run, s: &Step) -> Option<u64> {
    if let Some(n) = s.usage().and_then(|u| u.input_tokens) {
        return Some(n);
    }
    let ctx = s.context.as_ref()?;
    let mut any = false;
    let mut sum: u64 = 0;
    for id in &ctx.sent {
        if let Some(t) = run.unit(id.as_str()).and_then(|u| u.tokens) {
            any = true;
            sum = sum.saturating_add(t);
        }
    }
    any.then_some(sum)
}

/// A token count as a float, exact below 2^53 and close above, without an `as` cast.
fn float(x: u64) -> f64 {
    let hi = u32::try_from(x >> 32).unwrap_or(u32::MAX);
    let lo = u32::try_from(x & 0xFFFF_FFFF).unwrap_or(0);
    f64::from(hi) * 4_294_967_296.0 + f64::from(lo)
}

/// `a / b` for token counts.
fn share(a: u64, b: u64) -> f64 {
    float(a) / float(b)
}

impl Detector for ContextWindow {
    fn id(&self) -> DetectorId {
        DetectorId::ContextWindow
    }

    fn doc(&self) -> &'static str {
        "A prompt that filled 95% or more of the model's context window."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            if !matches!(s.kind, StepKind::Llm | StepKind::Agent) {
                continue;
            }
            let (Some(tokens), Some(window)) = (prompt_tokens(run, s), run.context_window_at(s))
            else {
                continue;
            };
            if window == 0 || share(tokens, window) < CONTEXT_FULL_SHARE {
                continue;
            }
            let pct = (share(tokens, window) * 100.0).floor();
            let mut fi = Finding::new(
                i,
                Category::ContextFull,
                DetectorId::ContextWindow,
                CONTEXT_FULL,
                Nature::Suspect,
                format!("the prompt filled {pct}% of the context window"),
            )
            .because(format!(
                "{} sent {tokens} input tokens to a model with a {window}-token window ({pct}% full); context may have been cut or crowded out",
                step(run, i)
            ));
            if let Some(ctx) = &s.context
                && let Some(avail) = &ctx.available
            {
                let dropped = avail.iter().filter(|u| !ctx.sent.contains(u)).count();
                if dropped > 0 {
                    fi = fi.because(format!(
                        "{dropped} of {} available context units were not sent at this step",
                        avail.len()
                    ));
                }
            }
            out.push(fi);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;

    #[test]
    fn a_prompt_at_95_percent_or_more_is_flagged() {
        let run = RunBuilder::failed()
            .window(128_000)
            .llm("s1", "a")
            .input_tokens(121_600)
            .llm("s2", "b")
            .input_tokens(121_599)
            .build();
        let found = facts_for(&run, |f| ContextWindow.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (0, Category::ContextFull)
        );
        assert!(found[0].evidence[0].contains("121600 input tokens"));
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        assert_eq!(share(u64::MAX, u64::MAX), 1.0);
        assert!(share(1, u64::MAX) < 1e-18);
        assert_eq!(float(5_000_000_000), 5e9);
    }

    #[test]
    fn no_window_or_room_to_spare_is_not_flagged() {
        let no_window = RunBuilder::failed()
            .llm("s1", "a")
            .input_tokens(1_000_000)
            .build();
        assert!(facts_for(&no_window, |f| ContextWindow.detect(f)).is_empty());
        let zero = RunBuilder::failed()
            .window(0)
            .llm("s1", "a")
            .input_tokens(5)
            .build();
        assert!(facts_for(&zero, |f| ContextWindow.detect(f)).is_empty());
    }
}
