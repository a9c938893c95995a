//! How the screen names a step and a run (issue 26): by what they are called, not by the
//! opaque ids tracing systems give them. A span id (`c8fddf8a758b15ca`), a trace id, a UUID or a
//! prefixed random id (`span_62c8c4960656…`) says nothing to a reader: it leaves the timeline and
//! the header for the detail pane and the go-to prompt, which still accept it. Short ids a person
//! chose (`s4`, `cal-0007`) stay, as the suspects and hints name steps by them. Presentation
//! only: nothing here reads the run beyond the fields it names.

use crate::analysis::model::{Step, inert_line, is_opaque_token, strip_word_prefix};
pub use crate::analysis::model::{is_opaque_id, step_name};

/// Characters of an opaque token kept when one is shortened inside a name.
const SHORT_TOKEN: usize = 8;

/// A name with its opaque tokens (UUIDs, long hex) shortened to their first characters and `…`,
/// so `invoke_agent 171105b7-59dd-49c0-9677-0b95395aa46a` reads `invoke_agent 171105b7…`.
pub fn shortened(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(256));
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if is_opaque_token(strip_word_prefix(token)) {
            let prefix = token.len() - strip_word_prefix(token).len();
            let keep: String = token.chars().take(prefix + SHORT_TOKEN).collect();
            out.push_str(&keep);
            out.push('…');
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            out.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

/// A step's label as the timeline shows it, and where its parts start (in characters): its name
/// (opaque tokens shortened), `@agent` when the agent is not the name and not opaque, its kind,
/// and its id when a person could read it. The parts come in the order they give way: a label
/// cut at the edge loses the id first, then the kind, the agent, and only then the name.
pub struct StepLabel {
    /// `name @agent kind id`, each part made inert (line breaks are spaces, controls visible
    /// escapes).
    pub text: String,
    /// Character positions where the agent, the kind and the id start (`text`'s length in
    /// characters when absent).
    pub starts: [u16; 3],
}

/// The label of one step.
pub fn step_label(step: &Step) -> StepLabel {
    let mut text = String::new();
    let chars = |t: &str| u16::try_from(t.chars().count()).unwrap_or(u16::MAX);
    // Each part after the first follows one space; it starts after it.
    let part = |text: &mut String, piece: &str| -> u16 {
        if !text.is_empty() {
            text.push(' ');
        }
        let at = chars(text);
        text.push_str(&inert_line(piece));
        at
    };
    let name = step_name(step).map(shortened);
    if let Some(n) = &name {
        text.push_str(&inert_line(n));
    }
    let agent = step.agent.as_deref().map(shortened).filter(|a| {
        !a.trim().is_empty()
            && !step.agent.as_deref().is_some_and(is_opaque_id)
            && name.as_deref() != Some(a.as_str())
    });
    let agent_at = match agent {
        Some(a) => part(&mut text, &format!("@{a}")),
        None => chars(&text),
    };
    let kind_at = part(&mut text, step.kind_label());
    let id_at = if is_opaque_id(step.id.as_str()) {
        chars(&text)
    } else {
        part(&mut text, step.id.as_str())
    };
    StepLabel {
        text,
        starts: [agent_at, kind_at, id_at],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::StepKind;

    #[test]
    fn names_keep_words_and_shorten_the_ids_inside_them() {
        assert_eq!(
            shortened("invoke_agent 171105b7-59dd-49c0-9677-0b95395aa46a"),
            "invoke_agent 171105b7…"
        );
        assert_eq!(
            shortened("agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21"),
            "agent.f9f77d1a…"
        );
        assert_eq!(
            shortened("RunnableAssign<agent_scratchpad>"),
            "RunnableAssign<agent_scratchpad>"
        );
    }

    #[test]
    fn a_label_leads_with_the_name_and_leaves_opaque_ids_out() {
        let mut s = Step::new("c8fddf8a758b15ca", StepKind::Llm);
        s.name = Some("ChatOpenAI".to_owned());
        s.agent = Some("retrieval_chain".to_owned());
        let l = step_label(&s);
        assert_eq!(l.text, "ChatOpenAI @retrieval_chain llm");
        assert_eq!(l.starts, [11, 28, 31]);
        // A short id stays, last; an agent that is the name or a UUID is not repeated.
        let mut s = Step::new("s3", StepKind::Retrieval);
        s.name = Some("search_policies".to_owned());
        s.agent = Some("search_policies".to_owned());
        let l = step_label(&s);
        assert_eq!(l.text, "search_policies retrieval s3");
        assert_eq!(l.starts, [15, 16, 26]);
        let mut s = Step::new("s1", StepKind::User);
        s.agent = Some("171105b7-59dd-49c0-9677-0b95395aa46a".to_owned());
        let l = step_label(&s);
        assert_eq!(l.text, "user s1");
        assert_eq!(l.starts, [0, 0, 5]);
    }
}
