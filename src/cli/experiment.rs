//! `experiment`: one probe (ablate, restore or replay) against a baseline, or the baseline alone,
//! through the user's runner; prints the verdict as text or the JSON of docs/experiments.md.
//! Also holds what `localize` shares with it: loading the run for an experiment, opening its
//! attribution ledger, and driving a session with progress on stderr and Ctrl-C as cancel.

use super::args::ExperimentArgs;
use super::common::{self, EXIT_FAILURE};
use crate::analysis::import::SourceFormat;
use crate::analysis::load::{Loaded, load_one};
use crate::analysis::model::{Run, StepContext, inert_block, inert_line};
use crate::analysis::report::Verdict;
use crate::config::Settings;
use crate::experiments::headless::run_to_end;
use crate::experiments::ledger::{Closed, Location};
use crate::experiments::session::{self, SessionDeps, SessionOutcome, SessionPlan, TrialEvent};
use crate::experiments::setup::{self, Prepared};
use crate::experiments::summary::{ExperimentSummary, experiment_summary};
use crate::experiments::target::{Target, probe_for};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status after Ctrl-C cancelled the experiments (128 + SIGINT, as shells report it).
pub(super) const EXIT_CANCELLED: u8 = 130;

/// Runs the subcommand.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    let settings = common::settings(&args.config, |o| {
        super::localize::runner_overrides(&args.runner, o)
    })?;
    let prepared = setup::prepare(&settings)?;
    let ex = load_for_experiment(&args.run, &args.input, &settings)?;
    let k = &args.kind;
    let target = if !k.ablate.is_empty() {
        Target::Ablate(k.ablate.clone())
    } else if !k.restore.is_empty() {
        Target::Restore(k.restore.clone())
    } else if let Some(step) = &k.replay {
        let patch = match (&args.patch, &args.patch_file) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(f)
                    .with_context(|| format!("{}: cannot read the patch file", f.display()))?,
            ),
            (None, None) => None,
        };
        Target::Replay {
            step: step.clone(),
            patch,
        }
    } else {
        Target::Baseline
    };
    let probe = probe_for(&ex.loaded.run, &target).map_err(anyhow::Error::msg)?;
    for note in no_op_notes(&ex.loaded.run, &target) {
        eprintln!("tdn-tui: {note}");
    }
    let mut probes = vec![session::ProbePlan::baseline()];
    probes.extend(probe);
    let plan = ex.plan(&prepared, probes);
    let driven = drive(plan, &prepared, &ex, &settings, !args.runner.json)?;
    let outcome = &driven.outcome;
    let mut summary = experiment_summary(outcome, Some(ex.location.path.display().to_string()));
    summary.attributions = driven.attributions();
    if outcome.cancelled {
        eprintln!("tdn-tui: cancelled; the samples that finished are listed below");
    }
    if args.runner.json {
        common::write_stdout(&format!("{}\n", serde_json::to_string(&summary)?))?;
    } else {
        common::write_stdout(&render(&summary, &prepared.rule_label))?;
    }
    if let Some(e) = &outcome.close_error {
        eprintln!("tdn-tui: the batch's attributions were not written: {e}");
    }
    let failed = summary.verdict == Some(Verdict::Error)
        || (summary.verdict.is_none() && summary.completed == 0)
        || outcome.not_saved > 0
        || outcome.close_error.is_some();
    Ok(ExitCode::from(if outcome.cancelled {
        EXIT_CANCELLED
    } else if failed {
        EXIT_FAILURE
    } else {
        0
    }))
}

/// A run ready to be experimented on: loaded, with its absolute path, its recorded answer and the
/// place of its attribution ledger.
pub(super) struct ForExperiment {
    /// The run.
    pub loaded: Loaded,
    /// The run file's absolute path (what the runner is told).
    pub abs_path: PathBuf,
    /// The recorded final answer.
    pub original: String,
    /// Where its samples go.
    pub location: Location,
}

impl ForExperiment {
    /// The session plan of `probes` (a baseline first) on this run.
    pub fn plan(&self, prepared: &Prepared, probes: Vec<session::ProbePlan>) -> SessionPlan {
        SessionPlan {
            run_path: self.abs_path.display().to_string(),
            run_id: self.loaded.run.id.clone(),
            run_status: self.loaded.run.status,
            original: self.original.clone(),
            samples: prepared.samples,
            probes,
        }
    }
}

/// Loads exactly one run that can be experimented on and finds its ledger's place.
pub(super) fn load_for_experiment(
    path: &Path,
    input: &super::args::InputArgs,
    settings: &Settings,
) -> anyhow::Result<ForExperiment> {
    let loaded = load_one(path, &common::load_options(input))?;
    let Some(original) = loaded.run.final_answer.clone() else {
        anyhow::bail!(
            "{}: run '{}' has no final_answer, so there is nothing to compare a re-run with; record the agent's final answer in the run",
            path.display(),
            inert_line(&loaded.run.id)
        );
    };
    let abs_path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // A native file holds one run; an imported file read with --index holds several, so its
    // ledger beside it is a scenario ledger (attribution-ledger.md §7).
    let runs_in_file = match (input.index, loaded.source_format) {
        (Some(_), f) if f != SourceFormat::Native => 2,
        _ => 1,
    };
    let location = setup::ledger_location(settings, path, runs_in_file, &loaded.run.id);
    Ok(ForExperiment {
        loaded,
        abs_path,
        original,
        location,
    })
}

/// What a driven session found and the ledger it wrote.
pub(super) struct Driven {
    /// The session's outcome.
    pub outcome: SessionOutcome,
    /// What closing the batch appended, when it closed.
    pub closed: Option<Closed>,
}

impl Driven {
    /// The attributions the batch appended, for the summary.
    pub fn attributions(&self) -> Vec<crate::experiments::summary::AttributionSummary> {
        self.closed
            .as_ref()
            .map(crate::experiments::summary::attribution_summaries)
            .unwrap_or_default()
    }
}

/// Runs a session to its end (Ctrl-C cancels it, killing running samples), every finished
/// sample saved to the run's ledger before it is shown. With `progress`, one line per finished
/// sample (and the trials it formed) goes to stderr.
pub(super) fn drive(
    plan: SessionPlan,
    prepared: &Prepared,
    ex: &ForExperiment,
    settings: &Settings,
    progress: bool,
) -> anyhow::Result<Driven> {
    let ledger = setup::open_ledger(&ex.location, &ex.loaded.run, setup::ledger_policy(settings))?;
    let deps = SessionDeps {
        runner: prepared.runner.clone(),
        judge: prepared.judge.clone(),
        sink: ledger.clone(),
        parallel: prepared.parallel,
        cohort: setup::new_cohort()?,
        evaluator_epoch: prepared.evaluator_epoch.clone(),
    };
    let labels: Vec<String> = plan.probes.iter().map(probe_label).collect();
    let outcome = run_to_end(plan, deps, |ev| {
        // A sample held back for a ledger another process has locked is said even with --json
        // (on stderr): otherwise the command waits in silence, for as long as the lock is held.
        if progress || matches!(ev, TrialEvent::SampleHeld { .. }) {
            print_progress(ev, &labels);
        }
    })
    .map_err(anyhow::Error::msg)?;
    Ok(Driven {
        outcome,
        closed: ledger.closed(),
    })
}

/// What the run records that makes a probe change nothing it saw: removing a unit no model step
/// was sent, or putting back one no model step went without. The probe still runs (the agent
/// may build its context otherwise); the note says what its verdict can mean. Only for runs
/// whose model steps record `context`.
fn no_op_notes(run: &Run, target: &Target) -> Vec<String> {
    let contexts: Vec<&StepContext> = run
        .steps
        .iter()
        .filter_map(|s| s.context.as_deref())
        .collect();
    if contexts.is_empty() {
        return Vec::new();
    }
    let sent = |id: &str| contexts.iter().any(|c| c.sent.iter().any(|u| u == id));
    let dropped = |id: &str| {
        contexts.iter().any(|c| {
            c.available
                .as_ref()
                .is_some_and(|a| a.iter().any(|u| u == id))
                && !c.sent.iter().any(|u| u == id)
        })
    };
    match target {
        Target::Ablate(ids) => ids
            .iter()
            .filter(|id| !sent(id))
            .map(|id| {
                format!(
                    "'{}' was never sent to a model step in this run: removing it changes nothing the run recorded",
                    inert_line(id)
                )
            })
            .collect(),
        Target::Restore(ids) => ids
            .iter()
            .filter(|id| !dropped(id))
            .map(|id| {
                format!(
                    "'{}' was never dropped in this run (every model step that had it was sent it): putting it back changes nothing the run recorded",
                    inert_line(id)
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn probe_label(p: &session::ProbePlan) -> String {
    match (p.kind().as_str(), &p.from_step) {
        ("replay", Some(s)) => format!("replay from '{s}'"),
        ("baseline", _) => "baseline".to_owned(),
        (kind, _) => format!(
            "{kind} '{}'",
            [p.remove.as_slice(), p.restore.as_slice()]
                .concat()
                .join("', '")
        ),
    }
}

fn print_progress(ev: &TrialEvent, labels: &[String]) {
    let label = |p: &session::ProbeId| labels.get(p.0).map_or("?", String::as_str);
    let saved = |s: &session::Saved| match s {
        session::Saved::Yes(r) => r
            .trials
            .iter()
            .chain(&r.refused)
            .map(|t| format!(" · {}", inert_line(t)))
            .collect(),
        session::Saved::No(why) => format!(" (not saved: {})", inert_line(why)),
    };
    match ev {
        TrialEvent::SampleFinished {
            probe,
            seed,
            judged,
            saved: s,
        } => eprintln!(
            "  {} seed {seed}: {}{}",
            inert_line(label(probe)),
            if judged.flipped {
                "flipped"
            } else {
                "same outcome"
            },
            saved(s)
        ),
        TrialEvent::SampleErrored {
            probe,
            seed,
            error,
            saved: s,
        } => eprintln!(
            "  {} seed {seed}: error: {}{}",
            inert_line(label(probe)),
            inert_line(&error.message),
            saved(s)
        ),
        TrialEvent::SampleHeld { probe, seed, why } => eprintln!(
            "  {} seed {seed}: finished, waiting for ledger lock: {}; it is shown once it is written (Ctrl-C gives up)",
            inert_line(label(probe)),
            inert_line(why)
        ),
        _ => {}
    }
}

fn render(s: &ExperimentSummary, comparator: &str) -> String {
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
        "experiment: {what} ({} samples, flip rule '{comparator}')",
        s.samples
    );
    let stable = if s.baseline.stable {
        "stable"
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
        crate::analysis::influence::js_number(a.effect),
        crate::analysis::influence::js_number(a.confidence),
        a.line
    )
}
