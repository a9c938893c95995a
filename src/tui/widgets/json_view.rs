//! JSON for the step detail: pretty-printed, highlighted with syntect (the pure-Rust regex build,
//! syntaxes and themes loaded once, lazily) and wrapped. Called from effects, never from
//! `render`, and the result is cached per (step, width) by the detail pane. Text too large to
//! highlight quickly is shown plain. String values are made inert before they become spans.

use super::super::theme::{self, Role, Theme};
use super::inert_text::{width_of, wrap_spans};
use crate::analysis::model::inert_line;
use ratatui::text::Line;
use serde_json::Value;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;
use syntect::parsing::SyntaxSet;

/// Pretty JSON larger than this is shown without highlighting.
pub const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

struct Assets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        themes: ThemeSet::load_defaults(),
    })
}

/// True when `name` is a syntect theme this build knows.
pub fn knows_syntect_theme(name: &str) -> bool {
    assets().themes.themes.contains_key(name)
}

/// `value` pretty-printed, highlighted by the theme's syntect theme, wrapped to `width`.
pub fn json_lines(value: &Value, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let plain = theme.style(Role::Code);
    let syntect_theme = theme
        .syntect
        .as_deref()
        .filter(|_| pretty.len() <= MAX_HIGHLIGHT_BYTES)
        .and_then(|name| assets().themes.themes.get(name));
    let syntax = assets().syntaxes.find_syntax_by_extension("json");
    let mut out = Vec::new();
    match (syntect_theme, syntax) {
        (Some(st), Some(syn)) => {
            let mut h = HighlightLines::new(syn, st);
            for line in pretty.lines() {
                let with_nl = format!("{line}\n");
                let pieces = match h.highlight_line(&with_nl, &assets().syntaxes) {
                    Ok(regions) => regions
                        .into_iter()
                        .map(|(s, t)| {
                            (
                                inert_line(t.trim_end_matches('\n')).into_owned(),
                                theme::from_syntect(s),
                            )
                        })
                        .collect(),
                    Err(_) => vec![(inert_line(line).into_owned(), plain)],
                };
                out.extend(wrap_spans(pieces, width, &continuation(line)));
            }
        }
        _ => {
            for line in pretty.lines() {
                out.extend(wrap_spans(
                    vec![(inert_line(line).into_owned(), plain)],
                    width,
                    &continuation(line),
                ));
            }
        }
    }
    out
}

/// Continuation lines of a wrapped JSON line keep its indentation plus two spaces.
fn continuation(line: &str) -> String {
    let lead = line.len() - line.trim_start().len();
    " ".repeat((lead + 2).min(24))
}

/// The width a line would take, for tests.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width_of(&s.content)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_pretty_highlighted_and_inert() {
        let t = Theme::builtin("dark").unwrap();
        let v = json!({"start": "Friday\u{1b}[31m", "n": 1});
        let lines = json_lines(&v, &t, 80);
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text[0], "{");
        assert!(text[1].contains("\"start\""));
        assert!(!text.concat().contains('\u{1b}'));
        assert!(
            lines[1].spans.iter().any(|s| theme::has_color(s.style)),
            "no highlighting in the dark theme"
        );
    }

    #[test]
    fn mono_shows_plain_json() {
        let t = Theme::builtin("mono").unwrap();
        let lines = json_lines(&json!({"a": [1, 2]}), &t, 80);
        assert!(
            lines
                .iter()
                .flat_map(|l| &l.spans)
                .all(|s| !theme::has_color(s.style))
        );
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn wrapped_json_never_passes_the_width() {
        let t = Theme::builtin("dark").unwrap();
        let long = "word ".repeat(40);
        for l in json_lines(&json!({"text": long}), &t, 30) {
            assert!(line_width(&l) <= 30, "{l}");
        }
    }

    #[test]
    fn every_builtin_theme_names_a_known_syntect_theme() {
        for name in Theme::builtin_names() {
            let t = Theme::builtin(name).unwrap();
            if let Some(s) = &t.syntect {
                assert!(
                    knows_syntect_theme(s),
                    "{name}: unknown syntect theme '{s}'"
                );
            }
        }
    }
}
