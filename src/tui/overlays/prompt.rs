//! The patch prompt of a replay: one line of text, the output the selected step should have
//! produced (the fix to try, runner.md `patch`). Accepting it asks for the replay's plan like any
//! other experiment; nothing runs from here. Reads only the app; the text typed is shown inert.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use crate::analysis::model::StepId;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// Longest patch typed, in characters.
pub const MAX_PATCH: usize = 4000;
/// Widest the box grows.
const MAX_WIDTH: u16 = 96;

/// A patch being typed for a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptState {
    /// The step to replay from.
    pub from: StepId,
    /// What has been typed.
    pub input: String,
}

impl PromptState {
    /// An empty prompt for a replay from `from`.
    pub fn new(from: StepId) -> PromptState {
        PromptState {
            from,
            input: String::new(),
        }
    }

    /// Adds a typed character; false when the patch is full or the character is a control.
    pub fn push(&mut self, c: char) -> bool {
        if c.is_control() || self.input.chars().count() >= MAX_PATCH {
            return false;
        }
        self.input.push(c);
        true
    }
}

/// Draws the prompt box.
pub fn render(app: &App, frame: &mut Frame, area: Rect, p: &PromptState) {
    let t = &app.theme;
    let box_w = area.width.min(MAX_WIDTH);
    let w = usize::from(box_w.saturating_sub(2));
    let mut lines = wrap_spans(
        vec![(
            format!(
                "Replay from step '{}' with a patch: type the output that step should have produced. Your agent is re-run from there with it; the answer is compared with the recorded one.",
                clipped(p.from.as_str(), 200)
            ),
            t.style(Role::Text),
        )],
        w,
        "",
    );
    lines.push(Line::default());
    // The end of the text stays in sight as it grows.
    let shown: String = {
        let n = p.input.chars().count();
        let room = w.saturating_sub(4);
        p.input.chars().skip(n.saturating_sub(room)).collect()
    };
    lines.push(Line::from(vec![
        Span::styled("> ", t.style(Role::Key)),
        Span::styled(clipped(&shown, w).into_owned(), t.style(Role::Text)),
        Span::styled("▏", t.style(Role::Key)),
    ]));
    lines.push(Line::default());
    let k = |a: Action| app.keymap.keys_for(Scope::Prompt, &a);
    lines.push(Line::from(vec![
        Span::styled(k(Action::PromptAccept), t.style(Role::Key)),
        Span::styled(" replay with this patch    ", t.style(Role::Text)),
        Span::styled(k(Action::Back), t.style(Role::Key)),
        Span::styled(" cancel", t.style(Role::Text)),
    ]));
    let area = super::centered_box(area, box_w, lines.len());
    let block = super::overlay_block(t, " Replay with a patch ");
    super::draw_box(frame, area, block, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_keeps_printable_characters_up_to_the_limit() {
        let mut p = PromptState::new(StepId::from("s4"));
        assert!(p.push('$'));
        assert!(!p.push('\u{1b}'), "control characters are refused");
        for _ in 0..MAX_PATCH {
            p.push('x');
        }
        assert_eq!(p.input.chars().count(), MAX_PATCH);
        assert!(p.input.starts_with('$'));
    }
}
