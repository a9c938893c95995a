//! `localize`: the whole pipeline of a context bug: rank (the report of `analyze`), run the
//! baseline, ablate the top suspects within `max_suspects`, restore dropped units within
//! `max_candidates`, then cost verdicts and classes; prints the report with each probed entry's
//! verdict (`--json`) or the diagnosis followed by the claims, each saying what it proves.

use super::args::{LocalizeArgs, RunnerArgs};
use super::common::{self, EXIT_FAILURE};
use super::experiment::{Driven, EXIT_CANCELLED, attribution_line, drive, load_for_experiment};
use crate::analysis::judge::Judge;
use crate::analysis::model::inert_line;
use crate::analysis::report::{AnalyzeOptions, ProbeResult, Report, Verdict, analyze, render_text};
use crate::config::Overrides;
use crate::experiments::localize::{TierPlan, apply, plan_tiers, report_dropped, report_subjects};
use crate::experiments::runner::Runner;
use crate::experiments::session::{ProbeRole, SessionOutcome};
use crate::experiments::setup::{self, Prepared};
use crate::experiments::summary::attribution_summaries;
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
    let judge = setup::judge(&settings)?;
    let ex = load_for_experiment(&args.run, &args.input, &settings)?;
    let reference = common::reference_choice(&args.reference)?;
    let mut report = analyze(
        &ex.loaded,
        &AnalyzeOptions {
            reference,
            embedder: &*prepared.embedder,
            confidence: settings.confidence,
            judge: judge.as_ref().map(|j| j as &dyn Judge),
        },
    );
    let tiers = plan_tiers(
        &report_subjects(&report),
        &report_dropped(&report),
        settings.experiments.max_suspects,
        settings.experiments.max_candidates,
    );
    let driven = if tiers.probes.is_empty() {
        Driven {
            outcome: SessionOutcome {
                probes: Vec::new(),
                runner_calls: 0,
                cancelled: false,
                not_saved: 0,
                close_error: None,
            },
            closed: None,
        }
    } else {
        let plan = ex.plan(&prepared, tiers.probes.clone());
        drive(plan, &prepared, &ex, &settings, !args.runner.json)?
    };
    let outcome = &driven.outcome;
    if outcome.cancelled {
        eprintln!("tdn-tui: cancelled; probes that did not finish have no verdict");
    }
    let ledger = (!tiers.probes.is_empty()).then(|| ex.location.path.display().to_string());
    apply(&mut report, &tiers, outcome, ledger);
    if args.runner.json {
        common::write_stdout(&format!("{}\n", serde_json::to_string(&report)?))?;
    } else {
        common::write_stdout(&render(&report, &tiers, &driven, &prepared))?;
    }
    if let Some(e) = &outcome.close_error {
        eprintln!("tdn-tui: the batch's attributions were not written: {e}");
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

fn render(report: &Report, tiers: &TierPlan, driven: &Driven, prepared: &Prepared) -> String {
    use std::fmt::Write;
    let outcome = &driven.outcome;
    let mut out = render_text(report);
    let Some(ex) = &report.experiments else {
        return out;
    };
    let _ = writeln!(out);
    if ex.runner_calls == 0 {
        let _ = writeln!(
            out,
            "No experiment ran: no ranked piece of context has a unit to remove and nothing was dropped, so the ranking above stays correlational only."
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Experiments: your agent re-run through '{}', {} samples per probe, flip rule '{}'.",
        inert_line(prepared.runner.command()),
        prepared.samples,
        inert_line(&prepared.rule_label)
    );
    if let Some(b) = &ex.baseline {
        let stable = if ex.flags.is_empty() {
            "stable".to_owned()
        } else {
            format!(
                "NOT stable ({}): every verdict below is inconclusive",
                ex.flags.join(", ")
            )
        };
        let _ = writeln!(
            out,
            "baseline (nothing changed): {}/{} changed outcome, {}/{} completed: {stable}",
            b.flips, b.samples, b.completed, b.samples
        );
    }
    for (heading, restoring) in [
        ("Ablation of the ranked context, one unit at a time:", false),
        (
            "Restoration of the dropped context, one unit at a time:",
            true,
        ),
    ] {
        let probes: Vec<_> = outcome
            .probes
            .iter()
            .filter(|p| match p.plan.role {
                ProbeRole::Ablation { .. } => !restoring,
                ProbeRole::Restoration { .. } => restoring,
                _ => false,
            })
            .collect();
        if probes.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{heading}");
        for p in probes {
            match &p.claim {
                Some(c) => {
                    let _ = writeln!(out, "  {}", inert_line(c));
                }
                None => {
                    let what = p.plan.remove.iter().chain(&p.plan.restore).cloned();
                    let what: Vec<String> = what.map(|u| format!("'{}'", inert_line(&u))).collect();
                    let _ = writeln!(
                        out,
                        "  {}: no verdict, the session ended before it finished",
                        what.join(", ")
                    );
                }
            }
            if let Some(line) = class_line(&p.result) {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    let _ = writeln!(out, "What this proves:");
    for line in honesty_lines(report, tiers, prepared) {
        let _ = writeln!(out, "  - {line}");
    }
    let _ = writeln!(out, "runner calls: {}", ex.runner_calls);
    if let Some(l) = &ex.ledger {
        let _ = writeln!(
            out,
            "ledger: {} (check it with 'tdn-tui ledger verify {}')",
            inert_line(l),
            inert_line(l)
        );
    }
    if let Some(c) = &driven.closed {
        for a in attribution_summaries(c) {
            let _ = writeln!(out, "  {}", attribution_line(&a));
        }
    }
    out
}

/// What each kind of result proves, and no more (influence.md §9), for what this report holds.
fn honesty_lines(report: &Report, tiers: &TierPlan, prepared: &Prepared) -> Vec<String> {
    let mut out = vec![
        format!(
            "CAUSAL (confirmed) is a causal claim about this scenario under the flip rule '{}' with {} samples: changing that unit changed the outcome. It does not say it is the only cause, or that it matters elsewhere.",
            inert_line(&prepared.rule_label),
            prepared.samples
        ),
        "NOT CONFIRMED: the outcome did not change in the reruns; the unit's rank stays a correlational proxy, neither a cause nor an acquittal. Units that say the same thing can hide each other: remove them together (tdn-tui experiment RUN --ablate A B) to test that.".to_owned(),
        "INCONCLUSIVE says why on its own line; a cost cause shows only that removing the unit reduced cost (it may be needed scaffolding).".to_owned(),
    ];
    let unprobed = report
        .influence
        .as_ref()
        .map_or(0, |i| i.scores.iter().filter(|e| e.probe.is_none()).count());
    if unprobed > 0 {
        out.push(format!(
            "{unprobed} ranked item(s) were not re-run (no unit to remove, or beyond [experiments] max_suspects): their scores are similarity proxies only."
        ));
    }
    let dropped = tiers.dropped.len();
    if dropped > 0 {
        let unrestored = tiers.dropped.iter().filter(|p| p.is_none()).count();
        out.push(format!(
            "A dropped unit is only a candidate until restoring it changes the outcome{}.",
            if unrestored > 0 {
                format!(
                    "; {unrestored} dropped unit(s) were not restored (beyond [experiments] max_candidates) and stay candidates"
                )
            } else {
                String::new()
            }
        ));
    }
    out
}

fn class_line(r: &ProbeResult) -> Option<String> {
    let class = r.class?;
    let cost = match &r.cost {
        Some(c) if c.reduced_cost_on_removal => format!(
            ": removal reduced cost by {} loop(s) (median), more than any other unit that did not flip the answer",
            c.loops_saved
        ),
        Some(c) => format!(
            "; {} loop(s) saved (median), not a cost cause{}",
            c.loops_saved,
            if c.stable {
                ""
            } else {
                " (not stable across seeds, or no other unit to compare with)"
            }
        ),
        None => String::new(),
    };
    Some(format!("class {}{cost}", class.as_str()))
}
