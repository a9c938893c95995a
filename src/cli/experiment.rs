//! `experiment`: one probe (ablate, restore or replay) against a baseline, or the baseline alone,
//! through the user's runner; prints the verdict as text or the JSON of docs/experiments.md.
//! Also holds what `localize` shares with it: loading the run for an experiment and driving a
//! session with progress on stderr and Ctrl-C as cancel.

use super::args::ExperimentArgs;
use super::common::{self, EXIT_FAILURE};
use crate::analysis::load::{Loaded, load_one};
use crate::analysis::model::inert_block;
use crate::analysis::report::Verdict;
use crate::config::Settings;
use crate::experiments::headless::run_to_end;
use crate::experiments::session::{self, SessionDeps, SessionOutcome, SessionPlan, TrialEvent};
use crate::experiments::setup::{self, Prepared};
use crate::experiments::sink::{default_ledger_path, new_cohort_id};
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
    let (loaded, run_path, original) = load_for_experiment(&args.run, &args.input)?;
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
    let probe = probe_for(&loaded.run, &target).map_err(anyhow::Error::msg)?;
    let mut probes = vec![session::ProbePlan::baseline()];
    probes.extend(probe);
    let plan = SessionPlan {
        run_path: run_path.display().to_string(),
        run_id: loaded.run.id.clone(),
        run_status: loaded.run.status,
        original,
        samples: prepared.samples,
        probes,
    };
    let ledger = ledger_path(&settings, &args.run);
    let outcome = drive(plan, &prepared, &ledger, &loaded, !args.runner.json)?;
    let summary = experiment_summary(&outcome, Some(ledger.display().to_string()));
    if outcome.cancelled {
        eprintln!("tdn-tui: cancelled; the samples that finished are listed below");
    }
    if args.runner.json {
        common::write_stdout(&format!("{}\n", serde_json::to_string(&summary)?))?;
    } else {
        common::write_stdout(&render(&summary, &prepared.rule_label))?;
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

/// Loads exactly one run that can be experimented on: its absolute path and recorded answer.
pub(super) fn load_for_experiment(
    path: &Path,
    input: &super::args::InputArgs,
) -> anyhow::Result<(Loaded, PathBuf, String)> {
    let loaded = load_one(path, &common::load_options(input))?;
    let Some(original) = loaded.run.final_answer.clone() else {
        anyhow::bail!(
            "{}: run '{}' has no final_answer, so there is nothing to compare a re-run with; record the agent's final answer in the run",
            path.display(),
            crate::analysis::model::inert_line(&loaded.run.id)
        );
    };
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok((loaded, abs, original))
}

/// `--ledger` or `[ledger] path`, else beside the run.
pub(super) fn ledger_path(settings: &Settings, run: &Path) -> PathBuf {
    settings
        .ledger
        .path
        .clone()
        .unwrap_or_else(|| default_ledger_path(run))
}

/// Runs a session to its end (Ctrl-C cancels it, killing running samples). With `progress`,
/// one line per finished sample goes to stderr.
pub(super) fn drive(
    plan: SessionPlan,
    prepared: &Prepared,
    ledger: &Path,
    loaded: &Loaded,
    progress: bool,
) -> anyhow::Result<SessionOutcome> {
    let sink = setup::open_sink(ledger, &loaded.run)?;
    if sink.path().is_none() {
        eprintln!(
            "tdn-tui: warning: this build does not write the attribution ledger yet; no sample is saved to '{}'",
            ledger.display()
        );
    }
    let deps = SessionDeps {
        runner: prepared.runner.clone(),
        judge: prepared.judge.clone(),
        sink,
        parallel: prepared.parallel,
        cohort: new_cohort_id(),
        evaluator_epoch: prepared.evaluator_epoch.clone(),
    };
    let labels: Vec<String> = plan.probes.iter().map(probe_label).collect();
    run_to_end(plan, deps, |ev| {
        if progress {
            print_progress(ev, &labels);
        }
    })
    .map_err(anyhow::Error::msg)
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
        session::Saved::Yes => String::new(),
        session::Saved::No(why) => format!(" (not saved: {why})"),
    };
    match ev {
        TrialEvent::SampleFinished {
            probe,
            seed,
            judged,
            saved: s,
        } => eprintln!(
            "  {} seed {seed}: {}{}",
            crate::analysis::model::inert_line(label(probe)),
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
            crate::analysis::model::inert_line(label(probe)),
            crate::analysis::model::inert_line(&error.message),
            saved(s)
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
        let _ = write!(what, "{sep}'{}'", crate::analysis::model::inert_line(u));
    }
    if let Some(step) = &s.from_step {
        let _ = write!(
            what,
            " from step '{}'",
            crate::analysis::model::inert_line(step)
        );
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
            crate::analysis::model::inert_line(&e.message)
        );
        if !e.stderr_tail.is_empty() {
            let _ = writeln!(out, "  stderr tail:\n{}", inert_block(&e.stderr_tail));
        }
    }
    if let Some(l) = &s.ledger {
        let _ = writeln!(out, "ledger: {l}");
    }
    out
}
