//! A run analysed against a good run of the same task (`analyze BAD --against GOOD`,
//! docs/compare.md, "In the ranking"): the first divergence of the two runs becomes one more
//! finding for the ranking, on the step where the run parts from the good one (or the model step
//! that made that call), and the report's `against` section says where the runs part. The
//! comparison itself is made by the caller ([`crate::analysis::compare::compare`]) and handed in,
//! so the screen can show the same one. Pure; no I/O.

use crate::analysis::compare::{Class, Comparison, Difference, parents};
use crate::analysis::detect::{Category, DetectorId, Facts, Finding, Nature, decides};
use crate::analysis::model::{Run, RunStatus};
use crate::analysis::params::{FIRST_DIVERGENCE, WORDING_FACTOR};
use crate::analysis::rank::{Scored, decider, listed};
use crate::analysis::report::Role;
use crate::analysis::say::short;
use serde::{Deserialize, Serialize};

/// The good run and the comparison of the analysed run with it (`compare(good, analysed)`).
#[derive(Clone, Copy)]
pub struct Against<'a> {
    /// The run that went right.
    pub run: &'a Run,
    /// `compare(run, the analysed run)`.
    pub comparison: &'a Comparison,
}

/// `against`: the good run the analysed one was compared with, and where they part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgainstSection {
    /// The good run's id.
    pub run: String,
    /// The good run's status as recorded (a comparison with a run that did not succeed is
    /// allowed, and said).
    pub status: RunStatus,
    /// The good run's number of steps.
    pub steps: usize,
    /// Where the analysed run first does something else (null: the runs do the same thing).
    pub first_divergence: Option<AgainstDivergence>,
    /// How many differences of each class the comparison found.
    pub differences: DifferenceCounts,
    /// The step the ranking gave the divergence to (the divergent step, or the model step that
    /// made its call), when the run failed and the runs part.
    pub suspect: Option<StepAt>,
    /// The good run's final answer is the reference of the influence ranking (no `--reference`
    /// or `--no-reference` was given and the good run has a final answer).
    pub reference: bool,
}

/// A step: its id and 0-based position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepAt {
    /// The step's id.
    pub step: String,
    /// Its 0-based position.
    pub index: usize,
}

/// A step where the runs part, with the steps that hold it (outermost first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlacedStep {
    /// The step's id.
    pub step: String,
    /// Its 0-based position.
    pub index: usize,
    /// The steps that hold it, outermost first.
    pub parents: Vec<StepAt>,
}

/// The first divergence, as `diff --json` writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgainstDivergence {
    /// The good run's step there (null when the good run had ended).
    pub good: Option<PlacedStep>,
    /// The analysed run's step there (null when it had ended).
    pub bad: Option<PlacedStep>,
    /// What differs.
    pub what: DivergenceWhat,
}

/// What differs at the first divergence (docs/compare.md, "What counts as a divergence").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivergenceWhat {
    /// The row of the alignment.
    pub row: Option<usize>,
    /// `argument`, `tool`, `skipped`, `extra`, ...
    pub change: String,
    /// `action` or `message`.
    pub class: String,
    /// The tool, for a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Which part differs (an argument's path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The good run's side, short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_value: Option<String>,
    /// The analysed run's side, short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_value: Option<String>,
    /// The difference in one sentence about the analysed run ("here").
    pub text: String,
}

/// Differences counted by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DifferenceCounts {
    /// In what the runs did.
    pub action: usize,
    /// In what they said.
    pub message: usize,
    /// In wording only.
    pub wording: usize,
}

/// The finding the first divergence adds to the ranking, and the step it was put on.
pub struct DivergenceFinding {
    /// The finding, scored.
    pub scored: Scored,
    /// The step it is on.
    pub step: usize,
}

/// How the divergence's evidence line starts.
pub const EVIDENCE: &str = "the first divergence from the good run";

/// The divergence's difference and the analysed run's step there.
fn divergence(cmp: &Comparison) -> Option<(&Difference, usize)> {
    let d = cmp.first_divergence.as_ref()?;
    Some((cmp.differences.get(d.what)?, d.bad?))
}

/// The finding the first divergence adds (`None` when the runs do the same thing, or the run
/// had ended where the good one went on). It goes on the divergent step when a rule already
/// blamed it, else on the model step that made its call when a rule blamed that, else on that
/// model step (a decision is blamed, not the call that carried it out), else on the step.
pub fn finding(
    facts: &Facts<'_>,
    against: &Against<'_>,
    scored: &[Scored],
) -> Option<DivergenceFinding> {
    let run = facts.run;
    let (d, bad) = divergence(against.comparison)?;
    let step = run.steps.get(bad)?;
    let producer = if decides(step) {
        Some(bad)
    } else {
        decider(facts, bad)
    };
    let blamed = |i: usize| {
        scored
            .iter()
            .any(|s| s.finding.step == i && listed(s) && !s.finding.category.is_lead())
    };
    let target = match producer {
        _ if blamed(bad) => bad,
        Some(p) => p,
        None => bad,
    };
    let sentence = short(&d.sentence(), 240);
    let good_id = short(&against.run.id, 80);
    let mut f = Finding::new(
        target,
        Category::FirstDivergence,
        DetectorId::Compare,
        FIRST_DIVERGENCE,
        Nature::Suspect,
        format!("Where this run first parts from the good run '{good_id}'"),
    );
    f.evidence
        .push(format!("{EVIDENCE} '{good_id}': {sentence}"));
    if let Some(g) = against
        .comparison
        .first_divergence
        .as_ref()
        .and_then(|x| x.good)
        && let Some(gs) = against.run.steps.get(g)
    {
        f.evidence.push(format!(
            "the good run's step at that point: {} ({})",
            gs.describe(),
            gs.kind.as_str()
        ));
    }
    if target != bad {
        f.shown_at = Some(bad);
        f.evidence.push(format!(
            "the runs part at {}, the call this step made",
            step.describe()
        ));
    }
    f.evidence.push(
        "a difference from one good run narrows the search; it is not proof: a re-run shows whether it matters".to_owned(),
    );
    let score = if d.class == Class::Action {
        FIRST_DIVERGENCE
    } else {
        FIRST_DIVERGENCE * WORDING_FACTOR
    };
    Some(DivergenceFinding {
        scored: Scored {
            finding: f,
            role: Role::Suspect,
            cause: None,
            score,
        },
        step: target,
    })
}

fn step_at(run: &Run, i: usize) -> Option<StepAt> {
    run.steps.get(i).map(|s| StepAt {
        step: s.id.0.clone(),
        index: i,
    })
}

fn placed(run: &Run, i: Option<usize>) -> Option<PlacedStep> {
    let at = step_at(run, i?)?;
    Some(PlacedStep {
        parents: parents(run, at.index)
            .into_iter()
            .filter_map(|p| step_at(run, p))
            .collect(),
        step: at.step,
        index: at.index,
    })
}

/// The report's `against` section: `bad` is the analysed run, `suspect` the step the ranking
/// gave the divergence to (when it listed it), `reference` whether the good run's final answer
/// was the influence reference.
pub fn section(
    against: &Against<'_>,
    bad: &Run,
    suspect: Option<usize>,
    reference: bool,
) -> AgainstSection {
    let cmp = against.comparison;
    let good = against.run;
    let mut differences = DifferenceCounts::default();
    for d in &cmp.differences {
        match d.class {
            Class::Action => differences.action += 1,
            Class::Message => differences.message += 1,
            Class::Wording => differences.wording += 1,
        }
    }
    let first_divergence = cmp.first_divergence.as_ref().and_then(|f| {
        let d = cmp.differences.get(f.what)?;
        Some(AgainstDivergence {
            good: placed(good, f.good),
            bad: placed(bad, f.bad),
            what: DivergenceWhat {
                row: d.row,
                change: d.change.as_str().to_owned(),
                class: d.class.as_str().to_owned(),
                tool: d.tool.clone(),
                key: d.key.clone(),
                good_value: d.good_value.clone(),
                bad_value: d.bad_value.clone(),
                text: d.sentence(),
            },
        })
    });
    AgainstSection {
        run: good.id.clone(),
        status: good.status,
        steps: good.steps.len(),
        first_divergence,
        differences,
        suspect: suspect.and_then(|i| step_at(bad, i)),
        reference,
    }
}

/// The section in sentences for the text and Markdown pages (run text as recorded: make it
/// inert before printing): the good run and the counts, where the runs part and what differs,
/// and what the ranking and the influence made of it.
pub fn sentences(a: &AgainstSection) -> Vec<String> {
    let mut out = vec![format!(
        "Compared with the good run '{}' ({}, {}): {} in what the runs did, {} in what they said, {} in wording only.",
        a.run,
        a.status.as_str(),
        crate::analysis::count::counted(a.steps, "step", "steps"),
        crate::analysis::count::counted(a.differences.action, "difference", "differences"),
        a.differences.message,
        a.differences.wording,
    )];
    if a.status != RunStatus::Succeeded {
        out.push(format!(
            "The run compared with did not succeed (it {}): where the runs part says little about what went wrong.",
            a.status.as_str()
        ));
    }
    match &a.first_divergence {
        None => out.push(
            "No divergence: the runs do the same thing (ids, times and wording aside).".to_owned(),
        ),
        Some(d) => {
            let side = |p: &Option<PlacedStep>, ended: &str| match p {
                Some(p) => crate::analysis::model::describe_step(&p.step, p.index),
                None => ended.to_owned(),
            };
            out.push(format!(
                "First divergence: this run's {} · the good run's {}: {}",
                side(&d.bad, "end (it had ended)"),
                side(&d.good, "end (it had ended)"),
                d.what.text
            ));
            match &a.suspect {
                Some(s) => out.push(format!(
                    "The ranking counts it as evidence on {}.",
                    crate::analysis::model::describe_step(&s.step, s.index)
                )),
                None => out.push(
                    "The ranking does not count it: the run did not fail, or it had ended where the good run went on.".to_owned(),
                ),
            }
        }
    }
    if a.reference {
        out.push(
            "The good run's final answer is the reference of the influence ranking.".to_owned(),
        );
    }
    out
}
