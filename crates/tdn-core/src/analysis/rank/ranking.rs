//! Ranking (docs/how-it-decides.md, "Rank"): every finding's score starts from its confidence;
//! x1.2 for a root cause found by the walk back, x0.8 for a symptom with a known cause, x0.6 for
//! a document or memory read that no later step used, x0.7 for a wording problem in a run that
//! also changed something (and never above the best finding on a tool call), capped at 0.99.
//! Then one suspect per step: its best finding, the others adding their evidence.
//! Scores only put suspects in order; they are not probabilities.

use super::Role;
use super::walk_back::Walked;
use crate::analysis::detect::{Category, DetectorId, Facts, Finding};
use crate::analysis::model::StepKind;
use crate::analysis::params::{
    EARLIEST_SLOT, MAX_EVIDENCE_LINES, ROOT_CAUSE_FACTOR, SCORE_CAP, STRONG, SYMPTOM_FACTOR,
    UNUSED_READ_FACTOR, WORDING_CAP_GAP, WORDING_FACTOR,
};
use std::collections::HashMap;

/// A finding with its role and score.
#[derive(Clone, Debug)]
pub struct Scored {
    /// The finding.
    pub finding: Finding,
    /// How it was found.
    pub role: Role,
    /// For a symptom: the step that caused it.
    pub cause: Option<usize>,
    /// After the multipliers.
    pub score: f64,
}

/// One suspect: a step, its best finding, the evidence of all its findings.
#[derive(Clone, Debug, PartialEq)]
pub struct SuspectEntry {
    /// The step's position.
    pub step: usize,
    /// The best finding's category.
    pub category: Category,
    /// The best finding's detector.
    pub detector: DetectorId,
    /// The best finding's title.
    pub title: String,
    /// The best finding's score.
    pub score: f64,
    /// The best finding's confidence.
    pub confidence: f64,
    /// The best finding's role.
    pub role: Role,
    /// The best finding's cause.
    pub cause: Option<usize>,
    /// Evidence of the best finding, then of the others.
    pub evidence: Vec<String>,
}

/// Scores every finding.
pub fn score_all(facts: &Facts<'_>, walked: Vec<Walked>) -> Vec<Scored> {
    let run = facts.run;
    let mut out: Vec<Scored> = walked
        .into_iter()
        .map(|w| {
            let mut s = w.finding.confidence;
            match w.role {
                Role::RootCause => s *= ROOT_CAUSE_FACTOR,
                Role::Symptom if w.cause.is_some() => s *= SYMPTOM_FACTOR,
                _ => {}
            }
            if w.finding.about_read && !facts.used_later(w.finding.step) {
                s *= UNUSED_READ_FACTOR;
            }
            Scored {
                finding: w.finding,
                role: w.role,
                cause: w.cause,
                score: s.min(SCORE_CAP),
            }
        })
        .collect();
    if facts.changed_something() {
        // Leads name no fault: they do not cap the suspects' scores.
        let best_tool = out
            .iter()
            .filter(|x| !x.finding.wording && !x.finding.category.is_lead())
            .filter(|x| {
                // A finding on a call, or moved from a call to the decision that made it.
                run.steps
                    .get(x.finding.shown_at.unwrap_or(x.finding.step))
                    .is_some_and(|s| s.kind == StepKind::Tool)
            })
            .map(|x| x.score)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        for x in out.iter_mut().filter(|x| x.finding.wording) {
            x.score *= WORDING_FACTOR;
            if let Some(b) = best_tool {
                x.score = x.score.min(b - WORDING_CAP_GAP);
            }
        }
    }
    for x in &mut out {
        x.score = if x.score.is_finite() {
            x.score.clamp(0.0, SCORE_CAP)
        } else {
            0.0
        };
    }
    out
}

/// True when a finding is listed among the suspects: every finding but one on a step that only
/// showed a decision's effect (a failed call whose cause is known; its cause carries the
/// evidence). A model step's own wrong words stay listed, even with a cause upstream.
pub fn listed(s: &Scored) -> bool {
    !s.finding.effect_only
}

/// The ranked steps of a run: the suspects, each naming a fault, best first; and the leads,
/// steps listed only for where they sit or because they wrote the final answer
/// ([`Category::is_lead`]), best first, apart from the suspects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ranked {
    /// One per step whose findings name a fault, best first.
    pub suspects: Vec<SuspectEntry>,
    /// One per step whose findings are all leads, best first.
    pub leads: Vec<SuspectEntry>,
}

/// The suspects of [`rank_steps`].
pub fn suspects(scored: Vec<Scored>) -> Vec<SuspectEntry> {
    rank_steps(scored).suspects
}

/// One entry per step, best first (ties: earlier step first). A step that only showed a
/// decision's effect is not listed ([`listed`]). A step is a suspect when any of its findings
/// names a fault, and that finding (its best such) gives its category; a step whose findings
/// are all leads is a lead. The other findings on a step add their evidence.
pub fn rank_steps(scored: Vec<Scored>) -> Ranked {
    let mut by_step: HashMap<usize, Vec<Scored>> = HashMap::new();
    // A repeated failure's step -> the decision behind the first failure of its kind.
    let mut began: HashMap<usize, usize> = HashMap::new();
    for s in scored.into_iter().filter(listed) {
        if s.finding.category == Category::RepeatedFailure
            && let Some(&b) = s.finding.upstream.iter().min()
        {
            began.insert(s.finding.step, b);
        }
        by_step.entry(s.finding.step).or_default().push(s);
    }
    let (mut suspects, mut leads): (Vec<SuspectEntry>, Vec<SuspectEntry>) = by_step
        .into_iter()
        .filter_map(|(step, mut list)| {
            list.sort_by(|a, b| {
                a.finding
                    .category
                    .is_lead()
                    .cmp(&b.finding.category.is_lead())
                    .then(b.score.total_cmp(&a.score))
                    .then(b.finding.confidence.total_cmp(&a.finding.confidence))
            });
            let mut it = list.into_iter();
            let best = it.next()?;
            let mut evidence = best.finding.evidence.clone();
            for other in it {
                push_line(&mut evidence, format!("also: {}", other.finding.title));
                for e in other.finding.evidence {
                    push_line(&mut evidence, e);
                }
            }
            evidence.truncate(MAX_EVIDENCE_LINES);
            Some(SuspectEntry {
                step,
                category: best.finding.category,
                detector: best.finding.detector,
                title: best.finding.title,
                score: best.score,
                confidence: best.finding.confidence,
                role: best.role,
                cause: best.cause,
                evidence,
            })
        })
        .partition(|e| !e.category.is_lead());
    let order = |a: &SuspectEntry, b: &SuspectEntry| {
        b.score
            .total_cmp(&a.score)
            .then(b.confidence.total_cmp(&a.confidence))
            .then(a.step.cmp(&b.step))
    };
    suspects.sort_by(order);
    leads.sort_by(order);
    earliest_strong_first(&mut suspects);
    where_the_repeats_began_second(&mut suspects, &began);
    Ranked { suspects, leads }
}

/// The decisive error first: the earliest suspect with strong evidence ([`strong`]) leads, at the top score, and its evidence says
/// so; then the earliest of the others, when it ranks below [`EARLIEST_SLOT`], moves up to that
/// place at the score of the suspect it displaces. The rest keep their order by score.
fn earliest_strong_first(out: &mut Vec<SuspectEntry>) {
    strong_first(out);
    let Some(k) = out
        .iter()
        .enumerate()
        .skip(1)
        .min_by_key(|(_, s)| s.step)
        .map(|(k, _)| k)
        .filter(|&k| k > EARLIEST_SLOT)
    else {
        return;
    };
    let Some(score) = out.get(EARLIEST_SLOT).map(|s| s.score) else {
        return;
    };
    let mut e = out.remove(k);
    e.score = e.score.max(score);
    e.evidence.truncate(MAX_EVIDENCE_LINES - 1);
    e.evidence.push(
        "the earliest of the other suspects: ranked near the top, since the decisive error is the earliest one"
            .to_owned(),
    );
    out.insert(EARLIEST_SLOT.min(out.len()), e);
}

/// True when a suspect's evidence is strong: its score, without the lift a root cause gets
/// ([`ROOT_CAUSE_FACTOR`]), is above [`STRONG`] (its rule was measured more precise than the rules
/// on average; a rule never measured weighs exactly that and is not). A symptom with a known
/// cause (scored down, x0.8) or a read nothing used (x0.6) is not, unless its rule is far above
/// the rest.
fn strong(s: &SuspectEntry) -> bool {
    let lift = if s.role == Role::RootCause {
        ROOT_CAUSE_FACTOR
    } else {
        1.0
    };
    s.score > STRONG * lift
}

fn strong_first(out: &mut Vec<SuspectEntry>) {
    let Some(k) = out
        .iter()
        .enumerate()
        .filter(|(_, s)| strong(s))
        .min_by_key(|(_, s)| s.step)
        .map(|(k, _)| k)
    else {
        return;
    };
    if k == 0 {
        return;
    }
    let top = out.first().map_or(0.0, |s| s.score);
    let mut e = out.remove(k);
    e.score = e.score.max(top);
    e.evidence.truncate(MAX_EVIDENCE_LINES - 1);
    e.evidence.push(
        "the earliest step with strong evidence: ranked first, since the decisive error is the earliest one"
            .to_owned(),
    );
    out.insert(0, e);
}

/// An earlier cause before its later symptoms: when the first suspect repeated a failure
/// (`repeated_failure`) and the decision behind the first failure of that kind is a suspect
/// ranked below second, it moves up to second place, at the score of the suspect it displaces.
/// The repeats are what followed that first failure.
fn where_the_repeats_began_second(out: &mut Vec<SuspectEntry>, began: &HashMap<usize, usize>) {
    let Some(b) = out.first().and_then(|top| began.get(&top.step)).copied() else {
        return;
    };
    let Some(k) = out.iter().position(|s| s.step == b).filter(|&k| k > 1) else {
        return;
    };
    let score = out.get(1).map_or(0.0, |s| s.score);
    let mut e = out.remove(k);
    e.score = e.score.max(score);
    e.evidence.truncate(MAX_EVIDENCE_LINES - 1);
    e.evidence.push(
        "where the repeated failures began: ranked second, right after the repeat ranked first"
            .to_owned(),
    );
    out.insert(1, e);
}

fn push_line(lines: &mut Vec<String>, line: String) {
    if !line.is_empty() && !lines.contains(&line) {
        lines.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::check_claims;
    use crate::analysis::detect::detect_all;
    use crate::analysis::links::{LinkGraph, StepTexts};
    use crate::analysis::model::Run;
    use crate::analysis::rank::walk_back;
    use crate::analysis::testutil::{RunBuilder, doc};
    use serde_json::json;

    fn ranked(run: &Run) -> Vec<SuspectEntry> {
        let texts = StepTexts::build(run);
        let links = LinkGraph::build(run, &texts);
        let claims = check_claims(run, &texts);
        let facts = Facts::new(run, &texts, &links, &claims);
        suspects(score_all(&facts, walk_back(&facts, detect_all(&facts))))
    }

    fn score_of(s: &[SuspectEntry], step: usize) -> f64 {
        s.iter()
            .find(|x| x.step == step)
            .map_or(f64::NAN, |x| x.score)
    }

    #[test]
    fn a_read_no_later_step_used_scores_x0_6_and_a_used_one_does_not() {
        let run = RunBuilder::failed()
            .retrieval("s1", "warranty", vec![])
            .retrieval(
                "s2",
                "refund",
                vec![doc("p", "Refunds for plan PL-7781 are $120 now.", true)],
            )
            .llm_io("s3", "Refunds for plan PL-7781 are $120 now.", "ok")
            .retrieval(
                "s4",
                "refund",
                vec![doc("q", "Refunds for plan PL-9999 are $300 now.", true)],
            )
            .build();
        let s = ranked(&run);
        assert!((score_of(&s, 0) - EMPTY_RETRIEVAL_UNUSED).abs() < 1e-9);
        assert!((score_of(&s, 1) - crate::analysis::params::OUTDATED_SOURCE).abs() < 1e-9);
        assert!(
            (score_of(&s, 3) - crate::analysis::params::OUTDATED_SOURCE * UNUSED_READ_FACTOR).abs()
                < 1e-9
        );
    }

    const EMPTY_RETRIEVAL_UNUSED: f64 =
        crate::analysis::params::EMPTY_RETRIEVAL * UNUSED_READ_FACTOR;

    #[test]
    fn a_wording_problem_in_a_run_that_changed_something_is_scaled_and_no_lead_caps_it() {
        let run = RunBuilder::failed()
            .tool_def("issue_refund", "", json!(null), true)
            .tool_ok(
                "s1",
                "issue_refund",
                json!({"order_id": "ORD-2211"}),
                json!({"amount": 19}),
            )
            .llm("s2", "Refunds for annual plans are $500 per the policy.")
            .retrieval(
                "s3",
                "policy",
                vec![doc(
                    "p",
                    "Refunds for annual plans are $80 per the policy.",
                    false,
                )],
            )
            .answer("Refunds for annual plans are $500 per the policy.")
            .build();
        let texts = StepTexts::build(&run);
        let links = LinkGraph::build(&run, &texts);
        let claims = check_claims(&run, &texts);
        let facts = Facts::new(&run, &texts, &links, &claims);
        let r = rank_steps(score_all(&facts, walk_back(&facts, detect_all(&facts))));
        // The first change of a failed run is a lead, not a suspect.
        let first_change = r.leads.iter().find(|x| x.step == 0);
        assert_eq!(
            first_change.map(|x| x.category),
            Some(Category::PointOfNoReturn)
        );
        assert!(r.suspects.iter().all(|x| x.step != 0));
        // The claim is wording in a run that changed something (x0.7); the lead scored 0.5 does
        // not cap it, since a lead names no fault.
        let claim = r
            .suspects
            .iter()
            .find(|x| x.category == Category::ContradictedClaim)
            .unwrap();
        let want = crate::analysis::params::CONTRADICTED_CLAIM * WORDING_FACTOR;
        assert!((claim.score - want).abs() < 1e-9, "{}", claim.score);
    }

    fn entry(step: usize, category: Category, score: f64) -> SuspectEntry {
        SuspectEntry {
            step,
            category,
            detector: DetectorId::ToolErrors,
            title: String::new(),
            score,
            confidence: score,
            role: Role::Suspect,
            cause: None,
            evidence: Vec::new(),
        }
    }

    fn order(mut v: Vec<SuspectEntry>) -> Vec<usize> {
        earliest_strong_first(&mut v);
        v.iter().map(|s| s.step).collect()
    }

    #[test]
    fn the_earliest_strong_suspect_leads_and_the_earliest_other_moves_up_to_third() {
        let weak = STRONG - 0.1;
        let strong = STRONG + 0.05;
        // By score: 20, 14, 15, 12, 4. The earliest strong suspect (12) leads; the earliest of
        // the others (4, weak) moves up to the third place.
        let list = vec![
            entry(20, Category::AnswerOrigin, strong + 0.2),
            entry(14, Category::ProgressStall, strong + 0.1),
            entry(15, Category::UnsupportedClaim, weak),
            entry(12, Category::BlockedPage, strong),
            entry(4, Category::ReissuedInstruction, weak - 0.1),
        ];
        assert_eq!(order(list), vec![12, 20, 4, 14, 15]);
        // The strong suspect already first and the earliest within the first three: no move.
        let settled = vec![
            entry(3, Category::MadeUpData, strong),
            entry(9, Category::UnsupportedClaim, weak),
            entry(1, Category::ReissuedInstruction, weak - 0.1),
        ];
        assert_eq!(order(settled), vec![3, 9, 1]);
        // No strong suspect: the order by score stands, but for the earliest moving up.
        let none = vec![
            entry(20, Category::UnsupportedClaim, weak),
            entry(15, Category::UnsupportedClaim, weak - 0.01),
            entry(13, Category::UnsupportedClaim, weak - 0.02),
            entry(4, Category::ReissuedInstruction, weak - 0.2),
        ];
        assert_eq!(order(none), vec![20, 15, 4, 13]);
    }

    fn scored(step: usize, category: Category, score: f64, upstream: Vec<usize>) -> Scored {
        let mut finding = Finding::new(
            step,
            category,
            DetectorId::RepeatedFailure,
            score,
            crate::analysis::detect::Nature::Suspect,
            String::new(),
        );
        finding.upstream = upstream;
        Scored {
            finding,
            role: Role::Suspect,
            cause: None,
            score,
        }
    }

    #[test]
    fn where_repeated_failures_began_ranks_second_after_a_repeat_that_leads() {
        let strong = STRONG + 0.2;
        let weak = STRONG - 0.05;
        let list = |began: Vec<usize>| {
            vec![
                scored(30, Category::RepeatedFailure, strong + 0.1, began),
                scored(33, Category::RepeatedCall, strong, vec![]),
                scored(11, Category::UnsupportedClaim, weak, vec![]),
                scored(22, Category::WrongValue, weak - 0.1, vec![]),
            ]
        };
        let steps = |r: Ranked| r.suspects.iter().map(|s| s.step).collect::<Vec<_>>();
        // The repeat at 30 leads; its kind of failure began with the decision at 22.
        let r = rank_steps(list(vec![22]));
        assert_eq!(steps(r.clone()), vec![30, 22, 33, 11]);
        assert!((r.suspects[1].score - strong).abs() < 1e-9);
        assert!(
            r.suspects[1]
                .evidence
                .iter()
                .any(|e| e.starts_with("where the repeated failures began"))
        );
        // Without that record, or when that decision is no suspect, the order stands.
        assert_eq!(steps(rank_steps(list(vec![]))), vec![30, 33, 11, 22]);
        assert_eq!(steps(rank_steps(list(vec![5]))), vec![30, 33, 11, 22]);
    }

    #[test]
    fn one_suspect_per_step_keeps_the_best_finding_and_the_others_evidence() {
        let run = RunBuilder::failed()
            .tool_def("create_event", "", json!(null), true)
            .tool_err(
                "s1",
                "create_event",
                json!({"start": "x"}),
                "upstream timed out",
            )
            .build();
        let s = ranked(&run);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].category, Category::ServiceError);
        assert!(
            s[0].evidence
                .iter()
                .any(|e| e.starts_with("also: the first state-changing call"))
        );
        assert!(s[0].evidence.len() <= MAX_EVIDENCE_LINES);
    }
}
