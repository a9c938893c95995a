//! Unconfirmed action (docs/how-it-decides.md, "Detect"): in a failed conversation with a user,
//! a decision that changed something (a call to a tool the run marks `mutates`) before the user
//! confirmed it: the user's last message before it does not say yes, or says yes to nothing,
//! because no message of the agent since the user's message before asked them to confirm. One
//! confirmation covers every change made before the user speaks again. The first such decision
//! after each user message is flagged. When the run's instructions ask for confirmation, the
//! evidence quotes them. Also a conversation that ends on the user's yes to a change the agent
//! asked them to confirm: the change they agreed to was never made. Linear in the run. No I/O.

use super::conversation::{AFFIRMATIONS, CONFIRM_ASKS, is_conversation, said};
use super::say::{quote, short, step, tool_of};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature, decides};
use crate::analysis::model::StepKind;
use crate::analysis::params::{CONFIRMED_NOT_DONE, UNCONFIRMED_ACTION};
use crate::analysis::state_change::ACTION_NAME_WORDS;
use crate::analysis::whole_words::PhraseSet;
use hashbrown::HashSet;

/// Phrases of a user turning down what was offered.
pub const DECLINES: &[&str] = &[
    "no thanks",
    "no thank you",
    "no, thanks",
    "no, thank you",
    "not interested",
    "i don't want",
    "i do not want",
    "don't want",
    "never mind",
    "nevermind",
    "i'll pass",
    "i will pass",
    "i'd rather not",
    "i would rather not",
    "forget it",
    "that won't work",
    "that doesn't work",
    "doesn't work for me",
    "not acceptable",
    "i decline",
    "decline",
    "no, keep",
    "no, leave",
    "keep it as it is",
    "leave it as it is",
    "i'll keep",
    "i will keep",
    "no need",
    "don't bother",
    "nope",
];

static ASKS: PhraseSet = PhraseSet::new(CONFIRM_ASKS);
static YES: PhraseSet = PhraseSet::new(AFFIRMATIONS);
static NO: PhraseSet = PhraseSet::new(DECLINES);
static ACTIONS: PhraseSet = PhraseSet::new(ACTION_NAME_WORDS);

/// A change made before the user confirmed it.
pub struct UnconfirmedAction;

/// The first sentence of the run's instructions (system steps) that speaks of confirming.
fn confirm_rule(f: &Facts<'_>) -> Option<String> {
    f.run
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == StepKind::System)
        .find_map(|(i, _)| {
            f.texts
                .produced(i)
                .split(['\n', '.'])
                .find(|l| l.to_lowercase().contains("confirm"))
                .map(|l| short(l, 160))
        })
}

/// For the user step at `u`: did an agent message since the user's message before ask them to
/// confirm? Read only for the user steps a change is judged by (each once, and their stretches
/// of the run do not overlap), not for every user step of a long run (issue 11).
fn asked_before(f: &Facts<'_>, u: usize) -> bool {
    let from = f.last_user_before(u).map_or(0, |p| p + 1);
    f.run
        .steps
        .get(from..u)
        .unwrap_or_default()
        .iter()
        .filter(|s| decides(s))
        .filter_map(said)
        .any(|text| text.contains('?') || ASKS.find_any_case(text).is_some())
}

/// The agent's latest message before the user step at `u` (since the user's message before) that
/// asks them to confirm an action: a question or a request to confirm, naming an action verb
/// ("proceed with the exchange?", "shall I cancel it?").
fn asked_to_act<'a>(f: &'a Facts<'a>, u: usize) -> Option<(usize, &'a str)> {
    let from = f.last_user_before(u).map_or(0, |p| p + 1);
    let asks = |text: &str| text.contains('?') || ASKS.find_any_case(text).is_some();
    (from..u).rev().find_map(|i| {
        let s = f.run.steps.get(i)?;
        let text = said(s).filter(|_| decides(s))?;
        (asks(text) && ACTIONS.find_any_case(text).is_some()).then_some((i, text))
    })
}

/// The conversation ends on the user's yes to an action the agent asked them to confirm: the
/// change they agreed to was never made (the last step that is not an instruction is that
/// message, so nothing came after it). A message that turns the offer down ("no", "no thanks",
/// "never mind") is no yes.
fn confirmed_not_done(f: &Facts<'_>) -> Option<Finding> {
    let run = f.run;
    let u = run.steps.iter().rposition(|s| s.kind != StepKind::System)?;
    if run.steps.get(u)?.kind != StepKind::User {
        return None;
    }
    let user_said = f.texts.produced(u);
    YES.find_any_case(&user_said)?;
    let opens_with_no = user_said
        .trim_start()
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("no"));
    if opens_with_no || NO.find_any_case(&user_said).is_some() {
        return None;
    }
    let (a, asked) = asked_to_act(f, u)?;
    Some(
        Finding::new(
            u,
            Category::ConfirmedNotDone,
            DetectorId::Confirmation,
            CONFIRMED_NOT_DONE,
            Nature::Suspect,
            "the run ends on the user's yes: the change they agreed to was never made".to_owned(),
        )
        .because(format!(
            "the agent asked at {} to confirm: {}",
            step(run, a),
            quote(asked)
        ))
        .because(format!(
            "the user agreed at {}, the last step of the run, and no call was made after it: {}",
            step(run, u),
            quote(&user_said)
        )),
    )
}

impl Detector for UnconfirmedAction {
    fn id(&self) -> DetectorId {
        DetectorId::Confirmation
    }

    fn doc(&self) -> &'static str {
        "In a failed conversation, a change made before the user confirmed it (no yes to a proposal)."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        if !run.went_wrong() || !is_conversation(run) {
            return Vec::new();
        }
        let mut judged: HashSet<Option<usize>> = HashSet::new();
        let mut out = Vec::new();
        let mut rule: Option<Option<String>> = None;
        for (t, s) in run.steps.iter().enumerate() {
            if s.kind != StepKind::Tool || !f.mutating(t) {
                continue;
            }
            let Some(d) = f.caller(t) else { continue };
            let u = f.last_user_before(d);
            if !judged.insert(u) {
                continue;
            }
            let user_said = u.map(|u| f.texts.produced(u)).unwrap_or_default();
            let yes = YES.find_any_case(&user_said);
            if yes.is_some() && u.is_some_and(|u| asked_before(f, u)) {
                continue;
            }
            let why = match (u, yes) {
                (None, _) => "no user message comes before it".to_owned(),
                (Some(u), None) => format!(
                    "the user's last message before it, at {}, does not say yes: {}",
                    step(run, u),
                    quote(&user_said)
                ),
                (Some(u), Some(_)) => format!(
                    "the user's last message before it, at {}, agrees ({}), but no message of the agent since the user spoke before asked them to confirm a change",
                    step(run, u),
                    quote(&user_said)
                ),
            };
            let mut fi = Finding::new(
                d,
                Category::UnconfirmedAction,
                DetectorId::Confirmation,
                UNCONFIRMED_ACTION,
                Nature::Suspect,
                format!(
                    "it changed something before the user confirmed: {}",
                    tool_of(run, t)
                ),
            )
            .because(format!(
                "it made the state-changing call to {} at {}",
                tool_of(run, t),
                step(run, t)
            ))
            .because(why);
            if let Some(r) = rule.get_or_insert_with(|| confirm_rule(f)) {
                fi = fi.because(format!("the instructions say: {}", quote(r)));
            }
            out.push(fi);
        }
        out.extend(confirmed_not_done(f));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::{RunBuilder, xorshift};
    use serde_json::json;

    #[test]
    fn asked_before_answers_as_one_pass_over_the_run_does() {
        use crate::analysis::detect::tests_support::facts_for;
        let texts = [
            "Shall I cancel it?",
            "Done.",
            "I will CONFIRM later",
            "ok",
            "Working on it",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            let mut b = RunBuilder::failed();
            for k in 0..12 {
                xorshift(&mut seed);
                let text = texts[(seed % 5) as usize];
                b = match (seed >> 8) % 3 {
                    0 => b.user(&format!("s{k}"), text),
                    1 => b.llm(&format!("s{k}"), text),
                    _ => b.tool_ok(&format!("s{k}"), "t", json!({}), text),
                };
            }
            let run = b.build();
            // The plain reading: one pass, carrying what was asked since the last user step.
            let mut plain = vec![false; run.steps.len()];
            let mut asking = false;
            for (i, s) in run.steps.iter().enumerate() {
                if s.kind == StepKind::User {
                    plain[i] = asking;
                    asking = false;
                } else if !asking
                    && decides(s)
                    && let Some(text) = said(s)
                {
                    asking = text.contains('?') || ASKS.find_any_case(text).is_some();
                }
            }
            facts_for(&run, |f| {
                for (u, s) in run.steps.iter().enumerate() {
                    if s.kind == StepKind::User {
                        assert_eq!(asked_before(f, u), plain[u], "{u}");
                    }
                }
            });
        }
    }

    fn shop() -> RunBuilder {
        RunBuilder::failed()
            .tool_def("cancel_order", "", json!(null), true)
            .tool_def("get_order", "", json!(null), false)
            .step({
                let mut s = crate::analysis::model::Step::new("sys", StepKind::System);
                s.output = Some(json!(
                    "Help with orders. Before any change, list the details and obtain explicit user confirmation (yes) to proceed."
                ).into());
                s
            })
    }

    #[test]
    fn a_change_right_after_an_instruction_is_unconfirmed() {
        let run = shop()
            .user("u1", "Cancel order ORD-1042, I don't need it.")
            .llm("m2", json!({"tool_calls": [{"name": "get_order"}]}))
            .tool_ok("t3", "get_order", json!({"id": "ORD-1042"}), "pending")
            .llm("m4", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t5", "cancel_order", json!({"id": "ORD-1042"}), "cancelled")
            .llm("m6", "Cancelled.")
            .user("u7", "Thanks")
            .build();
        let found = facts_for(&run, |f| UnconfirmedAction.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [4]);
        let ev = found[0].evidence.join("\n");
        assert!(ev.contains("does not say yes"), "{ev}");
        assert!(ev.contains("obtain explicit user confirmation"), "{ev}");
    }

    #[test]
    fn a_run_that_ends_on_the_users_yes_never_made_the_change() {
        let run = shop()
            .user("u1", "Exchange my shirt ORD-1042 for the red one.")
            .llm(
                "m2",
                "I will exchange it for the red one. Shall I proceed with the exchange?",
            )
            .user("u3", "Yes, go ahead and finalize it.")
            .build();
        let found = facts_for(&run, |f| UnconfirmedAction.detect(f));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].step, 3);
        assert_eq!(found[0].category, Category::ConfirmedNotDone);
        let ev = found[0].evidence.join("\n");
        assert!(ev.contains("Shall I proceed"), "{ev}");
        // The change made after the yes: nothing left undone.
        let done = shop()
            .user("u1", "Exchange my shirt ORD-1042 for the red one.")
            .llm(
                "m2",
                "I will exchange it for the red one. Shall I proceed with the exchange?",
            )
            .user("u3", "Yes, go ahead and finalize it.")
            .llm("m4", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t5", "cancel_order", json!({"id": "ORD-1042"}), "done")
            .build();
        assert!(facts_for(&done, |f| UnconfirmedAction.detect(f)).is_empty());
        // A decline, and a yes to a question that offers no action, are not left undone.
        for (asked, answer) in [
            (
                "Shall I proceed with the exchange?",
                "No, that's okay. Thanks.",
            ),
            ("Shall I proceed with the exchange?", "Never mind, ok bye."),
            (
                "Is there anything else I can help with?",
                "Yes, thanks, all good.",
            ),
        ] {
            let run = shop()
                .user("u1", "Exchange my shirt ORD-1042.")
                .llm("m2", asked)
                .user("u3", answer)
                .build();
            assert!(
                facts_for(&run, |f| UnconfirmedAction.detect(f)).is_empty(),
                "{asked} / {answer}"
            );
        }
    }

    #[test]
    fn a_yes_to_a_proposal_covers_every_change_until_the_user_speaks_again() {
        let run = shop()
            .user("u1", "Cancel orders ORD-1042 and ORD-1043.")
            .llm(
                "m2",
                "I will cancel ORD-1042 and ORD-1043. Shall I proceed?",
            )
            .user("u3", "Yes, go ahead.")
            .llm("m4", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t5", "cancel_order", json!({"id": "ORD-1042"}), "cancelled")
            .llm("m6", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t7", "cancel_order", json!({"id": "ORD-1043"}), "cancelled")
            .build();
        assert!(facts_for(&run, |f| UnconfirmedAction.detect(f)).is_empty());
    }

    #[test]
    fn a_yes_to_no_proposal_or_a_single_task_is_not_a_confirmation() {
        let run = shop()
            .user("u1", "Cancel ORD-1042.")
            .llm("m2", "Here is the order: pending.")
            .user("u3", "Ok.")
            .llm("m4", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t5", "cancel_order", json!({"id": "ORD-1042"}), "cancelled")
            .build();
        let found = facts_for(&run, |f| UnconfirmedAction.detect(f));
        assert_eq!(found.iter().map(|x| x.step).collect::<Vec<_>>(), [4]);
        assert!(found[0].evidence[1].contains("agrees ('Ok.')"));
        // One user message: a task to carry out, not a conversation.
        let task = shop()
            .user("u1", "Cancel ORD-1042.")
            .llm("m2", json!({"tool_calls": [{"name": "cancel_order"}]}))
            .tool_ok("t3", "cancel_order", json!({"id": "ORD-1042"}), "cancelled")
            .build();
        assert!(facts_for(&task, |f| UnconfirmedAction.detect(f)).is_empty());
    }
}
