//! The optional judge (docs/how-it-decides.md, "The judge"; runner.md "The judge"): the trait
//! the analysis asks, the request and answer shapes, when to ask, and how an answer becomes one
//! more finding.
//!
//! The judge is asked only when the run failed or crashed and the best rule score is under
//! [`JUDGE_BELOW`]. Its finding (detector `judge`) takes the answer's confidence when it is a
//! number in [0, 1], else [`JUDGE_CAP`], and never more than that; its evidence says what the
//! rules picked; a plan proposed at one model step and carried out at a later one blames the
//! later step. A missing, failing, slow or nonsensical judge leaves the rules' verdict standing.
//! This module runs nothing: a process-backed judge lives in `experiments::command_judge`.

use crate::analysis::detect::{Category, DetectorId, Facts, Finding, Nature};
use crate::analysis::links::tokens::clip;
use crate::analysis::model::{Run, RunStatus, StepKind};
use crate::analysis::params::{
    JUDGE_BELOW, JUDGE_CAP, JUDGE_MAX_FINDINGS, JUDGE_MAX_TRANSCRIPT, JUDGE_TEXT_CHARS,
    JUDGE_TRANSCRIPT_HEAD, JUDGE_TRANSCRIPT_TAIL,
};
use crate::analysis::rank::SuspectEntry;
use crate::analysis::say::{quote, short, step as step_name};
use crate::analysis::whole_words::find_phrase;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Phrases of a model step proposing a plan (the judge's plan rule).
pub const PLAN_WORDS: &[&str] = &[
    "plan",
    "i will",
    "i'll",
    "next i",
    "next, i",
    "step 1",
    "first,",
    "first i",
    "then i",
    "let's",
    "let me",
    "we should",
    "i should",
    "i am going to",
    "i'm going to",
    "going to",
];

/// Why a judge gave nothing usable; the message goes to `report.judge.error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct JudgeError(pub String);

/// Something that reads a short transcript and names the step to blame. `Send + Sync` so the
/// screen can analyse off its drawing thread.
pub trait Judge: Send + Sync {
    /// Asks once; the answer is the JSON object the judge gave, not yet checked.
    fn ask(&self, request: &JudgeRequest) -> Result<Value, JudgeError>;
}

/// What the judge is sent (one JSON object on its stdin).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeRequest {
    /// The run's id.
    pub run_id: String,
    /// What the user asked.
    pub task: Option<String>,
    /// What the agent finally said.
    pub final_answer: Option<String>,
    /// The steps, each text cut to 2,000 characters.
    pub transcript: Vec<TranscriptEntry>,
    /// What the rules found, best first.
    pub findings: Vec<JudgeFinding>,
}

/// One step of the transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// Step id.
    pub step: String,
    /// 0-based position.
    pub index: usize,
    /// Step kind.
    pub kind: String,
    /// Which agent acted.
    pub agent: Option<String>,
    /// The step's label.
    pub name: Option<String>,
    /// What it said or did, cut to 2,000 characters.
    pub text: String,
}

/// One rule finding as the judge sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeFinding {
    /// Step id.
    pub step: String,
    /// 0-based position.
    pub index: usize,
    /// Category name.
    pub category: String,
    /// Detector name.
    pub detector: String,
    /// Ranking score (orders findings; not a probability).
    pub score: f64,
    /// One line for people.
    pub title: String,
}

/// A checked answer.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeAnswer {
    /// The named step's position.
    pub step: usize,
    /// The judge's reason.
    pub reason: String,
    /// The confidence its finding gets.
    pub confidence: f64,
}

/// True when the judge should be asked: the run failed or crashed and no rule score rose above
/// [`JUDGE_BELOW`].
pub fn should_ask(status: RunStatus, best_rule_score: Option<f64>) -> bool {
    matches!(status, RunStatus::Failed | RunStatus::Error)
        && best_rule_score.is_none_or(|s| s <= JUDGE_BELOW)
}

/// The text of one step for the transcript.
fn step_text(facts: &Facts<'_>, i: usize) -> String {
    let run = facts.run;
    let Some(s) = run.steps.get(i) else {
        return String::new();
    };
    let mut t = String::new();
    match s.kind {
        StepKind::Tool => {
            if let Some(c) = &s.tool {
                t.push_str(&format!(
                    "{}({})",
                    c.name,
                    clip(&c.arguments.to_string(), JUDGE_TEXT_CHARS)
                ));
            }
            match &s.error {
                Some(e) => t.push_str(&format!(" -> error: {e}")),
                None => t.push_str(&format!(" -> {}", facts.texts.produced(i))),
            }
        }
        StepKind::User => t.push_str(&facts.texts.produced(i)),
        _ => {
            let input = facts.texts.consumed(i);
            if !input.is_empty() && !s.kind.is_model() {
                t.push_str(&input);
                t.push_str(" -> ");
            }
            t.push_str(&facts.texts.produced(i));
            if let Some(e) = &s.error {
                t.push_str(&format!(" (error: {e})"));
            }
        }
    }
    t.chars().take(JUDGE_TEXT_CHARS).collect()
}

/// Builds the request: the first steps, the flagged ones and the last ones when the run is
/// longer than [`JUDGE_MAX_TRANSCRIPT`], in order.
pub fn build_request(facts: &Facts<'_>, suspects: &[SuspectEntry]) -> JudgeRequest {
    let run = facts.run;
    let n = run.steps.len();
    let mut keep: Vec<usize> = if n <= JUDGE_MAX_TRANSCRIPT {
        (0..n).collect()
    } else {
        let flagged_room = JUDGE_MAX_TRANSCRIPT - JUDGE_TRANSCRIPT_HEAD - JUDGE_TRANSCRIPT_TAIL;
        let mut k: Vec<usize> = (0..JUDGE_TRANSCRIPT_HEAD).collect();
        k.extend(suspects.iter().map(|s| s.step).take(flagged_room));
        k.extend(n.saturating_sub(JUDGE_TRANSCRIPT_TAIL)..n);
        k
    };
    keep.sort_unstable();
    keep.dedup();
    let transcript = keep
        .into_iter()
        .filter_map(|i| {
            let s = run.steps.get(i)?;
            Some(TranscriptEntry {
                step: s.id.0.clone(),
                index: i,
                kind: s.kind_label().to_owned(),
                agent: s.agent.clone(),
                name: s.name.clone(),
                text: step_text(facts, i),
            })
        })
        .collect();
    let findings = suspects
        .iter()
        .take(JUDGE_MAX_FINDINGS)
        .filter_map(|s| {
            Some(JudgeFinding {
                step: run.steps.get(s.step)?.id.0.clone(),
                index: s.step,
                category: s.category.as_str().to_owned(),
                detector: s.detector.as_str().to_owned(),
                score: s.score,
                title: s.title.clone(),
            })
        })
        .collect();
    JudgeRequest {
        run_id: run.id.clone(),
        task: run
            .task
            .as_deref()
            .map(|t| t.chars().take(JUDGE_TEXT_CHARS).collect()),
        final_answer: run
            .final_answer
            .as_deref()
            .map(|t| t.chars().take(JUDGE_TEXT_CHARS).collect()),
        transcript,
        findings,
    }
}

/// Checks an answer: `{"step": id or 0-based index, "reason": text, "confidence"?: number}`.
/// A step not in the run or a missing reason is nonsensical.
pub fn read_answer(run: &Run, v: &Value) -> Result<JudgeAnswer, JudgeError> {
    let Value::Object(o) = v else {
        return Err(JudgeError(
            "the judge's answer is not a JSON object".to_owned(),
        ));
    };
    let step = match o.get("step") {
        Some(Value::String(id)) => run.step_index(id).ok_or_else(|| {
            JudgeError(format!(
                "the judge named step {}, which is not in the run",
                quote(id)
            ))
        })?,
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < run.steps.len())
            .ok_or_else(|| {
                JudgeError(format!(
                    "the judge named position {n}, which is not in the run (0 to {})",
                    run.steps.len().saturating_sub(1)
                ))
            })?,
        Some(_) => {
            return Err(JudgeError(
                "the judge's \"step\" is neither a step id nor an index".to_owned(),
            ));
        }
        None => return Err(JudgeError("the judge's answer has no \"step\"".to_owned())),
    };
    let reason = match o.get("reason") {
        Some(Value::String(r)) if !r.trim().is_empty() => r.trim().to_owned(),
        _ => {
            return Err(JudgeError(
                "the judge's answer has no \"reason\"".to_owned(),
            ));
        }
    };
    let confidence = o
        .get("confidence")
        .and_then(Value::as_f64)
        .filter(|c| (0.0..=1.0).contains(c))
        .unwrap_or(JUDGE_CAP)
        .min(JUDGE_CAP);
    Ok(JudgeAnswer {
        step,
        reason,
        confidence,
    })
}

/// The judge's answer as a finding. When it names a model step that proposed a plan and a later
/// tool call carried it out (issued by it, or using its values), the decision that made that
/// call (the model step that issued it) is blamed.
pub fn finding_from(
    facts: &Facts<'_>,
    answer: &JudgeAnswer,
    rules_top: Option<&SuspectEntry>,
) -> Finding {
    let run = facts.run;
    let mut at = answer.step;
    let mut plan_line = None;
    if let Some(k) = carried_out(facts, answer.step) {
        // The decision is blamed, not the call's result: the model step that made the call.
        let decided = facts.caller(k).unwrap_or(k);
        plan_line = Some(if decided == k {
            format!(
                "plan first proposed at {}; carried out at {}",
                step_name(run, answer.step),
                step_name(run, k)
            )
        } else {
            format!(
                "plan first proposed at {}; carried out by the call at {}, made at {}",
                step_name(run, answer.step),
                step_name(run, k),
                step_name(run, decided)
            )
        });
        at = decided;
    }
    let mut f = Finding::new(
        at,
        Category::JudgePick,
        DetectorId::Judge,
        answer.confidence,
        Nature::Suspect,
        format!("the judge blames this step: {}", short(&answer.reason, 100)),
    )
    .because(format!(
        "the judge named {}: {}",
        step_name(run, answer.step),
        quote(&answer.reason)
    ));
    if let Some(l) = plan_line {
        f = f.because(l);
    }
    let rules = match rules_top {
        Some(s) => format!(
            "the rules picked {} ({}) as the top suspect",
            step_name(run, s.step),
            s.category.as_str().replace('_', " ")
        ),
        None => "the rules found no suspect".to_owned(),
    };
    f.because(rules)
}

/// The first later tool call that carried out a plan proposed at model step `p`: a call it
/// issued, or one whose arguments use a value `p` wrote (the first state-changing one, else the
/// first).
fn carried_out(facts: &Facts<'_>, p: usize) -> Option<usize> {
    let run = facts.run;
    let s = run.steps.get(p)?;
    if !s.kind.is_model()
        || find_phrase(&facts.texts.produced(p).to_lowercase(), PLAN_WORDS).is_none()
    {
        return None;
    }
    let uses_plan = |k: usize| {
        facts.caller(k) == Some(p)
            || facts.links.into_step(k).iter().any(|u| {
                facts
                    .links
                    .producers_of(facts.links.value(u.value))
                    .binary_search(&u32::try_from(p).unwrap_or(u32::MAX))
                    .is_ok()
            })
    };
    let dependents: Vec<usize> = (p + 1..run.steps.len())
        .filter(|&k| run.steps.get(k).is_some_and(|t| t.kind == StepKind::Tool))
        .filter(|&k| uses_plan(k))
        .collect();
    dependents
        .iter()
        .copied()
        .find(|&k| facts.mutating(k))
        .or_else(|| dependents.first().copied())
}

#[cfg(test)]
mod tests;
