//! Ranking (docs/how-it-decides.md, "Rank"): every finding's score starts from its confidence;
//! x1.2 for a root cause found by the walk back, x0.8 for a symptom with a known cause, x0.6 for
//! a document or memory read that no later step used, x0.7 for a wording problem in a run that
//! also changed something (and never above the best finding on a tool call), capped at 0.99.
//! Then one suspect per step: its best finding, the others adding their evidence.
//! Scores only put suspects in order; they are not probabilities.

use super::params::{
    MAX_EVIDENCE_LINES, ROOT_CAUSE_FACTOR, SCORE_CAP, SYMPTOM_FACTOR, UNUSED_READ_FACTOR,
    WORDING_CAP_GAP, WORDING_FACTOR,
};
use super::walk_back::Walked;
use crate::analysis::detect::{Category, DetectorId, Facts, Finding};
use crate::analysis::model::StepKind;
use crate::analysis::report::Role;
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
        let best_tool = out
            .iter()
            .filter(|x| !x.finding.wording)
            .filter(|x| {
                run.steps
                    .get(x.finding.step)
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

/// One suspect per step, best first (ties: earlier step first).
pub fn suspects(scored: Vec<Scored>) -> Vec<SuspectEntry> {
    let mut by_step: HashMap<usize, Vec<Scored>> = HashMap::new();
    for s in scored {
        by_step.entry(s.finding.step).or_default().push(s);
    }
    let mut out: Vec<SuspectEntry> = by_step
        .into_iter()
        .filter_map(|(step, mut list)| {
            list.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
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
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.step.cmp(&b.step)));
    out
}

fn push_line(lines: &mut Vec<String>, line: String) {
    if !line.is_empty() && !lines.contains(&line) {
        lines.push(line);
    }
}
