//! The origin of a claim: the earliest model step (`llm`, `agent`, `decision`) whose output
//! already held it, meaning every number and id of the claim and at least [`ORIGIN_SHARE`] of its
//! weighted words (tool names in the output left out, looked up in a set). One pass over the
//! model steps with an index from term to claims, so the cost is the size of the outputs, not
//! outputs times claims or words times tool names.

use super::words::{Term, each_term_except};
use crate::analysis::links::StepTexts;
use crate::analysis::model::Run;
use crate::analysis::rank::params::ORIGIN_SHARE;
use hashbrown::{HashMap, HashSet};

/// At most this many tool names are left out of model outputs.
const MAX_TOOL_NAMES: usize = 1_000;

/// For each claim (given by its terms; `None` to skip it), the position of its origin step.
pub fn origins(run: &Run, texts: &StepTexts, claims: &[Option<Vec<Term>>]) -> Vec<Option<usize>> {
    let mut out = vec![None; claims.len()];
    let mut by_key: HashMap<&str, Vec<(usize, f64, bool)>> = HashMap::new();
    let mut need: Vec<(f64, usize)> = Vec::with_capacity(claims.len());
    let mut open = 0usize;
    for (c, ts) in claims.iter().enumerate() {
        let ts = ts.as_deref().unwrap_or(&[]);
        let total: f64 = ts.iter().map(Term::weight).sum();
        let keys = ts.iter().filter(|t| t.is_key()).count();
        need.push((total, keys));
        if total > 0.0 {
            open += 1;
        }
        for t in ts {
            by_key
                .entry(t.key.as_str())
                .or_default()
                .push((c, t.weight(), t.is_key()));
        }
    }
    // A tool call's name ("schedule_meeting") is not the model saying the claim's words. A set,
    // so each word of each output is one lookup however many tools the run has.
    let mut tool_names: HashSet<&str> = run.tools.iter().map(|t| t.name.as_str()).collect();
    for s in &run.steps {
        if let Some(c) = &s.tool
            && tool_names.len() < MAX_TOOL_NAMES
        {
            tool_names.insert(&c.name);
        }
    }
    let mut acc = vec![(0.0f64, 0usize); claims.len()];
    let mut touched: Vec<usize> = Vec::new();
    for (i, step) in run.steps.iter().enumerate() {
        if open == 0 {
            break;
        }
        if !crate::analysis::detect::decides(step) {
            continue;
        }
        let mut seen: HashSet<String> = HashSet::new();
        each_term_except(texts.produced(i), &tool_names, |k, _| {
            if seen.contains(&k) {
                return;
            }
            if let Some(list) = by_key.get(k.as_str()) {
                for &(c, w, is_key) in list {
                    if let Some(a) = acc.get_mut(c) {
                        if a.0 == 0.0 && a.1 == 0 {
                            touched.push(c);
                        }
                        a.0 += w;
                        a.1 += usize::from(is_key);
                    }
                }
            }
            seen.insert(k);
        });
        for c in touched.drain(..) {
            let (w, k) = acc.get(c).copied().unwrap_or_default();
            if let Some(a) = acc.get_mut(c) {
                *a = (0.0, 0);
            }
            let Some(&(total, keys)) = need.get(c) else {
                continue;
            };
            if total > 0.0
                && k == keys
                && w / total >= ORIGIN_SHARE
                && let Some(slot) = out.get_mut(c)
                && slot.is_none()
            {
                *slot = Some(i);
                open = open.saturating_sub(1);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::label::claim_terms;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn tool_names_are_left_out_however_many_tools_the_run_has() {
        let mut b = RunBuilder::failed();
        for k in 0..(MAX_TOOL_NAMES - 1) {
            b = b.tool_def(&format!("tool_{k}"), "", json!(null), false);
        }
        let run = b
            .llm("s1", "schedule_meeting")
            .tool_ok("s2", "schedule_meeting", json!({}), json!({"ok": true}))
            .llm("s3", "Your call with Dana is set.")
            .build();
        let texts = StepTexts::build(&run);
        let claims = vec![Some(claim_terms("schedule meeting"))];
        // s1 wrote only the tool's name, which is not the claim's words.
        assert_eq!(origins(&run, &texts, &claims), vec![None]);
        let claims = vec![Some(claim_terms("Your call with Dana is set."))];
        assert_eq!(origins(&run, &texts, &claims), vec![Some(2)]);
    }
}
