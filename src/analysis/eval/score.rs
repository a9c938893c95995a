//! Scoring: what a report predicts (its ranked suspect steps and the agent of the first), whether
//! that matches the label (exact integer index; agent names equal ignoring ASCII case and outer
//! space), and the tallies per set and over all sets.

use super::labels::Label;
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
}

/// The prediction of a report: its suspects in rank order, each grouped suspect (`similar`) at
/// its own rank.
pub fn predict(report: &Report, run: &Run) -> Prediction {
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
    Prediction { steps, agent }
}

/// Whether each part of a prediction is right; `None` when the label lacks that part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The first predicted step is the labelled one.
    pub top1: Option<bool>,
    /// The labelled step is among the first [`TOP_K`] predicted.
    pub top3: Option<bool>,
    /// The predicted agent is the labelled one.
    pub agent: Option<bool>,
}

/// Compares a prediction with a label.
pub fn judge(label: &Label, p: &Prediction) -> Outcome {
    Outcome {
        top1: label.step.map(|s| p.steps.first() == Some(&s)),
        top3: label
            .step
            .map(|s| p.steps.iter().take(TOP_K).any(|&x| x == s)),
        agent: label.agent.as_deref().map(|want| {
            p.agent
                .as_deref()
                .is_some_and(|got| got.trim().eq_ignore_ascii_case(want.trim()))
        }),
    }
}

/// One scored run, as `eval --json` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The file, as found.
    pub file: String,
    /// Its set (the folder name).
    pub set: String,
    /// The run's position in a file holding several, else null.
    pub index: Option<usize>,
    /// The run's id.
    pub run: String,
    /// The label: `{"step", "agent"}`.
    pub label: LabelOut,
    /// What the report predicted.
    pub predicted: Prediction,
    /// Right first guess (null without a step label).
    pub top1: Option<bool>,
    /// Right step among the first three (null without a step label).
    pub top3: Option<bool>,
    /// Right agent (null without an agent label).
    pub agent: Option<bool>,
}

/// A label as written in the JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelOut {
    /// The labelled step's 0-based index.
    pub step: Option<usize>,
    /// The labelled agent.
    pub agent: Option<String>,
}

impl From<&Label> for LabelOut {
    fn from(l: &Label) -> Self {
        LabelOut {
            step: l.step,
            agent: l.agent.clone(),
        }
    }
}

impl RunResult {
    /// Scores one run.
    pub fn new(
        file: String,
        set: String,
        index: Option<usize>,
        run: String,
        label: &Label,
        predicted: Prediction,
    ) -> Self {
        let o = judge(label, &predicted);
        RunResult {
            file,
            set,
            index,
            run,
            label: label.into(),
            predicted,
            top1: o.top1,
            top3: o.top3,
            agent: o.agent,
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
    /// Right step among the first three.
    pub step_top3: Tally,
    /// Agent of the first guess right.
    pub agent: Tally,
}

impl SetScore {
    fn add(&mut self, r: &RunResult) {
        self.runs += 1;
        self.predicted += usize::from(!r.predicted.steps.is_empty());
        self.step_top1.add(r.top1);
        self.step_top3.add(r.top3);
        self.agent.add(r.agent);
    }

    fn finish(mut self) -> Self {
        self.step_top1.finish();
        self.step_top3.finish();
        self.agent.finish();
        self
    }
}

/// Per set (by name) and in total.
pub fn summarize(results: &[RunResult]) -> (Vec<SetScore>, SetScore) {
    let mut sets: BTreeMap<&str, SetScore> = BTreeMap::new();
    let mut total = SetScore {
        set: "all".to_owned(),
        ..SetScore::default()
    };
    for r in results {
        sets.entry(r.set.as_str())
            .or_insert_with(|| SetScore {
                set: r.set.clone(),
                ..SetScore::default()
            })
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

    fn label(step: Option<usize>, agent: Option<&str>) -> Label {
        Label {
            step,
            agent: agent.map(str::to_owned),
        }
    }

    fn pred(steps: &[usize], agent: Option<&str>) -> Prediction {
        Prediction {
            steps: steps.to_vec(),
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
            "category": "c", "detector": "d", "title": "t", "score": 1.0, "confidence": 1.0,
            "role": "suspect", "evidence": []})
    }

    #[test]
    fn a_prediction_takes_suspects_in_rank_order_and_the_first_ones_agent() {
        use crate::analysis::model::{Step, StepKind};
        let mut run = Run::new("r", crate::analysis::model::RunStatus::Failed);
        for (i, agent) in ["A", "B", "C", "D"].iter().enumerate() {
            let mut s = Step::new(format!("h{i}"), StepKind::Agent);
            s.agent = Some((*agent).to_owned());
            run.steps.push(s);
        }
        run.reindex();
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
        let none = predict(&report(serde_json::json!([])), &run);
        assert_eq!(none, Prediction::default());
        let out_of_range = predict(&report(serde_json::json!([suspect(1, 40)])), &run);
        assert_eq!((out_of_range.steps, out_of_range.agent), (vec![40], None));
    }

    #[test]
    fn grouped_suspects_count_at_their_own_ranks() {
        let run = Run::new("r", crate::analysis::model::RunStatus::Failed);
        let mut lead = suspect(1, 7);
        lead["similar"] = serde_json::json!([
            {"rank": 3, "step": "h9", "index": 9, "score": 0.5},
            {"rank": 5, "step": "h11", "index": 11, "score": 0.4}
        ]);
        let r = report(serde_json::json!([lead, suspect(2, 4), suspect(4, 2)]));
        assert_eq!(predict(&r, &run).steps, vec![7, 4, 9]);
    }

    #[test]
    fn step_matches_are_exact_integers() {
        // A label of 1 is not matched by a prediction of 12, 10 or 21.
        let o = judge(&label(Some(1), None), &pred(&[12, 10, 21], None));
        assert_eq!((o.top1, o.top3, o.agent), (Some(false), Some(false), None));
        let o = judge(&label(Some(1), None), &pred(&[4, 1, 9], None));
        assert_eq!((o.top1, o.top3), (Some(false), Some(true)));
        let o = judge(&label(Some(9), None), &pred(&[4, 1, 7, 9], None));
        assert_eq!(o.top3, Some(false), "the fourth guess is outside the top 3");
        let o = judge(&label(Some(0), None), &pred(&[], None));
        assert_eq!((o.top1, o.top3), (Some(false), Some(false)));
    }

    #[test]
    fn agents_match_ignoring_case_and_outer_space() {
        let o = judge(
            &label(None, Some("WebSurfer")),
            &pred(&[2], Some(" websurfer")),
        );
        assert_eq!((o.top1, o.agent), (None, Some(true)));
        let o = judge(&label(None, Some("Orchestrator")), &pred(&[2], None));
        assert_eq!(o.agent, Some(false));
        let o = judge(&label(None, Some("Web")), &pred(&[2], Some("WebSurfer")));
        assert_eq!(o.agent, Some(false), "a prefix is not the agent");
    }

    #[test]
    fn tallies_count_only_runs_with_the_label_part() {
        let r = |set: &str, l: Label, p: Prediction| {
            RunResult::new(format!("{set}/x.json"), set.into(), None, "r".into(), &l, p)
        };
        let results = vec![
            r("B", label(Some(1), Some("a")), pred(&[1, 2], Some("a"))),
            r("B", label(Some(3), Some("a")), pred(&[2, 3], Some("b"))),
            r("A", label(Some(0), None), pred(&[], None)),
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
    }
}
