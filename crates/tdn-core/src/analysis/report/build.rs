//! Building a [`Report`] from a loaded run: links, claims, detectors, walk back, ranking, the
//! optional judge, fault, ranking confidence, influence and dropped context, in that order.
//! Pure except for what the given embedder and judge do; never panics on any run.

use super::SimilarStep;
use super::against::{self, Against};
use super::group::group_similar;
use super::{
    Claim, Fault, InfluenceSection, JudgeOutcome, Link, REPORT_FORMAT, Report, RunSummary, Suspect,
    VerdictStep,
};
use crate::analysis::claims::{CheckedClaim, check_claims};
use crate::analysis::cost::{BUILT_IN_PRICES, Prices, cost_section};
use crate::analysis::detect::{Facts, RunFacts, detect_all};
use crate::analysis::import::SourceFormat;
use crate::analysis::influence::{
    ConfidenceOptions, EmbedError, Embedder, RankingSubject, dropped_section,
    influence_section_counted, ranking_confidence_of,
};
use crate::analysis::judge::{Judge, build_request, finding_from, read_answer, should_ask};
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::load::{Loaded, Warning};
use crate::analysis::model::{Run, RunStatus};
use crate::analysis::params::{MAX_SUSPECTS, QUOTE_CHARS, SCORE_CAP};
use crate::analysis::progress::{Progress, Stage};
use crate::analysis::rank::{
    Ranked, Scored, SuspectEntry, fault, rank_steps, score_all, walk_back,
};
use crate::analysis::report::Role;
use crate::analysis::say::{short, step as step_name};
use rayon::prelude::*;

/// Which reference answer is in force.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ReferenceChoice {
    /// The run's own `reference_answer`, if any.
    #[default]
    FromRun,
    /// None (`--no-reference`).
    Ignore,
    /// This text (`--reference`, `--reference-file`).
    Given(String),
}

/// Everything `analyze` needs besides the run.
pub struct AnalyzeOptions<'a> {
    /// The reference answer in force.
    pub reference: ReferenceChoice,
    /// The embedder for the influence ranking.
    pub embedder: &'a dyn Embedder,
    /// How both rankings' confidence is judged.
    pub confidence: ConfidenceOptions,
    /// The optional judge; `None` means rules only (nothing leaves the machine).
    pub judge: Option<&'a dyn Judge>,
    /// A good run of the same task and the comparison with it (`--against`): its first
    /// divergence is ranking evidence, and its final answer the influence reference unless one
    /// is given.
    pub against: Option<Against<'a>>,
    /// The prices that estimate a step's cost from its tokens when the trace records none.
    pub prices: &'a Prices,
}

impl<'a> AnalyzeOptions<'a> {
    /// Rules only, the run's own reference, default confidence options.
    pub fn new(embedder: &'a dyn Embedder) -> Self {
        AnalyzeOptions {
            reference: ReferenceChoice::FromRun,
            embedder,
            confidence: ConfidenceOptions::default(),
            judge: None,
            against: None,
            prices: &BUILT_IN_PRICES,
        }
    }
}

/// Scores are written with at most 6 decimals (0.9 x 0.8 is 0.72, not 0.7200000000000001).
fn round6(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}

/// Analyses one run.
pub fn analyze(loaded: &Loaded, opts: &AnalyzeOptions<'_>) -> Report {
    analyze_with_progress(loaded, opts, &Progress::new())
}

/// Analyses one run, counting in `progress` how far it has come. The influence ranking, which
/// needs nothing else of the analysis, runs on a second thread meanwhile.
pub fn analyze_with_progress(
    loaded: &Loaded,
    opts: &AnalyzeOptions<'_>,
    progress: &Progress,
) -> Report {
    analyze_run(
        &loaded.run,
        &loaded.warnings,
        loaded.source_format,
        opts,
        progress,
    )
}

/// [`analyze_with_progress`] for a run held elsewhere (the screen shares it with its panes),
/// with the loader's warnings and the format it came in.
pub fn analyze_run(
    run: &Run,
    warnings: &[Warning],
    source_format: SourceFormat,
    opts: &AnalyzeOptions<'_>,
    progress: &Progress,
) -> Report {
    let loaded = Parts {
        run,
        warnings,
        source_format,
    };
    let loaded = &loaded;
    let reference = match &opts.reference {
        ReferenceChoice::FromRun => run.reference_answer.as_deref(),
        ReferenceChoice::Ignore => None,
        ReferenceChoice::Given(t) => Some(t.as_str()),
    };
    // Against a good run, its final answer is the known-good answer the influence ranking
    // contrasts with, unless the user gave a reference (or none).
    let good_answer = match (&opts.reference, &opts.against) {
        (ReferenceChoice::FromRun, Some(a)) => a
            .run
            .final_answer
            .as_deref()
            .filter(|t| !t.trim().is_empty()),
        _ => None,
    };
    let influence_reference = good_answer.or(reference);
    // Both halves run on the thread pool: each one's parallel parts are made by its own thread
    // first, and by the other one when it waits (issue 11: with threads of their own, the
    // ranking's parts queued behind the rules' and its thread ended last, alone).
    let (rules, (influence, dropped)) = rayon::join(
        || rules_report(loaded, opts, reference, progress),
        || {
            let section = influence_section_counted(
                run,
                influence_reference,
                opts.embedder,
                &opts.confidence,
                progress,
            );
            // The dropped context reads nothing but the run: made here, off the rules' path.
            (section, dropped_section(run))
        },
    );
    let mut report = finish(rules, influence, opts, progress);
    report.dropped = dropped;
    if let Some(section) = report.against.as_mut() {
        section.reference = good_answer.is_some();
    }
    report
}

/// A loaded run, borrowed.
struct Parts<'a> {
    run: &'a Run,
    warnings: &'a [Warning],
    source_format: SourceFormat,
}

/// Everything but the influence ranking and the dropped context.
fn rules_report(
    loaded: &Parts<'_>,
    opts: &AnalyzeOptions<'_>,
    reference: Option<&str>,
    progress: &Progress,
) -> Report {
    let run = loaded.run;
    let steps = u64::try_from(run.steps.len()).unwrap_or(u64::MAX);
    let mut warnings = loaded.warnings.to_vec();
    progress.stage(Stage::Linking, steps.saturating_mul(2));
    let texts = StepTexts::build(run);
    // The claims and the facts that need no links are made while the links are found: the
    // other thread takes them when it waits (issue 11).
    let (links, (checked, base)) = rayon::join(
        || LinkGraph::build_counted(run, &texts, progress),
        || rayon::join(|| check_claims(run, &texts), || RunFacts::new(run, &texts)),
    );
    if links.truncated {
        warnings.push(Warning::run(
            None,
            "the run holds more distinct values than the link index takes (16 MiB); values of later steps were left out, so some links may be missing",
        ));
    }
    progress.stage(Stage::Detecting, 0);
    let facts = Facts::with_base(base, run, &texts, &links, &checked).with_reference(reference);
    let found = detect_all(&facts);
    // The links' values are spans of the step texts: taken out while the texts are there,
    // beside the walk back and the ranking of the findings (issue 11: one thread ranked them
    // while the other waited).
    let ((scored, rule_suspects, diverged_at), taken) = rayon::join(
        || {
            let mut scored = score_all(&facts, walk_back(&facts, found));
            // Against a good run, where the runs part is one more finding (docs/compare.md,
            // "In the ranking").
            let divergence = opts
                .against
                .as_ref()
                .and_then(|a| against::finding(&facts, a, &scored));
            let diverged_at = divergence.as_ref().map(|d| d.step);
            scored.extend(divergence.map(|d| d.scored));
            // Only the judge reads the scored findings again: without one the ranking takes
            // them rather than a copy.
            let to_rank = if opts.judge.is_some() {
                scored.clone()
            } else {
                std::mem::take(&mut scored)
            };
            (scored, rank_steps(to_rank), diverged_at)
        },
        || take_links(&links),
    );
    let fault = fault(&facts, &rule_suspects.suspects);
    let (judge, mut ranked) = ask_judge(&facts, opts.judge, scored, rule_suspects);
    // A run that succeeded has no failure to explain: no verdict, no suspects and no leads (its
    // timeline, claims and influence are still shown).
    if run.status == RunStatus::Succeeded {
        ranked.suspects.clear();
        ranked.leads.clear();
    }
    // Nothing below reads the graph or the texts: both are freed before the report is put
    // together.
    drop(facts);
    drop(links);
    drop(texts);
    // The report's links are made beside its suspects.
    let (links, (confidence, suspects_out, verdict)) = rayon::join(
        || links_out(run, taken),
        || ranked_out(run, &ranked.suspects, opts, &mut warnings),
    );
    let leads_out = leads_out(run, &ranked.leads);
    let against = opts.against.as_ref().map(|a| {
        let suspect = diverged_at.filter(|&i| ranked.suspects.iter().any(|s| s.step == i));
        against::section(a, run, suspect, false)
    });
    progress.stage(Stage::Report, 0);
    Report {
        format: REPORT_FORMAT.to_owned(),
        run: RunSummary {
            id: run.id.clone(),
            title: run.title.clone().filter(|t| !t.trim().is_empty()),
            task: run.task.clone().filter(|t| !t.trim().is_empty()),
            status: run.status,
            status_from: run.status_from,
            status_why: run.status_why.clone(),
            steps: run.steps.len(),
            source_format: loaded.source_format.name().to_owned(),
            warnings,
        },
        verdict,
        fault: Fault {
            party: fault.party,
            why: fault.why,
        },
        suspects: suspects_out,
        leads: leads_out,
        confidence,
        links,
        claims: checked.iter().map(|c| to_claim(run, c)).collect(),
        influence: None,
        dropped: None,
        judge,
        against,
        cost: cost_section(run, opts.prices),
        experiments: None,
    }
}

/// What the report says of the ranked findings: the ranking confidence, the suspects (similar
/// findings grouped, at most [`MAX_SUSPECTS`], with a warning when more were found) and the
/// verdict.
fn ranked_out(
    run: &Run,
    ranked: &[SuspectEntry],
    opts: &AnalyzeOptions<'_>,
    warnings: &mut Vec<Warning>,
) -> (super::RankingConfidence, Vec<Suspect>, Option<VerdictStep>) {
    // The verdict and the ranking confidence read the ranking itself (its first
    // MAX_SUSPECTS); the list is grouped for reading afterwards.
    let pairs: Vec<(String, f64)> = ranked
        .iter()
        .take(MAX_SUSPECTS)
        .map(|s| (step_id(run, s.step), round6(s.score)))
        .collect();
    let pairs: Vec<(&str, f64)> = pairs.iter().map(|(s, x)| (s.as_str(), *x)).collect();
    // Rule scores order findings; in a run that did not fail they order observations.
    let subject = if matches!(run.status, RunStatus::Failed | RunStatus::Error) {
        RankingSubject::Suspects
    } else {
        RankingSubject::Observations
    };
    let confidence = ranking_confidence_of(&pairs, &opts.confidence, subject);
    let mut groups = group_similar(ranked);
    if groups.len() > MAX_SUSPECTS {
        let found = groups.len();
        let grouped = if found < ranked.len() {
            " (similar findings grouped)"
        } else {
            ""
        };
        warnings.push(
            Warning::run(
                None,
                format!(
                    "{found} suspects found{grouped}; only the first {MAX_SUSPECTS} are listed"
                ),
            )
            .with_cut("suspects", found, MAX_SUSPECTS),
        );
        groups.truncate(MAX_SUSPECTS);
    }
    let suspects_out: Vec<Suspect> = groups
        .iter()
        .filter_map(|g| {
            let mut s = to_suspect(run, g.lead, ranked.get(g.lead)?);
            s.similar = g
                .similar
                .iter()
                .filter_map(|&k| {
                    let e = ranked.get(k)?;
                    Some(SimilarStep {
                        rank: k + 1,
                        step: step_id(run, e.step),
                        index: e.step,
                        score: round6(e.score),
                    })
                })
                .collect();
            Some(s)
        })
        .collect();
    let verdict = ranked.first().map(|s| VerdictStep {
        step: step_id(run, s.step),
        name: readable_name(run, s.step),
        index: s.step,
        category: s.category.as_str().to_owned(),
        title: s.title.clone(),
        evidence: s.evidence.clone(),
    });
    (confidence, suspects_out, verdict)
}

/// The leads as the report lists them (at most [`MAX_SUSPECTS`]), each ranked among the leads.
fn leads_out(run: &Run, leads: &[SuspectEntry]) -> Vec<Suspect> {
    leads
        .iter()
        .take(MAX_SUSPECTS)
        .enumerate()
        .map(|(k, s)| to_suspect(run, k, s))
        .collect()
}

/// Puts the influence ranking into the report (or a warning when the embedder failed).
fn finish(
    mut report: Report,
    influence: Result<Option<InfluenceSection>, EmbedError>,
    opts: &AnalyzeOptions<'_>,
    progress: &Progress,
) -> Report {
    match influence {
        Ok(s) => report.influence = s,
        Err(e) => report.run.warnings.push(Warning::run(
            None,
            format!(
                "the embedder '{}' failed: {}; the influence ranking is left out",
                short(opts.embedder.name(), QUOTE_CHARS),
                short(&e.to_string(), 300)
            ),
        )),
    }
    progress.stage(Stage::Done, 0);
    report
}

/// Asks the judge when the rules call for it; returns the outcome and the final suspects.
fn ask_judge(
    facts: &Facts<'_>,
    judge: Option<&dyn Judge>,
    scored: Vec<Scored>,
    rule_suspects: Ranked,
) -> (Option<JudgeOutcome>, Ranked) {
    let run = facts.run;
    let Some(judge) = judge else {
        return (None, rule_suspects);
    };
    if !should_ask(run.status, rule_suspects.suspects.first().map(|s| s.score)) {
        return (None, rule_suspects);
    }
    // The judge reads every rule finding: the suspects first, then the leads.
    let listed: Vec<SuspectEntry> = rule_suspects
        .suspects
        .iter()
        .chain(&rule_suspects.leads)
        .cloned()
        .collect();
    let request = build_request(facts, &listed);
    let answer = judge.ask(&request).and_then(|v| read_answer(run, &v));
    match answer {
        Ok(a) => {
            let f = finding_from(facts, &a, rule_suspects.suspects.first());
            let step = run.steps.get(f.step).map(|s| s.id.0.clone());
            // The plan rule (how-it-decides.md) moves a pick of the step that proposed a plan to
            // the step that carried it out: both are said.
            let (named, moved_because) = if f.step == a.step {
                (None, None)
            } else {
                (
                    run.steps.get(a.step).map(|s| s.id.0.clone()),
                    Some(format!(
                        "the plan proposed at {} was carried out at {}",
                        step_name(run, a.step),
                        step_name(run, f.step)
                    )),
                )
            };
            let score = f.confidence.min(SCORE_CAP);
            let mut all = scored;
            all.push(Scored {
                finding: f,
                role: Role::Suspect,
                cause: None,
                score,
            });
            (
                Some(JudgeOutcome {
                    step,
                    reason: Some(a.reason),
                    error: None,
                    named,
                    moved_because,
                }),
                rank_steps(all),
            )
        }
        Err(e) => (
            Some(JudgeOutcome {
                step: None,
                reason: None,
                error: Some(e.0),
                named: None,
                moved_because: None,
            }),
            rule_suspects,
        ),
    }
}

fn step_id(run: &Run, i: usize) -> String {
    run.steps.get(i).map(|s| s.id.0.clone()).unwrap_or_default()
}

/// The step's name when its id is opaque ([`crate::analysis::model::Step::readable_name`]).
fn readable_name(run: &Run, i: usize) -> Option<String> {
    run.steps.get(i).and_then(|s| s.readable_name())
}

fn to_suspect(run: &Run, k: usize, s: &SuspectEntry) -> Suspect {
    Suspect {
        rank: k + 1,
        step: step_id(run, s.step),
        name: readable_name(run, s.step),
        index: s.step,
        category: s.category.as_str().to_owned(),
        detector: s.detector.as_str().to_owned(),
        title: s.title.clone(),
        score: round6(s.score),
        confidence: round6(s.confidence),
        role: s.role,
        cause: s.cause.map(|c| step_id(run, c)),
        evidence: s.evidence.clone(),
        similar: Vec::new(),
    }
}

fn to_claim(run: &Run, c: &CheckedClaim) -> Claim {
    Claim {
        text: c.text.clone(),
        label: c.label,
        evidence_step: c.evidence_step.map(|i| step_id(run, i)),
        origin_step: c.origin_step.map(|i| step_id(run, i)),
        origin_index: c.origin_step,
        origin_name: c.origin_step.and_then(|i| readable_name(run, i)),
        why: c.why.clone(),
        evidence_text: c.evidence_text.clone(),
    }
}

/// The links the report lists, taken out of the graph while the step texts it borrows are
/// there, so both can be freed before the list itself is made (issue 11): each pair's steps,
/// and in place of its value the position of the value's quoted text in `values`, which holds
/// each value once.
struct TakenLinks {
    /// (from, to, position in `values`), as `u32` (a run has fewer steps and values; half the
    /// memory of a `Use`, issue 11).
    pairs: Vec<(u32, u32, u32)>,
    values: Vec<String>,
}

fn take_links(links: &LinkGraph<'_>) -> TakenLinks {
    // (from, to, value id), read once: each pair's value id is turned into its position among
    // the values listed below.
    let mut pairs: Vec<(u32, u32, u32)> = links
        .pairs()
        .filter_map(|u| {
            Some((
                u32::try_from(u.from).ok()?,
                u32::try_from(u.to).ok()?,
                u32::try_from(u.value).ok()?,
            ))
        })
        .collect();
    let mut ids: Vec<u32> = pairs.iter().map(|&(_, _, v)| v).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.shrink_to_fit();
    // Made at the end of the analysis, when the other threads are done (issue 11: about
    // 100,000 values and 150,000 links on a 100,000-step run).
    let values = ids
        .par_iter()
        .map(|&id| quoted_value(links.value(id as usize)))
        .collect();
    pairs.par_iter_mut().for_each(|(_, _, v)| {
        let at = ids.binary_search(v).unwrap_or_else(|at| at);
        *v = u32::try_from(at).unwrap_or(u32::MAX);
    });
    TakenLinks { pairs, values }
}

/// The links as the report lists them, in the graph's order (made in parallel, see
/// [`take_links`]).
fn links_out(run: &Run, taken: TakenLinks) -> Vec<Link> {
    taken
        .pairs
        .par_iter()
        .map(|&(from, to, at)| Link {
            from: step_id(run, from as usize),
            to: step_id(run, to as usize),
            value: taken.values.get(at as usize).cloned().unwrap_or_default(),
        })
        .collect()
}

/// A link's value as the report quotes it: [`short`] to [`QUOTE_CHARS`]. Most values (ids,
/// dates, numbers) are printable ASCII without a space at either end and no longer than that:
/// they read the same through [`short`] and are copied as they are (issue 11: a 100,000-step
/// run lists about 150,000 links).
fn quoted_value(v: &str) -> String {
    let plain = v.len() <= QUOTE_CHARS
        && v.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ');
    if plain {
        v.to_owned()
    } else {
        short(v, QUOTE_CHARS)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod wording_tests;

#[cfg(test)]
mod real_tests;
