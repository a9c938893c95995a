//! Scoring: what a report predicts (its ranked suspect steps and the agent of the first), whether
//! that matches the label (any accepted step, by exact index; agent names equal ignoring ASCII
//! case and outer space), the baselines on the same run, each rule's own top finding, and the
//! tallies per set and over all sets.

use super::baselines::{BASELINES, RANDOM, pick, random_expectation};
use super::labels::Resolved;
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

/// The prediction of a report: its suspects in rank order.
pub fn predict(report: &Report, run: &Run) -> Prediction {
    let mut ranked: Vec<&crate::analysis::report::Suspect> = report.suspects.iter().collect();
    ranked.sort_by_key(|s| s.rank);
    let rule = ranked.first().map(|s| s.category.clone());
    let mut steps: Vec<usize> = Vec::with_capacity(TOP_K);
    for s in ranked {
        if steps.len() == TOP_K {
            break;
        }
        if !steps.contains(&s.index) {
            steps.push(s.index);
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
    /// Its set.
    pub set: String,
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

/// Per set (by name) and in total.
pub fn summarize(results: &[RunResult]) -> (Vec<SetScore>, SetScore) {
    let mut sets: BTreeMap<&str, SetScore> = BTreeMap::new();
    let mut total = SetScore::named("all");
    for r in results {
        sets.entry(r.set.as_str())
            .or_insert_with(|| SetScore::named(&r.set))
            .add(r);
        total.add(r);
    }
    (
        sets.into_values().map(SetScore::finish).collect(),
        total.finish(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{RunStatus, Step, StepKind};

    fn label(steps: &[usize], agent: Option<&str>) -> Resolved {
        Resolved {
            steps: steps.to_vec(),
            has_steps: !steps.is_empty(),
            missing: 0,
            agent: agent.map(str::to_owned),
        }
    }

    fn report(suspects: serde_json::Value) -> Report {
        let v = serde_json::json!({
            "format": "tdn.report/1",
            "run": {"id": "r", "status": "failed", "steps": 3, "source_format": "whowhen", "warnings": []},
            "verdict": null,
            "fault": {"party": "agent", "why": ""},
            "suspects": suspects,
            "confidence": {"clear_winner": false, "margin": null, "lead": null, "shortlist": [],
                           "strategy": "", "reason": ""},
            "links": [], "claims": [], "influence": null, "dropped": null, "judge": null
        });
        serde_json::from_value(v).unwrap_or_else(|e| panic!("test report: {e}"))
    }

    fn suspect(rank: usize, index: usize) -> serde_json::Value {
        serde_json::json!({"rank": rank, "step": format!("h{index}"), "index": index,
            "category": format!("c{index}"), "detector": "d", "title": "t", "score": 1.0,
            "confidence": 1.0, "role": "suspect", "evidence": []})
    }

    fn run_of(agents: &[&str]) -> Run {
        let mut run = Run::new("r", RunStatus::Failed);
        for (i, agent) in agents.iter().enumerate() {
            let mut s = Step::new(format!("h{i}"), StepKind::Agent);
            s.agent = Some((*agent).to_owned());
            run.steps.push(s);
        }
        run.reindex();
        run
    }

    #[test]
    fn a_prediction_takes_suspects_in_rank_order_and_the_first_ones_agent() {
        let run = run_of(&["A", "B", "C", "D"]);
        let r = report(serde_json::json!([
            suspect(2, 1),
            suspect(1, 3),
            suspect(3, 1),
            suspect(4, 0),
            suspect(5, 2)
        ]));
        let p = predict(&r, &run);
        assert_eq!(p.steps, vec![3, 1, 0]);
        assert_eq!(p.agent.as_deref(), Some("D"));
        assert_eq!(p.rule.as_deref(), Some("c3"));
        let none = predict(&report(serde_json::json!([])), &run);
        assert_eq!(none, Prediction::default());
        let out_of_range = predict(&report(serde_json::json!([suspect(1, 40)])), &run);
        assert_eq!((out_of_range.steps, out_of_range.agent), (vec![40], None));
    }

    #[test]
    fn step_matches_are_exact_integers_and_any_accepted_step_counts() {
        // A label of 1 is not matched by a prediction of 12, 10 or 21.
        let o = judge(&label(&[1], None), &[12, 10, 21], None);
        assert_eq!((o.top1, o.top3, o.agent), (Some(false), Some(false), None));
        let o = judge(&label(&[1], None), &[4, 1, 9], None);
        assert_eq!((o.top1, o.top3), (Some(false), Some(true)));
        let o = judge(&label(&[9], None), &[4, 1, 7, 9], None);
        assert_eq!(o.top3, Some(false), "the fourth guess is outside the top 3");
        let o = judge(&label(&[0], None), &[], None);
        assert_eq!((o.top1, o.top3), (Some(false), Some(false)));
        let o = judge(&label(&[2, 7], None), &[7, 1], None);
        assert_eq!((o.top1, o.top3), (Some(true), Some(true)));
        let o = judge(&label(&[], Some("A")), &[7], Some("a"));
        assert_eq!((o.top1, o.top3, o.agent), (None, None, Some(true)));
    }

    #[test]
    fn agents_match_ignoring_case_and_outer_space() {
        let o = judge(&label(&[], Some("WebSurfer")), &[2], Some(" websurfer"));
        assert_eq!(o.agent, Some(true));
        let o = judge(&label(&[], Some("Orchestrator")), &[2], None);
        assert_eq!(o.agent, Some(false));
        let o = judge(&label(&[], Some("Web")), &[2], Some("WebSurfer"));
        assert_eq!(o.agent, Some(false), "a prefix is not the agent");
    }

    fn key(set: &str) -> RunKey {
        RunKey {
            file: format!("{set}/x.json"),
            set: set.into(),
            index: None,
            run: "r".into(),
        }
    }

    fn pred(steps: &[usize], agent: Option<&str>, rule: Option<&str>) -> Prediction {
        Prediction {
            steps: steps.to_vec(),
            agent: agent.map(str::to_owned),
            rule: rule.map(str::to_owned),
        }
    }

    fn finding(rule: &str, step: usize) -> RuleFinding {
        RuleFinding {
            rule: rule.into(),
            detector: "d".into(),
            step,
        }
    }

    #[test]
    fn tallies_count_only_runs_with_the_label_part_and_rules_by_their_own_best_finding() {
        let run = run_of(&["a", "b", "c", "d"]);
        let results = vec![
            RunResult::new(
                key("B"),
                &run,
                &label(&[1], Some("a")),
                pred(&[1, 2], Some("a"), Some("x")),
                vec![finding("x", 1), finding("y", 1)],
            ),
            RunResult::new(
                key("B"),
                &run,
                &label(&[3], Some("a")),
                pred(&[2, 3], Some("b"), Some("x")),
                vec![finding("x", 2), finding("y", 3)],
            ),
            RunResult::new(
                key("A"),
                &run,
                &label(&[0], None),
                pred(&[], None, None),
                Vec::new(),
            ),
        ];
        let (sets, total) = summarize(&results);
        assert_eq!(
            sets.iter().map(|s| s.set.as_str()).collect::<Vec<_>>(),
            ["A", "B"]
        );
        let b = &sets[1];
        assert_eq!((b.runs, b.predicted), (2, 2));
        assert_eq!((b.step_top1.hits, b.step_top1.total), (1, 2));
        assert_eq!((b.step_top3.hits, b.step_top3.total), (2, 2));
        assert_eq!(b.step_top1.rate, Some(0.5));
        assert_eq!((total.runs, total.predicted), (3, 2));
        assert_eq!((total.agent.hits, total.agent.total), (1, 2));
        assert_eq!(sets[0].agent.rate, None);
        assert_eq!(total.step_top3.rate, Some(2.0 / 3.0));
        // y's best finding hit both times, x's once: y ranks first; x led twice, right once.
        let rules: Vec<_> = b
            .rules
            .iter()
            .map(|r| (r.rule.as_str(), r.fired, r.hits, r.lead, r.lead_hits))
            .collect();
        assert_eq!(rules, [("y", 2, 2, 0, 0), ("x", 2, 1, 2, 1)]);
        // first_step picks 0, 1, 2: right first guess in A (label 0), top-3 in A and B/1.
        let first = total
            .baselines
            .iter()
            .find(|x| x.name == "first_step")
            .cloned()
            .unwrap_or_default();
        assert_eq!((first.top1.hits, first.top3.hits), (1.0, 2.0));
        let random = &total.baselines[0];
        assert_eq!(random.name, "random");
        // one labelled step of four candidates each time: 1/4 and 3/4 per run.
        assert!((random.top1.hits - 0.75).abs() < 1e-12);
        assert_eq!(random.top3.rate, Some(0.75));
    }
}
