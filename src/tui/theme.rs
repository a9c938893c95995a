//! Themes as named roles: panes ask for a meaning ([`Role::SuspectTop`], [`Role::DiffDel`]) and
//! get a [`Style`]; colours live only here. Each role has a TOML key (`suspect.top`) and a parent
//! it falls back on (`suspect` → `text`); a role's style is its parent's style patched with its
//! own entry. The built-in themes (`themes/*.toml`) are embedded; a broken theme file gives a
//! message and the default theme, never a crash. Nothing here draws or reads the terminal.

use ratatui::style::{Color, Modifier, Style};
use std::path::Path;

/// The built-in themes, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("mono", include_str!("../../themes/mono.toml")),
];

/// The theme used when none is named.
pub const DEFAULT_THEME: &str = "dark";
/// The theme used when colour is off (`NO_COLOR`, `--color never`).
pub const MONO_THEME: &str = "mono";

macro_rules! roles {
    ($($(#[$doc:meta])* $name:ident = $key:literal, $parent:expr;)*) => {
        /// A meaning a pane can ask a style for.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Role { $($(#[$doc])* $name,)* }

        impl Role {
            /// Every role, in table order.
            pub const ALL: &[Role] = &[$(Role::$name,)*];

            /// The role's key in a theme file.
            pub fn key(self) -> &'static str {
                match self { $(Role::$name => $key,)* }
            }

            /// The role it falls back on.
            pub fn parent(self) -> Option<Role> {
                match self { $(Role::$name => $parent,)* }
            }
        }
    };
}

roles! {
    /// Ordinary text.
    Text = "text", None;
    /// Secondary text (positions, ids, units).
    TextDim = "text.dim", Some(Role::Text);
    /// Headings inside a pane.
    Heading = "heading", Some(Role::Text);
    /// The top line of the screen.
    Header = "header", Some(Role::Text);
    /// A pane's border.
    Border = "border", Some(Role::TextDim);
    /// The focused pane's border.
    BorderFocus = "border.focus", Some(Role::Border);
    /// A pane's title.
    Title = "title", Some(Role::Text);
    /// The focused pane's title.
    TitleFocus = "title.focus", Some(Role::Title);
    /// The selected row.
    Selection = "selection", Some(Role::Text);
    /// The selected row when its pane is not focused.
    SelectionInactive = "selection.inactive", Some(Role::Selection);
    /// The status bar.
    Status = "status", Some(Role::Text);
    /// A key name in the status bar or help.
    Key = "key", Some(Role::Status);
    /// A message in the status bar.
    StatusMessage = "status.message", Some(Role::Status);
    /// A warning (status bar, loader warnings).
    Warning = "warning", Some(Role::Text);
    /// An error message.
    Error = "error", Some(Role::Warning);
    /// A step's kind column.
    StepKind = "step.kind", Some(Role::TextDim);
    /// A failed step.
    StepError = "step.error", Some(Role::Error);
    /// A suspect mark.
    Suspect = "suspect", Some(Role::Text);
    /// The top suspect.
    SuspectTop = "suspect.top", Some(Role::Suspect);
    /// A shortlist mark.
    Shortlist = "suspect.shortlist", Some(Role::Suspect);
    /// A fold marker.
    Fold = "fold", Some(Role::TextDim);
    /// The dependency lanes.
    Link = "link", Some(Role::TextDim);
    /// A lane bringing input into the selected step.
    LinkIn = "link.in", Some(Role::Link);
    /// A lane carrying the selected step's output.
    LinkOut = "link.out", Some(Role::Link);
    /// A fuzzy-matched character.
    SearchMatch = "search.match", Some(Role::Text);
    /// The search prompt.
    SearchPrompt = "search.prompt", Some(Role::Status);
    /// A supported claim.
    ClaimSupported = "claim.supported", Some(Role::Text);
    /// A partly supported claim.
    ClaimPartial = "claim.partial", Some(Role::Text);
    /// An unsupported claim.
    ClaimUnsupported = "claim.unsupported", Some(Role::Warning);
    /// A contradicted claim.
    ClaimContradicted = "claim.contradicted", Some(Role::Error);
    /// A claim backed only by an outdated source.
    ClaimStale = "claim.stale", Some(Role::Warning);
    /// A pleasantry, not a claim.
    ClaimNone = "claim.no_claim", Some(Role::TextDim);
    /// A unit that was sent (diff context).
    DiffContext = "diff.context", Some(Role::TextDim);
    /// A unit restored or added.
    DiffAdd = "diff.add", Some(Role::Text);
    /// A unit dropped.
    DiffDel = "diff.del", Some(Role::Text);
    /// A confirmed verdict.
    VerdictConfirmed = "verdict.confirmed", Some(Role::Text);
    /// A not-confirmed verdict.
    VerdictNotConfirmed = "verdict.not_confirmed", Some(Role::Text);
    /// An inconclusive verdict.
    VerdictInconclusive = "verdict.inconclusive", Some(Role::Warning);
    /// A probe that measured nothing.
    VerdictError = "verdict.error", Some(Role::Error);
    /// A running sample or job.
    Running = "running", Some(Role::Text);
    /// Plain JSON and text in the detail pane when highlighting is off.
    Code = "code", Some(Role::Text);
    /// A modal's background.
    Overlay = "overlay", Some(Role::Text);
}

/// A resolved theme: a style per role, and the syntect theme for JSON.
#[derive(Clone, Debug)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// The syntect theme highlighting JSON (`None`: no highlighting, as in mono).
    pub syntect: Option<String>,
    styles: Vec<Style>,
}

impl Theme {
    /// The style of a role.
    pub fn style(&self, role: Role) -> Style {
        self.styles.get(role as usize).copied().unwrap_or_default()
    }

    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        parse(name, text).ok()
    }

    /// The names of the built-in themes.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    /// The theme to use: `choice` (a built-in name or the path of a theme file), or mono when
    /// colour is off. A theme that cannot be used gives the default theme and a message saying
    /// what to fix.
    pub fn select(choice: Option<&str>, color: bool) -> (Theme, Option<String>) {
        let fallback = || {
            let name = if color { DEFAULT_THEME } else { MONO_THEME };
            Theme::builtin(name).unwrap_or_else(Theme::bare)
        };
        if !color {
            return (fallback(), None);
        }
        let Some(choice) = choice else {
            return (fallback(), None);
        };
        if let Some(t) = Theme::builtin(choice) {
            return (t, None);
        }
        let path = Path::new(choice);
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                let names: Vec<&str> = Theme::builtin_names().collect();
                return (
                    fallback(),
                    Some(format!(
                        "theme '{choice}' is neither a built-in theme ({}) nor a readable file ({e}); using '{DEFAULT_THEME}'",
                        names.join(", ")
                    )),
                );
            }
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| choice.to_owned());
        match parse(&name, &text) {
            Ok(t) => (t, None),
            Err(e) => (
                fallback(),
                Some(format!(
                    "theme file '{choice}': {e}; using '{DEFAULT_THEME}'"
                )),
            ),
        }
    }

    /// A theme with no styles at all (last resort).
    pub fn bare() -> Theme {
        Theme {
            name: "bare".to_owned(),
            syntect: None,
            styles: vec![Style::default(); Role::ALL.len()],
        }
    }
}

/// Parses a theme file. Unknown role keys and bad values are errors naming the key and the fix.
pub fn parse(name: &str, text: &str) -> Result<Theme, String> {
    let value: toml::Table = toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
    let mut syntect = None;
    let mut entries: Vec<(String, Style)> = Vec::new();
    for (key, v) in &value {
        match key.as_str() {
            "name" => {}
            "syntect" => match v {
                toml::Value::String(s) if s == "none" || s.is_empty() => syntect = None,
                toml::Value::String(s) => syntect = Some(s.clone()),
                _ => {
                    return Err(
                        "'syntect' must be a string (a syntect theme name or 'none')".into(),
                    );
                }
            },
            "roles" => {
                let toml::Value::Table(t) = v else {
                    return Err("'roles' must be a table".into());
                };
                collect_roles("", t, &mut entries)?;
            }
            other => {
                return Err(format!(
                    "unknown key '{other}'; a theme has 'name', 'syntect' and a [roles] table"
                ));
            }
        }
    }
    let mut own: Vec<Option<Style>> = vec![None; Role::ALL.len()];
    for (key, style) in entries {
        let Some(i) = Role::ALL.iter().position(|r| r.key() == key) else {
            return Err(format!(
                "unknown role '{key}'; known roles: {}",
                Role::ALL
                    .iter()
                    .map(|r| r.key())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        if let Some(slot) = own.get_mut(i) {
            *slot = Some(style);
        }
    }
    let mut styles = vec![Style::default(); Role::ALL.len()];
    // Parents come before children in the table, so one pass resolves every chain.
    for (i, role) in Role::ALL.iter().enumerate() {
        let base = role
            .parent()
            .and_then(|p| styles.get(p as usize).copied())
            .unwrap_or_default();
        let mine = own.get(i).copied().flatten().unwrap_or_default();
        if let Some(slot) = styles.get_mut(i) {
            *slot = base.patch(mine);
        }
    }
    Ok(Theme {
        name: name.to_owned(),
        syntect,
        styles,
    })
}

/// Walks `[roles]`, accepting both `"text.dim" = {..}` and nested `[roles.text] dim = {..}`.
fn collect_roles(
    prefix: &str,
    t: &toml::Table,
    out: &mut Vec<(String, Style)>,
) -> Result<(), String> {
    let style_keys = ["fg", "bg", "modifiers"];
    let mut style = Style::default();
    let mut has_style = false;
    for (k, v) in t {
        if style_keys.contains(&k.as_str()) && !prefix.is_empty() {
            has_style = true;
            style = apply_field(style, prefix, k, v)?;
            continue;
        }
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => collect_roles(&key, inner, out)?,
            _ => {
                return Err(format!(
                    "role '{key}' must be a table like {{ fg = \"red\", modifiers = [\"bold\"] }}"
                ));
            }
        }
    }
    if has_style {
        out.push((prefix.to_owned(), style));
    }
    Ok(())
}

fn apply_field(style: Style, role: &str, field: &str, v: &toml::Value) -> Result<Style, String> {
    match field {
        "fg" | "bg" => {
            let toml::Value::String(s) = v else {
                return Err(format!(
                    "role '{role}': '{field}' must be a string such as \"red\" or \"#88c0d0\""
                ));
            };
            let c = parse_color(s).ok_or_else(|| {
                format!(
                    "role '{role}': colour '{s}' is not a colour name, '#rrggbb' or a number 0-255"
                )
            })?;
            Ok(if field == "fg" {
                style.fg(c)
            } else {
                style.bg(c)
            })
        }
        _ => {
            let toml::Value::Array(items) = v else {
                return Err(format!(
                    "role '{role}': 'modifiers' must be a list such as [\"bold\"]"
                ));
            };
            let mut style = style;
            for item in items {
                let name = item.as_str().unwrap_or_default();
                let m = parse_modifier(name).ok_or_else(|| {
                    format!("role '{role}': modifier '{name}' is not one of bold, dim, italic, underlined, reversed, crossed_out")
                })?;
                style = style.add_modifier(m);
            }
            Ok(style)
        }
    }
}

fn parse_modifier(s: &str) -> Option<Modifier> {
    Some(match s {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" => Modifier::UNDERLINED,
        "reversed" => Modifier::REVERSED,
        "crossed_out" => Modifier::CROSSED_OUT,
        _ => return None,
    })
}

fn parse_color(s: &str) -> Option<Color> {
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        };
        return Some(Color::Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    if let Ok(n) = s.parse::<u8>() {
        return Some(Color::Indexed(n));
    }
    Some(
        match s.to_ascii_lowercase().replace(['-', ' '], "_").as_str() {
            "reset" | "default" => Color::Reset,
            "black" => Color::Black,
            "red" => Color::Red,
            "green" => Color::Green,
            "yellow" => Color::Yellow,
            "blue" => Color::Blue,
            "magenta" => Color::Magenta,
            "cyan" => Color::Cyan,
            "gray" | "grey" => Color::Gray,
            "dark_gray" | "dark_grey" | "darkgray" => Color::DarkGray,
            "light_red" => Color::LightRed,
            "light_green" => Color::LightGreen,
            "light_yellow" => Color::LightYellow,
            "light_blue" => Color::LightBlue,
            "light_magenta" => Color::LightMagenta,
            "light_cyan" => Color::LightCyan,
            "white" => Color::White,
            _ => return None,
        },
    )
}

/// A syntect highlight style as a ratatui style (foreground only, so the pane's background and
/// the selection stay readable).
pub fn from_syntect(s: syntect::highlighting::Style) -> Style {
    use syntect::highlighting::FontStyle;
    let mut style = Style::default().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    style
}

/// True when a style carries any colour (used by tests of the mono theme).
pub fn has_color(s: Style) -> bool {
    let colored = |c: Option<Color>| c.is_some_and(|c| c != Color::Reset);
    colored(s.fg) || colored(s.bg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_parses_and_names_a_syntect_choice() {
        for (name, text) in BUILTIN {
            let t = parse(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.styles.len(), Role::ALL.len());
            assert!(text.contains("syntect"), "{name} names no syntect theme");
        }
    }

    #[test]
    fn mono_uses_modifiers_only() {
        let t = Theme::builtin("mono").unwrap();
        for r in Role::ALL {
            assert!(!has_color(t.style(*r)), "mono gives {} a colour", r.key());
        }
        assert!(t.syntect.is_none());
        assert!(
            t.style(Role::Selection)
                .add_modifier
                .contains(Modifier::REVERSED)
        );
    }

    #[test]
    fn a_child_role_falls_back_on_its_parent() {
        let t = parse(
            "x",
            "[roles]\ntext = { fg = \"red\" }\n\"suspect.top\" = { modifiers = [\"bold\"] }",
        )
        .unwrap();
        let top = t.style(Role::SuspectTop);
        assert_eq!(top.fg, Some(Color::Red));
        assert!(top.add_modifier.contains(Modifier::BOLD));
        assert_eq!(t.style(Role::ClaimStale).fg, Some(Color::Red));
    }

    #[test]
    fn nested_tables_name_roles_too() {
        let t = parse("x", "[roles.claim]\nsupported = { fg = \"#00ff00\" }").unwrap();
        assert_eq!(
            t.style(Role::ClaimSupported).fg,
            Some(Color::Rgb(0, 255, 0))
        );
    }

    #[test]
    fn a_broken_theme_says_what_to_fix_and_falls_back() {
        let err = parse("x", "[roles]\n\"suspect.tpo\" = { fg = \"red\" }").unwrap_err();
        assert!(err.contains("unknown role 'suspect.tpo'"), "{err}");
        let err = parse("x", "[roles]\ntext = { fg = \"redd\" }").unwrap_err();
        assert!(err.contains("colour 'redd'"), "{err}");
        let (t, msg) = Theme::select(Some("/nonexistent/theme.toml"), true);
        assert_eq!(t.name, DEFAULT_THEME);
        assert!(msg.unwrap().contains("'/nonexistent/theme.toml'"));
    }

    #[test]
    fn colour_off_selects_mono_whatever_was_asked() {
        let (t, msg) = Theme::select(Some("light"), false);
        assert_eq!(t.name, MONO_THEME);
        assert!(msg.is_none());
    }
}
