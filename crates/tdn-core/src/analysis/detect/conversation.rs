//! What the rules for conversations with a user share: whether a run is a conversation (the user
//! speaks more than once), what a model step said to the user (its text, not its calls), and the
//! phrases of a user saying yes and of an agent asking them to confirm. Pure; no I/O.

use crate::analysis::model::Json;
use crate::analysis::model::{Run, Step, StepKind};

/// Phrases of a user agreeing to what was proposed.
pub const AFFIRMATIONS: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "go ahead",
    "proceed",
    "confirm",
    "confirmed",
    "please do",
    "do it",
    "that works",
    "sounds good",
    "correct",
    "absolutely",
    "of course",
    "that's right",
    "that is right",
];

/// Phrases of an agent asking the user to confirm (or choose) before it acts.
pub const CONFIRM_ASKS: &[&str] = &[
    "would you like",
    "do you want",
    "shall i",
    "should i",
    "can i proceed",
    "may i proceed",
    "confirm",
    "proceed?",
    "go ahead?",
    "is that correct",
    "is this correct",
    "is that right",
    "are you sure",
    "let me know if",
];

/// True when the user speaks more than once: the agent works with them turn by turn.
pub fn is_conversation(run: &Run) -> bool {
    run.steps
        .iter()
        .filter(|s| s.kind == StepKind::User)
        .take(2)
        .count()
        >= 2
}

/// What a model step said in words (its text; a message with tool calls keeps its text under
/// `content` or `text`); `None` when it only made calls.
pub fn said(step: &Step) -> Option<&str> {
    let text = match step.output.as_ref()? {
        Json::String(s) => &**s,
        Json::Object(o) => o
            .get("content")
            .or_else(|| o.get("text"))
            .and_then(Json::as_str)?,
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::RunStatus;
    use serde_json::json;

    #[test]
    fn said_is_the_text_not_the_calls() {
        let mut s = Step::new("m", StepKind::Llm);
        s.output = Some(Json::from(
            json!({"content": "Done.", "tool_calls": [{"name": "x"}]}),
        ));
        assert_eq!(said(&s), Some("Done."));
        s.output = Some(Json::from(json!({"tool_calls": [{"name": "x"}]})));
        assert_eq!(said(&s), None);
        s.output = Some(Json::from(json!("  ")));
        assert_eq!(said(&s), None);
    }

    #[test]
    fn a_conversation_has_two_user_turns() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps.push(Step::new("u0", StepKind::User));
        run.steps.push(Step::new("m1", StepKind::Llm));
        assert!(!is_conversation(&run));
        run.steps.push(Step::new("u2", StepKind::User));
        assert!(is_conversation(&run));
    }
}
