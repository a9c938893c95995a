//! The `eval` table for people: one line per set and one for all, hits out of labelled runs with
//! the percentage, and which reference setting was measured. Set names are made inert.

use super::EvalReport;
use super::score::{SetScore, Tally};
use crate::analysis::model::inert_line;
use std::fmt::Write as _;

fn cell(t: &Tally) -> String {
    match t.rate {
        Some(r) => format!("{}/{} {:5.1}%", t.hits, t.total, r * 100.0),
        None => "-".to_owned(),
    }
}

fn line(out: &mut String, width: usize, s: &SetScore) {
    let name = inert_line(&s.set);
    let _ = writeln!(
        out,
        "{name:<width$}  {:>4}  {:>9}  {:>15}  {:>15}  {:>15}",
        s.runs,
        s.predicted,
        cell(&s.step_top1),
        cell(&s.step_top3),
        cell(&s.agent),
    );
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
    let _ = writeln!(
        out,
        "{:<width$}  {:>4}  {:>9}  {:>15}  {:>15}  {:>15}",
        "set", "runs", "predicted", "step top-1", "step top-3", "agent"
    );
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
    let _ = writeln!(out, "\n{setting}; steps match by exact 0-based index");
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

#[cfg(test)]
mod tests {
    use super::super::score::{Prediction, RunResult};
    use super::super::{FileError, Label};
    use super::*;

    #[test]
    fn the_table_shows_each_set_the_total_and_the_setting() {
        let l = Label {
            step: Some(1),
            agent: Some("a".into()),
        };
        let hit = Prediction {
            steps: vec![1],
            agent: Some("a".into()),
        };
        let runs = vec![
            RunResult::new(
                "A/1.json".into(),
                "A".into(),
                None,
                "r1".into(),
                &l,
                hit.clone(),
            ),
            RunResult::new(
                "B/1.json".into(),
                "B".into(),
                None,
                "r2".into(),
                &l,
                Prediction::default(),
            ),
        ];
        let errors = vec![FileError {
            file: "B/2.json".into(),
            message: "bad".into(),
        }];
        let r = EvalReport::new(false, runs, Vec::new(), errors);
        let t = render_table(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("set"), "{t}");
        assert!(
            lines[1].starts_with("A  ") && lines[1].contains("1/1 100.0%"),
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
    }
}
