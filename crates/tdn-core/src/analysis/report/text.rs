//! The report for people (`analyze` without `--json`): the top suspect with its evidence, the
//! next two, how clear the ranking is, the fault, the claims, dropped context, warnings, and the
//! reminder that the diagnosis is a correlation until a re-run. Scores are never printed. Also the
//! report as one line of JSON for `--json`. Formats the report only; every run-derived string is
//! made inert here, whatever the report already did.

use super::{Report, SupportLabel, Suspect};
use crate::analysis::model::{RunStatus, SAME_ANSWER, StatusFrom, inert_line};
use std::fmt::Write as _;

/// A run's name and task longer than this are shortened in the text.
const TASK_CHARS: usize = 300;
/// Claims longer than this are shortened in the text.
const CLAIM_CHARS: usize = 160;
/// At most this many claims are listed.
const MAX_CLAIMS_SHOWN: usize = 20;
/// At most this many warnings are listed.
const MAX_WARNINGS_SHOWN: usize = 20;
/// At most this many dropped units are named.
const MAX_DROPPED_SHOWN: usize = 5;

fn inert(s: &str) -> String {
    inert_line(s).into_owned()
}

fn shorten(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    inert(&out)
}

/// `s` with its first letter upper-cased.
pub(super) fn sentence(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

pub(super) fn words(category: &str) -> String {
    category.replace('_', " ")
}

pub(super) fn label_word(l: SupportLabel) -> &'static str {
    match l {
        SupportLabel::Supported => "supported",
        SupportLabel::Partial => "partial",
        SupportLabel::Unsupported => "unsupported",
        SupportLabel::Contradicted => "contradicted",
        SupportLabel::Stale => "stale",
        SupportLabel::NoClaim => "no claim",
    }
}

/// True when the run failed (`failed` or `error`): only then is there a failure to explain.
pub(super) fn run_failed(report: &Report) -> bool {
    matches!(report.run.status, RunStatus::Failed | RunStatus::Error)
}

pub(super) fn role_words(report: &Report, s: &Suspect) -> String {
    let failed = run_failed(report);
    match (s.role, &s.cause) {
        (super::Role::RootCause, _) if failed => {
            "root cause found by walking back from the failure".to_owned()
        }
        (super::Role::RootCause, _) => "upstream of a step that failed".to_owned(),
        (super::Role::Symptom, Some(c)) => {
            let cause = report.suspects.iter().find(|x| &x.step == c);
            let lead = if failed {
                "symptom; caused by"
            } else {
                "traced back to"
            };
            match cause {
                Some(x) => format!("{lead} {}", x.described()),
                None => format!("{lead} step '{}'", inert(c)),
            }
        }
        _ if failed => "suspect".to_owned(),
        _ => "observation".to_owned(),
    }
}

/// Where the run's outcome came from, in one sentence (made inert): said wherever the verdict
/// is shown, so a diagnosis of a run taken as failed says so.
pub fn outcome_sentence(report: &Report) -> String {
    let r = &report.run;
    let status = r.status.as_str();
    let why = r.status_why.as_deref().map(inert);
    match r.status_from {
        StatusFrom::Assumed => format!(
            "taken as {status}: nothing in the recording says whether the answer was right, so the run is diagnosed as if it failed; if it was right, say so with --outcome succeeded (or give the reference answer)"
        ),
        StatusFrom::Given => format!(
            "{status}, as you said ({})",
            why.unwrap_or_else(|| "--outcome".to_owned())
        ),
        StatusFrom::Reference => {
            format!(
                "{status}: {}",
                why.unwrap_or_else(|| SAME_ANSWER.to_owned())
            )
        }
        StatusFrom::Recorded => match why {
            Some(w) => format!("{status}: {w}"),
            None => format!("{status}, as the run records"),
        },
    }
}

/// The report as text.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    let r = &report.run;
    let _ = writeln!(
        out,
        "Run '{}': {}, {} ({}).",
        inert(&r.id),
        r.status.as_str(),
        crate::analysis::count::counted(r.steps, "step", "steps"),
        inert(&r.source_format)
    );
    if let Some(t) = &r.title {
        let _ = writeln!(out, "Name: {}", shorten(t, TASK_CHARS));
    }
    if let Some(t) = &r.task {
        let _ = writeln!(out, "Task: {}", shorten(t, TASK_CHARS));
    }
    let _ = writeln!(out, "Outcome: {}.", outcome_sentence(report));
    if let Some(a) = &report.against {
        for (k, line) in super::against::sentences(a).iter().enumerate() {
            let _ = writeln!(out, "{}{}", if k == 0 { "" } else { "  " }, inert(line));
        }
    }
    if let Some(c) = &report.cost {
        let _ = writeln!(out, "Cost: {}.", inert(&crate::analysis::cost::summary(c)));
    }
    out.push('\n');
    let failed = run_failed(report);
    if !failed && !report.suspects.is_empty() {
        out.push_str(match r.status {
            RunStatus::Succeeded => {
                "The run succeeded, so there is no failure to explain. The rules noticed the steps \
                 below; they are observations, not causes.\n\n"
            }
            _ => {
                "The run has not finished, so nothing has failed yet. The rules noticed the steps \
                 below; they are observations, not causes.\n\n"
            }
        });
    }
    let (first, others) = if failed {
        ("Top suspect", "Next suspects")
    } else {
        ("First observation", "Other observations")
    };
    match report.suspects.first() {
        Some(top) => {
            let _ = writeln!(
                out,
                "{first}: {}: {}",
                top.described(),
                words(&top.category)
            );
            let _ = writeln!(out, "  {}", inert(&top.title));
            if let Some(line) = similar_line(top) {
                let _ = writeln!(out, "  {line}");
            }
            let _ = writeln!(
                out,
                "  found by {} ({})",
                inert(&top.detector),
                role_words(report, top)
            );
            for e in &top.evidence {
                let _ = writeln!(out, "  - {}", inert(e));
            }
            let rest: Vec<_> = report.suspects.iter().skip(1).take(2).collect();
            if !rest.is_empty() {
                let _ = writeln!(out, "\n{others}:");
                for s in rest {
                    let _ = writeln!(
                        out,
                        "  {}. {}: {} ({})",
                        s.rank,
                        s.described(),
                        words(&s.category),
                        role_words(report, s)
                    );
                    let _ = writeln!(out, "     {}", inert(&s.title));
                    if let Some(line) = similar_line(s) {
                        let _ = writeln!(out, "     {line}");
                    }
                    if let Some(e) = s.evidence.first() {
                        let _ = writeln!(out, "     - {}", inert(e));
                    }
                }
            }
            let more = report.suspects.len().saturating_sub(3);
            if more > 0 {
                let _ = writeln!(out, "  ({more} more in --json)");
            }
            out.push('\n');
            if failed && report.suspects.len() > 1 && !report.confidence.shortlist.is_empty() {
                if report.confidence.clear_winner {
                    out.push_str("Ranking: the top suspect leads clearly.\n");
                } else {
                    let list: Vec<_> = report
                        .confidence
                        .shortlist
                        .iter()
                        .map(|s| format!("'{}'", inert(s)))
                        .collect();
                    let _ = writeln!(
                        out,
                        "Ranking: too close to call; look at each of {}.",
                        list.join(", ")
                    );
                }
            }
        }
        None if failed && !report.leads.is_empty() => {
            out.push_str("No suspect: no rule found a fault in any step.\n");
        }
        None if failed => out.push_str("No suspect: no rule found a step to blame.\n"),
        None if r.status == RunStatus::Succeeded => out.push_str(
            "No verdict: the run succeeded, so there is no failure to explain and no step is blamed.\n",
        ),
        None => out.push_str("Nothing to note: no rule flagged a step.\n"),
    }
    leads(report, &mut out);
    let _ = writeln!(
        out,
        "Fault: {}. {}",
        serde_name(&report.fault.party),
        sentence(&inert(&report.fault.why))
    );
    if !report.claims.is_empty() {
        out.push_str("\nClaims of the final answer:\n");
        for c in report.claims.iter().take(MAX_CLAIMS_SHOWN) {
            let _ = write!(
                out,
                "  [{}] \"{}\"",
                label_word(c.label),
                shorten(&c.text, CLAIM_CHARS)
            );
            if !c.why.is_empty() {
                let _ = write!(out, ": {}", inert(&c.why));
            }
            if let Some(o) = c.origin_described() {
                let _ = write!(out, " (first written at {o})");
            }
            out.push('\n');
        }
        let more = report.claims.len().saturating_sub(MAX_CLAIMS_SHOWN);
        if more > 0 {
            let _ = writeln!(out, "  ({more} more in --json)");
        }
    }
    if let Some(inf) = &report.influence
        && let Some(lead) = &inf.confidence.lead
    {
        let how = if inf.confidence.clear_winner {
            "leads clearly"
        } else {
            "is not clearly ahead (a flat top: several pieces look alike to the answer)"
        };
        let _ = writeln!(
            out,
            "\nContext most like the answer ({}): '{}' {how}.",
            inert(&inf.ranked_by),
            inert(lead)
        );
    }
    if let Some(d) = &report.dropped
        && d.any_dropped
    {
        let names: Vec<_> = d
            .dropped
            .iter()
            .take(MAX_DROPPED_SHOWN)
            .map(|u| format!("'{}'", inert(&u.id)))
            .collect();
        let _ = writeln!(
            out,
            "\nDropped context: {} of {} available units never reached the model: {}. Each is only a candidate; restoring it and re-running is the proof.",
            d.dropped.len(),
            d.available_count,
            names.join(", ")
        );
    }
    if let Some(j) = &report.judge {
        match (&j.step, &j.error) {
            (Some(s), _) => match (&j.named, &j.moved_because) {
                // The judge named one step and the rules moved its finding to another: both said.
                (Some(named), Some(why)) => {
                    let _ = writeln!(
                        out,
                        "\nJudge: named step '{}': {}\n  The rules moved its finding to step '{}' because {}.",
                        inert(named),
                        shorten(j.reason.as_deref().unwrap_or(""), 300),
                        inert(s),
                        shorten(why, 300)
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "\nJudge: blames step '{}': {}",
                        inert(s),
                        shorten(j.reason.as_deref().unwrap_or(""), 300)
                    );
                }
            },
            (None, Some(e)) => {
                let _ = writeln!(
                    out,
                    "\nJudge: no usable answer ({}); the rules' verdict stands.",
                    shorten(e, 300)
                );
            }
            (None, None) => {}
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("\nWarnings:\n");
        for w in r.warnings.iter().take(MAX_WARNINGS_SHOWN) {
            let _ = writeln!(out, "  - {}", inert(&w.message));
        }
        let more = r.warnings.len().saturating_sub(MAX_WARNINGS_SHOWN);
        if more > 0 {
            let _ = writeln!(
                out,
                "  ({more} more in --json; tdn-tui validate lists them all)"
            );
        }
    }
    out.push_str(match r.status {
        RunStatus::Failed | RunStatus::Error => {
            "\nThis diagnosis is a correlation, not proof: it says where to look first. Only a \
             re-run without the suspect (tdn-tui experiment, tdn-tui localize) shows whether it \
             caused the failure.\n"
        }
        RunStatus::Succeeded => {
            "\nThe run succeeded, so nothing here is blamed for a failure. The context most like \
             the answer is a correlation from the recording; a re-run without a unit (tdn-tui \
             experiment) shows whether it matters.\n"
        }
        RunStatus::Unfinished => {
            "\nThe run has not finished, so nothing here is blamed for a failure yet. What the \
             rules noticed is a correlation from the recording, not proof.\n"
        }
    });
    out
}

pub(super) fn serde_name(p: &super::Party) -> &'static str {
    match p {
        super::Party::Agent => "agent",
        super::Party::User => "user",
        super::Party::Unfinished => "unfinished",
        super::Party::None => "none",
    }
}

/// At most this many leads are listed in the text (the rest are in `--json`).
const MAX_LEADS_SHOWN: usize = 3;

/// The leads, apart from the suspects: steps listed for where they sit, not for a fault.
fn leads(report: &Report, out: &mut String) {
    if report.leads.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Leads (listed for where they sit or because they gave the answer; no rule found a fault in them):"
    );
    for l in report.leads.iter().take(MAX_LEADS_SHOWN) {
        let _ = writeln!(
            out,
            "  {}. {}: {}",
            l.rank,
            l.described(),
            words(&l.category)
        );
        let _ = writeln!(out, "     {}", inert(&l.title));
    }
    let more = report.leads.len().saturating_sub(MAX_LEADS_SHOWN);
    if more > 0 {
        let _ = writeln!(out, "  ({more} more in --json)");
    }
    out.push('\n');
}

/// "and 999 similar steps: 's12', 's15', 's20', ...", for a suspect with grouped ones.
fn similar_line(s: &super::Suspect) -> Option<String> {
    let n = s.similar.len();
    if n == 0 {
        return None;
    }
    let shown: Vec<String> = s
        .similar
        .iter()
        .take(3)
        .map(|x| format!("'{}'", inert(&x.step)))
        .collect();
    Some(format!(
        "and {n} similar step{}: {}{}",
        if n == 1 { "" } else { "s" },
        shown.join(", "),
        if n > 3 { ", ..." } else { "" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::JudgeOutcome;

    fn calendar() -> Report {
        serde_json::from_str(include_str!(
            "../../../../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("the report fixture is a Report")
    }

    #[test]
    fn a_judge_pick_the_rules_moved_is_said_with_both_steps() {
        let mut r = calendar();
        r.judge = Some(JudgeOutcome {
            step: Some("s3".to_owned()),
            reason: Some("it picked the wrong day".to_owned()),
            error: None,
            named: Some("s6".to_owned()),
            moved_because: Some("'s6' only passed on the value 's3' wrote".to_owned()),
        });
        let text = render_text(&r);
        assert!(
            text.contains("Judge: named step 's6': it picked the wrong day"),
            "{text}"
        );
        assert!(
            text.contains(
                "The rules moved its finding to step 's3' because 's6' only passed on the value 's3' wrote."
            ),
            "{text}"
        );
        assert!(!text.contains("blames step 's3'"), "{text}");
        r.judge = Some(JudgeOutcome {
            named: None,
            moved_because: None,
            ..r.judge.clone().expect("set above")
        });
        let text = render_text(&r);
        assert!(
            text.contains("Judge: blames step 's3': it picked the wrong day"),
            "{text}"
        );
        assert!(!text.contains("moved its finding"), "{text}");
    }

    #[test]
    fn leads_are_listed_apart_from_the_suspects() {
        let mut r = calendar();
        let mut lead = r.suspects[0].clone();
        lead.rank = 1;
        lead.step = "s9".to_owned();
        lead.index = 8;
        lead.category = "final_answer".to_owned();
        lead.title = "it committed the final answer of a run that failed".to_owned();
        r.leads = vec![lead];
        let text = render_text(&r);
        let leads_at = text.find("Leads (").unwrap_or(usize::MAX);
        assert!(
            text.find("Top suspect").is_some_and(|t| t < leads_at),
            "{text}"
        );
        assert!(
            text.contains(
                "  1. step 's9' (position 9): final answer\n     it committed the final answer"
            ),
            "{text}"
        );
        // With no suspect, the text says no fault was found, and still lists the lead.
        r.suspects.clear();
        let text = render_text(&r);
        assert!(
            text.contains("No suspect: no rule found a fault in any step."),
            "{text}"
        );
        assert!(
            text.contains("step 's9' (position 9): final answer"),
            "{text}"
        );
        let md = crate::analysis::report::render_markdown(&r, &Default::default());
        assert!(md.contains("## Leads"), "{md}");
        assert!(
            md.contains("final answer: it committed the final answer"),
            "{md}"
        );
        assert!(md.contains("No rule found a fault in any step"), "{md}");
    }
}
