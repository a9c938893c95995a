//! The selection bar of a list row: the row padded to the pane's width and styled as selected
//! (focused pane) or selected-inactive (another pane has the focus), so the cursor reads as a
//! bar in every list. Draws nothing and reads no run text.

use crate::tui::theme::{Role, Theme};
use ratatui::text::{Line, Span};

/// `line` as the selected row of a list `width` columns wide.
pub fn selected_row<'a>(
    mut line: Line<'a>,
    width: usize,
    focused: bool,
    theme: &Theme,
) -> Line<'a> {
    let role = if focused {
        Role::Selection
    } else {
        Role::SelectionInactive
    };
    let w = line.width();
    if w < width {
        line.spans.push(Span::raw(" ".repeat(width - w)));
    }
    line.patch_style(theme.style(role))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_the_width_in_the_selection_style_of_the_focus() {
        let theme = Theme::builtin("dark").unwrap_or_else(Theme::bare);
        let row = selected_row(Line::from("abc"), 6, true, &theme);
        assert_eq!(row.width(), 6);
        assert_eq!(row.style, theme.style(Role::Selection));
        let row = selected_row(Line::from("abcdefgh"), 6, false, &theme);
        assert_eq!(row.width(), 8, "a wider row is not cut");
        assert_eq!(row.style, theme.style(Role::SelectionInactive));
    }
}
