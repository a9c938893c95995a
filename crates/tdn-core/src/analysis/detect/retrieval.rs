//! Retrieval quality (docs/how-it-decides.md, "Detect"): a search that returned nothing
//! (`documents: []`), or returned sources the recorder marked `outdated` (also a context unit
//! with `"outdated": true` that reached a model). Findings are about what a read returned, so
//! they rank lower when no later step used the read. No I/O.

use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::StepKind;
use crate::analysis::params::{EMPTY_RETRIEVAL, OUTDATED_SOURCE};
use hashbrown::HashMap;
use serde_json::Value;

/// Empty searches and outdated sources.
pub struct RetrievalQuality;

/// At most this many outdated documents are named per step.
const NAMED_DOCS: usize = 3;

impl Detector for RetrievalQuality {
    fn id(&self) -> DetectorId {
        DetectorId::RetrievalQuality
    }

    fn doc(&self) -> &'static str {
        "A search that returned nothing, or returned sources marked outdated."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            if s.kind != StepKind::Retrieval || s.failed() {
                continue;
            }
            let Some(docs) = &s.documents else { continue };
            if !docs.is_empty() && !docs.iter().any(|d| d.outdated) {
                continue;
            }
            let query = short(&f.texts.consumed(i), 80);
            if docs.is_empty() {
                let mut fi = Finding::new(
                    i,
                    Category::EmptyRetrieval,
                    DetectorId::RetrievalQuality,
                    EMPTY_RETRIEVAL,
                    Nature::Suspect,
                    "a search returned nothing".to_owned(),
                )
                .because(format!(
                    "the search at {} ('{query}') returned no documents",
                    step(run, i)
                ));
                fi.about_read = true;
                out.push(fi);
                continue;
            }
            let old: Vec<_> = docs.iter().filter(|d| d.outdated).collect();
            let mut fi = Finding::new(
                i,
                Category::OutdatedSource,
                DetectorId::RetrievalQuality,
                OUTDATED_SOURCE,
                Nature::Suspect,
                format!("a search returned {} outdated source(s)", old.len()),
            )
            .because(format!(
                "the search at {} ('{query}') returned {} of {} documents marked outdated",
                step(run, i),
                old.len(),
                docs.len()
            ));
            for d in old.iter().take(NAMED_DOCS) {
                let name =
                    d.id.as_deref()
                        .or(d.source.as_deref())
                        .map(|n| format!("document {}", quote(n)))
                        .unwrap_or_else(|| "a document".to_owned());
                fi = fi.because(format!("{name} is marked outdated: {}", quote(&d.text)));
            }
            if let Some(u) = f.links.out_of_step(i).next() {
                fi = fi.because(format!("its text reached {}", step(run, u.to)));
            }
            fi.about_read = true;
            out.push(fi);
        }
        out.extend(outdated_units(f));
        out
    }
}

/// Context units marked outdated (`"outdated": true`) that reached a model and were not
/// produced by a retrieval step (those are covered above).
fn outdated_units(f: &Facts<'_>) -> Vec<Finding> {
    let run = f.run;
    let mut out = Vec::new();
    let outdated = |unit: &&crate::analysis::model::ContextUnit| {
        unit.extra.get("outdated").and_then(Value::as_bool) == Some(true)
    };
    // The first step each outdated unit was sent to, in one pass over what was sent.
    let mut first_sent: HashMap<&str, Option<usize>> = run
        .context_units
        .iter()
        .filter(outdated)
        .map(|u| (u.id.as_str(), None))
        .collect();
    if first_sent.is_empty() {
        return out;
    }
    for (i, s) in run.steps.iter().enumerate() {
        for id in s.context.iter().flat_map(|c| c.sent.iter()) {
            if let Some(slot) = first_sent.get_mut(id.as_str())
                && slot.is_none()
            {
                *slot = Some(i);
            }
        }
    }
    for unit in run.context_units.iter().filter(outdated) {
        let producer = unit
            .produced_by
            .as_ref()
            .and_then(|p| run.step_index(p.as_str()));
        if producer
            .and_then(|p| run.steps.get(p))
            .is_some_and(|s| s.kind == StepKind::Retrieval)
        {
            continue;
        }
        let first_sent = first_sent.get(unit.id.as_str()).copied().flatten();
        let Some(at) = producer.or(first_sent) else {
            continue;
        };
        let mut fi = Finding::new(
            at,
            Category::OutdatedSource,
            DetectorId::RetrievalQuality,
            OUTDATED_SOURCE,
            Nature::Suspect,
            format!("the context unit {} is outdated", quote(unit.id.as_str())),
        )
        .because(format!(
            "the context unit {} is marked outdated and reached the model at {}: {}",
            quote(unit.id.as_str()),
            step(run, first_sent.unwrap_or(at)),
            quote(&unit.text)
        ));
        fi.about_read = true;
        out.push(fi);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::{RunBuilder, doc};

    #[test]
    fn empty_and_outdated_searches_are_flagged() {
        let run = RunBuilder::failed()
            .retrieval("s1", "warranty", vec![])
            .retrieval(
                "s2",
                "refund",
                vec![
                    doc("p23", "Refunds are $120.", true),
                    doc("p25", "Refunds are $80.", false),
                ],
            )
            .build();
        let found = facts_for(&run, |f| RetrievalQuality.detect(f));
        let got: Vec<_> = found.iter().map(|f| (f.step, f.category)).collect();
        assert_eq!(
            got,
            vec![(0, Category::EmptyRetrieval), (1, Category::OutdatedSource)]
        );
        assert!(found.iter().all(|f| f.about_read));
        assert!(
            found[1]
                .evidence
                .iter()
                .any(|e| e.contains("document 'p23' is marked outdated"))
        );
    }

    #[test]
    fn current_results_are_not_flagged() {
        let run = RunBuilder::failed()
            .retrieval("s1", "refund", vec![doc("p25", "Refunds are $80.", false)])
            .build();
        assert!(facts_for(&run, |f| RetrievalQuality.detect(f)).is_empty());
    }
}
