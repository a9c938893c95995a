//! Sharing a diagnosis from the screen: the open run's report as Markdown
//! (`analysis::report::render_markdown`) with the verdicts of this session's experiments and the
//! ledger's records, and the file it is written to. The verdicts are the engine's and the
//! ledger's; nothing here decides one.

use super::app::{App, Document};
use super::panes::experiments::JobState;
use crate::analysis::report::{MarkdownExtras, Verdict, VerdictRow, render_markdown};
use crate::experiments::engine::Target;
use crate::experiments::ledger::history::LatestAttribution;
use crate::experiments::spec::ExperimentKind;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The verdicts of this session's finished probes (newest first), then the ledger's latest
/// record of each unit no probe of the session covers.
pub fn session_verdicts(app: &App) -> Vec<VerdictRow> {
    let mut out = Vec::new();
    // The units and steps the session's probes covered (the ledger's rows for them are older).
    let mut seen: HashSet<String> = HashSet::new();
    for job in app.experiments.jobs.iter().rev() {
        if !matches!(job.state, JobState::Ended(_) | JobState::Running) {
            continue;
        }
        for p in &job.probes {
            let (Some(r), Some(target)) = (&p.result, &p.info.asked) else {
                continue;
            };
            let experiment = match p.info.intervention.kind() {
                ExperimentKind::Ablate => "ablation",
                ExperimentKind::Restore => "restoration",
                ExperimentKind::Replay => "replay",
                ExperimentKind::Baseline => continue,
            };
            let name = match target {
                Target::Step(s) => format!("step '{s}'"),
                Target::Unit(u) => format!("unit '{u}'"),
                Target::Id(i) => format!("'{i}'"),
            };
            seen.insert(target.id().to_owned());
            let verdict = match r.verdict {
                Some(Verdict::Confirmed) => "CAUSAL",
                Some(Verdict::NotConfirmed) => "NOT CONFIRMED",
                Some(Verdict::Inconclusive) => "INCONCLUSIVE",
                Some(Verdict::Error) => "ERROR",
                None => "NOT PROBED",
            };
            let detail = p.claim.clone().unwrap_or_else(|| {
                format!(
                    "{} of {} samples changed the answer ({} completed)",
                    r.flips, r.samples, r.completed
                )
            });
            out.push(VerdictRow {
                target: name,
                experiment: experiment.to_owned(),
                verdict: verdict.to_owned(),
                detail,
            });
        }
    }
    let latest = app
        .experiments
        .ledger
        .ledger
        .as_ref()
        .map_or(&[][..], |e| e.latest.as_slice());
    for l in latest.iter().rev() {
        if seen.insert(l.attribution.component_id.clone()) {
            out.push(ledger_row(l));
        }
    }
    out
}

/// A ledger's latest attribution of a unit as a verdict row, as recorded (the screen's share key
/// and `analyze --format markdown` word it alike).
pub fn ledger_row(l: &LatestAttribution) -> VerdictRow {
    let a = &l.attribution;
    let trials = a.trial_ids.len();
    VerdictRow {
        target: format!("{} '{}'", a.component_kind, a.component_id),
        experiment: "ledger record".to_owned(),
        verdict: format!("{} · {}", a.disposition.as_str(), a.evidence_level.as_str()),
        detail: format!(
            "effect {} from {trials} trial{}, tested {} ({})",
            crate::analysis::js_number::js_number(a.effect),
            if trials == 1 { "" } else { "s" },
            a.tested_at,
            l.status.as_str()
        ),
    }
}

/// The Markdown of the open run with these verdicts.
pub fn markdown(doc: &Document, verdicts: Vec<VerdictRow>, from: Option<String>) -> String {
    render_markdown(
        &doc.report,
        &MarkdownExtras {
            final_answer: doc.run.final_answer.clone(),
            reference_answer: doc.run.reference_answer.clone(),
            verdicts_from: from,
            verdicts,
        },
    )
}

/// The file a run's diagnosis is written to in `dir`: `tdn-diagnosis-FILE-ID.md`, named after
/// the file the run came from and the run's id (the id alone when the file is named after it, or
/// when there is no file), so two runs never share one (issue 26: two Magentic-One files, each
/// holding a run called 'messages', wrote the same page). Each part is reduced to ASCII
/// letters, digits, `-` and `_` (any other character becomes `_`) and cut to 60, so a run
/// cannot name a path.
pub fn file_for(dir: &Path, source: Option<&Path>, run_id: &str) -> PathBuf {
    let part = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .take(60)
            .collect()
    };
    let mut id = part(run_id);
    if id.is_empty() {
        id.push_str("run");
    }
    let stem = source
        .and_then(Path::file_stem)
        .map(|s| part(&s.to_string_lossy()))
        .filter(|s| !s.is_empty() && *s != id);
    match stem {
        Some(stem) => dir.join(format!("tdn-diagnosis-{stem}-{id}.md")),
        None => dir.join(format!("tdn-diagnosis-{id}.md")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_cannot_name_a_path() {
        let d = Path::new("out");
        assert_eq!(
            file_for(d, None, "../../etc/passwd"),
            d.join("tdn-diagnosis-______etc_passwd.md")
        );
        assert_eq!(file_for(d, None, ""), d.join("tdn-diagnosis-run.md"));
        assert_eq!(
            file_for(d, Some(Path::new("runs/cal-0007.json")), "cal-0007"),
            d.join("tdn-diagnosis-cal-0007.md")
        );
        assert_eq!(
            file_for(d, Some(Path::new("../x/../../evil name.json")), "r/1"),
            d.join("tdn-diagnosis-evil_name-r_1.md")
        );
    }

    /// Issue 26: two files whose runs share an id never share a page.
    #[test]
    fn runs_of_two_files_with_one_id_get_two_pages() {
        let d = Path::new("out");
        let a = file_for(d, Some(Path::new("m/0a65cb96.json")), "messages");
        let b = file_for(d, Some(Path::new("m/16d825ff.json")), "messages");
        assert_ne!(a, b);
        assert_eq!(a, d.join("tdn-diagnosis-0a65cb96-messages.md"));
    }
}
