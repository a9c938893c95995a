//! Modals drawn over the panes: help, search prompt, confirm, the patch prompt of a replay,
//! full-screen viewer, and the too-small notice. Each holds its state (if any) and a render
//! function; none does I/O.

pub mod confirm;
pub mod help;
pub mod prompt;
pub mod search;
pub mod too_small;
pub mod viewer;
pub mod warnings;

use super::theme::{Role, Theme};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use std::borrow::Cow;

/// A rectangle of `pw`% by `ph`% of `area`, centred, at least 40x8 when `area` allows.
pub fn centered(area: Rect, pw: u16, ph: u16) -> Rect {
    let part = |whole: u16, pct: u16| {
        u16::try_from(u32::from(whole) * u32::from(pct) / 100).unwrap_or(whole)
    };
    let w = part(area.width, pw).max(40).min(area.width);
    let h = part(area.height, ph).max(8).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A box `width` wide holding `lines` lines inside its border, centred in `area` and cut to it.
pub fn centered_box(area: Rect, width: u16, lines: usize) -> Rect {
    let w = width.min(area.width);
    let h = u16::try_from(lines.saturating_add(2))
        .unwrap_or(u16::MAX)
        .min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A modal's frame: a border in the focus colour titled `title`, on the overlay's background.
pub fn overlay_block<'a>(t: &Theme, title: impl Into<Cow<'a, str>>) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, t.style(Role::TitleFocus)))
        .border_style(t.style(Role::BorderFocus))
        .style(t.style(Role::Overlay))
}

/// A modal box drawn over what is at `area`: `block` holding `lines`.
pub fn draw_box(frame: &mut Frame, area: Rect, block: Block<'_>, lines: Vec<Line<'_>>) {
    frame.render_widget(Clear, area);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_is_centred_and_never_larger_than_the_area() {
        let area = Rect::new(10, 5, 100, 30);
        assert_eq!(centered_box(area, 60, 8), Rect::new(30, 15, 60, 10));
        assert_eq!(centered_box(area, 200, 100), area);
    }
}
