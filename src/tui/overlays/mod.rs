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
