//! What a front end may ask for ([`Request`], naming [`Target`]s as the user pointed at them) and
//! what the engine makes of it: a [`Plan`] of probes, each one [`Intervention`] against a shared
//! baseline, checked against the run once. Every rule about what can be tested lives here, so the
//! command line and the screen refuse the same things for the same reasons: a run without a final
//! answer, an id the run does not hold, a step that produced no unit to remove, an empty list.
//! A shortlist sweep and `localize` are capped by `[experiments] max_suspects` (and
//! `max_candidates` for restorations), and the plan says how many were left out.
//!
//! Pure: reads the run and the report, nothing else. Linear in the run's size.

use super::Subject;
use super::error::{EngineError, PlanError};
use crate::analysis::count::group;
use crate::analysis::model::{Run, StepId, UnitId, inert_line};
use crate::config::UserCommand;
use crate::experiments::event::ProbeInfo;
use crate::experiments::intervention::{Intervention, quoted};
use crate::experiments::localize::{TierPlan, plan_tiers, report_dropped, report_subjects};
use crate::experiments::session::{Probe, ProbeId};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What the user pointed at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A context unit.
    Unit(UnitId),
    /// A step: ablating it removes the units it produced (`produced_by`).
    Step(StepId),
    /// An id as typed on the command line: the unit of that id when the run has one, else the
    /// step of that id.
    Id(String),
}

impl Target {
    /// The id as given.
    pub fn id(&self) -> &str {
        match self {
            Target::Unit(u) => u.as_str(),
            Target::Step(s) => s.as_str(),
            Target::Id(i) => i,
        }
    }

    /// In words: `unit 'u3'`, `the units step 's3' produced`, `'x'`.
    pub fn label(&self) -> String {
        match self {
            Target::Unit(u) => format!("unit '{}'", inert_line(u.as_str())),
            Target::Step(s) => format!("the units step '{}' produced", inert_line(s.as_str())),
            Target::Id(i) => format!("'{}'", inert_line(i)),
        }
    }
}

/// What a front end asks the engine to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// The baseline alone: is the unchanged scenario stable?
    Baseline,
    /// One probe that leaves out everything named, together (a unit, or what a step produced).
    Ablate(Vec<Target>),
    /// One probe per target, each left out alone (a shortlist), at most `max_suspects`.
    AblateEach(Vec<Target>),
    /// One probe that puts these units back, together.
    Restore(Vec<UnitId>),
    /// Re-run from a step, with an optional patched output.
    Replay {
        /// The step.
        from: StepId,
        /// The output it should produce instead.
        patch: Option<String>,
    },
    /// The whole pipeline on the report: a baseline, the ranked units one at a time (at most
    /// `max_suspects`), the dropped units one at a time (at most `max_candidates`).
    Localize,
}

impl Request {
    /// In a few words, for job lists and confirmations.
    pub fn label(&self) -> String {
        match self {
            Request::Baseline => "baseline only".to_owned(),
            Request::Ablate(t) if t.len() == 1 => {
                format!(
                    "ablate {}",
                    t.first().map(Target::label).unwrap_or_default()
                )
            }
            Request::Ablate(t) => format!("ablate {} targets together", t.len()),
            Request::AblateEach(t) => format!("ablate {} suspects, one at a time", t.len()),
            Request::Restore(u) if u.len() == 1 => format!("restore unit {}", quoted(u)),
            Request::Restore(u) => format!("restore {} units together", u.len()),
            Request::Replay { from, patch: None } => {
                format!("replay from step '{}'", inert_line(from.as_str()))
            }
            Request::Replay {
                from,
                patch: Some(_),
            } => format!(
                "replay from step '{}' with a patch",
                inert_line(from.as_str())
            ),
            Request::Localize => "localize: baseline, ablations, restorations".to_owned(),
        }
    }
}

/// One probe of a plan with what the user asked it for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedProbe {
    /// The probe.
    pub probe: Probe,
    /// What the user pointed at that it answers for (a suspect step, a unit), if one thing.
    pub asked: Option<Target>,
}

/// A request made runnable: its probes (the baseline first), checked against the run, with
/// everything a confirmation shows. Made once; the same plan is started.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The run it is for.
    pub subject: Arc<Subject>,
    /// What was asked.
    pub request: Request,
    /// The probes, the baseline first.
    pub probes: Vec<PlannedProbe>,
    /// Samples per probe.
    pub samples: usize,
    /// Targets asked for but left out by the caps (`max_suspects`, `max_candidates`) or because
    /// they cannot be ablated (a step that produced nothing), with why.
    pub left_out: Vec<String>,
    /// What the recording says about a probe that changes nothing it saw (a unit never sent, a
    /// unit never dropped): it still runs.
    pub notes: Vec<String>,
    /// For `localize`: which probe answers each ranked and each dropped entry of the report.
    pub tiers: Option<TierPlan>,
    /// The runner command.
    pub runner: UserCommand,
    /// The flip rule, for people.
    pub rule_label: String,
    /// Other commands each sample may run (a `cmd:` flip rule or embedder).
    pub also_runs: Vec<(&'static str, UserCommand)>,
}

/// Probes listed in a confirmation before the rest are counted.
const LISTED_PROBES: usize = 8;

impl Plan {
    /// Runner calls the plan makes.
    pub fn runner_calls(&self) -> usize {
        self.probes.len().saturating_mul(self.samples)
    }

    /// The probes as the front ends show them.
    pub fn infos(&self) -> Vec<ProbeInfo> {
        self.probes
            .iter()
            .map(|p| ProbeInfo {
                label: p.probe.intervention.label(),
                intervention: p.probe.intervention.clone(),
                asked: p.asked.clone(),
                samples: self.samples,
            })
            .collect()
    }

    /// What will run, one line each, for a confirmation: the probes (the first few, then how
    /// many more), what was left out, the notes, the flip rule, where samples are saved, and
    /// the other commands that run.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .probes
            .iter()
            .take(LISTED_PROBES)
            .map(|p| format!("{}: {} samples", p.probe.intervention.label(), self.samples))
            .collect();
        if self.probes.len() > LISTED_PROBES {
            out.push(format!(
                "... and {} more probes of {} samples each",
                self.probes.len() - LISTED_PROBES,
                self.samples
            ));
        }
        if let Request::Replay {
            patch: Some(patch), ..
        } = &self.request
        {
            out.push(format!(
                "the replayed step's output becomes: '{}'",
                inert_line(patch)
            ));
        }
        out.extend(self.left_out.iter().cloned());
        out.extend(self.notes.iter().cloned());
        out.push(format!("flip rule: {}", inert_line(&self.rule_label)));
        out.push(format!(
            "each sample is saved to '{}' before it is shown",
            self.subject.ledger.path.display()
        ));
        for (what, c) in &self.also_runs {
            out.push(format!(
                "also runs the {what} command '{}' (from {})",
                inert_line(&c.text),
                c.origin_text()
            ));
        }
        out
    }
}

/// The caps of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Most ablation probes of a sweep or of `localize`.
    pub max_suspects: usize,
    /// Most restoration probes of `localize`.
    pub max_candidates: usize,
}

/// The run's units by the step that produced them, and which units any model step was sent or
/// went without: built once per plan.
struct RunIndex<'a> {
    produced: HashMap<&'a str, Vec<&'a UnitId>>,
    /// `None` when no step records `context`.
    sent: Option<HashSet<&'a str>>,
    dropped: HashSet<&'a str>,
}

impl<'a> RunIndex<'a> {
    fn new(run: &'a Run) -> RunIndex<'a> {
        let mut produced: HashMap<&str, Vec<&UnitId>> = HashMap::new();
        for u in &run.context_units {
            if let Some(s) = &u.produced_by {
                produced.entry(s.as_str()).or_default().push(&u.id);
            }
        }
        let mut sent: Option<HashSet<&str>> = None;
        for c in run.steps.iter().filter_map(|s| s.context.as_ref()) {
            let set = sent.get_or_insert_with(HashSet::new);
            set.extend(c.sent.iter().map(|u| u.as_str()));
        }
        // Dropped: some model step had it available and was not sent it.
        let mut dropped = HashSet::new();
        for c in run.steps.iter().filter_map(|s| s.context.as_ref()) {
            if let Some(a) = &c.available {
                let here: HashSet<&str> = c.sent.iter().map(|u| u.as_str()).collect();
                dropped.extend(a.iter().map(|u| u.as_str()).filter(|u| !here.contains(u)));
            }
        }
        RunIndex {
            produced,
            sent,
            dropped,
        }
    }

    /// The units an ablation of `t` removes: a unit stands for itself; a step for every unit it
    /// produced, in the run's order.
    fn ablation_units(&self, run: &Run, t: &Target) -> Result<Vec<UnitId>, PlanError> {
        let step = |id: &str| -> Result<Vec<UnitId>, PlanError> {
            match self.produced.get(id) {
                Some(units) => Ok(units.iter().map(|u| (*u).clone()).collect()),
                None => Err(PlanError::NothingProduced(id.to_owned())),
            }
        };
        match t {
            Target::Unit(u) if run.unit(u.as_str()).is_some() => Ok(vec![u.clone()]),
            Target::Unit(u) => Err(PlanError::NoUnit(u.0.clone())),
            Target::Step(s) if run.step(s.as_str()).is_some() => step(s.as_str()),
            Target::Step(s) => Err(PlanError::NoStep(s.0.clone())),
            Target::Id(i) if run.unit(i).is_some() => Ok(vec![UnitId::from(i.as_str())]),
            Target::Id(i) if run.step(i).is_some() => step(i),
            Target::Id(i) => Err(PlanError::NoUnitOrStep(i.clone())),
        }
    }

    /// The notes of a probe that, by the recording, changes nothing (it still runs: the agent
    /// may build its context otherwise).
    fn notes(&self, i: &Intervention) -> Vec<String> {
        let Some(sent) = &self.sent else {
            return Vec::new();
        };
        match i {
            Intervention::Ablate(units) => units
                .iter()
                .filter(|u| !sent.contains(u.as_str()))
                .map(|u| format!(
                    "'{}' was never sent to a model step in this run: removing it changes nothing the run recorded",
                    inert_line(u.as_str())
                ))
                .collect(),
            Intervention::Restore(units) => units
                .iter()
                .filter(|u| !self.dropped.contains(u.as_str()))
                .map(|u| format!(
                    "'{}' was never dropped in this run (every model step that had it was sent it): putting it back changes nothing the run recorded",
                    inert_line(u.as_str())
                ))
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn dedup(units: Vec<UnitId>) -> Vec<UnitId> {
    let mut seen = HashSet::new();
    units
        .into_iter()
        .filter(|u| seen.insert(u.clone()))
        .collect()
}

/// The probes, cap notes and notes of `request` on `subject`'s run.
pub(super) struct Planned {
    pub probes: Vec<PlannedProbe>,
    pub left_out: Vec<String>,
    pub notes: Vec<String>,
    pub tiers: Option<TierPlan>,
}

/// Applies every rule about what can be tested.
pub(super) fn plan_request(
    subject: &Subject,
    request: &Request,
    caps: Caps,
) -> Result<Planned, EngineError> {
    let run = &subject.run;
    if run.final_answer.is_none() {
        return Err(EngineError::NoFinalAnswer {
            run: run.id.clone(),
        });
    }
    let index = RunIndex::new(run);
    let base = ProbeId(0);
    let baseline = PlannedProbe {
        probe: Probe::baseline(),
        asked: None,
    };
    let mut probes = vec![baseline];
    let mut left_out = Vec::new();
    let mut tiers = None;
    match request {
        Request::Baseline => {}
        Request::Ablate(targets) => {
            if targets.is_empty() {
                return Err(PlanError::Empty("ablate").into());
            }
            let mut units = Vec::new();
            for t in targets {
                units.extend(index.ablation_units(run, t)?);
            }
            probes.push(PlannedProbe {
                probe: Probe::against(Intervention::Ablate(dedup(units)), base),
                asked: (targets.len() == 1)
                    .then(|| targets.first().cloned())
                    .flatten(),
            });
        }
        Request::AblateEach(targets) => {
            let mut seen: HashSet<Vec<UnitId>> = HashSet::new();
            let mut first_error = None;
            let (mut unremovable, mut over_cap) = (0usize, 0usize);
            for t in targets {
                match index.ablation_units(run, t) {
                    Ok(units) => {
                        let units = dedup(units);
                        if seen.contains(&units) {
                            continue;
                        }
                        if seen.len() >= caps.max_suspects {
                            over_cap += 1;
                            continue;
                        }
                        seen.insert(units.clone());
                        probes.push(PlannedProbe {
                            probe: Probe::against(Intervention::Ablate(units), base),
                            asked: Some(t.clone()),
                        });
                    }
                    Err(e) => {
                        unremovable += 1;
                        first_error.get_or_insert(e);
                    }
                }
            }
            if probes.len() == 1 {
                return Err(first_error.unwrap_or(PlanError::Empty("ablate")).into());
            }
            if over_cap > 0 {
                left_out.push(format!(
                    "{} more on the list left out: at most {} are ablated one at a time ([experiments] max_suspects)",
                    group(over_cap),
                    caps.max_suspects
                ));
            }
            if unremovable > 0 {
                left_out.push(format!(
                    "{} on the list left out: nothing to remove (a step that produced no unit can only be replayed)",
                    group(unremovable)
                ));
            }
        }
        Request::Restore(units) => {
            if units.is_empty() {
                return Err(PlanError::Empty("restore").into());
            }
            if let Some(u) = units.iter().find(|u| run.unit(u.as_str()).is_none()) {
                return Err(PlanError::NoUnit(u.0.clone()).into());
            }
            probes.push(PlannedProbe {
                probe: Probe::against(Intervention::Restore(dedup(units.clone())), base),
                asked: (units.len() == 1)
                    .then(|| units.first().cloned().map(Target::Unit))
                    .flatten(),
            });
        }
        Request::Replay { from, patch } => {
            if run.step(from.as_str()).is_none() {
                return Err(PlanError::NoStep(from.0.clone()).into());
            }
            probes.push(PlannedProbe {
                probe: Probe::against(
                    Intervention::Replay {
                        from: from.clone(),
                        patch: patch.clone(),
                    },
                    base,
                ),
                asked: Some(Target::Step(from.clone())),
            });
        }
        Request::Localize => {
            let Some(report) = &subject.report else {
                return Err(PlanError::NothingToLocalize.into());
            };
            let subjects = report_subjects(report);
            let dropped = report_dropped(report);
            let t = plan_tiers(&subjects, &dropped, caps.max_suspects, caps.max_candidates);
            if t.probes.is_empty() {
                return Err(PlanError::NothingToLocalize.into());
            }
            let probed: HashSet<&str> = t
                .probes
                .iter()
                .flat_map(|p| p.intervention.units())
                .map(|u| u.as_str())
                .collect();
            let unprobed_units: HashSet<&str> = subjects
                .iter()
                .filter_map(|s| s.unit)
                .filter(|u| !probed.contains(u))
                .collect();
            if !unprobed_units.is_empty() {
                left_out.push(format!(
                    "{} ranked unit(s) left out: at most {} are ablated ([experiments] max_suspects)",
                    group(unprobed_units.len()),
                    caps.max_suspects
                ));
            }
            let unrestored = t.dropped.iter().filter(|p| p.is_none()).count();
            if unrestored > 0 {
                left_out.push(format!(
                    "{} dropped unit(s) left out: at most {} are restored ([experiments] max_candidates)",
                    group(unrestored),
                    caps.max_candidates
                ));
            }
            probes = t
                .probes
                .iter()
                .map(|p| PlannedProbe {
                    probe: p.clone(),
                    asked: p.intervention.units().first().cloned().map(Target::Unit),
                })
                .collect();
            tiers = Some(t);
        }
    }
    let notes = probes
        .iter()
        .flat_map(|p| index.notes(&p.probe.intervention))
        .collect();
    Ok(Planned {
        probes,
        left_out,
        notes,
        tiers,
    })
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
