//! The `?` overlay: a short walk from opening a run to a confirmed cause, the glyphs, and every
//! key binding grouped by scope. All of it is generated from the keymap in force, so it always
//! names the keys that work. Reads only the app.

use super::super::action::Action;
use super::super::app::App;
use super::super::keymap::Scope;
use super::super::theme::Role;
use super::super::widgets::inert_text::{clipped, wrap_spans};
use super::super::widgets::marks;
use super::centered;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Width of the key column.
const KEY_COL: usize = 16;
/// Width of the action-name column.
const NAME_COL: usize = 18;

/// The help's lines for a width, only those holding `filter` (ignoring case) with the heading
/// of their section when it is not empty.
pub fn lines(app: &App, width: usize, filter: &str) -> Vec<Line<'static>> {
    let all = all_lines(app, width);
    if filter.is_empty() {
        return all.into_iter().map(|(_, l)| l).collect();
    }
    let needle = filter.to_lowercase();
    let text = |l: &Line<'_>| {
        l.spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>()
            .to_lowercase()
    };
    let mut out = Vec::new();
    let mut heading: Option<Line<'static>> = None;
    for (is_heading, l) in all {
        if is_heading {
            heading = Some(l);
            continue;
        }
        if text(&l).contains(&needle) {
            if let Some(h) = heading.take() {
                if !out.is_empty() {
                    out.push(Line::default());
                }
                out.push(h);
            }
            out.push(l);
        }
    }
    if out.is_empty() {
        out.push(Line::styled(
            format!("No help line holds '{}'.", clipped(filter, 40)),
            app.theme.style(Role::TextDim),
        ));
    }
    out
}

/// Every line of the help, each marked when it is a section heading.
fn all_lines(app: &App, width: usize) -> Vec<(bool, Line<'static>)> {
    let t = &app.theme;
    let km = &app.keymap;
    let key = |a: Action| {
        km.first_key(
            &[Scope::Global, Scope::Suspects, Scope::Panes, Scope::Always],
            &a,
        )
        .unwrap_or_else(|| format!("({})", a.name()))
    };
    let mut out: Vec<(bool, Line<'static>)> = vec![(
        true,
        Line::styled(
            "Finding the cause of a wrong answer",
            t.style(Role::Heading),
        ),
    )];
    let in_scope = |scope: Scope, a: Action| {
        km.first_key(&[scope], &a)
            .unwrap_or_else(|| format!("({})", a.name()))
    };
    let steps = [
        format!(
            "1. Suspects ({}) ranks the steps the analysis suspects, best first; the top one is selected when a run opens, with why it was chosen (its evidence, the detector that found it) and the experiment that would prove it. The header says whether there is a clear winner or it is too close to call. {} and {} step through the suspects; the timeline and the step detail ({}) follow; {} shows the step in full, {} in your pager.",
            key(Action::FocusSuspects),
            key(Action::NextSuspect),
            key(Action::PrevSuspect),
            key(Action::FocusDetail),
            in_scope(Scope::Suspects, Action::OpenViewer),
            key(Action::OpenPager)
        ),
        format!(
            "2. {} switches the suspects pane to the context influence: every piece of context that reached the model, ranked by resemblance to the answer (a correlation, not a cause). Dropped context ({}) lists what was available but never sent: when there is some, restoring it is the first experiment to try. With a judge configured, {} (pressed twice) asks it when the rules are unsure; its pick joins the suspects, as a suspect, not a proof.",
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
            "4. Progress and verdicts show in Experiments ({}) and beside the item. Only {} CAUSAL (a majority of re-runs changed the answer against a stable baseline) is evidence of a cause; {} NOT CONFIRMED, {} INCONCLUSIVE and {} ERROR are not. {} cancels a running job.",
            key(Action::FocusExperiments),
            marks::VERDICT_CAUSAL,
            marks::VERDICT_NOT_CONFIRMED,
            marks::VERDICT_INCONCLUSIVE,
            marks::VERDICT_ERROR,
            in_scope(Scope::Experiments, Action::Cancel)
        ),
        format!(
            "5. Claims ({}) labels each claim of the final answer and says what the label rests on; {} and {} jump to its evidence and origin steps.",
            key(Action::FocusClaims),
            in_scope(Scope::Claims, Action::JumpEvidence),
            in_scope(Scope::Claims, Action::JumpOrigin)
        ),
        format!(
            "6. Finding steps: {} searches the steps' labels and content ({} and {} go to the next and previous match); {} filters the timeline (is:failed, is:suspect, kind:tool, agent:NAME, text); {} goes to a step by position or id; in the timeline {} sorts by duration or tokens and {} draws the steps on the run's clock.",
            key(Action::Search),
            key(Action::SearchNext),
            key(Action::SearchPrev),
            key(Action::Filter),
            key(Action::GoTo),
            in_scope(Scope::Timeline, Action::Sort),
            key(Action::Waterfall)
        ),
        format!(
            "7. {} and {} move between panes (or their numbers); {} shows the focused pane on the whole screen; {} lists the warnings; {} writes the diagnosis as Markdown to share; {} goes back to the list of a file of several runs; {} leaves.",
            key(Action::FocusNext),
            key(Action::FocusPrev),
            key(Action::Zoom),
            key(Action::Warnings),
            key(Action::Share),
            key(Action::RunList),
            key(Action::Quit)
        ),
        format!(
            "8. It worked on another trial? {} sets the run beside one that went right (a trial of the same task that succeeded, or a file): the two side by side, aligned, where they first part marked; {} and {} go between the differences; the suspects count where they part.",
            key(Action::Compare),
            in_scope(Scope::Compare, Action::NextDifference),
            in_scope(Scope::Compare, Action::PrevDifference)
        ),
    ];
    for s in steps {
        out.extend(
            wrap_spans(
                vec![(format!("  {s}"), t.style(Role::Text))],
                width,
                "     ",
            )
            .into_iter()
            .map(|l| (false, l)),
        );
    }
    out.push((false, Line::default()));
    out.push((true, Line::styled("Marks", t.style(Role::Heading))));
    // Every mark with its meaning, flowing over the lines (a mark never parts from its words).
    let mut pieces: Vec<(String, ratatui::style::Style)> =
        vec![("  ".to_owned(), t.style(Role::Text))];
    for (glyph, meaning) in marks::ALL {
        pieces.push((
            format!("{glyph}\u{a0}{}   ", meaning.replace(' ', "\u{a0}")),
            t.style(Role::Text),
        ));
    }
    out.extend(wrap_spans(pieces, width, "  ").into_iter().map(|l| {
        // The no-break spaces that kept each mark with its words become spaces again.
        let spans: Vec<Span<'static>> = l
            .spans
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                let text = s.content.replace('\u{a0}', " ");
                // A line does not start with the spaces that separated it from the last.
                let text = if k == 1 {
                    text.trim_start().to_owned()
                } else {
                    text
                };
                Span::styled(text, s.style)
            })
            .collect();
        (false, Line::from(spans))
    }));
    out.push((
        false,
        Line::styled(
            "  ├ ╰ │  the lanes from a step whose output is reused to the steps that reuse it",
            t.style(Role::Text),
        ),
    ));
    out.extend(ledger_words(app, width));
    for scope in Scope::ALL {
        let bindings: Vec<_> = km.bindings().iter().filter(|b| b.scope == *scope).collect();
        if bindings.is_empty() {
            continue;
        }
        out.push((false, Line::default()));
        out.push((
            true,
            Line::styled(scope.title().to_owned(), t.style(Role::Heading)),
        ));
        let mut done: Vec<&'static str> = Vec::new();
        for b in bindings {
            let name = b.action.name();
            if done.contains(&name) {
                continue;
            }
            done.push(name);
            let keys = km.keys_for(*scope, &b.action);
            let indent = " ".repeat(2 + KEY_COL + NAME_COL);
            out.extend(
                wrap_spans(
                    vec![
                        (format!("  {keys:<KEY_COL$}"), t.style(Role::Key)),
                        (format!("{name:<NAME_COL$}"), t.style(Role::TextDim)),
                        (b.action.doc().to_owned(), t.style(Role::Text)),
                    ],
                    width,
                    &indent,
                )
                .into_iter()
                .map(|l| (false, l)),
            );
        }
    }
    out.push((false, Line::default()));
    out.push((
        false,
        Line::styled(
            "Keys can be changed in keymap.toml in the config folder (docs/screen.md).",
            t.style(Role::TextDim),
        ),
    ));
    out
}

/// The words the attribution ledger records (Experiments pane, the suspects' ledger records),
/// each with what it means (issue 26): the evidence levels, the dispositions and the statuses.
fn ledger_words(app: &App, width: usize) -> Vec<(bool, Line<'static>)> {
    use crate::experiments::ledger::{Disposition, EvidenceLevel, Status};
    let t = &app.theme;
    let mut out = vec![
        (false, Line::default()),
        (
            true,
            Line::styled("Words of the attribution ledger", t.style(Role::Heading)),
        ),
    ];
    let words: Vec<(&str, &str)> = [EvidenceLevel::CausalAblation, EvidenceLevel::PairedShadow]
        .iter()
        .map(|l| (l.as_str(), l.meaning()))
        .chain(
            [
                Disposition::Harmful,
                Disposition::Retained,
                Disposition::DemotionCandidate,
                Disposition::Uncertain,
            ]
            .iter()
            .map(|d| (d.as_str(), d.meaning())),
        )
        .chain(
            [
                Status::LegacyUnverified,
                Status::Unbound,
                Status::Cancelled,
                Status::Torn,
                Status::Failed,
            ]
            .iter()
            .map(|s| (s.as_str(), s.meaning())),
        )
        .collect();
    let indent = " ".repeat(2 + KEY_COL + NAME_COL);
    for (word, meaning) in words {
        out.extend(
            wrap_spans(
                vec![
                    (
                        format!("  {word:<w$}", w = KEY_COL + NAME_COL),
                        t.style(Role::TextDim),
                    ),
                    (meaning.to_owned(), t.style(Role::Text)),
                ],
                width,
                &indent,
            )
            .into_iter()
            .map(|l| (false, l)),
        );
    }
    out
}

/// The help's length in lines and its page height, at the screen's size.
pub fn extent(app: &App) -> (usize, usize) {
    let body = super::super::render::layout(app, Rect::new(0, 0, app.size.0, app.size.1)).body;
    let inner = Block::default()
        .borders(Borders::ALL)
        .inner(centered(body, 100, 100));
    let height = usize::from(inner.height).max(1);
    let filter = match &app.overlay {
        Some(super::super::app::Overlay::Help { filter, .. }) => filter.as_str(),
        _ => "",
    };
    let len = lines(app, usize::from(inner.width), filter).len();
    // The last scroll position shows the last page.
    (len.saturating_sub(height) + 1, height)
}

/// Draws the help over the screen.
pub fn render(app: &App, frame: &mut Frame, area: Rect, scroll: usize, filter: &str) {
    let t = &app.theme;
    let box_area = centered(area, 100, 100);
    frame.render_widget(Clear, box_area);
    let k = |scope: Scope, a: Action| {
        app.keymap
            .first_key(&[scope], &a)
            .unwrap_or_else(|| a.name().to_owned())
    };
    let inner = Block::default().borders(Borders::ALL).inner(box_area);
    let all = lines(app, usize::from(inner.width), filter);
    let height = usize::from(inner.height);
    let start = scroll.min(all.len().saturating_sub(height));
    let found = if filter.is_empty() {
        String::new()
    } else {
        format!("lines holding '{}' · ", clipped(filter, 20))
    };
    let title = format!(
        " Help · {} closes · {} searches · {}/{} scroll · {found}lines {}-{} of {} ",
        k(Scope::Help, Action::Back),
        k(Scope::Help, Action::Search),
        k(Scope::Panes, Action::MoveDown),
        k(Scope::Panes, Action::MoveUp),
        start + 1,
        (start + height).min(all.len()),
        all.len()
    );
    let block = super::overlay_block(t, title).border_type(ratatui::widgets::BorderType::Thick);
    frame.render_widget(block, box_area);
    let shown: Vec<Line<'_>> = all
        .into_iter()
        .skip(start)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
