//! `experiment`: one probe (ablate, restore or replay) against a baseline, or the baseline alone,
//! through the experiment engine; prints the verdict as text or the JSON of docs/experiments.md.
//! Also holds what `localize` shares with it: loading the run as the engine's subject, saying in
//! command-line words why the engine refuses, reporting batches a dead debugger left open, and
//! driving a plan with progress on stderr, every stop signal a cancel.

use super::args::{ExperimentArgs, InputArgs};
use super::common::{self, EXIT_FAILURE};
use crate::analysis::load::{Loaded, load_one};
use crate::analysis::model::{Run, StepId, UnitId, inert_block, inert_line};
use crate::analysis::report::Verdict;
use crate::config::Settings;
use crate::experiments::engine::drive::{Driven, run_to_end};
use crate::experiments::engine::{
    BatchState, Consent, Engine, EngineError, Plan, PlanError, Request, Subject, Target,
    file_holds_several,
};
use crate::experiments::event::{Event, EventKind, JobEnd, SampleEnd, Saved};
use crate::experiments::summary::{
    ExperimentSummary, attribution_summaries, experiment_summary, spent_over,
};
use anyhow::Context;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the subcommand.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    let settings = common::settings(&args.config, |o| {
        super::localize::runner_overrides(&args.runner, o)
    })?;
    let engine = engine(&settings)?;
    let (subject, _) = subject(
        &engine,
        &args.run,
        &args.input,
        |l| {
            let reference = crate::analysis::report::ReferenceChoice::FromRun;
            common::settle_outcome(l, &args.outcome, &reference);
        },
        |_| None,
    )?;
    let request = request(args)?;
    let plan = engine
        .plan(&subject, request)
        .map_err(|e| explain(e, &args.run))?;
    for note in plan.notes.iter().chain(&plan.left_out) {
        say(&format!("tdn-tui: {note}"));
    }
    close_left_open(&engine, &subject);
    let driven = drive(&engine, &plan, &args.run, !args.runner.json)?;
    let Some(job) = driven.outcome.as_ref() else {
        return Ok(stopped_at_once(driven.signal));
    };
    if let JobEnd::Failed(e) = &job.end {
        return Err(explain((**e).clone(), &args.run));
    }
    let Some(outcome) = &job.session else {
        anyhow::bail!("the experiment ended without a result");
    };
    let mut summary = experiment_summary(outcome, Some(subject.ledger.path.display().to_string()));
    summary.attributions = job
        .closed
        .as_ref()
        .map(attribution_summaries)
        .unwrap_or_default();
    if let JobEnd::Cancelled(why) = &job.end {
        say(&format!(
            "tdn-tui: cancelled ({}); the samples that finished are listed below. A cancelled batch concludes nothing: its samples and trials stay in the ledger, marked cancelled, and no attribution is written",
            inert_line(why)
        ));
    }
    let text = if args.runner.json {
        format!("{}\n", serde_json::to_string(&summary)?)
    } else {
        render(&summary, plan.rule_label.as_str(), &subject.run)
    };
    print_out(&text, driven.signal)?;
    if let Some(e) = &outcome.close_error {
        say(&format!(
            "tdn-tui: the batch's attributions were not written: {}",
            inert_line(&e.to_string())
        ));
    }
    let failed = summary.verdict == Some(Verdict::Error)
        || (summary.verdict.is_none() && summary.completed == 0)
        || outcome.not_saved > 0
        || outcome.close_error.is_some();
    Ok(exit_code(outcome.cancelled, driven.signal, failed))
}

/// The request the flags ask for.
fn request(args: &ExperimentArgs) -> anyhow::Result<Request> {
    let k = &args.kind;
    Ok(if !k.ablate.is_empty() {
        Request::Ablate(k.ablate.iter().map(|i| Target::Id(i.clone())).collect())
    } else if !k.restore.is_empty() {
        Request::Restore(k.restore.iter().map(|u| UnitId::from(u.as_str())).collect())
    } else if let Some(step) = &k.replay {
        let patch = match (&args.patch, &args.patch_file) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(f)
                    .with_context(|| format!("{}: cannot read the patch file", f.display()))?,
            ),
            (None, None) => None,
        };
        Request::Replay {
            from: StepId::from(step.as_str()),
            patch,
        }
    } else {
        Request::Baseline
    })
}

/// The engine of the settings, refusing (exit 2) when nothing can run: no runner, a command from
/// the current folder without `--yes`, a bad setting.
pub(super) fn engine(settings: &Settings) -> anyhow::Result<Engine> {
    let consent = if settings.yes {
        Consent::Given
    } else {
        Consent::NotGiven
    };
    let engine = Engine::new(settings, consent);
    engine.check().map_err(|e| explain(e, Path::new("")))?;
    Ok(engine)
}

/// Loads exactly one run and makes it the engine's subject, with the report `report` makes of it.
pub(super) fn subject(
    engine: &Engine,
    path: &Path,
    input: &InputArgs,
    settle: impl FnOnce(&mut Loaded),
    report: impl FnOnce(&Loaded) -> Option<crate::analysis::report::Report>,
) -> anyhow::Result<(Arc<Subject>, Loaded)> {
    let mut loaded = load_one(path, &common::load_options(input))?;
    settle(&mut loaded);
    let several = file_holds_several(1, input.index, loaded.source_format);
    let report = report(&loaded).map(Arc::new);
    let subject = engine.subject(
        Arc::new(loaded.run.clone()),
        report,
        path,
        several,
        loaded.source_format,
    );
    Ok((Arc::new(subject), loaded))
}

/// The engine's refusal in the command line's words: each rule's reason with the flag that
/// fixes it. `run` is the run file, named when the run itself is at fault.
pub(super) fn explain(e: EngineError, run: &Path) -> anyhow::Error {
    let msg = match &e {
        EngineError::NoRunner => "no runner: give the command that re-runs your agent with --runner 'CMD', or set [runner] command in tdn.toml (see docs/experiments.md)".to_owned(),
        EngineError::NeedsConsent { .. } => format!(
            "{e}; run it with --yes, or give the command on the command line"
        ),
        EngineError::Timeout(t) => format!(
            "--timeout '{t}' must be a positive number of seconds, at most {}",
            u32::MAX
        ),
        EngineError::TooManySamples { asked } => format!(
            "--samples '{asked}' asks for more than {0} runs of your agent per probe; give at most {0} (--samples N or [experiments] samples)",
            crate::experiments::engine::MAX_SAMPLES
        ),
        EngineError::FlipRule(f) => format!("--flip / [experiments] flip: {f}"),
        EngineError::NoFinalAnswer { .. } => format!("{}: {e}", run.display()),
        EngineError::Plan(p) => match p {
            PlanError::NothingProduced(i) => {
                let id = inert_line(i);
                format!("--ablate '{id}': {p} (--replay '{id}')")
            }
            PlanError::NoUnitOrStep(_) => format!("--ablate {p}"),
            PlanError::NoUnit(_) => format!("--restore {p}"),
            PlanError::NoStep(_) => format!("--replay {p}"),
            other => other.to_string(),
        },
        EngineError::NotCovered { .. } => format!(
            "{e} ([runner] runs in tdn.toml); give a runner that can re-run it with --runner 'CMD'"
        ),
        EngineError::Ledger { .. } => format!(
            "{e}; choose another file with --ledger PATH (or [ledger] path in tdn.toml)"
        ),
        other => other.to_string(),
    };
    anyhow::Error::msg(msg)
}

/// Writes a line to stderr; a closed terminal (after SIGHUP) is not an error worth dying for.
pub(super) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Prints the result; after a stop signal the terminal may be gone, which is not an error.
pub(super) fn print_out(text: &str, signal: Option<i32>) -> anyhow::Result<()> {
    match (common::write_stdout(text), signal) {
        (Err(_), Some(_)) | (Ok(_), _) => Ok(()),
        (Err(e), None) => Err(e),
    }
}

/// The exit status: 128 + the stop signal (130 for Ctrl-C, as shells report it), else 1 for a
/// measured failure, else 0.
pub(super) fn exit_code(cancelled: bool, signal: Option<i32>, failed: bool) -> ExitCode {
    let code = match signal {
        Some(s) => u8::try_from(128 + s).unwrap_or(EXIT_CANCELLED),
        None if cancelled => EXIT_CANCELLED,
        None if failed => EXIT_FAILURE,
        None => 0,
    };
    ExitCode::from(code)
}

/// Exit status after a cancel by Ctrl-C (128 + SIGINT).
const EXIT_CANCELLED: u8 = 130;

/// A second stop signal gave up waiting: nothing is printed but the exit status.
pub(super) fn stopped_at_once(signal: Option<i32>) -> ExitCode {
    say("tdn-tui: stopped at once; the samples still running were stopped and not recorded");
    exit_code(true, signal, true)
}

/// Reports the run's batches that a debugger left open (it was killed, or crashed) and closes
/// those whose session is gone, so their trials count; says which are still open.
pub(super) fn close_left_open(engine: &Engine, subject: &Subject) {
    let evidence = engine.evidence(subject, &[]);
    let ready = evidence.ready();
    for b in &evidence.open {
        let c = &b.cohort;
        let how = match b.state {
            BatchState::LeftByDeadSession => {
                "left open by a tdn-tui that stopped without closing it (killed, or crashed)"
            }
            BatchState::Stale => "left open by a session that ended without closing it",
            BatchState::Running | BatchState::Elsewhere => "open: another tdn-tui is running it",
            BatchState::MaybeRunning => {
                "open: its session may still be running (younger than the runner's time-out)"
            }
        };
        say(&format!(
            "tdn-tui: ledger batch {} of this run, {} trial(s), last sample {}: {how}",
            inert_line(&c.cohort),
            c.trials,
            inert_line(&c.last_finished_at)
        ));
    }
    if ready.is_empty() {
        return;
    }
    match engine.aggregate(subject, &ready) {
        Ok(closed) => {
            let n: usize = closed.iter().map(|c| c.attributions.len()).sum();
            say(&format!(
                "tdn-tui: closed {} batch(es) left open: {n} attribution(s) appended to '{}'",
                ready.len(),
                subject.ledger.path.display()
            ));
        }
        Err(e) => say(&format!(
            "tdn-tui: the batches left open were not closed: {}",
            inert_line(&e.to_string())
        )),
    }
}

/// Runs a plan to its end (any stop signal cancels it, stopping running samples), every
/// finished sample saved to the run's ledger before it is shown. With `progress`, one line per
/// finished sample (and the trials it formed) goes to stderr.
pub(super) fn drive(
    engine: &Engine,
    plan: &Plan,
    run: &Path,
    progress: bool,
) -> anyhow::Result<Driven> {
    let mut labels: Vec<String> = Vec::new();
    run_to_end(engine, plan, |ev| {
        if let EventKind::Started { probes, .. } = &ev.kind {
            labels = probes.iter().map(|p| p.label.clone()).collect();
        }
        // A sample held back for a ledger another process has locked is said even with --json
        // (on stderr): otherwise the command waits in silence, for as long as the lock is held.
        if progress || matches!(ev.kind, EventKind::SampleHeld { .. }) {
            print_progress(ev, &labels);
        }
    })
    .map_err(|e| explain(e, run))
}

fn print_progress(ev: &Event, labels: &[String]) {
    let saved = |s: &Saved| match s {
        Saved::Yes(r) => r
            .trials
            .iter()
            .chain(&r.refused)
            .map(|t| format!(" · {}", inert_line(t)))
            .collect(),
        Saved::No(why) => format!(" (not saved: {})", inert_line(&why.to_string())),
    };
    let label =
        |p: &crate::experiments::session::ProbeId| labels.get(p.0).map_or("?", String::as_str);
    match &ev.kind {
        EventKind::SampleFinished {
            probe,
            seed,
            end,
            spent,
        } => {
            let what = match end {
                SampleEnd::Answered { judged, .. } if judged.flipped => "flipped".to_owned(),
                SampleEnd::Answered { .. } => "same outcome".to_owned(),
                SampleEnd::Errored { error, .. } => {
                    format!("error: {}", inert_line(&error.message))
                }
                SampleEnd::Cancelled { .. } => "cancelled, its processes stopped".to_owned(),
            };
            say(&format!(
                "  {} seed {seed}: {what} ({}){}",
                label(probe),
                spent.words(),
                saved(end.saved())
            ));
        }
        EventKind::SampleHeld { probe, seed, why } => say(&format!(
            "  {} seed {seed}: finished, waiting for ledger lock: {}; it is shown once it is written (Ctrl-C gives up)",
            label(probe),
            inert_line(why)
        )),
        _ => {}
    }
}

fn render(s: &ExperimentSummary, comparator: &str, run: &Run) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut what = s.experiment.clone();
    for (i, u) in s.units.iter().enumerate() {
        let sep = if i == 0 { " " } else { ", " };
        let _ = write!(what, "{sep}'{}'", inert_line(u));
    }
    if let Some(step) = &s.from_step {
        let _ = write!(what, " from step '{}'", inert_line(step));
    }
    let _ = writeln!(
        out,
        "experiment: {what} ({} samples, flip rule '{}')",
        s.samples,
        inert_line(comparator)
    );
    let stable = if s.baseline.stable {
        "stable"
    } else if s.cancelled {
        "not known: the experiment was cancelled first"
    } else {
        "NOT stable"
    };
    let _ = writeln!(
        out,
        "baseline: {}/{} flipped, {}/{} completed: {stable}",
        s.baseline.flips, s.baseline.samples, s.baseline.completed, s.baseline.samples
    );
    match &s.claim {
        Some(c) => {
            let _ = writeln!(out, "{c}");
        }
        None if s.experiment == "baseline" => {
            let _ = writeln!(
                out,
                "the baseline alone makes no claim; its flips show how stable the unchanged scenario is"
            );
        }
        None => {
            let _ = writeln!(out, "no verdict: the session did not finish");
        }
    }
    if let Some(c) = &s.cost {
        let _ = writeln!(
            out,
            "cost: loops saved {}, tokens saved {} (medians against the baseline); a lone experiment has no placebo band, so it never shows a cost cause",
            c.loops_saved, c.tokens_saved
        );
    }
    if let Some(c) = s.class {
        let _ = writeln!(out, "class: {}", c.as_str());
    }
    let _ = writeln!(
        out,
        "spent: {} over {}",
        s.spent.total.words(),
        spent_over(s.spent.samples.len(), s.replayed_call.as_deref(), run)
    );
    for e in &s.errors {
        let _ = writeln!(
            out,
            "error in {} seed {}: {}",
            e.probe,
            e.seed,
            inert_line(&e.message)
        );
        if !e.stderr_tail.is_empty() {
            let _ = writeln!(out, "  stderr tail:\n{}", inert_block(&e.stderr_tail));
        }
    }
    if s.stopped > 0 {
        let _ = writeln!(
            out,
            "cancelled: {} sample(s) stopped while running (every process they started was killed); each is recorded in the ledger as cancelled and forms no trial",
            s.stopped
        );
    }
    if let Some(l) = &s.ledger {
        let _ = writeln!(out, "ledger: {}", inert_line(l));
    }
    for a in &s.attributions {
        let _ = writeln!(out, "  {}", attribution_line(a));
    }
    out
}

/// One attribution for people: the unit, its disposition and evidence level, the numbers.
pub(super) fn attribution_line(a: &crate::experiments::summary::AttributionSummary) -> String {
    format!(
        "attribution: '{}' {} · {} (effect {}, confidence {}; ledger line {})",
        inert_line(&a.unit),
        a.disposition,
        a.evidence_level,
        crate::analysis::js_number::js_number(a.effect),
        crate::analysis::js_number::js_number(a.confidence),
        a.line
    )
}
