//! The `eval` tables for people: one line per set and one for all, the rules' hits out of labelled
//! runs with the percentage, and beside them the baselines on the same runs (the random guess's
//! exact expectation and the trivial picks, top-1 / top-3 in percent); then, on request, each
//! rule's precision per set. Set names are made inert.

use super::EvalReport;
use super::baselines::{BASELINES, RANDOM};
use super::score::{BaselineScore, SetScore, Tally};
use crate::analysis::model::inert_line;
use std::fmt::Write as _;

fn cell(t: &Tally) -> String {
    match t.rate {
        Some(r) => format!("{}/{} {:5.1}%", t.hits, t.total, r * 100.0),
        None => "-".to_owned(),
    }
}

fn pair(b: Option<&BaselineScore>) -> String {
    match b.and_then(|b| Some((b.top1.rate?, b.top3.rate?))) {
        Some((a, c)) => format!("{:4.1}/{:4.1}", a * 100.0, c * 100.0),
        None => "-".to_owned(),
    }
}

/// Column titles of the baselines, in table order.
fn baseline_titles() -> Vec<(&'static str, String)> {
    let mut v = vec![(RANDOM, "random".to_owned())];
    v.extend(BASELINES.iter().map(|(n, _)| (*n, n.replace('_', " "))));
    v
}

fn line(out: &mut String, width: usize, s: &SetScore) {
    let name = inert_line(&s.set);
    let _ = write!(
        out,
        "{name:<width$}  {:>4}  {:>15}  {:>15}  {:>15} ",
        s.runs,
        cell(&s.step_top1),
        cell(&s.step_top3),
        cell(&s.agent),
    );
    for (n, _) in baseline_titles() {
        let b = s.baselines.iter().find(|b| b.name == n);
        let _ = write!(out, " {:>13}", pair(b));
    }
    out.push('\n');
}

/// The table, ending with a line on the reference setting and on what was left out.
pub fn render_table(r: &EvalReport) -> String {
    let width = r
        .sets
        .iter()
        .map(|s| inert_line(&s.set).chars().count())
        .chain([3])
        .max()
        .unwrap_or(3);
    let mut out = String::new();
    let _ = write!(
        out,
        "{:<width$}  {:>4}  {:>15}  {:>15}  {:>15} ",
        "set", "runs", "step top-1", "step top-3", "agent"
    );
    for (_, title) in baseline_titles() {
        let _ = write!(out, " {title:>13}");
    }
    out.push('\n');
    for s in &r.sets {
        line(&mut out, width, s);
    }
    if r.sets.len() > 1 {
        line(&mut out, width, &r.total);
    }
    let setting = if r.reference {
        "reference answers used (run with --no-reference to ignore them)"
    } else {
        "reference answers ignored (--no-reference)"
    };
    let _ = writeln!(
        out,
        "\nbaselines: top-1/top-3 in percent on the same runs; random is the exact expectation of a uniform pick"
    );
    let _ = writeln!(
        out,
        "{setting}; a step matches by exact 0-based index (any accepted step of the label)"
    );
    if !r.unlabelled.is_empty() {
        let _ = writeln!(
            out,
            "{} run(s) without a label were not scored (give labels with --labels FILE)",
            r.unlabelled.len()
        );
    }
    if !r.errors.is_empty() {
        let _ = writeln!(out, "{} file(s) could not be loaded", r.errors.len());
    }
    out
}

/// Each rule's precision per set: runs where it fired, runs where its own best finding is a
/// labelled step, and how often it gave the first suspect and was right.
pub fn render_rules(r: &EvalReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rule precision: its own best finding is a labelled step (fired = runs where it found something; a rule marked (lead) lists leads, never counted as suspects)"
    );
    let all: Vec<&SetScore> = r
        .sets
        .iter()
        .chain((r.sets.len() > 1).then_some(&r.total))
        .collect();
    for s in all {
        let _ = writeln!(
            out,
            "\n{}  ({} runs)\n  {:<22} {:<20} {:>5} {:>5} {:>9} {:>5} {:>9}",
            inert_line(&s.set),
            s.runs,
            "rule",
            "detector",
            "fired",
            "hits",
            "precision",
            "led",
            "led right"
        );
        for x in &s.rules {
            let p = x
                .precision
                .map_or_else(|| "-".to_owned(), |p| format!("{:.1}%", p * 100.0));
            let lead = crate::analysis::detect::Category::ALL
                .iter()
                .any(|c| c.as_str() == x.rule && c.is_lead());
            let name = if lead {
                format!("{} (lead)", inert_line(&x.rule))
            } else {
                inert_line(&x.rule).into_owned()
            };
            let _ = writeln!(
                out,
                "  {:<22} {:<20} {:>5} {:>5} {:>9} {:>5} {:>9}",
                name,
                inert_line(&x.detector),
                x.fired,
                x.hits,
                p,
                x.lead,
                x.lead_hits
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::FileError;
    use super::super::labels::Resolved;
    use super::super::score::{Prediction, RuleFinding, RunKey, RunResult};
    use super::*;
    use crate::analysis::model::{Run, RunStatus, Step, StepKind};

    fn run() -> Run {
        let mut r = Run::new("r", RunStatus::Failed);
        for i in 0..4 {
            let mut s = Step::new(format!("s{i}"), StepKind::Agent);
            s.agent = Some("a".into());
            r.steps.push(s);
        }
        r.reindex();
        r
    }

    #[test]
    fn the_table_shows_each_set_the_total_the_baselines_and_the_setting() {
        let l = Resolved {
            steps: vec![1],
            has_steps: true,
            missing: 0,
            agent: Some("a".into()),
        };
        let hit = Prediction {
            steps: vec![1],
            agent: Some("a".into()),
            rule: Some("answer_origin".into()),
        };
        let key = |set: &str| RunKey {
            file: format!("{set}/1.json"),
            set: set.into(),
            index: None,
            run: "r".into(),
            ..RunKey::default()
        };
        let run = run();
        let finding = RuleFinding {
            rule: "answer_origin".into(),
            detector: "answer_origin".into(),
            step: 1,
        };
        let runs = vec![
            RunResult::new(key("A"), &run, &l, hit, vec![finding]),
            RunResult::new(key("B"), &run, &l, Prediction::default(), Vec::new()),
        ];
        let errors = vec![FileError {
            file: "B/2.json".into(),
            message: "bad".into(),
        }];
        let r = EvalReport::new(false, runs, Vec::new(), errors);
        let t = render_table(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("set") && lines[0].contains("random"),
            "{t}"
        );
        assert!(lines[0].contains("last model"), "{t}");
        // one labelled step among four: random 25% / 75%; first step picks 0, 1, 2: 0% / 100%.
        assert!(
            lines[1].starts_with("A  ")
                && lines[1].contains("1/1 100.0%")
                && lines[1].contains("25.0/75.0")
                && lines[1].contains(" 0.0/100.0"),
            "{t}"
        );
        assert!(
            lines[2].starts_with("B  ") && lines[2].contains("0/1   0.0%"),
            "{t}"
        );
        assert!(
            lines[3].starts_with("all") && lines[3].contains("1/2  50.0%"),
            "{t}"
        );
        assert!(
            t.contains("reference answers ignored (--no-reference)"),
            "{t}"
        );
        assert!(t.contains("1 file(s) could not be loaded"), "{t}");
        let rules = render_rules(&r);
        assert!(
            rules
                .lines()
                .any(|l| l.trim_start().starts_with("answer_origin") && l.contains("100.0%")),
            "{rules}"
        );
    }
}
