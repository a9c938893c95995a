//! The `?` overlay: a short walk from opening a run to a confirmed cause, the glyphs, and every
//! key binding grouped by scope. All of it is generated from the keymap in force, so it always
//! names the keys that work. Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::theme::Role;
use super::super::widgets::inert_text::wrap_spans;
use super::centered;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Width of the key column.
const KEY_COL: usize = 16;
/// Width of the action-name column.
const NAME_COL: usize = 18;

/// Every line of the help, for a width.
pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let km = &app.keymap;
    let key = |a: Action| {
        km.first_key(
            &[Scope::Global, Scope::Suspects, Scope::Panes, Scope::Always],
            &a,
        )
        .unwrap_or_else(|| format!("({})", a.name()))
    };
    let mut out = vec![Line::styled(
        "Finding the cause of a wrong answer",
        t.style(Role::Heading),
    )];
    let steps = [
        format!(
            "1. Suspects ({}) lists the steps the analysis ranks, best first; the top one is selected when a run opens. The header says whether it is a clear winner or too close to call.",
            key(Action::FocusSuspects)
        ),
        format!(
            "2. {} and {} step through the suspects; the timeline and the step detail follow. The evidence is under the selected suspect; {} opens its step in full.",
            key(Action::NextSuspect),
            key(Action::PrevSuspect),
            km.first_key(&[Scope::Suspects], &Action::JumpToStep)
                .unwrap_or_default()
        ),
        format!(
            "3. A score only narrows the search. {} re-runs your agent without the selected suspect (ablation); {} does it for the whole shortlist. The verdict (CAUSAL, NOT CONFIRMED, INCONCLUSIVE) shows in Experiments ({}) and beside the suspect.",
            key(Action::Ablate),
            key(Action::AblateShortlist),
            key(Action::FocusExperiments)
        ),
        format!(
            "4. {} moves between panes; {} searches steps; {} leaves.",
            key(Action::FocusNext),
            key(Action::Search),
            key(Action::Quit)
        ),
    ];
    for s in steps {
        out.extend(wrap_spans(
            vec![(format!("  {s}"), t.style(Role::Text))],
            width,
            "     ",
        ));
    }
    out.push(Line::default());
    out.push(Line::styled("Marks", t.style(Role::Heading)));
    for s in [
        "  ✗ failed step   #1 suspect rank   ★ shortlisted   ▾/▸ unfolded/folded",
        "  ● ├ ╰ │ a step's output and the later steps that reuse it   ▲ feeds the selected step   ▼ uses its output",
        "  claims: ✓ supported  ◐ partial  ? unsupported  ✗ contradicted  ~ stale  · no claim",
        "  samples: ○ waiting  ◌ running  ● same answer  ✗ flipped  ! error",
    ] {
        out.extend(wrap_spans(
            vec![(s.to_owned(), t.style(Role::Text))],
            width,
            "    ",
        ));
    }
    for scope in Scope::ALL {
        let bindings: Vec<_> = km.bindings().iter().filter(|b| b.scope == *scope).collect();
        if bindings.is_empty() {
            continue;
        }
        out.push(Line::default());
        out.push(Line::styled(
            scope.title().to_owned(),
            t.style(Role::Heading),
        ));
        let mut done: Vec<&'static str> = Vec::new();
        for b in bindings {
            let name = b.action.name();
            if done.contains(&name) {
                continue;
            }
            done.push(name);
            let keys = km.keys_for(*scope, &b.action);
            out.push(Line::from(vec![
                Span::styled(format!("  {keys:<KEY_COL$}"), t.style(Role::Key)),
                Span::styled(format!("{name:<NAME_COL$}"), t.style(Role::TextDim)),
                Span::styled(b.action.doc().to_owned(), t.style(Role::Text)),
            ]));
        }
    }
    out.push(Line::default());
    out.push(Line::styled(
        "Keys can be changed in keymap.toml in the config folder (docs/screen.md).",
        t.style(Role::TextDim),
    ));
    out
}

/// Draws the help over the screen.
pub fn render(app: &App, frame: &mut Frame, area: Rect, scroll: usize) {
    let t = &app.theme;
    let box_area = centered(area, 100, 100);
    frame.render_widget(Clear, box_area);
    let close = app
        .keymap
        .first_key(&[Scope::Help], &Action::Back)
        .unwrap_or_else(|| "Esc".to_owned());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(
            format!(" Help · {close} closes · j/k scroll "),
            t.style(Role::TitleFocus),
        ))
        .border_style(t.style(Role::BorderFocus))
        .style(t.style(Role::Overlay));
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let all = lines(app, usize::from(inner.width));
    let start = scroll.min(all.len().saturating_sub(usize::from(inner.height)));
    let shown: Vec<Line<'_>> = all
        .into_iter()
        .skip(start)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
