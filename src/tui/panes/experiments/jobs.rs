//! How a job reads in the experiments pane: its status in the job list, and under it a summary
//! of its verdicts (the causal ones named first, so they are seen however many probes ran), then
//! each probe (those with a verdict first, the baseline they are judged against last) with a
//! glyph per sample, the verdict in words (the engine's sentence when it gives
//! one), the class and cost, its samples counted as they came out (answered, changed, errors,
//! cancelled, not run), the samples' answers, what each saved sample formed in the ledger,
//! stderr tails and samples the ledger could not save. Every line wraps to the pane. Reads only;
//! the verdicts are the engine's.

use super::state::{Counts, Job, JobState, ProbeRun, SampleState};
use super::words::{disposition_words, job_verdict, level_words, spent_words};
use crate::analysis::report::{ProbeResult, Verdict};
use crate::experiments::event::{JobEnd, SampleEnd, Saved};
use crate::experiments::intervention::Intervention;
use crate::experiments::summary::spent_over;
use crate::tui::app::App;
use crate::tui::theme::Role;
use crate::tui::widgets::inert_text::{clipped, wrap_spans};
use crate::tui::widgets::marks;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Lines of a stderr tail shown under an errored sample.
const STDERR_LINES: usize = 3;
/// The sample glyphs, as the pane and the help explain them.
pub const LEGEND: &str =
    "○ waiting  ◌ running  = same answer  Δ answer changed  ! error  ⊘ cancelled";
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
        SampleState::Done(SampleEnd::Answered { judged, .. }) if judged.flipped => {
            Span::styled(marks::SAMPLE_FLIPPED, t.style(Role::VerdictConfirmed))
        }
        SampleState::Done(SampleEnd::Answered { .. }) => {
            Span::styled(marks::SAMPLE_SAME, t.style(Role::Text))
        }
        SampleState::Done(SampleEnd::Errored { .. }) => {
            Span::styled(marks::VERDICT_ERROR, t.style(Role::VerdictError))
        }
        SampleState::Done(SampleEnd::Cancelled { .. }) => {
            Span::styled(marks::SAMPLE_CANCELLED, t.style(Role::Warning))
        }
    }
}

/// The job's row in the list (issue 26: what it found first): a finished job's verdict in words
/// with what it spent (`✔ removing 'policy-2019' changed the answer in 3 of 3 re-runs: a
/// confirmed cause · 7.2s, 3,600 tokens`), else what it asked for and where it is.
pub(super) fn job_row(app: &App, job: &Job) -> Vec<Span<'static>> {
    let t = &app.theme;
    let spent = job
        .spent()
        .map(|s| format!(" · {}", spent_words(&s)))
        .unwrap_or_default();
    if let (JobState::Ended(JobEnd::Finished), Some((v, sentence))) = (&job.state, job_verdict(job))
    {
        let (glyph, role) = verdict_mark(v);
        return vec![
            Span::styled(format!("{glyph} "), t.style(role)),
            Span::styled(sentence, t.style(Role::Text)),
            Span::styled(spent, t.style(Role::TextDim)),
        ];
    }
    let (status, role) = job_status(app, job);
    vec![
        Span::styled(format!("{}  ", job.label), t.style(Role::Text)),
        Span::styled(status, t.style(role)),
        Span::styled(spent, t.style(Role::TextDim)),
    ]
}

/// The job's state in words: starting, running (samples done of all), done, cancelled (how
/// many were stopped, how many never ran) or why it could not run.
pub(super) fn job_status(app: &App, job: &Job) -> (String, Role) {
    let spin = SPINNER
        .get(usize::try_from(app.tick % 4).unwrap_or(0))
        .copied()
        .unwrap_or("◌");
    let (done, total) = job.progress();
    match &job.state {
        JobState::Starting => (format!("{spin} starting"), Role::Running),
        JobState::Running => {
            let held = job
                .probes
                .iter()
                .flat_map(|p| &p.samples)
                .filter(|s| matches!(s, SampleState::Held(_)))
                .count();
            if held > 0 {
                // The legend under the list says what the glyph means.
                (
                    format!("{spin} running {done}/{total} samples · {held} {HELD}"),
                    Role::Warning,
                )
            } else {
                (
                    format!("{spin} running {done}/{total} samples"),
                    Role::Running,
                )
            }
        }
        JobState::Ended(JobEnd::Finished) => ("done".to_owned(), Role::Text),
        JobState::Ended(JobEnd::Cancelled(_)) => {
            let c = total_counts(job);
            (
                format!(
                    "cancelled: {} stopped while running, {} never ran",
                    c.cancelled, c.not_run
                ),
                Role::Warning,
            )
        }
        JobState::Ended(JobEnd::Failed(e)) => (
            format!("failed: {}", clipped(&e.to_string(), 200)),
            Role::Error,
        ),
    }
}

fn total_counts(job: &Job) -> Counts {
    let mut all = Counts::default();
    for p in &job.probes {
        let c = p.counts();
        all.answered += c.answered;
        all.changed += c.changed;
        all.errors += c.errors;
        all.cancelled += c.cancelled;
        all.running += c.running;
        all.not_run += c.not_run;
        all.not_saved += c.not_saved;
    }
    all
}

/// The words a verdict line uses for what a probe changed.
fn doing(i: &Intervention) -> String {
    i.describe()
}

/// `n answered (k changed), e errored, c cancelled, r running, w waiting` (`never ran` once the
/// job ended), leaving out what is zero (issue 26: samples shown running are never counted "not
/// run").
fn counts_text(c: Counts, ended: bool) -> String {
    let mut parts = vec![format!("{} answered ({} changed)", c.answered, c.changed)];
    if c.errors > 0 {
        parts.push(format!("{} errored", c.errors));
    }
    if c.cancelled > 0 {
        parts.push(format!(
            "{} cancelled (stopped while running, recorded as cancelled)",
            c.cancelled
        ));
    }
    if c.running > 0 {
        parts.push(format!("{} running", c.running));
    }
    if c.not_run > 0 {
        // Not started: waiting while the job runs, never run once it ended.
        parts.push(format!(
            "{} {}",
            c.not_run,
            if ended { "never ran" } else { "waiting" }
        ));
    }
    parts.join(", ")
}

fn para(app: &App, text: String, role: Role, width: usize, indent: &str) -> Vec<Line<'static>> {
    wrap_spans(vec![(text, app.theme.style(role))], width, indent)
}

/// The detail of a job: every line wrapped to `width`.
pub(super) fn job_lines(app: &App, job: &Job, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    if let JobState::Ended(JobEnd::Failed(e)) = &job.state {
        out.extend(para(
            app,
            format!("could not run: {}", clipped(&e.to_string(), 2000)),
            Role::Error,
            width,
            "  ",
        ));
    }
    if let JobState::Ended(JobEnd::Cancelled(why)) = &job.state {
        out.extend(para(
            app,
            format!(
                "cancelled ({}): running samples were stopped with every process they started and recorded as cancelled; samples not yet started never ran",
                clipped(why, 200)
            ),
            Role::Warning,
            width,
            "  ",
        ));
    }
    // What it found is the job's row, whole, above this; what it spent in full comes first.
    // A job belongs to the open run (opening another starts every pane over), which names
    // the call it re-sent.
    if let (Some(spent), Some(doc)) = (job.spent(), app.doc.as_ref()) {
        let (done, _) = job.progress();
        // A runner that re-sent one recorded call did not run the agent: say what it ran.
        let call = job
            .probes
            .iter()
            .flat_map(|p| &p.samples)
            .find_map(|s| match s {
                SampleState::Done(SampleEnd::Answered { judged, .. }) => {
                    judged.replayed_call.clone()
                }
                _ => None,
            });
        out.extend(para(
            app,
            format!(
                "spent: {} over {}",
                spent_words(&spent),
                spent_over(done, call.as_deref(), &doc.run)
            ),
            Role::Text,
            width,
            "  ",
        ));
    }
    // What closing its batch concluded in the ledger, each word with its meaning.
    for a in job
        .outcome
        .as_ref()
        .and_then(|o| o.closed.as_ref())
        .map_or(&[][..], |c| c.attributions.as_slice())
    {
        let tried = job
            .probes
            .iter()
            .find(|p| {
                p.info
                    .intervention
                    .units()
                    .iter()
                    .any(|u| u.as_str() == a.component_id)
                    || p.info.intervention.from_step().map(|s| s.as_str())
                        == Some(a.component_id.as_str())
            })
            .map(|p| &p.info.intervention);
        let (glyph, role) = super::ledger::disposition_mark(a.disposition.as_str());
        out.extend(wrap_spans(
            vec![
                (
                    format!("ledger: '{}' ", clipped(&a.component_id, 200)),
                    t.style(Role::Text),
                ),
                (
                    format!(
                        "{glyph} {}",
                        disposition_words(a.disposition, tried, super::ledger::failed_run(app))
                    ),
                    t.style(role),
                ),
                (
                    format!(
                        ", {}, effect {} (line {})",
                        level_words(a.evidence_level),
                        crate::analysis::js_number::js_number(a.effect),
                        a.line
                    ),
                    t.style(Role::TextDim),
                ),
            ],
            width,
            "  ",
        ));
    }
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
    if !job.probes.is_empty() {
        out.extend(para(app, legend, Role::TextDim, width, ""));
    }
    // The probes with a verdict to give come first, the baselines they are judged against after:
    // what a job found is read before how.
    let ordered = job
        .probes
        .iter()
        .filter(|p| p.info.intervention != Intervention::Baseline)
        .chain(
            job.probes
                .iter()
                .filter(|p| p.info.intervention == Intervention::Baseline),
        );
    for p in ordered {
        let mut spans = vec![(format!("{} ", p.info.label), t.style(Role::Heading))];
        spans.extend(p.samples.iter().map(|s| {
            let g = sample_glyph(app, s);
            (g.content.into_owned(), g.style)
        }));
        out.extend(wrap_spans(spans, width, "  "));
        let counts = p.counts();
        match (&p.result, &p.info.intervention) {
            (_, Intervention::Baseline) => out.extend(para(
                app,
                format!(
                    "  the unchanged run: {}{}",
                    counts_text(counts, !job.is_running()),
                    if counts.cancelled + counts.not_run == 0 {
                        "; a stable baseline changes none"
                    } else {
                        ""
                    }
                ),
                Role::TextDim,
                width,
                "    ",
            )),
            (Some(r), i) if r.verdict.is_some() => {
                let mut spans: Vec<(String, Style)> = vec![("  ".to_owned(), Style::default())];
                let line = verdict_line(app, r, &doing(i));
                match &p.claim {
                    // The engine's own sentence (influence.md §7 wording) after the glyph, then
                    // the class and cost.
                    Some(c) => {
                        let (glyph, role) = verdict_mark(r.verdict);
                        spans.push((glyph.to_owned(), t.style(role)));
                        spans.push((format!(" {}", clipped(c, 2000)), t.style(Role::Text)));
                        spans.extend(
                            line.into_iter()
                                .skip(2)
                                .map(|s| (s.content.into_owned(), s.style)),
                        );
                    }
                    None => {
                        spans.extend(line.into_iter().map(|s| (s.content.into_owned(), s.style)))
                    }
                }
                out.extend(wrap_spans(spans, width, "    "));
            }
            _ if counts.answered + counts.errors + counts.cancelled > 0 => out.extend(para(
                app,
                format!(
                    "  no verdict yet: {}",
                    counts_text(counts, !job.is_running())
                ),
                Role::TextDim,
                width,
                "    ",
            )),
            _ => {}
        }
        out.extend(sample_lines(app, p, width));
    }
    let flags = job.flags();
    if !flags.is_empty() {
        out.extend(para(
            app,
            format!("flags: {}", clipped(&flags.join(", "), 800)),
            Role::Warning,
            width,
            "  ",
        ));
    }
    out
}

/// The finished samples of a probe, one each, with what each spent (issue 26), its answer or
/// error, and what saving it formed in the ledger.
fn sample_lines(app: &App, p: &ProbeRun, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    for (i, state) in p.samples.iter().enumerate() {
        if let SampleState::Held(why) = state {
            out.extend(para(
                app,
                format!(
                    "  sample {i} {HELD} waiting for ledger lock: it is shown once it is written ({})",
                    clipped(why, 400)
                ),
                Role::Warning,
                width,
                "    ",
            ));
            continue;
        }
        let SampleState::Done(end) = state else {
            continue;
        };
        let spent = p
            .spent
            .get(i)
            .copied()
            .flatten()
            .map(|s| format!(" · {}", spent_words(&s)))
            .unwrap_or_default();
        match end {
            SampleEnd::Answered { judged, saved } => {
                let sim = judged
                    .similarity
                    .map(|x| format!(", similarity {x:.2}"))
                    .unwrap_or_default();
                let tag = if judged.flipped {
                    "answer changed"
                } else {
                    "same answer"
                };
                out.extend(wrap_spans(
                    vec![
                        (
                            format!("  sample {i} ({tag}{sim}){spent}: "),
                            t.style(Role::TextDim),
                        ),
                        (
                            clipped(&judged.output, 2000).into_owned(),
                            t.style(Role::Text),
                        ),
                    ],
                    width,
                    "    ",
                ));
                out.extend(saved_lines(app, saved, width));
            }
            SampleEnd::Errored { error, saved } => {
                out.extend(para(
                    app,
                    format!(
                        "  sample {i} error{spent}: {}",
                        clipped(&error.message, 2000)
                    ),
                    Role::Error,
                    width,
                    "    ",
                ));
                let tail: Vec<&str> = error.stderr_tail.lines().rev().take(STDERR_LINES).collect();
                for l in tail.into_iter().rev() {
                    out.extend(para(
                        app,
                        format!("    stderr: {}", clipped(l, 2000)),
                        Role::TextDim,
                        width,
                        "      ",
                    ));
                }
                out.extend(saved_lines(app, saved, width));
            }
            SampleEnd::Cancelled { why, saved } => {
                out.extend(para(
                    app,
                    format!(
                        "  sample {i} cancelled ({}){spent}: stopped with every process started; counts for nothing",
                        clipped(why, 200)
                    ),
                    Role::Warning,
                    width,
                    "    ",
                ));
                if let Saved::No(e) = saved {
                    out.extend(not_saved_lines(app, &e.to_string(), width));
                }
            }
        }
    }
    out
}

/// What saving a sample formed in the ledger, or why it was not saved.
fn saved_lines(app: &App, saved: &Saved, width: usize) -> Vec<Line<'static>> {
    match saved {
        Saved::Yes(r) => r
            .trials
            .iter()
            .chain(&r.refused)
            .flat_map(|l| {
                para(
                    app,
                    format!("    ledger: {}", clipped(l, 800)),
                    Role::TextDim,
                    width,
                    "      ",
                )
            })
            .collect(),
        Saved::No(e) => not_saved_lines(app, &e.to_string(), width),
    }
}

/// A sample the ledger could not save: marked, with the reason; it forms no trial.
fn not_saved_lines(app: &App, why: &str, width: usize) -> Vec<Line<'static>> {
    para(
        app,
        format!(
            "    not saved to the ledger, so it forms no trial: {}",
            clipped(why, 400)
        ),
        Role::Warning,
        width,
        "      ",
    )
}
