//! The report as Markdown, to paste into a bug (`analyze --format markdown`, and the screen's
//! share key): the run and its verdict, the fault, the top suspect with its evidence, the next
//! suspects, the claims with what each label rests on, the context most like the answer, dropped
//! context, the judge, the experiment verdicts the caller read from the ledger or the session,
//! warnings, and the reminder that a score is not a proof. Scores are never printed. Every
//! run-derived string is made inert and its Markdown characters escaped, so a run cannot inject
//! links, images or HTML into the page it is pasted into. Formats only; reads nothing.

use super::Report;
use super::text::{label_word, role_words, run_failed, sentence, serde_name, words};
use crate::analysis::model::{RunStatus, inert_line};
use std::fmt::Write as _;

/// At most this many suspects after the top one are listed.
const MAX_OTHER_SUSPECTS: usize = 9;
/// At most this many claims are listed.
const MAX_CLAIMS: usize = 30;
/// At most this many steps of a shortlist are named.
const MAX_SHORTLIST: usize = 10;
/// At most this many dropped units are named.
const MAX_DROPPED: usize = 10;
/// At most this many evidence lines of the top suspect.
const MAX_EVIDENCE: usize = 12;
/// At most this many warnings are listed.
const MAX_WARNINGS: usize = 20;
/// At most this many experiment verdicts are listed.
const MAX_VERDICTS: usize = 30;
/// Longest piece of run text quoted, in characters.
const QUOTE_CHARS: usize = 300;

/// One experiment verdict, in words, from the ledger or the screen's session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerdictRow {
    /// What was re-run without (or with): `step 's3'`, `unit 'policy-2019'`.
    pub target: String,
    /// The experiment: `ablation`, `restoration`, `replay`.
    pub experiment: String,
    /// The verdict: `CAUSAL`, `NOT CONFIRMED`, `harmful · causal_ablation`...
    pub verdict: String,
    /// What it shows, in one sentence.
    pub detail: String,
}

/// What the Markdown adds to the report: the answers, where the verdicts came from, and the
/// verdicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkdownExtras {
    /// The run's final answer.
    pub final_answer: Option<String>,
    /// The answer the run should have given, when the run records one.
    pub reference_answer: Option<String>,
    /// Where the verdicts were read (`the attribution ledger 'x.jsonl'`, `this session`).
    pub verdicts_from: Option<String>,
    /// The experiment verdicts.
    pub verdicts: Vec<VerdictRow>,
}

/// Run text made safe for Markdown: one line, inert, cut to `max` characters, and every
/// character that Markdown or HTML would act on escaped.
pub fn md(text: &str, max: usize) -> String {
    let mut cut: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        cut.push('…');
    }
    let one = cut.split_whitespace().collect::<Vec<_>>().join(" ");
    let safe = inert_line(&one);
    let mut out = String::with_capacity(safe.len() + 8);
    for c in safe.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '!' | '#' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// ` and N more` when a list of `total` was cut to `shown`, else nothing.
fn and_more(total: usize, shown: usize) -> String {
    match total.checked_sub(shown) {
        Some(more) if more > 0 => format!(" and {more} more"),
        _ => String::new(),
    }
}

/// The report as Markdown.
pub fn render_markdown(report: &Report, extras: &MarkdownExtras) -> String {
    let mut out = String::new();
    let r = &report.run;
    let failed = run_failed(report);
    let _ = writeln!(
        out,
        "# Diagnosis of run {}: {}\n",
        md(&r.id, 120),
        r.status.as_str()
    );
    let _ = writeln!(
        out,
        "- **Run**: {}, {}, {}, recorded as {}",
        md(&r.id, 120),
        crate::analysis::count::counted(r.steps, "step", "steps"),
        r.status.as_str(),
        md(&r.source_format, 60)
    );
    if let Some(t) = &r.title {
        let _ = writeln!(out, "- **Name**: {}", md(t, 120));
    }
    if let Some(t) = &r.task {
        let _ = writeln!(out, "- **Task**: {}", md(t, QUOTE_CHARS));
    }
    let _ = writeln!(
        out,
        "- **Outcome**: {}",
        md(&super::text::outcome_sentence(report), 600)
    );
    if let Some(c) = &report.cost {
        let _ = writeln!(
            out,
            "- **Cost**: {}",
            md(&crate::analysis::cost::summary(c), 600)
        );
    }
    let _ = writeln!(
        out,
        "- **Fault**: {}. {}",
        serde_name(&report.fault.party),
        sentence(&md(&report.fault.why, QUOTE_CHARS))
    );
    match &report.verdict {
        Some(v) => {
            let _ = writeln!(
                out,
                "- **Top suspect**: {}, {}",
                md(&v.described(), 120),
                words(&v.category)
            );
        }
        None => {
            let _ = writeln!(out, "- **Top suspect**: none");
        }
    }
    if let Some(a) = &report.against {
        let lines = super::against::sentences(a);
        let _ = writeln!(
            out,
            "- **Against a good run**: {}",
            md(&lines.join(" "), 2_000)
        );
    }
    if let Some(a) = &extras.final_answer {
        let _ = writeln!(out, "- **Final answer**: {}", md(a, QUOTE_CHARS));
    }
    if let Some(a) = &extras.reference_answer {
        let _ = writeln!(out, "- **Reference answer**: {}", md(a, QUOTE_CHARS));
    }
    out.push('\n');
    suspects(report, failed, &mut out);
    leads(report, &mut out);
    claims(report, &mut out);
    context(report, &mut out);
    verdicts(extras, &mut out);
    if !r.warnings.is_empty() {
        let _ = writeln!(out, "## Warnings\n");
        for w in r.warnings.iter().take(MAX_WARNINGS) {
            let _ = writeln!(out, "- {}", md(&w.message, QUOTE_CHARS));
        }
        let more = r.warnings.len().saturating_sub(MAX_WARNINGS);
        if more > 0 {
            let _ = writeln!(out, "- and {more} more (`tdn-tui validate` lists them all)");
        }
        out.push('\n');
    }
    out.push_str("---\n\n");
    out.push_str(match r.status {
        RunStatus::Failed | RunStatus::Error => {
            "A suspect's score only narrows the search: this diagnosis is a correlation until a re-run without the suspect changes the answer (a CAUSAL verdict).\n"
        }
        RunStatus::Succeeded => {
            "The run succeeded, so nothing here is blamed for a failure; what the rules noticed is a correlation from the recording.\n"
        }
        RunStatus::Unfinished => {
            "The run has not finished, so nothing here is blamed for a failure yet; what the rules noticed is a correlation from the recording.\n"
        }
    });
    out.push_str("\n_Written by tdn-tui._\n");
    out
}

fn suspects(report: &Report, failed: bool, out: &mut String) {
    let (first, others) = if failed {
        ("Top suspect", "Next suspects")
    } else {
        ("First observation", "Other observations")
    };
    let Some(top) = report.suspects.first() else {
        let _ = writeln!(
            out,
            "## Suspects\n\n{}\n",
            if failed && !report.leads.is_empty() {
                "No rule found a fault in any step; the leads below are where to look."
            } else if failed {
                "No rule found a step to blame."
            } else if report.run.status == RunStatus::Succeeded {
                "None: the run succeeded, so there is no failure to explain."
            } else {
                "No rule flagged a step."
            }
        );
        return;
    };
    let _ = writeln!(
        out,
        "## {first}: {}, {}\n",
        md(&top.described(), 120),
        words(&top.category)
    );
    let _ = writeln!(out, "{}\n", sentence(&md(&top.title, QUOTE_CHARS)));
    let _ = writeln!(
        out,
        "Why it was chosen: found by `{}` ({}).\n",
        inert_line(&top.detector).replace('`', "'"),
        md(&role_words(report, top), 200)
    );
    for e in top.evidence.iter().take(MAX_EVIDENCE) {
        let _ = writeln!(out, "- {}", md(e, QUOTE_CHARS));
    }
    let more = top.evidence.len().saturating_sub(MAX_EVIDENCE);
    if more > 0 {
        let _ = writeln!(out, "- and {more} more");
    }
    out.push('\n');
    if failed && report.suspects.len() > 1 {
        let c = &report.confidence;
        if c.clear_winner {
            out.push_str("Ranking: the top suspect leads clearly.\n\n");
        } else if !c.shortlist.is_empty() {
            let list: Vec<String> = c
                .shortlist
                .iter()
                .take(MAX_SHORTLIST)
                .map(|s| md(s, 40))
                .collect();
            let _ = writeln!(
                out,
                "Ranking: too close to call; re-run each of {}{}.\n",
                list.join(", "),
                and_more(c.shortlist.len(), MAX_SHORTLIST)
            );
        }
    }
    let rest: Vec<_> = report
        .suspects
        .iter()
        .skip(1)
        .take(MAX_OTHER_SUSPECTS)
        .collect();
    if rest.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {others}\n");
    out.push_str("| # | step | what | how it was found |\n|---|---|---|---|\n");
    for s in rest {
        let _ = writeln!(
            out,
            "| {} | {} | {}: {} | {} |",
            s.rank,
            md(&s.described(), 80),
            words(&s.category),
            md(&s.title, 160),
            md(&role_words(report, s), 120)
        );
    }
    let more = report.suspects.len().saturating_sub(1 + MAX_OTHER_SUSPECTS);
    if more > 0 {
        let _ = writeln!(
            out,
            "\nand {more} more (`tdn-tui analyze --json` lists them all)."
        );
    }
    out.push('\n');
}

/// The leads, apart from the suspects: steps listed for where they sit or because they gave
/// the answer, with no fault found in them.
fn leads(report: &Report, out: &mut String) {
    if report.leads.is_empty() {
        return;
    }
    out.push_str(
        "## Leads\n\nListed for where they sit or because they gave the final answer; no rule found a fault in them.\n\n| # | step | what |\n|---|---|---|\n",
    );
    for l in report.leads.iter().take(MAX_OTHER_SUSPECTS) {
        let _ = writeln!(
            out,
            "| {} | {} | {}: {} |",
            l.rank,
            md(&l.described(), 80),
            words(&l.category),
            md(&l.title, 160)
        );
    }
    let more = report.leads.len().saturating_sub(MAX_OTHER_SUSPECTS);
    if more > 0 {
        let _ = writeln!(
            out,
            "\nand {more} more (`tdn-tui analyze --json` lists them all)."
        );
    }
    out.push('\n');
}

fn claims(report: &Report, out: &mut String) {
    if report.claims.is_empty() {
        return;
    }
    out.push_str("## Claims of the final answer\n\n| label | claim | why |\n|---|---|---|\n");
    for c in report.claims.iter().take(MAX_CLAIMS) {
        let mut why = md(&c.why, QUOTE_CHARS);
        if let Some(e) = &c.evidence_step {
            why.push_str(&format!(" (evidence: step {})", md(e, 40)));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            label_word(c.label),
            md(&c.text, 200),
            why
        );
    }
    let more = report.claims.len().saturating_sub(MAX_CLAIMS);
    if more > 0 {
        let _ = writeln!(out, "\nand {more} more.");
    }
    out.push('\n');
}

fn context(report: &Report, out: &mut String) {
    let mut any = false;
    if let Some(inf) = &report.influence
        && let Some(lead) = &inf.confidence.lead
    {
        any = true;
        let how = if inf.confidence.clear_winner {
            "leads clearly"
        } else {
            "is not clearly ahead (several pieces look alike to the answer)"
        };
        let _ = writeln!(
            out,
            "## Context\n\nMost like the answer ({}, a correlation, not a cause): {} {how}.\n",
            md(&inf.ranked_by, 40),
            md(lead, 80)
        );
    }
    if let Some(d) = &report.dropped
        && d.any_dropped
    {
        if !any {
            out.push_str("## Context\n\n");
        }
        let names: Vec<String> = d
            .dropped
            .iter()
            .take(MAX_DROPPED)
            .map(|u| md(&u.id, 60))
            .collect();
        let _ = writeln!(
            out,
            "Dropped: {} of {} available units never reached the model: {}{}. Each is only a candidate; re-running with it put back is the proof.\n",
            d.dropped.len(),
            d.available_count,
            names.join(", "),
            and_more(d.dropped.len(), MAX_DROPPED)
        );
    }
    if let Some(j) = &report.judge {
        match (&j.step, &j.error) {
            (Some(s), _) => {
                let moved = match (&j.named, &j.moved_because) {
                    (Some(n), Some(why)) => format!(
                        " The judge named step {}; the rules moved its finding because {}.",
                        md(n, 40),
                        md(why, QUOTE_CHARS)
                    ),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "## Judge\n\nThe judge's finding is on step {}: {}{moved}\n",
                    md(s, 40),
                    md(j.reason.as_deref().unwrap_or(""), QUOTE_CHARS)
                );
            }
            (None, Some(e)) => {
                let _ = writeln!(
                    out,
                    "## Judge\n\nNo usable answer ({}); the rules' verdict stands.\n",
                    md(e, QUOTE_CHARS)
                );
            }
            (None, None) => {}
        }
    }
}

fn verdicts(extras: &MarkdownExtras, out: &mut String) {
    out.push_str("## Experiments\n\n");
    if extras.verdicts.is_empty() {
        out.push_str(
            "No re-run has been recorded: nothing here is proven yet. `tdn-tui experiment` or `tdn-tui localize` re-runs the agent without a suspect and says whether it caused the answer.\n\n",
        );
        return;
    }
    if let Some(from) = &extras.verdicts_from {
        let _ = writeln!(out, "From {}.\n", md(from, 200));
    }
    out.push_str("| re-run | of | verdict | what it shows |\n|---|---|---|---|\n");
    for v in extras.verdicts.iter().take(MAX_VERDICTS) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            md(&v.experiment, 40),
            md(&v.target, 80),
            md(&v.verdict, 60),
            md(&v.detail, QUOTE_CHARS)
        );
    }
    let more = extras.verdicts.len().saturating_sub(MAX_VERDICTS);
    if more > 0 {
        let _ = writeln!(out, "\nand {more} more.");
    }
    out.push_str("\nOnly a CAUSAL verdict (or a `harmful` record from a causal ablation) is evidence of a cause, and only for that scenario.\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_text_cannot_inject_markdown_or_html() {
        assert_eq!(md("![x](http://e/)", 100), "\\!\\[x\\](http://e/)");
        assert_eq!(md("<img src=x>", 100), "\\<img src=x\\>");
        assert_eq!(md("a | b\nc", 100), "a \\| b c");
        assert_eq!(md("\u{1b}[2J", 100), "\\\\u{1b}\\[2J");
        assert_eq!(md("abcdef", 3), "abc…");
    }
}
