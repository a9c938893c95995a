//! The experiments pane in plain words (issue 26): a probe's verdict as a sentence a person reads
//! first ("removing 'policy-2019' changed the answer in 3 of 3 re-runs: a confirmed cause"), a
//! job's verdicts in one line, what a job or sample spent, and the ledger's terms
//! (`causal_ablation`, `harmful`, `legacy_unverified`...) never without their meaning beside them.
//! The verdicts, counts and costs are the engine's and the ledger's; this only words them.

use super::state::{Job, ProbeRun};
use crate::analysis::report::{ProbeResult, Verdict};
use crate::experiments::intervention::Intervention;
use crate::experiments::ledger::{Disposition, EvidenceLevel, Status};
use crate::experiments::runner::Spent;

/// A probe's verdict as one sentence, or `None` while it has none.
pub fn verdict_sentence(i: &Intervention, r: &ProbeResult) -> Option<String> {
    let doing = i.describe();
    let n = r.samples;
    let runs = |k: usize| if k == 1 { "re-run" } else { "re-runs" };
    Some(match r.verdict? {
        Verdict::Confirmed => format!(
            "{doing} changed the answer in {} of {n} {}: a confirmed cause",
            r.flips,
            runs(n)
        ),
        Verdict::NotConfirmed => format!(
            "{doing} did not change the answer in {n} {}: not shown to matter",
            runs(n)
        ),
        Verdict::Inconclusive => format!(
            "{doing} changed the answer in {} of {n} {} ({} completed): inconclusive, below a majority or against an unsteady baseline",
            r.flips,
            runs(n),
            r.completed
        ),
        Verdict::Error => format!("{doing}: no re-run completed, so nothing was measured"),
    })
}

/// The probes of a job that test something (baselines aside), in plan order.
fn tested(job: &Job) -> impl Iterator<Item = &ProbeRun> {
    job.probes
        .iter()
        .filter(|p| p.info.intervention != Intervention::Baseline)
}

/// A finished job's verdicts in one line: the one probe's sentence, or, for several, how many
/// confirmed a cause (named) and how the others came out. `None` while no probe has a verdict.
pub fn job_verdict(job: &Job) -> Option<(Option<Verdict>, String)> {
    let probes: Vec<&ProbeRun> = tested(job).collect();
    if let [one] = probes.as_slice() {
        let r = one.result.as_ref()?;
        return verdict_sentence(&one.info.intervention, r).map(|s| (r.verdict, s));
    }
    let of = |v: Verdict| {
        probes
            .iter()
            .filter(|p| p.result.as_ref().and_then(|r| r.verdict) == Some(v))
            .count()
    };
    if probes.iter().all(|p| p.result.is_none()) {
        return None;
    }
    let causes: Vec<String> = probes
        .iter()
        .filter(|p| p.result.as_ref().and_then(|r| r.verdict) == Some(Verdict::Confirmed))
        .map(|p| p.info.intervention.describe())
        .collect();
    let n = probes.len();
    let mut parts = Vec::new();
    let top = if causes.is_empty() {
        None
    } else {
        Some(Verdict::Confirmed)
    };
    parts.push(match causes.len() {
        0 => format!("no confirmed cause among {n} probes"),
        k => format!(
            "{k} of {n} probes confirmed a cause ({})",
            causes.join("; ")
        ),
    });
    for (v, words) in [
        (Verdict::NotConfirmed, "changed nothing"),
        (Verdict::Inconclusive, "inconclusive"),
        (Verdict::Error, "measured nothing (errors)"),
    ] {
        let k = of(v);
        if k > 0 {
            parts.push(format!("{k} {words}"));
        }
    }
    Some((top, parts.join(", ")))
}

/// What a job or sample spent, in words: `7.2s, 3,600 tokens, $0.018`.
pub fn spent_words(s: &Spent) -> String {
    s.words()
}

/// A disposition with its meaning, worded for what was tried on a failed run when that is
/// known: `harmful: removing it moved the run off its recorded failure`.
pub fn disposition_words(d: Disposition, tried: Option<&Intervention>, failed_run: bool) -> String {
    let specific = match (d, tried, failed_run) {
        (Disposition::Harmful, Some(Intervention::Ablate(_)), true) => {
            Some("removing it moved the run off its recorded failure")
        }
        (Disposition::Harmful, Some(Intervention::Restore(_)), true) => {
            Some("putting it back kept the run on its recorded failure")
        }
        (Disposition::Retained, Some(Intervention::Restore(_)), true) => {
            Some("putting it back moved the run off its recorded failure")
        }
        (Disposition::Retained, Some(Intervention::Ablate(_)), true) => {
            Some("the run moved off its recorded failure more often with it than without it")
        }
        (Disposition::Retained, Some(Intervention::Replay { .. }), true) => {
            Some("the replay moved the run off its recorded failure")
        }
        _ => None,
    };
    format!(
        "{} ({})",
        d.as_str(),
        specific.unwrap_or_else(|| d.meaning())
    )
}

/// An evidence level with its meaning: `causal_ablation (isolated: ...)`.
pub fn level_words(l: EvidenceLevel) -> String {
    format!("{} ({})", l.as_str(), l.meaning())
}

/// A verification status with its meaning, or nothing for a verified record.
pub fn status_words(s: Status) -> String {
    match s {
        Status::Verified => String::new(),
        other => format!("{} ({})", other.as_str(), other.meaning()),
    }
}

/// `2026-12-07 10:01` from a ledger time stamp (`2026-12-07T10:01:22Z`); anything else as it is.
pub fn date(stamp: &str) -> String {
    match (stamp.get(..10), stamp.get(11..16)) {
        (Some(day), Some(time)) if stamp.get(10..11) == Some("T") => format!("{day} {time}"),
        _ => crate::tui::widgets::inert_text::clipped(stamp, 20).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ledger::Disposition;

    fn result(v: Verdict, flips: usize) -> ProbeResult {
        ProbeResult {
            verdict: Some(v),
            flips,
            samples: 3,
            completed: 3,
            errors: 0,
            similarity: None,
            cost: None,
            class: None,
        }
    }

    #[test]
    fn a_verdict_reads_as_a_sentence() {
        let i = Intervention::Ablate(vec!["policy-2019".into()]);
        assert_eq!(
            verdict_sentence(&i, &result(Verdict::Confirmed, 3)).unwrap(),
            "removing 'policy-2019' changed the answer in 3 of 3 re-runs: a confirmed cause"
        );
        assert_eq!(
            verdict_sentence(&i, &result(Verdict::NotConfirmed, 0)).unwrap(),
            "removing 'policy-2019' did not change the answer in 3 re-runs: not shown to matter"
        );
    }

    #[test]
    fn ledger_terms_come_with_their_meaning() {
        let restore = Intervention::Restore(vec!["policy-2024".into()]);
        assert_eq!(
            disposition_words(Disposition::Retained, Some(&restore), true),
            "retained (putting it back moved the run off its recorded failure)"
        );
        assert!(
            level_words(EvidenceLevel::PairedShadow).starts_with("paired_shadow (not isolated")
        );
        assert!(
            status_words(Status::LegacyUnverified).starts_with("legacy_unverified (written by")
        );
        assert_eq!(status_words(Status::Verified), "");
        assert_eq!(date("2026-12-07T10:01:22Z"), "2026-12-07 10:01");
    }
}
