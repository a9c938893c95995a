//! Reissued instruction (docs/how-it-decides.md, "Detect"): in a failed run where a coordinator
//! addresses instructions to agents (`attributes.to`, as Magentic-One's `Orchestrator (->
//! WebSurfer)` imports), an instruction that asks the same agent again for much the same thing
//! (it holds at least [`REISSUE_SHARE`] of the previous instruction's content words) shows that
//! the agent's action in between did not carry the previous one out: that action is the suspect.
//! Only the first such action of the run is reported: a coordinator that keeps rewording the
//! same goal says nothing new the second time. One pass over the steps, one pending instruction
//! per agent: linear in the run. No I/O.

use super::say::{quote, short, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, count, decides};
use crate::analysis::claims::words::terms;
use crate::analysis::params::{REISSUE_MIN_TERMS, REISSUE_SHARE, REISSUED_INSTRUCTION};
use hashbrown::{HashMap, HashSet};
use serde_json::Value;

/// An agent's action that left an instruction unmet, so it was asked again.
pub struct ReissuedInstruction;

/// An instruction waiting for its agent: where it is, its words, the agent's first action since.
struct Pending {
    at: usize,
    words: HashSet<String>,
    action: Option<usize>,
}

fn addressee(s: &crate::analysis::model::Step) -> Option<String> {
    s.attributes()
        .get("to")
        .and_then(Value::as_str)
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
}

impl Detector for ReissuedInstruction {
    fn id(&self) -> DetectorId {
        DetectorId::Instructions
    }

    fn doc(&self) -> &'static str {
        "In a failed run, an agent's action after which its coordinator had to ask it again for much the same thing."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() {
            return Vec::new();
        }
        let mut pending: HashMap<String, Pending> = HashMap::new();
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            if let Some(to) = addressee(s).filter(|_| decides(s)) {
                let words: HashSet<String> = terms(&f.texts.produced(i))
                    .into_iter()
                    .map(|t| t.key)
                    .collect();
                if let Some(p) = pending.get(&to)
                    && let Some(k) = p.action
                    && p.words.len() >= REISSUE_MIN_TERMS
                {
                    let shared = p.words.iter().filter(|w| words.contains(*w)).count();
                    if count(shared) >= REISSUE_SHARE * count(p.words.len()) {
                        out.push(
                            Finding::new(
                                k,
                                Category::ReissuedInstruction,
                                DetectorId::Instructions,
                                REISSUED_INSTRUCTION,
                                Nature::Suspect,
                                "its action left the instruction unmet: it was asked again"
                                    .to_owned(),
                            )
                            .because(format!(
                                "{} asked it: {}",
                                step(run, p.at),
                                quote(&f.texts.produced(p.at))
                            ))
                            .because(format!(
                                "it answered at {}: {}",
                                step(run, k),
                                quote(&short(&f.texts.produced(k), 120))
                            ))
                            .because(format!(
                                "{} asked again, repeating {shared} of the {} words of the first request: {}",
                                step(run, i),
                                p.words.len(),
                                quote(&f.texts.produced(i))
                            )),
                        );
                        // The first time the coordinator had to ask again is the one to
                        // check; later rewordings of the same goal add nothing new.
                        return out;
                    }
                }
                pending.insert(
                    to,
                    Pending {
                        at: i,
                        words,
                        action: None,
                    },
                );
                continue;
            }
            let Some(agent) = s.agent.as_deref().map(|a| a.trim().to_lowercase()) else {
                continue;
            };
            if let Some(p) = pending.get_mut(&agent)
                && p.action.is_none()
                && p.at < i
            {
                p.action = Some(i);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::model::{Step, StepKind};
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn msg(id: &str, agent: &str, to: Option<&str>, text: &str) -> Step {
        let mut s = Step::new(id, StepKind::Agent);
        s.agent = Some(agent.into());
        s.output = Some(json!(text).into());
        if let Some(t) = to {
            s.extras_mut().attributes.insert("to".into(), json!(t));
        }
        s
    }

    #[test]
    fn the_action_after_which_the_same_thing_was_asked_again_is_flagged() {
        let run = RunBuilder::failed()
            .step(msg("o1", "Orchestrator", Some("WebSurfer"), "Please open the YouTube video at the provided URL and note every bird species on camera."))
            .step(msg("w2", "WebSurfer", None, "I typed the URL into the search box."))
            .step(msg("o3", "Orchestrator", None, "Updated ledger: not satisfied."))
            .step(msg("o4", "Orchestrator", Some("WebSurfer"), "Please directly open the YouTube video at the URL and note the bird species on camera."))
            .step(msg("w5", "WebSurfer", None, "I opened the video."))
            .step(msg("o6", "Orchestrator", Some("WebSurfer"), "Now summarise the comments below the video."))
            .build();
        let found = facts_for(&run, |f| ReissuedInstruction.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [1]);
        assert!(
            found[0].evidence[2].contains("asked again"),
            "{:?}",
            found[0].evidence
        );
    }

    #[test]
    fn a_new_request_or_one_to_another_agent_is_not_a_reissue() {
        let run = RunBuilder::failed()
            .step(msg("o1", "Orchestrator", Some("WebSurfer"), "Please open the YouTube video at the provided URL and note every bird species on camera."))
            .step(msg("f2", "FileSurfer", None, "I read the file."))
            .step(msg("o3", "Orchestrator", Some("FileSurfer"), "Please open the YouTube video at the provided URL and note every bird species on camera."))
            .build();
        assert!(facts_for(&run, |f| ReissuedInstruction.detect(f)).is_empty());
    }
}
