//! Wrong tool (docs/how-it-decides.md, "Detect"): tool X was called where tool Y fits, because
//! the arguments fail X's schema but fit Y's, or because the request matches Y's description far
//! better than X's (and Y was never called, and Y does not change things where X only reads:
//! a lookup before an action is not a wrong tool; and the request is one request, at most
//! [`WRONG_TOOL_MAX_REQUEST_TERMS`] content words, not a whole task served by many calls). The finding goes on the model step that issued the
//! call (the one that chose the tool), else on the call itself. Needs the run's `tools`. No I/O.
//!
//! Bounded on hostile runs: the first [`MAX_CALLS`] tool calls are checked, against the first
//! [`MAX_TOOLS`] tools, each described by at most [`MAX_TOOL_WORDS`] words, so the work is at
//! most calls x tools x words whatever the run holds.

use super::say::{quote, step};
use super::schema::{has_properties, keys_declared, validate};
use super::state_change::{changes_state, tool_changes_state};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, count};
use crate::analysis::claims::words::{each_term, terms};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::params::{
    WRONG_TOOL_DESCRIPTION, WRONG_TOOL_FACTOR, WRONG_TOOL_MAX_REQUEST_TERMS, WRONG_TOOL_MIN_SHARED,
    WRONG_TOOL_SCHEMA,
};
use hashbrown::{HashMap, HashSet};

/// Tool calls checked (the first ones of the run).
const MAX_CALLS: usize = 2_000;
/// Tools offered as the better fit (the first ones of the run's `tools`).
const MAX_TOOLS: usize = 256;
/// Distinct words of a tool's name and description compared with a request.
const MAX_TOOL_WORDS: usize = 200;

/// Tool X called where tool Y fits.
pub struct WrongTool;

/// The content words of a tool's name and description (the first [`MAX_TOOL_WORDS`]), for the
/// first [`MAX_TOOLS`] tools; the first of two tools with one name wins.
fn tool_words(run: &Run) -> HashMap<&str, HashSet<String>> {
    let mut out: HashMap<&str, HashSet<String>> = HashMap::new();
    for t in run.tools.iter().take(MAX_TOOLS) {
        let Some(d) = t.description.as_deref() else {
            continue;
        };
        if out.contains_key(t.name.as_str()) {
            continue;
        }
        let mut words = HashSet::new();
        for w in terms(&format!("{} {d}", t.name.replace(['_', '-'], " "))) {
            if words.len() >= MAX_TOOL_WORDS {
                break;
            }
            words.insert(w.key);
        }
        out.insert(t.name.as_str(), words);
    }
    out
}

/// The distinct content words of a request ([`terms`]' keys), or `None` for a request of more
/// than [`WRONG_TOOL_MAX_REQUEST_TERMS`] of them: no more are kept once it has that many.
fn request_words(text: &str) -> Option<HashSet<String>> {
    let mut words = Some(HashSet::new());
    each_term(text, |k, _| {
        if let Some(w) = words.as_mut()
            && !w.contains(k)
        {
            if w.len() >= WRONG_TOOL_MAX_REQUEST_TERMS {
                words = None;
            } else {
                w.insert(k.to_owned());
            }
        }
    });
    words
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
        let mut request: Option<(Option<usize>, Option<HashSet<String>>)> = None;
        let mut out = Vec::new();
        let calls = run
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match (s.kind, &s.tool) {
                (StepKind::Tool, Some(call)) => Some((i, call)),
                _ => None,
            })
            .take(MAX_CALLS);
        for (i, call) in calls {
            let Some(x) = run.tool(&call.name) else {
                continue;
            };
            let at = f.caller(i).unwrap_or(i);
            let chose = || {
                if at == i {
                    format!("{} called {}", step(run, i), quote(&x.name))
                } else {
                    format!(
                        "{} chose {} for the call at {}",
                        step(run, at),
                        quote(&x.name),
                        step(run, i)
                    )
                }
            };
            // By schema: fails X's, fits Y's.
            if let Some(xs) = &x.parameters {
                let problems = validate(xs, &call.arguments);
                if !problems.is_empty()
                    && let Some(y) = run.tools.iter().take(MAX_TOOLS).find(|y| {
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
                        .because(chose())
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
            // A lookup before an action is not a wrong tool: a tool that changes things is not
            // offered as the better fit for one that only reads.
            let offered = |name: &&str| {
                *name != x.name
                    && !called.contains(name)
                    && (tool_changes_state(x) || !changes_state(run, name))
            };
            if !described.keys().any(offered) {
                // No tool to offer: the request's words cannot matter.
                continue;
            }
            // The calls come in order, so their user messages do too: only the latest
            // request's words are kept.
            let user = f.last_user_before(i);
            if request.as_ref().is_none_or(|(u, _)| *u != user) {
                let text = match user {
                    Some(u) => f.texts.produced(u),
                    None => run.task.as_deref().unwrap_or_default().into(),
                };
                request = Some((user, request_words(&text)));
            }
            // A long request (a whole task for many steps) is served by many calls, each doing
            // a part of it: its words say nothing about which tool one call should use.
            let Some((_, Some(request))) = &request else {
                continue;
            };
            // The call's own words the request lacks: with the request, the words compared.
            let mut own: HashSet<String> = HashSet::new();
            each_term(&f.texts.consumed(i), |k, _| {
                if !request.contains(k) && !own.contains(k) {
                    own.insert(k.to_owned());
                }
            });
            let shared =
                |w: &HashSet<String>| request.intersection(w).count() + own.intersection(w).count();
            let x_shared = shared(x_words);
            let best = described
                .iter()
                .filter(|(name, _)| offered(name))
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
                        .because(chose())
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

    #[test]
    fn request_words_are_the_terms_of_a_short_request_and_none_of_a_long_one() {
        let words = |n: usize| {
            (0..n)
                .map(|k| format!("word{} Word{} order", k, k % 3))
                .collect::<Vec<_>>()
                .join(" ")
        };
        for n in 0..45 {
            let text = words(n);
            let all: HashSet<String> = terms(&text).into_iter().map(|t| t.key).collect();
            let got = request_words(&text);
            if all.len() > WRONG_TOOL_MAX_REQUEST_TERMS {
                assert!(got.is_none(), "{n}: {} terms", all.len());
            } else {
                assert_eq!(got.as_ref(), Some(&all), "{n}");
            }
        }
        assert!(request_words(&words(40)).is_none());
        assert!(request_words(&words(5)).is_some());
    }

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

    /// A request better served by `track_package` than by `get_order_status`.
    const TRACK_REQUEST: &str =
        "Please track my shipped package, the carrier tracking page is down";

    /// `b` with the user's `request`, then `get_order_status` called for order A-100, which
    /// says `status`.
    fn order_status_called(
        b: RunBuilder,
        request: &str,
        status: &str,
    ) -> crate::analysis::model::Run {
        b.user("s1", request)
            .llm("s2", "calling get_order_status")
            .tool_ok(
                "s3",
                "get_order_status",
                json!({"order_id": "A-100"}),
                json!({ "status": status }),
            )
            .build()
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
        let run = order_status_called(tools(), TRACK_REQUEST, "unknown");
        let found = facts_for(&run, |f| WrongTool.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].confidence, WRONG_TOOL_DESCRIPTION);
    }

    #[test]
    fn the_right_tool_is_not_flagged() {
        let run = order_status_called(tools(), "What is the status of my order A-100?", "shipped");
        assert!(facts_for(&run, |f| WrongTool.detect(f)).is_empty());
    }

    /// `before` filler tools, then the two tools of [`tools`], then a call of the wrong one.
    fn run_with_fillers(before: usize) -> crate::analysis::model::Run {
        let mut b = RunBuilder::failed();
        for k in 0..before {
            b = b.tool_def(
                &format!("filler_{k}"),
                "Convert a temperature between units",
                json!({"type": "object", "properties": {"celsius": {"type": "number"}}}),
                false,
            );
        }
        let t = tools().build();
        for tool in &t.tools {
            b = b.tool_def(
                &tool.name,
                tool.description.as_deref().unwrap_or_default(),
                tool.parameters.clone().unwrap_or_default(),
                false,
            );
        }
        order_status_called(b, TRACK_REQUEST, "unknown")
    }

    #[test]
    fn only_the_first_tools_are_offered_as_the_better_fit() {
        let within = run_with_fillers(MAX_TOOLS - 2);
        let found = facts_for(&within, |f| WrongTool.detect(f));
        assert_eq!(found.len(), 1, "the better tool is the last one compared");
        assert!(found[0].title.contains("'track_package' fits"));
        let past = run_with_fillers(MAX_TOOLS);
        assert!(
            facts_for(&past, |f| WrongTool.detect(f)).is_empty(),
            "the better tool is past the cap"
        );
    }

    #[test]
    fn only_the_first_calls_are_checked() {
        let mut b = tools().user(
            "s1",
            "Please track my shipped package, the carrier tracking page is down",
        );
        for k in 0..MAX_CALLS + 5 {
            b = b.tool_ok(
                &format!("c{k}"),
                "get_order_status",
                json!({"order_id": "A-100"}),
                json!({"status": "unknown"}),
            );
        }
        let found = facts_for(&b.build(), |f| WrongTool.detect(f));
        assert_eq!(found.len(), MAX_CALLS);
        assert_eq!(found.last().map(|f| f.step), Some(MAX_CALLS));
    }
}
