//! `localize`: the whole pipeline of a context bug: rank (the report of `analyze`), run the
//! baseline, ablate the top suspects within `max_suspects`, restore dropped units within
//! `max_candidates`, then cost verdicts and classes; prints the report with each probed entry's
//! verdict (`--json`) or the diagnosis followed by the claims, each saying what it proves.

use super::args::{LocalizeArgs, RunnerArgs};
use super::common;
use super::experiment::{
    attribution_line, close_left_open, drive, engine, exit_code, explain, print_out, say,
    stopped_at_once, subject,
};
use crate::analysis::judge::Judge;
use crate::analysis::model::inert_line;
use crate::analysis::report::{AnalyzeOptions, ProbeResult, Report, Verdict, analyze, render_text};
use crate::config::Overrides;
use crate::experiments::command_judge::CommandJudge;
use crate::experiments::engine::{Engine, EngineError, Plan, PlanError, Request};
use crate::experiments::event::{JobEnd, JobOutcome};
use crate::experiments::intervention::Intervention;
use crate::experiments::localize::{TierPlan, apply};
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

/// The judge of the analysis (report.md, runner.md "The judge"): `TDN_JUDGE` or `[judge]
/// command`, under the same consent rule as the runner.
fn judge(settings: &crate::config::Settings) -> anyhow::Result<Option<CommandJudge>> {
    let Some(cmd) = settings.judge.as_ref() else {
        return Ok(None);
    };
    if cmd.needs_consent() && !settings.yes {
        let e = EngineError::NeedsConsent {
            what: "judge",
            command: cmd.text.clone(),
            origin: cmd.origin_text(),
        };
        return Err(explain(e, std::path::Path::new("")));
    }
    Ok(Some(CommandJudge::new(
        cmd.text.clone(),
        settings.judge_timeout_s,
    )))
}

/// Runs the subcommand.
pub fn run(args: &LocalizeArgs) -> anyhow::Result<ExitCode> {
    let settings = common::settings(&args.config, |o| runner_overrides(&args.runner, o))?;
    let engine = engine(&settings)?;
    let judge = judge(&settings)?;
    let reference = common::reference_choice(&args.analysis.reference)?;
    let embedder = engine.embedder();
    let settle = |l: &mut crate::analysis::load::Loaded| {
        common::settle_outcome(l, &args.analysis.outcome, &reference);
    };
    let (subject, _) = subject(&engine, &args.run, &args.analysis.input, settle, |loaded| {
        Some(analyze(
            loaded,
            &AnalyzeOptions {
                reference: reference.clone(),
                embedder: &*embedder,
                confidence: settings.confidence,
                judge: judge.as_ref().map(|j| j as &dyn Judge),
                against: None,
                prices: &settings.prices,
            },
        ))
    })?;
    let mut report = subject
        .report
        .as_deref()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the run could not be analysed"))?;
    let plan = match engine.plan(&subject, Request::Localize) {
        Ok(p) => Some(p),
        Err(EngineError::Plan(PlanError::NothingToLocalize)) => None,
        Err(e) => return Err(explain(e, &args.run)),
    };
    let (job, signal) = match &plan {
        Some(plan) => {
            for note in &plan.left_out {
                say(&format!("tdn-tui: {note}"));
            }
            close_left_open(&engine, &subject);
            let driven = drive(&engine, plan, &args.run, !args.runner.json)?;
            let Some(job) = driven.outcome else {
                return Ok(stopped_at_once(driven.signal));
            };
            (Some(job), driven.signal)
        }
        None => (None, None),
    };
    if let Some(JobEnd::Failed(e)) = job.as_ref().map(|j| &j.end) {
        return Err(explain((**e).clone(), &args.run));
    }
    if let Some(JobEnd::Cancelled(why)) = job.as_ref().map(|j| &j.end) {
        say(&format!(
            "tdn-tui: cancelled ({}); probes that did not finish have no verdict, and the batch concludes nothing: its samples and trials stay in the ledger, marked cancelled, and no attribution is written",
            inert_line(why)
        ));
    }
    let outcome = job.as_ref().and_then(|j| j.session.as_ref());
    let tiers = plan
        .as_ref()
        .and_then(|p| p.tiers.clone())
        .unwrap_or_default();
    let ledger = plan
        .as_ref()
        .map(|_| subject.ledger.path.display().to_string());
    if let Some(o) = outcome {
        apply(&mut report, &tiers, o, ledger);
    } else {
        apply(
            &mut report,
            &tiers,
            &crate::experiments::session::SessionOutcome::default(),
            None,
        );
    }
    let text = if args.runner.json {
        format!("{}\n", serde_json::to_string(&report)?)
    } else {
        render(&report, &tiers, job.as_deref(), &engine, plan.as_ref())
    };
    print_out(&text, signal)?;
    if let Some(e) = outcome.and_then(|o| o.close_error.as_ref()) {
        say(&format!(
            "tdn-tui: the batch's attributions were not written: {}",
            inert_line(&e.to_string())
        ));
    }
    let failed = outcome.is_some_and(|o| {
        o.probes
            .iter()
            .any(|p| p.result.verdict == Some(Verdict::Error))
            || o.not_saved > 0
            || o.close_error.is_some()
    });
    Ok(exit_code(
        outcome.is_some_and(|o| o.cancelled),
        signal,
        failed,
    ))
}

fn render(
    report: &Report,
    tiers: &TierPlan,
    job: Option<&JobOutcome>,
    engine: &Engine,
    plan: Option<&Plan>,
) -> String {
    use std::fmt::Write;
    let no_probes = Vec::new();
    let probes = job
        .and_then(|j| j.session.as_ref())
        .map_or(&no_probes, |o| &o.probes);
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
    let samples = plan.map_or(0, |p| p.samples);
    let rule = plan.map_or("", |p| p.rule_label.as_str());
    let _ = writeln!(
        out,
        "Experiments: your agent re-run through '{}', {samples} samples per probe, flip rule '{}'.",
        inert_line(engine.runner().map_or("", |c| c.text.as_str())),
        inert_line(rule)
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
        let probes: Vec<_> = probes
            .iter()
            .filter(|p| match p.plan.intervention {
                Intervention::Ablate(_) => !restoring,
                Intervention::Restore(_) => restoring,
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
                    let _ = writeln!(
                        out,
                        "  {}: no verdict, the session ended before it finished",
                        crate::experiments::intervention::quoted(p.plan.intervention.units())
                    );
                }
            }
            if let Some(line) = class_line(&p.result) {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    let _ = writeln!(out, "What this proves:");
    for line in honesty_lines(report, tiers, rule, samples) {
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
    if let Some(c) = job.and_then(|j| j.closed.as_ref()) {
        for a in attribution_summaries(c) {
            let _ = writeln!(out, "  {}", attribution_line(&a));
        }
    }
    out
}

/// What each kind of result proves, and no more (influence.md §9), for what this report holds.
fn honesty_lines(report: &Report, tiers: &TierPlan, rule: &str, samples: usize) -> Vec<String> {
    let mut out = vec![
        format!(
            "CAUSAL (confirmed) is a causal claim about this scenario under the flip rule '{}' with {samples} samples: changing that unit changed the outcome. It does not say it is the only cause, or that it matters elsewhere.",
            inert_line(rule),
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
