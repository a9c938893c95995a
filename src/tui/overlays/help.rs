//! The `?` overlay: a short walk from opening a run to a confirmed cause, the glyphs, and every
//! key binding grouped by scope. All of it is generated from the keymap in force, so it always
//! names the keys that work. Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::panes::experiments::{HELD, LEGEND};
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
    let in_scope = |scope: Scope, a: Action| {
        km.first_key(&[scope], &a)
            .unwrap_or_else(|| format!("({})", a.name()))
    };
    let steps = [
        format!(
            "1. Suspects ({}) ranks the steps the analysis suspects, best first; the top one is selected when a run opens. Its header says whether there is a clear winner or it is too close to call. {} and {} step through the suspects; the timeline and the step detail ({}) follow; {} shows the step in full.",
            key(Action::FocusSuspects),
            key(Action::NextSuspect),
            key(Action::PrevSuspect),
            key(Action::FocusDetail),
            in_scope(Scope::Suspects, Action::JumpToStep)
        ),
        format!(
            "2. {} switches the suspects pane to the context influence: every piece of context that reached the model, ranked by resemblance to the answer (a correlation, not a cause). Dropped context ({}) lists what was available but never sent. With a judge configured, {} (pressed twice) asks it when the rules are unsure; its pick joins the suspects, as a suspect, not a proof.",
            key(Action::ToggleInfluence),
            key(Action::FocusDropped),
            key(Action::AskJudge)
        ),
        format!(
            "3. A score only narrows the search; a re-run proves a cause. {} re-runs your agent without the selected suspect or piece of context (ablation); {} does it for the whole shortlist; {}, in Dropped context, re-runs with the selected unit put back (restoration); {} replays from the selected step. The first time, the exact command is shown: {} runs it, {} does not.",
            key(Action::Ablate),
            key(Action::AblateShortlist),
            key(Action::Restore),
            key(Action::Replay),
            in_scope(Scope::Confirm, Action::ConfirmYes),
            in_scope(Scope::Confirm, Action::ConfirmNo)
        ),
        format!(
            "4. Progress and verdicts show in Experiments ({}) and beside the item. Only ✔ CAUSAL (a majority of re-runs changed the answer against a stable baseline) is evidence of a cause; ○ NOT CONFIRMED, ? INCONCLUSIVE and ! ERROR are not. {} cancels a running job.",
            key(Action::FocusExperiments),
            in_scope(Scope::Experiments, Action::Cancel)
        ),
        format!(
            "5. Claims ({}) labels each claim of the final answer; {} and {} jump to its evidence and origin steps.",
            key(Action::FocusClaims),
            in_scope(Scope::Claims, Action::JumpEvidence),
            in_scope(Scope::Claims, Action::JumpOrigin)
        ),
        format!(
            "6. {} and {} move between panes (or their numbers); {} searches steps by id, kind, name and agent, {} and {} go to the next and previous match; {} goes back to the list of a file of several runs; {} leaves.",
            key(Action::FocusNext),
            key(Action::FocusPrev),
            key(Action::Search),
            key(Action::SearchNext),
            key(Action::SearchPrev),
            key(Action::RunList),
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
        &format!("  samples: {LEGEND}  {HELD} waiting for ledger lock"),
        "  verdicts: ✔ causal  ○ not confirmed  ? inconclusive  ! error",
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

/// The help's length in lines and its page height, at the screen's size.
pub fn extent(app: &App) -> (usize, usize) {
    let body = Rect::new(0, 1, app.size.0, app.size.1.saturating_sub(2));
    let inner = Block::default()
        .borders(Borders::ALL)
        .inner(centered(body, 100, 100));
    let height = usize::from(inner.height).max(1);
    let len = lines(app, usize::from(inner.width)).len();
    // The last scroll position shows the last page.
    (len.saturating_sub(height) + 1, height)
}

/// Draws the help over the screen.
pub fn render(app: &App, frame: &mut Frame, area: Rect, scroll: usize) {
    let t = &app.theme;
    let box_area = centered(area, 100, 100);
    frame.render_widget(Clear, box_area);
    let k = |scope: Scope, a: Action| {
        app.keymap
            .first_key(&[scope], &a)
            .unwrap_or_else(|| a.name().to_owned())
    };
    let inner = Block::default().borders(Borders::ALL).inner(box_area);
    let all = lines(app, usize::from(inner.width));
    let height = usize::from(inner.height);
    let start = scroll.min(all.len().saturating_sub(height));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(
            format!(
                " Help · {} closes · {}/{} scroll, {} pages · lines {}-{} of {} ",
                k(Scope::Help, Action::Back),
                k(Scope::Panes, Action::MoveDown),
                k(Scope::Panes, Action::MoveUp),
                k(Scope::Panes, Action::PageDown),
                start + 1,
                (start + height).min(all.len()),
                all.len()
            ),
            t.style(Role::TitleFocus),
        ))
        .border_style(t.style(Role::BorderFocus))
        .style(t.style(Role::Overlay));
    frame.render_widget(block, box_area);
    let shown: Vec<Line<'_>> = all
        .into_iter()
        .skip(start)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
