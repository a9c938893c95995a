//! The scrolling arithmetic every list shares: which rows are visible for a cursor, and moving a
//! cursor by a motion. A pane keeps its offset in a `Cell` so that drawing needs only `&App`;
//! only the visible rows are then built. Nothing here draws or reads run text.

use std::cell::Cell;

/// Rows kept between the cursor and the edge when scrolling, for context.
const SCROLL_MARGIN: usize = 2;

/// The first visible row for `cursor` in a list of `len` rows shown `height` at a time, moving
/// the previous offset as little as possible.
pub fn offset_for(prev: usize, cursor: usize, height: usize, len: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    let margin = SCROLL_MARGIN.min(height.saturating_sub(1) / 2);
    let max_offset = len - height;
    let mut off = prev.min(max_offset);
    if cursor < off + margin {
        off = cursor.saturating_sub(margin);
    } else if cursor + margin >= off + height {
        off = (cursor + margin + 1).saturating_sub(height);
    }
    off.min(max_offset)
}

/// The visible window of a list: updates the stored offset and returns `start..end`.
pub fn window(
    offset: &Cell<usize>,
    cursor: usize,
    height: usize,
    len: usize,
) -> std::ops::Range<usize> {
    let off = offset_for(offset.get(), cursor, height, len);
    offset.set(off);
    off..(off + height).min(len)
}

/// The first visible item of a list whose items take different numbers of lines (`lines(i)`),
/// so that the cursor's item is wholly visible.
/// Looks at most at the items that fit above the cursor, however long the list.
pub fn item_window(
    offset: &Cell<usize>,
    cursor: usize,
    height: usize,
    lines: impl Fn(usize) -> usize,
) -> usize {
    let prev = offset.get().min(cursor);
    // The first item that can stay on screen with the cursor's item wholly visible.
    let mut first = cursor;
    let mut used = lines(cursor);
    while first > prev {
        let above = lines(first - 1);
        if used + above > height {
            break;
        }
        used += above;
        first -= 1;
    }
    offset.set(first);
    first
}

/// A cursor movement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// One row down.
    Down,
    /// One row up.
    Up,
    /// A page down.
    PageDown,
    /// A page up.
    PageUp,
    /// The first row.
    Top,
    /// The last row.
    Bottom,
}

/// The cursor after `motion` in a list of `len` rows with pages of `page` rows.
pub fn moved(cursor: usize, motion: Motion, len: usize, page: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let last = len - 1;
    let page = page.max(1);
    match motion {
        Motion::Down => (cursor + 1).min(last),
        Motion::Up => cursor.saturating_sub(1),
        Motion::PageDown => (cursor + page).min(last),
        Motion::PageUp => cursor.saturating_sub(page),
        Motion::Top => 0,
        Motion::Bottom => last,
    }
    .min(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tall_selected_item_pushes_the_window_down() {
        let off = Cell::new(0);
        // Items take 1 line, the cursor's item 5.
        let start = item_window(&off, 6, 8, |i| if i == 6 { 5 } else { 1 });
        assert_eq!(start, 3);
        assert_eq!(item_window(&off, 1, 8, |_| 1), 1);
        // Jumping to the end of a long list looks only at what fits.
        let off = Cell::new(0);
        assert_eq!(item_window(&off, 10_000_000, 8, |_| 1), 9_999_993);
        assert_eq!(item_window(&off, 9_999_995, 8, |_| 1), 9_999_993);
    }

    #[test]
    fn the_offset_follows_the_cursor_with_a_margin() {
        assert_eq!(offset_for(0, 0, 10, 5), 0);
        assert_eq!(offset_for(0, 7, 10, 100), 0);
        assert_eq!(offset_for(0, 8, 10, 100), 1);
        assert_eq!(offset_for(50, 51, 10, 100), 49);
        assert_eq!(offset_for(0, 99, 10, 100), 90);
        assert_eq!(offset_for(95, 50, 10, 100), 48);
    }

    #[test]
    fn motions_stay_in_range() {
        assert_eq!(moved(0, Motion::Up, 5, 10), 0);
        assert_eq!(moved(4, Motion::Down, 5, 10), 4);
        assert_eq!(moved(1, Motion::PageDown, 5, 10), 4);
        assert_eq!(moved(3, Motion::Top, 5, 10), 0);
        assert_eq!(moved(3, Motion::Bottom, 0, 10), 0);
    }
}
