//! The experiments pane: jobs started from the screen (ablation of the selected suspect or unit,
//! restoration of a dropped unit, replay from a step, the whole shortlist, localize) with live
//! progress per sample, outputs, stderr tails, verdicts and classes, what each saved sample formed
//! in the attribution ledger, and the ledger's rows (`experiments_ledger`). Its state changes only
//! through [`ExperimentEvent`]s and the [`LedgerHistory`] from the experiment port; the verdicts
//! and dispositions shown are the runner's and the ledger's, never computed here.

use super::super::action::Action;
use super::super::app::{App, Pane};
use super::super::experiment_port::Target;
use super::super::experiment_port::{
    ExperimentEvent, JobEnd, JobId, LedgerHistory, ProbeInfo, Request, SampleOutcome,
};
use super::super::keymap::Scope;
use super::super::render::pane_block;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::widgets::scroll_list::window;
use super::experiments_ledger;
use crate::analysis::report::{ProbeResult, Verdict};
use crate::experiments::spec::ExperimentKind;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::cell::Cell;
use std::collections::HashMap;

/// Most samples per probe the pane keeps track of (a runner reporting more is ignored beyond).
const MAX_SAMPLES: usize = 1000;
/// Lines of a stderr tail shown under an errored sample.
const STDERR_LINES: usize = 3;
/// Spinner frames for running work, one per tick.
const SPINNER: [&str; 4] = ["◜", "◝", "◞", "◟"];

/// One sample's state.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleState {
    /// Not started.
    Waiting,
    /// Started.
    Running,
    /// Ended.
    Done(SampleOutcome),
}

/// One probe's progress.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRun {
    /// What it is.
    pub info: ProbeInfo,
    /// Its samples in seed order.
    pub samples: Vec<SampleState>,
    /// Its verdict once known.
    pub result: Option<ProbeResult>,
    /// The verdict as the engine words it.
    pub claim: Option<String>,
}

/// Where a job is.
#[derive(Clone, Debug, PartialEq)]
pub enum JobState {
    /// Asked for; no plan has arrived yet.
    Starting,
    /// Samples are running.
    Running,
    /// Over.
    Ended(JobEnd),
}

/// A job started in this session.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Its number.
    pub id: JobId,
    /// What was asked.
    pub request: Request,
    /// Its probes.
    pub probes: Vec<ProbeRun>,
    /// Where it is.
    pub state: JobState,
    /// Flags such as `baseline-unstable`.
    pub flags: Vec<String>,
}

/// What the experiments pane remembers.
#[derive(Debug, Default)]
pub struct ExperimentsState {
    /// Jobs of this session, oldest first.
    pub jobs: Vec<Job>,
    /// What the run's ledger holds: attributions, open batches, trials.
    pub ledger: LedgerHistory,
    /// Why the ledger could not be read, or a note about it.
    pub ledger_note: Option<String>,
    /// Selected row: jobs newest first, then the ledger's rows.
    pub cursor: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
    /// The user has confirmed the command once this session.
    pub consented: bool,
    /// The latest result per target key (`step:ID`, `unit:ID`), shown beside suspects and
    /// dropped units.
    pub results: HashMap<String, ProbeResult>,
    /// The runner in one line (its command and origin, or why there is none).
    pub runner_note: String,
    /// The last job number used.
    pub last_job: u64,
}

impl ExperimentsState {
    /// Starts tracking a new job and returns its id.
    pub fn start(&mut self, request: Request) -> JobId {
        self.last_job += 1;
        let id = JobId(self.last_job);
        self.jobs.push(Job {
            id,
            request,
            probes: Vec::new(),
            state: JobState::Starting,
            flags: Vec::new(),
        });
        self.cursor = 0;
        id
    }

    /// Rows listed: jobs, then the ledger's rows.
    pub fn row_count(&self) -> usize {
        self.jobs.len() + experiments_ledger::row_count(&self.ledger)
    }

    /// The ledger row at a row of the list, if it is one.
    pub fn ledger_row_at(&self, row: usize) -> Option<experiments_ledger::LedgerRow> {
        row.checked_sub(self.jobs.len())
            .and_then(|i| experiments_ledger::row_at(&self.ledger, i))
    }

    /// The open batches the ledger marked ready to aggregate.
    pub fn ready_cohorts(&self) -> Vec<String> {
        self.ledger
            .open_cohorts
            .iter()
            .filter(|c| c.ready)
            .map(|c| c.cohort.clone())
            .collect()
    }

    /// The job at a row (rows list the newest job first).
    pub fn job_at(&self, row: usize) -> Option<&Job> {
        let n = self.jobs.len();
        if row < n {
            self.jobs.get(n - 1 - row)
        } else {
            None
        }
    }

    /// Applies one event; events for unknown jobs or out-of-range positions are ignored.
    pub fn apply(&mut self, ev: &ExperimentEvent) {
        let Some(job) = self.jobs.iter_mut().find(|j| j.id == ev.job()) else {
            return;
        };
        match ev {
            ExperimentEvent::Planned { probes, .. } => {
                job.probes = probes
                    .iter()
                    .map(|p| ProbeRun {
                        info: p.clone(),
                        samples: vec![SampleState::Waiting; p.samples.min(MAX_SAMPLES)],
                        result: None,
                        claim: None,
                    })
                    .collect();
                job.state = JobState::Running;
            }
            ExperimentEvent::SampleStarted { probe, sample, .. } => {
                if let Some(slot) = sample_slot(job, *probe, *sample) {
                    *slot = SampleState::Running;
                }
            }
            ExperimentEvent::SampleFinished {
                probe,
                sample,
                outcome,
                ..
            } => {
                if let Some(slot) = sample_slot(job, *probe, *sample) {
                    *slot = SampleState::Done(outcome.clone());
                }
            }
            ExperimentEvent::ProbeFinished {
                probe,
                result,
                claim,
                ..
            } => {
                if let Some(p) = job.probes.get_mut(*probe) {
                    p.result = Some(result.clone());
                    if claim.is_some() {
                        p.claim = claim.clone();
                    }
                    if let Some(t) = &p.info.target {
                        self.results.insert(t.key(), result.clone());
                    }
                }
            }
            ExperimentEvent::JobFinished { end, flags, .. } => {
                job.state = JobState::Ended(end.clone());
                job.flags = flags.clone();
            }
        }
    }
}

fn sample_slot(job: &mut Job, probe: usize, sample: usize) -> Option<&mut SampleState> {
    let p = job.probes.get_mut(probe)?;
    if sample >= p.samples.len() && sample < MAX_SAMPLES {
        p.samples.resize(sample + 1, SampleState::Waiting);
    }
    p.samples.get_mut(sample)
}

/// The glyph and role of a verdict.
pub fn verdict_mark(v: Option<Verdict>) -> (&'static str, Role) {
    match v {
        Some(Verdict::Confirmed) => ("✔", Role::VerdictConfirmed),
        Some(Verdict::NotConfirmed) => ("○", Role::VerdictNotConfirmed),
        Some(Verdict::Inconclusive) => ("?", Role::VerdictInconclusive),
        Some(Verdict::Error) => ("!", Role::VerdictError),
        None => ("·", Role::TextDim),
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
            "○ NOT CONFIRMED",
            Role::VerdictNotConfirmed,
            format!(
                ": the outcome did not change in {n} re-runs; the rank stays a correlational proxy"
            ),
        ),
        Some(Verdict::Inconclusive) => (
            "? INCONCLUSIVE",
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
            "· NOT PROBED",
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
        SampleState::Waiting => Span::styled("○", t.style(Role::TextDim)),
        SampleState::Running => Span::styled("◌", t.style(Role::Running)),
        SampleState::Done(SampleOutcome::Answer { flipped: true, .. }) => {
            Span::styled("✗", t.style(Role::VerdictConfirmed))
        }
        SampleState::Done(SampleOutcome::Answer { .. }) => Span::styled("●", t.style(Role::Text)),
        SampleState::Done(SampleOutcome::Error { .. }) => {
            Span::styled("!", t.style(Role::VerdictError))
        }
    }
}

fn job_status(app: &App, job: &Job) -> Span<'static> {
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
            Span::styled(
                format!("{spin} running {done}/{total} samples"),
                t.style(Role::Running),
            )
        }
        JobState::Ended(JobEnd::Finished) => Span::styled("done", t.style(Role::Text)),
        JobState::Ended(JobEnd::Cancelled) => Span::styled("cancelled", t.style(Role::Warning)),
        JobState::Ended(JobEnd::Failed(m)) => {
            Span::styled(format!("failed: {}", clipped(m, 80)), t.style(Role::Error))
        }
    }
}

/// Draws the experiments pane.
pub fn render(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    let t = &app.theme;
    let ex = &app.experiments;
    let running = ex
        .jobs
        .iter()
        .filter(|j| !matches!(j.state, JobState::Ended(_)))
        .count();
    let n = ex.jobs.len();
    let title = format!(
        "{n} job{}, {running} running",
        if n == 1 { "" } else { "s" }
    );
    let block = pane_block(app, Pane::Experiments, focused, &title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let list_h = (ex.row_count() + 3)
        .min(usize::from(inner.height) / 2)
        .max(4);
    let [top, bottom] = Layout::vertical([
        Constraint::Length(u16::try_from(list_h).unwrap_or(u16::MAX)),
        Constraint::Min(0),
    ])
    .areas(inner);

    let mut lines = vec![Line::styled(
        clipped(&ex.runner_note, width).into_owned(),
        t.style(Role::TextDim),
    )];
    if ex.row_count() == 0 {
        let k = |a: Action| {
            app.keymap
                .first_key(&[Scope::Global], &a)
                .unwrap_or_else(|| a.name().to_owned())
        };
        lines.extend(wrap_spans(
            vec![(
                format!(
                    "No experiments yet. Select a suspect and press {} to re-run your agent without it; {} restores a dropped unit (Dropped pane), {} replays from the selected step, {} runs the whole pipeline.",
                    k(Action::Ablate),
                    k(Action::Restore),
                    k(Action::Replay),
                    k(Action::Localize)
                ),
                t.style(Role::Text),
            )],
            width,
            "",
        ));
        if let Some(p) = &ex.ledger.path {
            lines.extend(wrap_spans(
                vec![(
                    format!(
                        "Each re-run is saved to the attribution ledger '{}' before it is shown.",
                        clipped(p, 300)
                    ),
                    t.style(Role::TextDim),
                )],
                width,
                "",
            ));
        }
        if let Some(e) = &ex.ledger_note {
            lines.extend(wrap_spans(
                vec![(
                    format!("ledger: {}", clipped(e, 300)),
                    t.style(Role::Warning),
                )],
                width,
                "  ",
            ));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    if let Some(e) = &ex.ledger_note {
        lines[0] = Line::styled(
            clipped(&format!("{} · ledger: {e}", ex.runner_note), width).into_owned(),
            t.style(Role::TextDim),
        );
    }
    let rows_h = usize::from(top.height).saturating_sub(1);
    let cursor = ex.cursor.min(ex.row_count().saturating_sub(1));
    let range = window(&ex.offset, cursor, rows_h, ex.row_count());
    for r in range {
        let mut spans = Vec::new();
        if let Some(job) = ex.job_at(r) {
            let mark = if r == cursor { "▶" } else { " " };
            spans.push(Span::styled(
                format!("{mark}#{:<3}", job.id.0),
                t.style(Role::TextDim),
            ));
            spans.push(Span::styled(
                format!("{}  ", clipped(&job.request.label(), width / 2)),
                t.style(Role::Text),
            ));
            spans.push(job_status(app, job));
        } else if let Some(row) = ex.ledger_row_at(r) {
            spans = experiments_ledger::row_spans(app, &ex.ledger, row, width);
        }
        let mut line = Line::from(spans);
        if r == cursor {
            let role = if focused {
                Role::Selection
            } else {
                Role::SelectionInactive
            };
            let w = line.width();
            if w < width {
                line.spans.push(Span::raw(" ".repeat(width - w)));
            }
            line = line.patch_style(t.style(role));
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), top);
    let detail = match ex.job_at(cursor) {
        Some(job) => job_lines(app, job, width),
        None => ex
            .ledger_row_at(cursor)
            .map(|row| experiments_ledger::detail_lines(app, &ex.ledger, row, width))
            .unwrap_or_default(),
    };
    frame.render_widget(Paragraph::new(detail), bottom);
}

fn job_lines(app: &App, job: &Job, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = vec![Line::styled(
        "○ waiting  ◌ running  ● same answer  ✗ flipped  ! error",
        t.style(Role::TextDim),
    )];
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
