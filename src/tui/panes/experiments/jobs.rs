//! How a job reads in the experiments pane: its status in the job list, and under it each probe
//! with a glyph per sample, the verdict in words (the engine's sentence when it gives one), the
//! class and cost, the samples' answers, what each saved sample formed in the ledger, stderr
//! tails and samples the ledger could not save. Reads only; the verdicts are the engine's.

use super::state::{Job, JobState, SampleState};
use crate::analysis::report::{ProbeResult, Verdict};
use crate::experiments::spec::ExperimentKind;
use crate::tui::app::App;
use crate::tui::experiment_port::{JobEnd, SampleOutcome, Target};
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
use crate::tui::widgets::marks;
use ratatui::text::{Line, Span};

/// Lines of a stderr tail shown under an errored sample.
const STDERR_LINES: usize = 3;
/// The sample glyphs, as the pane and the help explain them.
pub const LEGEND: &str = "○ waiting  ◌ running  = same answer  Δ answer changed  ! error";
/// The glyph of a sample held back until the ledger's lock is granted.
pub const HELD: &str = marks::SAMPLE_HELD;
/// Spinner frames for running work, one per tick.
const SPINNER: [&str; 4] = ["◜", "◝", "◞", "◟"];

/// The glyph and role of a verdict.
pub fn verdict_mark(v: Option<Verdict>) -> (&'static str, Role) {
    match v {
        Some(Verdict::Confirmed) => (marks::VERDICT_CAUSAL, Role::VerdictConfirmed),
        Some(Verdict::NotConfirmed) => (marks::VERDICT_NOT_CONFIRMED, Role::VerdictNotConfirmed),
        Some(Verdict::Inconclusive) => (marks::VERDICT_INCONCLUSIVE, Role::VerdictInconclusive),
        Some(Verdict::Error) => (marks::VERDICT_ERROR, Role::VerdictError),
        None => (marks::NOT_PROBED, Role::TextDim),
    }
}

/// The verdict in words: capitals first (CAUSAL / NOT CONFIRMED / INCONCLUSIVE / ERROR), then the
/// intervention and the numbers; a confirmation adds the mean similarity ± stdev.
pub fn verdict_line(app: &App, r: &ProbeResult, intervention: &str) -> Vec<Span<'static>> {
    let t = &app.theme;
    let n = r.samples;
    let (head, role, rest) = match r.verdict {
        Some(Verdict::Confirmed) => {
            let sim = r
                .similarity
                .map(|s| format!(" (similarity {:.3} ± {:.3})", s.mean, s.stdev))
                .unwrap_or_default();
            (
                "✔ CAUSAL",
                Role::VerdictConfirmed,
                format!(
                    ": {intervention} flipped the answer in {}/{n} samples{sim}",
                    r.flips
                ),
            )
        }
        Some(Verdict::NotConfirmed) => (
            "∅ NOT CONFIRMED",
            Role::VerdictNotConfirmed,
            format!(
                ": the outcome did not change in {n} re-runs; the rank stays a correlational proxy"
            ),
        ),
        Some(Verdict::Inconclusive) => (
            "± INCONCLUSIVE",
            Role::VerdictInconclusive,
            format!(
                ": {}/{n} flipped, {}/{n} completed; below majority, errors or an unstable baseline: raise samples or check stability",
                r.flips, r.completed
            ),
        ),
        Some(Verdict::Error) => (
            "! ERROR",
            Role::VerdictError,
            ": no sample completed, nothing was measured: check the runner".to_owned(),
        ),
        None => (
            "– NOT PROBED",
            Role::TextDim,
            ": listed, not re-run within the budget".to_owned(),
        ),
    };
    let mut spans = vec![
        Span::styled(head, t.style(role)),
        Span::styled(rest, t.style(Role::Text)),
    ];
    if let Some(c) = r.class {
        spans.push(Span::styled(
            format!(" · class {}", c.as_str()),
            t.style(Role::TextDim),
        ));
    }
    if let Some(c) = r.cost.filter(|c| c.reduced_cost_on_removal) {
        spans.push(Span::styled(
            format!(" · removal reduced cost ({:.1} loops saved)", c.loops_saved),
            t.style(Role::TextDim),
        ));
    }
    spans
}

fn sample_glyph(app: &App, s: &SampleState) -> Span<'static> {
    let t = &app.theme;
    match s {
        SampleState::Waiting => Span::styled(marks::SAMPLE_WAITING, t.style(Role::TextDim)),
        SampleState::Running => Span::styled(marks::SAMPLE_RUNNING, t.style(Role::Running)),
        SampleState::Held(_) => Span::styled(HELD, t.style(Role::Warning)),
        SampleState::Done(SampleOutcome::Answer { flipped: true, .. }) => {
            Span::styled(marks::SAMPLE_FLIPPED, t.style(Role::VerdictConfirmed))
        }
        SampleState::Done(SampleOutcome::Answer { .. }) => {
            Span::styled(marks::SAMPLE_SAME, t.style(Role::Text))
        }
        SampleState::Done(SampleOutcome::Error { .. }) => {
            Span::styled("!", t.style(Role::VerdictError))
        }
    }
}

pub(super) fn job_status(app: &App, job: &Job) -> Span<'static> {
    let t = &app.theme;
    let spin = SPINNER
        .get(usize::try_from(app.tick % 4).unwrap_or(0))
        .copied()
        .unwrap_or("◌");
    match &job.state {
        JobState::Starting => Span::styled(format!("{spin} starting"), t.style(Role::Running)),
        JobState::Running => {
            let total: usize = job.probes.iter().map(|p| p.samples.len()).sum();
            let done: usize = job
                .probes
                .iter()
                .flat_map(|p| &p.samples)
                .filter(|s| matches!(s, SampleState::Done(_)))
                .count();
            let held = job
                .probes
                .iter()
                .flat_map(|p| &p.samples)
                .filter(|s| matches!(s, SampleState::Held(_)))
                .count();
            if held > 0 {
                Span::styled(
                    // The legend under the list says what the glyph means.
                    format!("{spin} running {done}/{total} samples · {held} {HELD}"),
                    t.style(Role::Warning),
                )
            } else {
                Span::styled(
                    format!("{spin} running {done}/{total} samples"),
                    t.style(Role::Running),
                )
            }
        }
        JobState::Ended(JobEnd::Finished) => Span::styled("done", t.style(Role::Text)),
        JobState::Ended(JobEnd::Cancelled) => Span::styled("cancelled", t.style(Role::Warning)),
        JobState::Ended(JobEnd::Failed(m)) => {
            Span::styled(format!("failed: {}", clipped(m, 80)), t.style(Role::Error))
        }
    }
}
pub(super) fn job_lines(app: &App, job: &Job, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let held = job
        .probes
        .iter()
        .flat_map(|p| &p.samples)
        .any(|s| matches!(s, SampleState::Held(_)));
    let legend = if held {
        format!("{LEGEND}  {HELD} waiting for ledger lock")
    } else {
        LEGEND.to_owned()
    };
    let mut out = wrap_spans(vec![(legend, t.style(Role::TextDim))], width, "");
    for p in &job.probes {
        let mut spans = vec![Span::styled(
            format!("{:<28} ", clipped(&p.info.label, 28)),
            t.style(Role::Heading),
        )];
        spans.extend(p.samples.iter().map(|s| sample_glyph(app, s)));
        out.push(Line::from(spans));
        match (&p.result, p.info.kind) {
            (Some(r), ExperimentKind::Baseline) => out.extend(wrap_spans(
                vec![(
                    format!(
                        "  the unchanged run: {}/{} answers changed, {} errors (a stable baseline changes none)",
                        r.flips, r.samples, r.errors
                    ),
                    t.style(Role::TextDim),
                )],
                width,
                "    ",
            )),
            (Some(r), kind) => {
                let intervention = match (kind, &p.info.target) {
                    (ExperimentKind::Restore, _) => "restoring it",
                    (ExperimentKind::Replay, _) => "replaying",
                    (_, Some(Target::Step(_))) => "removing its units",
                    _ => "removing it",
                };
                let mut spans = vec![Span::raw("  ")];
                let line = verdict_line(app, r, intervention);
                match &p.claim {
                    // The engine's own sentence (influence.md §7 wording) after the glyph, then
                    // the class and cost.
                    Some(c) => {
                        let (glyph, role) = verdict_mark(r.verdict);
                        spans.push(Span::styled(glyph, t.style(role)));
                        spans.push(Span::styled(format!(" {}", clipped(c, 2000)), t.style(Role::Text)));
                        spans.extend(line.into_iter().skip(2));
                    }
                    None => spans.extend(line),
                }
                out.extend(wrap_line(spans, width));
            }
            (None, _) => {}
        }
        out.extend(sample_lines(app, &p.samples, width));
    }
    if !job.flags.is_empty() {
        out.push(Line::styled(
            format!("flags: {}", clipped(&job.flags.join(", "), 400)),
            t.style(Role::Warning),
        ));
    }
    out
}

/// The finished samples of a probe; consecutive samples with the same answer share a line.
fn sample_lines(app: &App, samples: &[SampleState], width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    let mut i = 0;
    while i < samples.len() {
        if let Some(SampleState::Held(why)) = samples.get(i) {
            out.extend(wrap_spans(
                vec![(
                    format!(
                        "  sample {i} {HELD} waiting for ledger lock: it is shown once it is written ({})",
                        clipped(why, 400)
                    ),
                    t.style(Role::Warning),
                )],
                width,
                "    ",
            ));
            i += 1;
            continue;
        }
        let Some(SampleState::Done(outcome)) = samples.get(i) else {
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while matches!(samples.get(j), Some(SampleState::Done(o)) if o == outcome) {
            j += 1;
        }
        let which = if j - i == 1 {
            format!("sample {i}")
        } else {
            format!("samples {i}-{}", j - 1)
        };
        match outcome {
            SampleOutcome::Answer {
                output,
                similarity,
                flipped,
                not_saved,
                ledger,
            } => {
                let sim = similarity
                    .map(|x| format!(", similarity {x:.2}"))
                    .unwrap_or_default();
                let tag = if *flipped { "flipped" } else { "same" };
                let head = format!("  {which} ({tag}{sim}): ");
                let room = width.saturating_sub(head.chars().count());
                out.push(Line::from(vec![
                    Span::styled(head, t.style(Role::TextDim)),
                    Span::styled(clipped(output, room).into_owned(), t.style(Role::Text)),
                ]));
                if let Some(why) = not_saved {
                    out.extend(not_saved_lines(app, why, width));
                }
                for l in ledger {
                    out.push(Line::styled(
                        format!("    ledger: {}", clipped(l, width.saturating_sub(12))),
                        t.style(Role::TextDim),
                    ));
                }
            }
            SampleOutcome::Error {
                message,
                stderr_tail,
                not_saved,
            } => {
                out.extend(wrap_spans(
                    vec![(
                        format!("  {which} error: {}", clipped(message, 2000)),
                        t.style(Role::Error),
                    )],
                    width,
                    "    ",
                ));
                let tail: Vec<&str> = stderr_tail.lines().rev().take(STDERR_LINES).collect();
                for l in tail.into_iter().rev() {
                    out.push(Line::styled(
                        format!("    stderr: {}", clipped(l, width.saturating_sub(12))),
                        t.style(Role::TextDim),
                    ));
                }
                if let Some(why) = not_saved {
                    out.extend(not_saved_lines(app, why, width));
                }
            }
        }
        i = j;
    }
    out
}

/// A sample the ledger could not save: marked, with the reason; it forms no trial.
fn not_saved_lines(app: &App, why: &str, width: usize) -> Vec<Line<'static>> {
    wrap_spans(
        vec![(
            format!(
                "    not saved to the ledger, so it forms no trial: {}",
                clipped(why, 400)
            ),
            app.theme.style(Role::Warning),
        )],
        width,
        "      ",
    )
}

fn wrap_line(spans: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    wrap_spans(
        spans
            .into_iter()
            .map(|s| (s.content.into_owned(), s.style))
            .collect(),
        width,
        "    ",
    )
}
