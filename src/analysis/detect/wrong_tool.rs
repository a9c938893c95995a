//! Wrong tool (docs/how-it-decides.md, "Detect"): tool X was called where tool Y fits, because
//! the arguments fail X's schema but fit Y's, or because the request matches Y's description far
//! better than X's (and Y was never called, and Y does not change things where X only reads:
//! a lookup before an action is not a wrong tool). The finding goes on the model step that issued the
//! call (the one that chose the tool), else on the call itself. Needs the run's `tools`. No I/O.

use super::say::{quote, step};
use super::schema::{has_properties, keys_declared, validate};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, count};
use crate::analysis::claims::words::terms;
use crate::analysis::model::{Run, StepKind};
use crate::analysis::rank::params::{
    WRONG_TOOL_DESCRIPTION, WRONG_TOOL_FACTOR, WRONG_TOOL_MIN_SHARED, WRONG_TOOL_SCHEMA,
};
use std::collections::{HashMap, HashSet};

/// Tool X called where tool Y fits.
pub struct WrongTool;

/// The content words of a tool's name and description.
fn tool_words(run: &Run) -> HashMap<&str, HashSet<String>> {
    run.tools
        .iter()
        .filter_map(|t| {
            let d = t.description.as_deref()?;
            let words = terms(&format!("{} {d}", t.name.replace(['_', '-'], " ")))
                .into_iter()
                .map(|t| t.key)
                .collect();
            Some((t.name.as_str(), words))
        })
        .collect()
}

impl Detector for WrongTool {
    fn id(&self) -> DetectorId {
        DetectorId::WrongTool
    }

    fn doc(&self) -> &'static str {
        "Tool X called where tool Y fits: arguments fail X's schema but fit Y's, or the request matches Y's description far better."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if run.tools.len() < 2 {
            return Vec::new();
        }
        let called: HashSet<&str> = run
            .steps
            .iter()
            .filter_map(|s| s.tool.as_ref().map(|c| c.name.as_str()))
            .collect();
        let described = tool_words(run);
        let mut request_cache: HashMap<Option<usize>, HashSet<String>> = HashMap::new();
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            let (StepKind::Tool, Some(call)) = (s.kind, &s.tool) else {
                continue;
            };
            let Some(x) = run.tool(&call.name) else {
                continue;
            };
            let at = f.caller(i).unwrap_or(i);
            let chose = if at == i {
                format!("{} called {}", step(run, i), quote(&x.name))
            } else {
                format!(
                    "{} chose {} for the call at {}",
                    step(run, at),
                    quote(&x.name),
                    step(run, i)
                )
            };
            // By schema: fails X's, fits Y's.
            if let Some(xs) = &x.parameters {
                let problems = validate(xs, &call.arguments);
                if !problems.is_empty()
                    && let Some(y) = run.tools.iter().find(|y| {
                        y.name != x.name
                            && y.parameters.as_ref().is_some_and(|ys| {
                                has_properties(ys)
                                    && keys_declared(ys, &call.arguments)
                                    && validate(ys, &call.arguments).is_empty()
                            })
                    })
                {
                    let what: Vec<_> = problems.iter().map(|p| p.what.as_str()).collect();
                    out.push(
                        Finding::new(
                            at,
                            Category::WrongTool,
                            DetectorId::WrongTool,
                            WRONG_TOOL_SCHEMA,
                            Nature::Suspect,
                            format!(
                                "{} was called where {} fits",
                                quote(&x.name),
                                quote(&y.name)
                            ),
                        )
                        .because(chose.clone())
                        .because(format!(
                            "the arguments fail the schema of {} ({}) but fit the schema of {}",
                            quote(&x.name),
                            what.join("; "),
                            quote(&y.name)
                        )),
                    );
                    continue;
                }
            }
            // By description: the request matches an uncalled tool far better.
            let Some(x_words) = described.get(x.name.as_str()) else {
                continue;
            };
            let user = f.last_user_before(i);
            let request = request_cache.entry(user).or_insert_with(|| {
                let text = match user {
                    Some(u) => f.texts.produced(u).to_owned(),
                    None => run.task.clone().unwrap_or_default(),
                };
                terms(&text).into_iter().map(|t| t.key).collect()
            });
            let mut request = request.clone();
            request.extend(terms(f.texts.consumed(i)).into_iter().map(|t| t.key));
            let shared = |w: &HashSet<String>| request.intersection(w).count();
            let x_shared = shared(x_words);
            // A lookup before an action is not a wrong tool: a tool that changes things is not
            // offered as the better fit for one that only reads.
            let best = described
                .iter()
                .filter(|(name, _)| **name != x.name && !called.contains(*name))
                .filter(|(name, _)| x.mutates || !run.tool(name).is_some_and(|y| y.mutates))
                .map(|(name, w)| (*name, shared(w)))
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)));
            if let Some((y, y_shared)) = best {
                let floor = if x_shared == 0 { 0.5 } else { count(x_shared) };
                if y_shared >= WRONG_TOOL_MIN_SHARED && count(y_shared) >= WRONG_TOOL_FACTOR * floor
                {
                    out.push(
                        Finding::new(
                            at,
                            Category::WrongTool,
                            DetectorId::WrongTool,
                            WRONG_TOOL_DESCRIPTION,
                            Nature::Suspect,
                            format!("{} was called where {} fits", quote(&x.name), quote(y)),
                        )
                        .because(chose)
                        .because(format!(
                            "the request shares {y_shared} words with the description of {}, which was never called, and {x_shared} with that of {}",
                            quote(y),
                            quote(&x.name)
                        )),
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    fn tools() -> RunBuilder {
        RunBuilder::failed()
            .tool_def(
                "get_order_status",
                "Look up the status of an order by its order id",
                json!({"type": "object", "required": ["order_id"], "additionalProperties": false,
                       "properties": {"order_id": {"type": "string"}}}),
                false,
            )
            .tool_def(
                "track_package",
                "Track a shipped package by its carrier tracking number",
                json!({"type": "object", "required": ["tracking_number"],
                       "properties": {"tracking_number": {"type": "string"}}}),
                false,
            )
    }

    #[test]
    fn arguments_that_fit_another_tool_flag_the_model_step_that_chose() {
        let run = tools()
            .user("s1", "Where is my package 1Z999AA10123456784?")
            .llm("s2", json!({"tool_call": {"name": "get_order_status", "arguments": {"tracking_number": "1Z999AA10123456784"}}}))
            .tool_err("s3", "get_order_status", json!({"tracking_number": "1Z999AA10123456784"}), "missing order_id")
            .build();
        let found = facts_for(&run, |f| WrongTool.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].step, found[0].category), (1, Category::WrongTool));
        assert_eq!(found[0].confidence, WRONG_TOOL_SCHEMA);
        assert!(found[0].evidence[1].contains("fit the schema of 'track_package'"));
    }

    #[test]
    fn a_request_matching_another_description_far_better_is_flagged() {
        let run = tools()
            .user(
                "s1",
                "Please track my shipped package, the carrier tracking page is down",
            )
            .llm("s2", "calling get_order_status")
            .tool_ok(
                "s3",
                "get_order_status",
                json!({"order_id": "A-100"}),
                json!({"status": "unknown"}),
            )
            .build();
        let found = facts_for(&run, |f| WrongTool.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].confidence, WRONG_TOOL_DESCRIPTION);
    }

    #[test]
    fn the_right_tool_is_not_flagged() {
        let run = tools()
            .user("s1", "What is the status of my order A-100?")
            .llm("s2", "calling get_order_status")
            .tool_ok(
                "s3",
                "get_order_status",
                json!({"order_id": "A-100"}),
                json!({"status": "shipped"}),
            )
            .build();
        assert!(facts_for(&run, |f| WrongTool.detect(f)).is_empty());
    }
}
