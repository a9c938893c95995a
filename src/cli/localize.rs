//! `localize`: the whole pipeline of a context bug: rank (the report of `analyze`), run the
//! baseline, ablate the top suspects within `max_suspects`, restore dropped units within
//! `max_candidates`, then cost verdicts and classes; prints the report with each probed entry's
//! verdict (`--json`) or a short text of claims.

use super::args::{LocalizeArgs, RunnerArgs};
use super::common::{self, EXIT_FAILURE};
use super::experiment::{EXIT_CANCELLED, drive, ledger_path, load_for_experiment};
use crate::analysis::model::inert_line;
use crate::analysis::report::{AnalyzeOptions, ProbeResult, Report, Verdict, analyze, render_text};
use crate::config::Overrides;
use crate::experiments::localize::{apply, plan_tiers, report_dropped, report_subjects};
use crate::experiments::session::{SessionOutcome, SessionPlan};
use crate::experiments::setup;
use std::process::ExitCode;

/// The overrides `experiment` and `localize` share.
pub(super) fn runner_overrides(r: &RunnerArgs, o: &mut Overrides) {
    o.runner = r.runner.clone();
    o.timeout_s = r.timeout;
    o.samples = r.samples;
    o.flip = r.flip.clone();
    o.ledger = r.ledger.clone();
}

/// Runs the subcommand.
pub fn run(args: &LocalizeArgs) -> anyhow::Result<ExitCode> {
    let settings = common::settings(&args.config, |o| runner_overrides(&args.runner, o))?;
    let prepared = setup::prepare(&settings)?;
    let (loaded, run_path, original) = load_for_experiment(&args.run, &args.input)?;
    let reference = common::reference_choice(&args.reference)?;
    let mut report = analyze(
        &loaded,
        &AnalyzeOptions {
            reference,
            embedder: &*prepared.embedder,
            confidence: settings.confidence,
            judge: None,
        },
    );
    let tiers = plan_tiers(
        &report_subjects(&report),
        &report_dropped(&report),
        settings.experiments.max_suspects,
        settings.experiments.max_candidates,
    );
    let ledger = ledger_path(&settings, &args.run);
    let outcome = if tiers.probes.is_empty() {
        SessionOutcome {
            probes: Vec::new(),
            runner_calls: 0,
            cancelled: false,
            not_saved: 0,
            close_error: None,
        }
    } else {
        let plan = SessionPlan {
            run_path: run_path.display().to_string(),
            run_id: loaded.run.id.clone(),
            run_status: loaded.run.status,
            original,
            samples: prepared.samples,
            probes: tiers.probes.clone(),
        };
        drive(plan, &prepared, &ledger, &loaded, !args.runner.json)?
    };
    if outcome.cancelled {
        eprintln!("tdn-tui: cancelled; probes that did not finish have no verdict");
    }
    apply(
        &mut report,
        &tiers,
        &outcome,
        Some(ledger.display().to_string()),
    );
    if args.runner.json {
        common::write_stdout(&format!("{}\n", serde_json::to_string(&report)?))?;
    } else {
        common::write_stdout(&render(&report, &outcome, &prepared.rule_label))?;
    }
    let failed = outcome
        .probes
        .iter()
        .any(|p| p.result.verdict == Some(Verdict::Error))
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

fn render(report: &Report, outcome: &SessionOutcome, comparator: &str) -> String {
    use std::fmt::Write;
    let mut out = render_text(report);
    let Some(ex) = &report.experiments else {
        return out;
    };
    if ex.runner_calls == 0 {
        let _ = writeln!(
            out,
            "no experiment ran: no ranked suspect has a unit to remove and nothing was dropped; the ranking stays correlational only"
        );
        return out;
    }
    if let Some(b) = &ex.baseline {
        let _ = writeln!(
            out,
            "baseline: {}/{} flipped, {}/{} completed (flip rule '{comparator}'){}",
            b.flips,
            b.samples,
            b.completed,
            b.samples,
            if ex.flags.is_empty() {
                String::new()
            } else {
                format!("; flags: {}", ex.flags.join(", "))
            }
        );
    }
    for p in outcome.probes.iter().skip(1) {
        if let Some(c) = &p.claim {
            let _ = writeln!(out, "{c}");
        }
        if let Some(line) = class_line(&p.result) {
            let _ = writeln!(out, "  {line}");
        }
    }
    let unprobed = report
        .influence
        .as_ref()
        .map_or(0, |i| i.scores.iter().filter(|e| e.probe.is_none()).count());
    if unprobed > 0 {
        let _ = writeln!(
            out,
            "{unprobed} ranked item(s) were not re-run (no unit to remove, or beyond [experiments] max_suspects); their scores are similarity proxies only"
        );
    }
    let _ = writeln!(out, "runner calls: {}", ex.runner_calls);
    if let Some(l) = &ex.ledger {
        let _ = writeln!(out, "ledger: {}", inert_line(l));
    }
    out
}

fn class_line(r: &ProbeResult) -> Option<String> {
    let class = r.class?;
    let cost = match &r.cost {
        Some(c) if c.reduced_cost_on_removal => format!(
            "; removal reduced cost by {} loops (median), beyond every placebo",
            c.loops_saved
        ),
        Some(c) => format!("; {} loops saved (median), not a cost cause", c.loops_saved),
        None => String::new(),
    };
    Some(format!("class: {}{cost}", class.as_str()))
}
