//! A comparison for people: the sentence of each difference, and the page `diff` prints. Run
//! text is made inert ([`inert_line`]) before it is put on the page.

use super::{Change, Class, Comparison, Difference, parents};
use crate::analysis::model::{Run, inert_line};
use std::fmt::Write;

/// The most differences listed on the page; `--json` has them all.
const LISTED: usize = 40;

fn quoted(v: Option<&str>) -> String {
    match v {
        Some(v) => format!("'{v}'"),
        None => "nothing".to_owned(),
    }
}

/// The difference in one sentence, about the bad run ("here") against the good one.
pub fn sentence(d: &Difference) -> String {
    let g = quoted(d.good_value.as_deref());
    let b = quoted(d.bad_value.as_deref());
    let at = d
        .key
        .as_deref()
        .map(|k| format!(" at '{k}'"))
        .unwrap_or_default();
    match d.change {
        Change::Kind => format!("a step of another kind here: {b}; the good run had {g}"),
        Change::Agent => format!("agent {b} acted here; agent {g} in the good run"),
        Change::Name => format!("a step named {b} here; {g} in the good run"),
        Change::Tool => match (&d.good_value, &d.bad_value) {
            (Some(_), None) => format!("called no tool here; the good run called {g}"),
            (None, Some(_)) => format!("called {b} here; the good run called no tool"),
            _ => format!("called {b} here; the good run called {g}"),
        },
        Change::Argument => {
            let of = d
                .tool
                .as_deref()
                .map(|t| format!(" of {t}"))
                .unwrap_or_default();
            let what = match &d.key {
                Some(k) => format!("argument '{k}'{of}"),
                None => format!("the arguments{of}"),
            };
            format!("{what}: {b} here, {g} in the good run")
        }
        Change::Input => format!("input{at}: {b} here, {g} in the good run"),
        Change::ToolResult => format!("the tool returned{at} {b} here, {g} in the good run"),
        Change::Output => format!("output{at}: {b} here, {g} in the good run"),
        Change::Error => match (&d.good_value, &d.bad_value) {
            (None, Some(_)) => format!("failed here ({b}); the good run's step did not"),
            (Some(_), None) => format!("did not fail here; the good run's step failed ({g})"),
            _ => format!("failed with {b} here, with {g} in the good run"),
        },
        Change::Document => match &d.key {
            Some(k) => format!("document '{k}' read {b} here, {g} in the good run"),
            None => format!("retrieved {b} here; the good run retrieved {g}"),
        },
        Change::Memory => format!("memory{at}: {b} here, {g} in the good run"),
        Change::Decision => format!("chose {b} here; the good run chose {g}"),
        Change::Message => names("the message", d),
        Change::Wording => match (&d.good_value, &d.bad_value) {
            (None, Some(_)) => {
                format!("said {b} here, naming no other facts; the good run said nothing")
            }
            (Some(_), None) => {
                format!("said nothing here; the good run said {g}, naming no other facts")
            }
            _ => format!("the same facts in other words: {b} here, {g} in the good run"),
        },
        Change::Skipped => format!("the good run took a step here that this run did not: {g}"),
        Change::Extra => format!("this run took a step here that the good run did not: {b}"),
        Change::SkippedUserTurn => format!(
            "called {} without the user's reply that the good run waited for before the same call ({g})",
            d.tool.as_deref().unwrap_or("a tool")
        ),
        Change::FinalAnswer => match (&d.good_value, &d.bad_value) {
            (Some(_), None) => format!("gave no final answer; the good run answered {g}"),
            (None, Some(_)) => format!("answered {b}; the good run gave no final answer"),
            _ => format!("final answer {b}, {g} in the good run"),
        },
    }
}

/// `what` names other facts than the good run's.
fn names(what: &str, d: &Difference) -> String {
    let g = quoted(d.good_value.as_deref());
    let b = quoted(d.bad_value.as_deref());
    match (&d.good_value, &d.bad_value) {
        (None, Some(_)) => format!("{what} names {b} here, which the good run's does not"),
        (Some(_), None) => format!("{what} does not name {g} here, as the good run's does"),
        _ => format!("{what} names {b} here where the good run's names {g}"),
    }
}

fn position(i: Option<usize>) -> String {
    i.map_or_else(|| "-".to_owned(), |i| (i + 1).to_string())
}

fn about(run: &Run, label: &str) -> String {
    format!(
        "{} · run '{}' ({}, {})",
        inert_line(label),
        inert_line(&run.id),
        run.status.as_str(),
        crate::analysis::count::counted(run.steps.len(), "step", "steps")
    )
}

fn step_name(run: &Run, i: usize) -> String {
    run.steps
        .get(i)
        .map_or_else(|| format!("position {}", i + 1), |s| s.describe())
}

/// The page `diff` prints: the two runs, how their steps aligned, the first divergence with the
/// steps that hold it, and the differences in what the runs did and said (wording only is
/// counted, not listed). `good_label` and `bad_label` say where each run came from.
pub fn render_text(
    cmp: &Comparison,
    good: &Run,
    bad: &Run,
    good_label: &str,
    bad_label: &str,
) -> String {
    let mut out = String::new();
    let [same, changed, only_good, only_bad] = cmp.counts();
    let _ = writeln!(out, "good: {}", about(good, good_label));
    let _ = writeln!(out, "bad:  {}", about(bad, bad_label));
    let _ = writeln!(
        out,
        "aligned: {} rows: {same} the same, {changed} changed, {only_good} only in the good run, {only_bad} only in the bad run",
        cmp.rows.len()
    );
    out.push('\n');
    match (&cmp.first_divergence, cmp.divergence_difference()) {
        (Some(f), Some(d)) => {
            let side = |run: &Run, i: Option<usize>, ended: &str| {
                i.map_or_else(|| ended.to_owned(), |i| step_name(run, i))
            };
            let _ = writeln!(
                out,
                "first divergence: bad {} · good {}",
                side(bad, f.bad, "run had ended"),
                side(good, f.good, "run had ended")
            );
            let _ = writeln!(out, "  {}", inert_line(&d.sentence()));
            for (run, i, whose) in [(bad, f.bad, "bad"), (good, f.good, "good")] {
                let Some(i) = i else { continue };
                let chain = parents(run, i);
                if !chain.is_empty() {
                    let names: Vec<String> = chain.iter().map(|&p| step_name(run, p)).collect();
                    let _ = writeln!(out, "  in the {whose} run within: {}", names.join(" › "));
                }
            }
        }
        _ => {
            let _ = writeln!(
                out,
                "no divergence: the runs do the same thing (ids, times and wording aside)"
            );
        }
    }
    let count = |c: Class| cmp.differences.iter().filter(|d| d.class == c).count();
    let (acted, said, worded) = (
        count(Class::Action),
        count(Class::Message),
        count(Class::Wording),
    );
    if acted + said + worded == 0 {
        return out;
    }
    let _ = writeln!(
        out,
        "\ndifferences: {acted} in what the runs did, {said} in what they said, {worded} in wording only (not listed)"
    );
    let listed: Vec<&Difference> = cmp
        .differences
        .iter()
        .filter(|d| d.class != Class::Wording)
        .collect();
    if !listed.is_empty() {
        let _ = writeln!(out, "  {:>5} {:>5}  what differs", "good", "bad");
    }
    for d in listed.iter().take(LISTED) {
        let _ = writeln!(
            out,
            "  {:>5} {:>5}  {}",
            position(d.good),
            position(d.bad),
            inert_line(&d.sentence())
        );
    }
    if listed.len() > LISTED {
        let _ = writeln!(
            out,
            "  … and {} more (--json lists every difference)",
            listed.len() - LISTED
        );
    }
    out
}
