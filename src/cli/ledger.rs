//! `ledger show|verify|plan|select PATH [--json]` (attribution-ledger.md §6-§9): read a ledger,
//! verify it, and print. Exit 0 done (plan also when not due), 1 when `verify` finds a failure,
//! 2 for bad arguments or a file that cannot be read or is not a ledger.

use super::args::{LedgerAction, LedgerArgs, LedgerPathArgs, LedgerPlanArgs, LedgerSelectArgs};
use super::common::{EXIT_FAILURE, settings, write_stdout};
use crate::analysis::load::{LoadOptions, load_one};
use crate::analysis::model::Run;
use crate::config::Settings;
use crate::experiments::ledger::plan::{self, PlanPolicy};
use crate::experiments::ledger::select::{self, bundle_from_ledger, history_of, units_of};
use crate::experiments::ledger::{Checked, evaluator_epoch, output, verify_path};
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;

/// Runs the subcommand.
pub fn run(args: &LedgerArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        LedgerAction::Show(a) => show(a),
        LedgerAction::Verify(a) => verify(a),
        LedgerAction::Plan(a) => plan(a),
        LedgerAction::Select(a) => select(a),
    }
}

fn json_line(v: &serde_json::Value) -> anyhow::Result<()> {
    write_stdout(&format!("{v}\n")).map(drop)
}

fn show(a: &LedgerPathArgs) -> anyhow::Result<ExitCode> {
    let checked = verify_path(&a.path)?;
    if a.json {
        json_line(&output::show_json(&checked))?;
    } else {
        write_stdout(&output::show_text(&checked))?;
    }
    note_failures(
        &checked,
        &a.path,
        "listed, marked FAILED, and count for nothing",
    );
    Ok(ExitCode::SUCCESS)
}

fn verify(a: &LedgerPathArgs) -> anyhow::Result<ExitCode> {
    let checked = verify_path(&a.path)?;
    if a.json {
        json_line(&output::verify_json(&checked))?;
    } else {
        write_stdout(&output::verify_text(
            &checked,
            &a.path.display().to_string(),
        ))?;
    }
    Ok(if checked.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}

/// Failed lines never drive plan, select or the screen; say so once, on stderr, with what
/// this command did with them (`show` lists them, marked FAILED; the others leave them out).
fn note_failures(checked: &Checked, path: &Path, done: &str) {
    let failed = checked.counts().failed;
    if failed > 0 {
        eprintln!(
            "tdn-tui: {failed} line(s) of {} failed verification and were {done}; run 'tdn-tui ledger verify {}' for details",
            path.display(),
            path.display()
        );
    }
}

fn load_run(path: &Path) -> anyhow::Result<Run> {
    Ok(load_one(path, &LoadOptions::default())?.run)
}

fn epoch_of(given: Option<&String>, s: &Settings) -> String {
    given.cloned().unwrap_or_else(|| evaluator_epoch(s))
}

fn plan(a: &LedgerPlanArgs) -> anyhow::Result<ExitCode> {
    let s = settings(&a.read.config, |_| {})?;
    let checked = verify_path(&a.path)?;
    let run = a.run.as_deref().map(load_run).transpose()?;
    let bundles = run
        .as_ref()
        .map(plan::run_bundles)
        .transpose()
        .context("cannot form the run's baseline bundle")?;
    let epoch = epoch_of(a.read.epoch.as_ref(), &s);
    let k = match a.samples {
        Some(k) => plan::samples_per_probe(k as f64),
        None => plan::samples_per_probe(s.experiments.samples),
    };
    let policy = PlanPolicy {
        cadence: a.cadence.unwrap_or(s.ledger.cadence),
        plateau: a.plateau.unwrap_or(s.ledger.plateau),
        budget: a.budget,
    };
    let (inputs, candidates) = plan::inputs(&checked, &epoch, bundles.as_ref(), k);
    let planned = plan::plan(&candidates, &inputs, &policy);
    if a.read.json {
        json_line(&output::plan_json(&planned, &inputs, &policy, &epoch, k))?;
    } else {
        write_stdout(&output::plan_text(&planned, &inputs, &policy, &epoch))?;
    }
    note_failures(&checked, &a.path, "ignored");
    Ok(ExitCode::SUCCESS)
}

fn select(a: &LedgerSelectArgs) -> anyhow::Result<ExitCode> {
    let s = settings(&a.read.config, |_| {})?;
    let checked = verify_path(&a.path)?;
    let run = a.run.as_deref().map(load_run).transpose()?;
    let bundle = match &run {
        Some(r) => {
            plan::run_bundles(r)
                .context("cannot form the run's baseline bundle")?
                .baseline
        }
        None => {
            let digest = plan::newest_baseline(&checked).with_context(|| {
                format!(
                    "{}: the ledger holds no sample, so there is no current bundle; give --run RUN",
                    a.path.display()
                )
            })?;
            bundle_from_ledger(&checked, digest).with_context(|| {
                format!(
                    "{}: the newest cohort's baseline bundle has no verified bundle record; run 'tdn-tui ledger verify', or give --run RUN",
                    a.path.display()
                )
            })?
        }
    };
    let epoch = epoch_of(a.read.epoch.as_ref(), &s);
    let units = units_of(&bundle, run.as_ref());
    let history = history_of(&checked);
    let selection = select::select(bundle.digest(), &units, &history, &epoch);
    if a.read.json {
        json_line(&output::select_json(&selection))?;
    } else {
        write_stdout(&output::select_text(&selection))?;
    }
    note_failures(&checked, &a.path, "ignored");
    Ok(ExitCode::SUCCESS)
}
