//! Scoring: what a report predicts (its ranked suspect steps and the agent of the first), whether
//! that matches the label (any accepted step, by exact index; agent names equal ignoring ASCII
//! case and outer space), the baselines on the same run, each rule's own top finding, and the
//! tallies per set and over all sets.

use super::baselines::{BASELINES, RANDOM, pick, random_expectation};
use super::labels::{Reading, Resolved};
use crate::analysis::model::Run;
use crate::analysis::report::Report;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many ranked steps count for the top-3 score.
pub const TOP_K: usize = 3;

/// What a report predicts about one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// 0-based step indices, best first, each once (at most [`TOP_K`]).
    pub steps: Vec<usize>,
    /// The agent of the first predicted step, when the run names one.
    pub agent: Option<String>,
    /// The category of the first suspect (the rule that led), when there is one.
    pub rule: Option<String>,
}

/// The prediction of a report: its suspects in rank order, each grouped suspect (`similar`) at
/// its own rank.
pub fn predict(report: &Report, run: &Run) -> Prediction {
    let rule = report
        .suspects
        .iter()
        .min_by_key(|s| s.rank)
        .map(|s| s.category.clone());
    let mut ranked: Vec<(usize, usize)> = report
        .suspects
        .iter()
        .flat_map(|s| {
            std::iter::once((s.rank, s.index)).chain(s.similar.iter().map(|x| (x.rank, x.index)))
        })
        .collect();
    ranked.sort_by_key(|&(rank, _)| rank);
    let mut steps: Vec<usize> = Vec::with_capacity(TOP_K);
    for (_, index) in ranked {
        if steps.len() == TOP_K {
            break;
        }
        if !steps.contains(&index) {
            steps.push(index);
        }
    }
    let agent = steps
        .first()
        .and_then(|&i| run.steps.get(i))
        .and_then(|s| s.agent.clone());
    Prediction { steps, agent, rule }
}

/// Whether each part of a prediction is right; `None` when the label lacks that part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The first predicted step is a labelled one.
    pub top1: Option<bool>,
    /// A labelled step is among the first [`TOP_K`] predicted.
    pub top3: Option<bool>,
    /// The predicted agent is the labelled one.
    pub agent: Option<bool>,
}

/// Compares ranked steps (and the first one's agent) with a label.
pub fn judge(label: &Resolved, steps: &[usize], agent: Option<&str>) -> Outcome {
    let hit = |i: &usize| label.steps.binary_search(i).is_ok();
    Outcome {
        top1: label.has_steps.then(|| steps.first().is_some_and(hit)),
        top3: label.has_steps.then(|| steps.iter().take(TOP_K).any(hit)),
        agent: label
            .agent
            .as_deref()
            .map(|want| agent.is_some_and(|got| got.trim().eq_ignore_ascii_case(want.trim()))),
    }
}

/// A baseline on one run: its hit (1 or 0; for the random baseline, the exact chance).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselineRun {
    /// The baseline's name.
    pub name: String,
    /// The steps it picked, best first (empty for the random baseline).
    pub steps: Vec<usize>,
    /// First pick right: 1 or 0, or the chance.
    pub top1: f64,
    /// A labelled step among the picks: 1 or 0, or the chance.
    pub top3: f64,
}

/// One rule's best finding in a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleTop {
    /// The finding's category (the rule).
    pub rule: String,
    /// The detector that made it.
    pub detector: String,
    /// The step of the rule's best-scored finding in the run.
    pub step: usize,
    /// That step is a labelled one.
    pub hit: bool,
}

/// One rule's best finding before it is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFinding {
    /// The category.
    pub rule: String,
    /// The detector.
    pub detector: String,
    /// The step.
    pub step: usize,
}

/// One scored run, as `eval --json` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The file, as found.
    pub file: String,
    /// Its set.
    pub set: String,
    /// The run's position in a file holding several, else null.
    pub index: Option<usize>,
    /// The run's id.
    pub run: String,
    /// How the label was read (`any`; for a label giving impacts also `earliest` and
    /// `earliest_high`, each scored in a set of its own and left out of the total).
    #[serde(default)]
    pub reading: Reading,
    /// How many steps a suspect may be (containers left out).
    pub candidates: usize,
    /// The label: `{"steps", "missing", "agent"}`.
    pub label: LabelOut,
    /// What the report predicted.
    pub predicted: Prediction,
    /// Right first guess (null without a step label).
    pub top1: Option<bool>,
    /// A right step among the first three (null without a step label).
    pub top3: Option<bool>,
    /// Right agent (null without an agent label).
    pub agent: Option<bool>,
    /// The baselines on this run (empty without a step label).
    pub baselines: Vec<BaselineRun>,
    /// Each rule's best finding (empty without a step label).
    pub rules: Vec<RuleTop>,
}

/// A label as written in the JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelOut {
    /// The accepted steps' 0-based indices.
    pub steps: Vec<usize>,
    /// Steps the label names that the run does not hold.
    pub missing: usize,
    /// The labelled agent.
    pub agent: Option<String>,
}

impl From<&Resolved> for LabelOut {
    fn from(l: &Resolved) -> Self {
        LabelOut {
            steps: l.steps.clone(),
            missing: l.missing,
            agent: l.agent.clone(),
        }
    }
}

/// Where a run came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunKey {
    /// The file, as found.
    pub file: String,
    /// Its set (for a derived reading, the set's name and the reading's).
    pub set: String,
    /// How its label is read.
    pub reading: Reading,
    /// The run's position in a file holding several.
    pub index: Option<usize>,
    /// The run's id.
    pub run: String,
}

impl RunResult {
    /// Scores one run: the report's prediction, the baselines and each rule's best finding.
    pub fn new(
        key: RunKey,
        run: &Run,
        label: &Resolved,
        predicted: Prediction,
        rules: Vec<RuleFinding>,
    ) -> Self {
        let o = judge(label, &predicted.steps, predicted.agent.as_deref());
        let hit = |i: usize| label.steps.binary_search(&i).is_ok();
        let mut baselines = Vec::new();
        let mut rule_tops = Vec::new();
        if label.has_steps {
            let (r1, r3) = random_expectation(run, label);
            baselines.push(BaselineRun {
                name: RANDOM.to_owned(),
                steps: Vec::new(),
                top1: r1,
                top3: r3,
            });
            for (name, _) in BASELINES {
                let steps = pick(name, run);
                let b = judge(label, &steps, None);
                let one = |x: Option<bool>| if x == Some(true) { 1.0 } else { 0.0 };
                baselines.push(BaselineRun {
                    name: (*name).to_owned(),
                    top1: one(b.top1),
                    top3: one(b.top3),
                    steps,
                });
            }
            rule_tops = rules
                .into_iter()
                .map(|r| RuleTop {
                    hit: hit(r.step),
                    rule: r.rule,
                    detector: r.detector,
                    step: r.step,
                })
                .collect();
        }
        RunResult {
            file: key.file,
            set: key.set,
            index: key.index,
            run: key.run,
            reading: key.reading,
            candidates: run
                .steps
                .iter()
                .filter(|s| super::baselines::candidate(s))
                .count(),
            label: label.into(),
            predicted,
            top1: o.top1,
            top3: o.top3,
            agent: o.agent,
            baselines,
            rules: rule_tops,
        }
    }
}

/// Hits out of the runs that had the label part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Right answers.
    pub hits: usize,
    /// Runs with that part of the label.
    pub total: usize,
    /// `hits / total`, null when `total` is 0.
    pub rate: Option<f64>,
}

impl Tally {
    fn add(&mut self, o: Option<bool>) {
        if let Some(hit) = o {
            self.total += 1;
            self.hits += usize::from(hit);
        }
    }

    fn finish(&mut self) {
        self.rate = (self.total > 0).then(|| ratio(self.hits, self.total));
    }
}

/// Expected or counted hits of a baseline out of the runs with a step label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Hits (for the random baseline, the expected number: a sum of chances).
    pub hits: f64,
    /// Runs with a step label.
    pub total: usize,
    /// `hits / total`, null when `total` is 0.
    pub rate: Option<f64>,
}

/// A baseline over a set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselineScore {
    /// Its name (`random`, `first_step`, ...).
    pub name: String,
    /// First pick right.
    pub top1: Rate,
    /// A right step among its picks.
    pub top3: Rate,
}

/// One rule over a set: how often it fired and how often its best finding was a labelled step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleScore {
    /// The category.
    pub rule: String,
    /// The detector.
    pub detector: String,
    /// Runs with a step label where it found something.
    pub fired: usize,
    /// Of those, runs where its best finding is a labelled step.
    pub hits: usize,
    /// `hits / fired`, null when it never fired.
    pub precision: Option<f64>,
    /// Runs where it gave the first suspect.
    pub lead: usize,
    /// Of those, runs where the first suspect is a labelled step.
    pub lead_hits: usize,
}

fn ratio(a: usize, b: usize) -> f64 {
    // Counts of runs fit in a u32 (beyond that they saturate), and a u32 is exact in an f64.
    let f = |n: usize| f64::from(u32::try_from(n).unwrap_or(u32::MAX));
    f(a) / f(b)
}

/// The scores of one set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetScore {
    /// The set's name (`all` for the total).
    pub set: String,
    /// Labelled runs scored.
    pub runs: usize,
    /// Runs where the report named at least one suspect.
    pub predicted: usize,
    /// First guess right.
    pub step_top1: Tally,
    /// A right step among the first three.
    pub step_top3: Tally,
    /// Agent of the first guess right.
    pub agent: Tally,
    /// The baselines on the same runs: `random` first, then the trivial ones.
    pub baselines: Vec<BaselineScore>,
    /// Every rule that fired, best precision first.
    pub rules: Vec<RuleScore>,
}

impl SetScore {
    fn named(set: &str) -> Self {
        SetScore {
            set: set.to_owned(),
            ..SetScore::default()
        }
    }

    fn add(&mut self, r: &RunResult) {
        self.runs += 1;
        self.predicted += usize::from(!r.predicted.steps.is_empty());
        self.step_top1.add(r.top1);
        self.step_top3.add(r.top3);
        self.agent.add(r.agent);
        for b in &r.baselines {
            let slot = match self.baselines.iter().position(|x| x.name == b.name) {
                Some(k) => k,
                None => {
                    self.baselines.push(BaselineScore {
                        name: b.name.clone(),
                        ..BaselineScore::default()
                    });
                    self.baselines.len() - 1
                }
            };
            if let Some(s) = self.baselines.get_mut(slot) {
                s.top1.hits += b.top1;
                s.top1.total += 1;
                s.top3.hits += b.top3;
                s.top3.total += 1;
            }
        }
        for t in &r.rules {
            let s = self.rule_mut(&t.rule, &t.detector);
            s.fired += 1;
            s.hits += usize::from(t.hit);
        }
        if r.top1.is_some()
            && let Some(rule) = &r.predicted.rule
        {
            let detector = r
                .rules
                .iter()
                .find(|t| &t.rule == rule)
                .map(|t| t.detector.clone())
                .unwrap_or_default();
            let s = self.rule_mut(rule, &detector);
            s.lead += 1;
            s.lead_hits += usize::from(r.top1 == Some(true));
        }
    }

    fn rule_mut(&mut self, rule: &str, detector: &str) -> &mut RuleScore {
        let k = match self.rules.iter().position(|x| x.rule == rule) {
            Some(k) => k,
            None => {
                self.rules.push(RuleScore {
                    rule: rule.to_owned(),
                    detector: detector.to_owned(),
                    ..RuleScore::default()
                });
                self.rules.len() - 1
            }
        };
        let last = self.rules.len() - 1;
        &mut self.rules[k.min(last)]
    }

    fn finish(mut self) -> Self {
        self.step_top1.finish();
        self.step_top3.finish();
        self.agent.finish();
        for b in &mut self.baselines {
            for r in [&mut b.top1, &mut b.top3] {
                r.rate = (r.total > 0).then(|| r.hits / ratio(r.total, 1));
            }
        }
        for r in &mut self.rules {
            r.precision = (r.fired > 0).then(|| ratio(r.hits, r.fired));
        }
        self.rules.sort_by(|a, b| {
            b.precision
                .unwrap_or(0.0)
                .total_cmp(&a.precision.unwrap_or(0.0))
                .then(b.fired.cmp(&a.fired))
                .then(a.rule.cmp(&b.rule))
        });
        self
    }
}

/// Per set (by name) and in total. The total counts each run once, as its label is written: a
/// derived reading (the earliest error, the earliest HIGH-impact one) has its own set only.
pub fn summarize(results: &[RunResult]) -> (Vec<SetScore>, SetScore) {
    let mut sets: BTreeMap<&str, SetScore> = BTreeMap::new();
    let mut total = SetScore::named("all");
    for r in results {
        sets.entry(r.set.as_str())
            .or_insert_with(|| SetScore::named(&r.set))
            .add(r);
        if r.reading == Reading::Any {
            total.add(r);
        }
    }
    (
        sets.into_values().map(SetScore::finish).collect(),
        total.finish(),
    )
}

#[cfg(test)]
#[path = "score_tests.rs"]
mod tests;
