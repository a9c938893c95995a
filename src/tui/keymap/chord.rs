//! One key with its modifiers ([`Chord`]): parsed from the names the help and keymap.toml use
//! (`j`, `G`, `C-d`, `S-Tab`, `Enter`, `Space`, `F5`), printed back the same way, and made from
//! terminal key events with Shift and Control-case normalised. No bindings live here.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;

/// One key with its modifiers, normalised so that `G` needs no `S-`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chord {
    /// The key.
    pub code: KeyCode,
    /// Control, Alt (Shift only for non-character keys).
    pub mods: KeyModifiers,
}

impl Chord {
    /// The chord of a terminal key event.
    pub fn from_event(e: &KeyEvent) -> Chord {
        let mut mods =
            e.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match e.code {
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) => {
                mods.remove(KeyModifiers::SHIFT);
                // Terminals report Ctrl-letters in either case.
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            other => other,
        };
        Chord { code, mods }
    }

    /// Parses `j`, `G`, `C-d`, `A-x`, `S-Tab`, `Enter`, `Space`, `F5`...
    pub fn parse(s: &str) -> Option<Chord> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            if rest.chars().count() <= 1 {
                break;
            }
            if let Some(r) = rest.strip_prefix("C-") {
                mods |= KeyModifiers::CONTROL;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("A-") {
                mods |= KeyModifiers::ALT;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("S-") {
                mods |= KeyModifiers::SHIFT;
                rest = r;
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            _ => match rest {
                "Enter" => KeyCode::Enter,
                "Esc" => KeyCode::Esc,
                "Tab" if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
                "Tab" => KeyCode::Tab,
                "BackTab" => KeyCode::BackTab,
                "Space" => KeyCode::Char(' '),
                "Backspace" => KeyCode::Backspace,
                "Delete" => KeyCode::Delete,
                "Up" => KeyCode::Up,
                "Down" => KeyCode::Down,
                "Left" => KeyCode::Left,
                "Right" => KeyCode::Right,
                "PageUp" => KeyCode::PageUp,
                "PageDown" => KeyCode::PageDown,
                "Home" => KeyCode::Home,
                "End" => KeyCode::End,
                f if f.starts_with('F') => {
                    KeyCode::F(f.get(1..)?.parse().ok().filter(|n| (1..=24).contains(n))?)
                }
                _ => return None,
            },
        };
        // Shift is part of the character or of BackTab; keep it only for other named keys.
        if matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Some(Chord { code, mods })
    }

    /// The character a search prompt should insert for this chord, if any.
    pub fn typed_char(&self) -> Option<char> {
        match self.code {
            KeyCode::Char(c)
                if !self
                    .mods
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(c)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("C-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("A-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("S-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("S-Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Delete"),
            KeyCode::Up => f.write_str("Up"),
            KeyCode::Down => f.write_str("Down"),
            KeyCode::Left => f.write_str("Left"),
            KeyCode::Right => f.write_str("Right"),
            KeyCode::PageUp => f.write_str("PageUp"),
            KeyCode::PageDown => f.write_str("PageDown"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::F(n) => write!(f, "F{n}"),
            _ => f.write_str("?"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_and_print_the_same() {
        for s in [
            "j", "G", "?", "C-d", "S-Tab", "Enter", "Space", "A-x", "F5", "PageDown", "[",
        ] {
            assert_eq!(Chord::parse(s).map(|c| c.to_string()).as_deref(), Some(s));
        }
        assert!(Chord::parse("Hyper-x").is_none());
        assert!(Chord::parse("F99").is_none());
    }

    #[test]
    fn terminal_events_normalise_shift_and_ctrl_case() {
        let ev = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(Chord::from_event(&ev), Chord::parse("G").unwrap());
        let ev = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(Chord::from_event(&ev), Chord::parse("S-Tab").unwrap());
        let ev = KeyEvent::new(
            KeyCode::Char('C'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        );
        assert_eq!(Chord::from_event(&ev), Chord::parse("C-c").unwrap());
    }
}
