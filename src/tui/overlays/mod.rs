//! Modals drawn over the panes: help, search prompt, confirm, the patch prompt of a replay,
//! full-screen viewer, and the
//! too-small notice. Each holds its state (if any) and a render function; none does I/O.

pub mod confirm;
pub mod help;
pub mod prompt;
pub mod search;
pub mod too_small;
pub mod viewer;

use ratatui::layout::Rect;

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
