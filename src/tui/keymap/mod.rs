//! The keymap is data: one [`DEFAULTS`] table of `(scope, chord, action, show_hint)` drives key
//! dispatch, the `?` help overlay and the status-bar hints, so the three can never disagree. A
//! user's keymap.toml is merged over it by action name. Chords are written as in the help: `j`,
//! `G`, `?`, `Enter`, `S-Tab`, `C-d`, `A-x`, `Space`, `F1`. Keys appear nowhere else in the
//! screen's code. A broken keymap file gives messages and the defaults, never a crash.

mod chord;

pub use chord::Chord;

use super::action::Action;
use std::path::Path;

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Everywhere, overlays included.
    Always,
    /// Everywhere except overlays.
    Global,
    /// Motions shared by every pane, the help, the viewer and the run picker.
    Panes,
    /// The timeline pane.
    Timeline,
    /// The suspects pane.
    Suspects,
    /// The step detail pane.
    Detail,
    /// The dropped-context pane.
    Dropped,
    /// The claims pane.
    Claims,
    /// The experiments pane.
    Experiments,
    /// The help overlay.
    Help,
    /// The warnings list.
    Warnings,
    /// The search prompt (and the filter and go-to prompts).
    Search,
    /// The confirm overlay.
    Confirm,
    /// The patch prompt of a replay.
    Prompt,
    /// The full-screen viewer.
    Viewer,
    /// The run picker.
    Picker,
    /// The compare view.
    Compare,
    /// The list of runs to compare with.
    CompareWith,
}

impl Scope {
    /// Every scope, in help order.
    pub const ALL: &[Scope] = &[
        Scope::Always,
        Scope::Global,
        Scope::Panes,
        Scope::Timeline,
        Scope::Suspects,
        Scope::Detail,
        Scope::Dropped,
        Scope::Claims,
        Scope::Experiments,
        Scope::Help,
        Scope::Warnings,
        Scope::Search,
        Scope::Confirm,
        Scope::Prompt,
        Scope::Viewer,
        Scope::Compare,
        Scope::CompareWith,
        Scope::Picker,
    ];

    /// The scope's table name in keymap.toml.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Always => "always",
            Scope::Global => "global",
            Scope::Panes => "panes",
            Scope::Timeline => "timeline",
            Scope::Suspects => "suspects",
            Scope::Detail => "detail",
            Scope::Dropped => "dropped",
            Scope::Claims => "claims",
            Scope::Experiments => "experiments",
            Scope::Help => "help",
            Scope::Warnings => "warnings",
            Scope::Search => "search",
            Scope::Confirm => "confirm",
            Scope::Prompt => "prompt",
            Scope::Viewer => "viewer",
            Scope::Picker => "picker",
            Scope::Compare => "compare",
            Scope::CompareWith => "compare-with",
        }
    }

    /// A heading for the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Always => "Anywhere",
            Scope::Global => "Any pane",
            Scope::Panes => "Moving (every pane, help, viewer, run list)",
            Scope::Timeline => "Timeline",
            Scope::Suspects => "Suspects",
            Scope::Detail => "Step detail",
            Scope::Dropped => "Dropped context",
            Scope::Claims => "Claims",
            Scope::Experiments => "Experiments",
            Scope::Help => "Help",
            Scope::Warnings => "Warnings list",
            Scope::Search => "Search, filter and go-to prompts",
            Scope::Confirm => "Confirm a command",
            Scope::Prompt => "Patch prompt (replay with a fix)",
            Scope::Viewer => "Full-screen viewer",
            Scope::Picker => "Run list",
            Scope::Compare => "Compare view (this run beside a good run)",
            Scope::CompareWith => "Compare with: the run that went right",
        }
    }

    fn from_name(s: &str) -> Option<Scope> {
        Scope::ALL.iter().copied().find(|x| x.name() == s)
    }
}

use Action as A;
use Scope as S;

/// The default bindings: `(scope, chord, action, show in the status bar)`.
pub const DEFAULTS: &[(Scope, &str, Action, bool)] = &[
    (S::Always, "C-c", A::Quit, false),
    (S::Always, "C-z", A::Suspend, false),
    (S::Global, "q", A::Quit, true),
    (S::Global, "?", A::Help, true),
    (S::Global, "Esc", A::Back, false),
    (S::Global, "Tab", A::FocusNext, true),
    (S::Global, "S-Tab", A::FocusPrev, false),
    (S::Global, "1", A::FocusTimeline, false),
    (S::Global, "2", A::FocusSuspects, false),
    (S::Global, "3", A::FocusDetail, false),
    (S::Global, "4", A::FocusDropped, false),
    (S::Global, "5", A::FocusClaims, false),
    (S::Global, "6", A::FocusExperiments, false),
    (S::Global, "]", A::NextSuspect, true),
    (S::Global, "i", A::ToggleInfluence, false),
    (S::Global, "R", A::RunList, false),
    (S::Global, "[", A::PrevSuspect, false),
    (S::Global, "/", A::Search, true),
    (S::Global, "n", A::SearchNext, false),
    (S::Global, "N", A::SearchPrev, false),
    (S::Global, "a", A::Ablate, true),
    (S::Global, "A", A::AblateShortlist, false),
    (S::Global, "r", A::Restore, false),
    (S::Global, "p", A::Replay, false),
    (S::Global, "P", A::ReplayPatched, false),
    (S::Global, "L", A::Localize, false),
    (S::Global, "y", A::CopyOutput, false),
    (S::Global, "Y", A::CopyStep, false),
    (S::Global, "M", A::ToggleMouse, false),
    (S::Global, "J", A::AskJudge, false),
    (S::Global, "V", A::SetOutcome, false),
    (S::Global, "f", A::Filter, true),
    (S::Global, ":", A::GoTo, true),
    (S::Global, "z", A::Zoom, true),
    (S::Global, "w", A::Waterfall, false),
    (S::Global, "W", A::Warnings, false),
    (S::Global, "O", A::OpenPager, false),
    (S::Global, "E", A::OpenEditor, false),
    (S::Global, "C-r", A::Reload, false),
    (S::Global, "S", A::Share, false),
    (S::Global, "D", A::Compare, false),
    (S::Panes, "j", A::MoveDown, false),
    (S::Panes, "Down", A::MoveDown, false),
    (S::Panes, "k", A::MoveUp, false),
    (S::Panes, "Up", A::MoveUp, false),
    (S::Panes, "C-d", A::PageDown, false),
    (S::Panes, "PageDown", A::PageDown, false),
    (S::Panes, "C-u", A::PageUp, false),
    (S::Panes, "PageUp", A::PageUp, false),
    (S::Panes, "g", A::Top, false),
    (S::Panes, "Home", A::Top, false),
    (S::Panes, "G", A::Bottom, false),
    (S::Panes, "End", A::Bottom, false),
    (S::Timeline, "Space", A::ToggleFold, true),
    (S::Timeline, "h", A::Collapse, false),
    (S::Timeline, "Left", A::Collapse, false),
    (S::Timeline, "l", A::Expand, false),
    (S::Timeline, "Right", A::Expand, false),
    (S::Timeline, "Enter", A::OpenViewer, true),
    (S::Timeline, "s", A::Sort, true),
    (S::Timeline, "w", A::Waterfall, true),
    (S::Suspects, "Enter", A::OpenViewer, true),
    (S::Suspects, "i", A::ToggleInfluence, true),
    (S::Suspects, "A", A::AblateShortlist, true),
    (S::Detail, "Enter", A::OpenViewer, true),
    (S::Detail, "v", A::OpenViewer, false),
    (S::Detail, "y", A::CopyOutput, true),
    (S::Dropped, "Enter", A::OpenViewer, true),
    (S::Dropped, "r", A::Restore, true),
    (S::Claims, "e", A::JumpEvidence, true),
    (S::Claims, "Enter", A::JumpEvidence, false),
    (S::Claims, "o", A::JumpOrigin, true),
    (S::Experiments, "x", A::Cancel, true),
    (S::Experiments, "Enter", A::JumpToStep, false),
    (S::Experiments, "L", A::Localize, true),
    (S::Experiments, "c", A::Aggregate, false),
    (S::Help, "Esc", A::Back, true),
    (S::Help, "?", A::Back, false),
    (S::Help, "q", A::Back, false),
    (S::Help, "/", A::Search, true),
    (S::Warnings, "Esc", A::Back, true),
    (S::Warnings, "q", A::Back, false),
    (S::Warnings, "W", A::Back, false),
    (S::Warnings, "Enter", A::JumpToStep, true),
    (S::Search, "Enter", A::SearchAccept, true),
    (S::Search, "Esc", A::Back, true),
    (S::Search, "Backspace", A::SearchBackspace, false),
    (S::Search, "Down", A::SearchNext, false),
    (S::Search, "C-n", A::SearchNext, true),
    (S::Search, "Up", A::SearchPrev, false),
    (S::Search, "C-p", A::SearchPrev, false),
    (S::Confirm, "y", A::ConfirmYes, true),
    (S::Confirm, "Enter", A::ConfirmYes, false),
    (S::Confirm, "n", A::ConfirmNo, true),
    (S::Confirm, "Esc", A::ConfirmNo, false),
    (S::Prompt, "Enter", A::PromptAccept, true),
    (S::Prompt, "Esc", A::Back, true),
    (S::Prompt, "Backspace", A::PromptBackspace, false),
    (S::Viewer, "Esc", A::Back, true),
    (S::Viewer, "q", A::Back, false),
    (S::Viewer, "y", A::CopyOutput, true),
    (S::Viewer, "Y", A::CopyStep, false),
    (S::Picker, "?", A::Help, true),
    (S::Picker, "Enter", A::PickRun, true),
    (S::Picker, "/", A::Search, true),
    (S::Picker, "Esc", A::Back, true),
    (S::Picker, "q", A::Quit, true),
    (S::Compare, "n", A::NextDifference, true),
    (S::Compare, "N", A::PrevDifference, true),
    (S::Compare, "Enter", A::JumpToStep, true),
    (S::Compare, "o", A::CompareWith, true),
    (S::Compare, "Esc", A::Back, true),
    (S::Compare, "q", A::Back, false),
    (S::Compare, "D", A::Back, false),
    (S::CompareWith, "Enter", A::PickRun, true),
    (S::CompareWith, "Esc", A::Back, true),
    (S::CompareWith, "q", A::Back, false),
];

/// One resolved binding.
#[derive(Clone, Debug)]
pub struct Binding {
    /// Where it applies.
    pub scope: Scope,
    /// The key.
    pub chord: Chord,
    /// What it does.
    pub action: Action,
    /// Shown in the status bar.
    pub hint: bool,
}

/// The bindings in force: the defaults with the user's file merged over them.
#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::defaults()
    }
}

impl Keymap {
    /// The built-in bindings.
    pub fn defaults() -> Keymap {
        let bindings = DEFAULTS
            .iter()
            .filter_map(|(scope, chord, action, hint)| {
                Some(Binding {
                    scope: *scope,
                    chord: Chord::parse(chord)?,
                    action: action.clone(),
                    hint: *hint,
                })
            })
            .collect();
        Keymap { bindings }
    }

    /// The defaults with the file at `path` merged over them (when given); problems come back as
    /// messages and leave the defaults for what they touch.
    pub fn load(path: Option<&Path>) -> (Keymap, Vec<String>) {
        let mut km = Keymap::defaults();
        let Some(path) = path else {
            return (km, Vec::new());
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let warnings = km.merge_toml(&text, &path.display().to_string());
                (km, warnings)
            }
            Err(e) => (
                km,
                vec![format!(
                    "keymap '{}': cannot read it ({e}); the default keys are used",
                    path.display()
                )],
            ),
        }
    }

    /// Merges a keymap.toml text: `[scope] action = "chord"` or `["chord", ...]`; `[]` unbinds.
    /// The user's chords replace the action's default chords in that scope and take the chord
    /// away from any other action there.
    pub fn merge_toml(&mut self, text: &str, origin: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        let table: toml::Table = match toml::from_str(text) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!(
                    "keymap '{origin}' is not valid TOML ({e}); the default keys are used"
                ));
                return warnings;
            }
        };
        for (scope_name, entries) in &table {
            let Some(scope) = Scope::from_name(scope_name) else {
                warnings.push(format!(
                    "keymap '{origin}': '[{scope_name}]' is not a scope; use one of {}",
                    Scope::ALL
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                continue;
            };
            let toml::Value::Table(entries) = entries else {
                warnings.push(format!(
                    "keymap '{origin}': '{scope_name}' must be a table like [{scope_name}]"
                ));
                continue;
            };
            for (action_name, chords) in entries {
                let Some(action) = Action::from_name(action_name) else {
                    warnings.push(format!(
                        "keymap '{origin}': [{scope_name}] '{action_name}' is not an action; the help (?) lists every name"
                    ));
                    continue;
                };
                let texts: Vec<&str> = match chords {
                    toml::Value::String(s) => vec![s.as_str()],
                    toml::Value::Array(a) => a.iter().filter_map(|v| v.as_str()).collect(),
                    _ => {
                        warnings.push(format!(
                            "keymap '{origin}': [{scope_name}] {action_name} must be a key such as \"j\" or a list of keys"
                        ));
                        continue;
                    }
                };
                let texts_empty = texts.is_empty();
                let mut parsed = Vec::new();
                for t in texts {
                    match Chord::parse(t) {
                        Some(c) => parsed.push(c),
                        None => warnings.push(format!(
                            "keymap '{origin}': [{scope_name}] {action_name}: '{t}' is not a key; write keys as j, G, C-d, S-Tab, Enter, Space, F5"
                        )),
                    }
                }
                if parsed.is_empty() && !texts_empty {
                    continue;
                }
                let hint = self
                    .bindings
                    .iter()
                    .any(|b| b.scope == scope && b.action.name() == action.name() && b.hint);
                self.bindings.retain(|b| {
                    b.scope != scope
                        || (b.action.name() != action.name() && !parsed.contains(&b.chord))
                });
                for chord in parsed {
                    self.bindings.push(Binding {
                        scope,
                        chord,
                        action: action.clone(),
                        hint,
                    });
                }
            }
        }
        warnings
    }

    /// The action bound to `chord` in the first of `scopes` that binds it.
    pub fn lookup(&self, scopes: &[Scope], chord: &Chord) -> Option<Action> {
        scopes.iter().find_map(|s| {
            self.bindings
                .iter()
                .find(|b| b.scope == *s && b.chord == *chord)
                .map(|b| b.action.clone())
        })
    }

    /// Every binding, in table order.
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// The keys of an action in a scope, joined for display (`j/Down`); empty when unbound.
    pub fn keys_for(&self, scope: Scope, action: &Action) -> String {
        let keys: Vec<String> = self
            .bindings
            .iter()
            .filter(|b| b.scope == scope && b.action.name() == action.name())
            .map(|b| b.chord.to_string())
            .collect();
        keys.join("/")
    }

    /// The first key of an action in any of `scopes`, for sentences in the help and the status
    /// bar ("press a to ablate").
    pub fn first_key(&self, scopes: &[Scope], action: &Action) -> Option<String> {
        scopes.iter().find_map(|s| {
            self.bindings
                .iter()
                .find(|b| b.scope == *s && b.action.name() == action.name())
                .map(|b| b.chord.to_string())
        })
    }

    /// The status-bar hints for these scopes, in order, each action once: `(keys, words)`.
    pub fn hints(&self, scopes: &[Scope]) -> Vec<(String, &'static str)> {
        let mut seen: Vec<&'static str> = Vec::new();
        let mut out: Vec<(String, &'static str)> = Vec::new();
        for s in scopes {
            for b in self.bindings.iter().filter(|b| b.scope == *s && b.hint) {
                if seen.contains(&b.action.name()) {
                    continue;
                }
                seen.push(b.action.name());
                out.push((self.keys_for(*s, &b.action), b.action.label()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_chord_is_bound_twice_in_a_scope() {
        let km = Keymap::defaults();
        assert_eq!(
            km.bindings().len(),
            DEFAULTS.len(),
            "a default chord does not parse"
        );
        for (i, a) in km.bindings().iter().enumerate() {
            for b in km.bindings().iter().skip(i + 1) {
                assert!(
                    !(a.scope == b.scope && a.chord == b.chord),
                    "{} bound twice in [{}]",
                    a.chord,
                    a.scope.name()
                );
            }
        }
    }

    #[test]
    fn every_bindable_action_has_a_default_key() {
        let km = Keymap::defaults();
        for a in Action::BINDABLE {
            assert!(
                km.bindings().iter().any(|b| b.action.name() == a.name()),
                "'{}' has no key",
                a.name()
            );
        }
    }

    #[test]
    fn a_user_file_replaces_an_actions_keys_and_steals_the_chord() {
        let mut km = Keymap::defaults();
        let w = km.merge_toml(
            "[panes]\nmove-down = [\"J\", \"Down\"]\n[global]\nsearch = \"q\"\n",
            "k.toml",
        );
        assert!(w.is_empty(), "{w:?}");
        let j = Chord::parse("j").unwrap();
        let big_j = Chord::parse("J").unwrap();
        assert!(km.lookup(&[Scope::Panes], &j).is_none());
        assert_eq!(
            km.lookup(&[Scope::Panes], &big_j).map(|a| a.name()),
            Some("move-down")
        );
        let q = Chord::parse("q").unwrap();
        assert_eq!(
            km.lookup(&[Scope::Global], &q).map(|a| a.name()),
            Some("search")
        );
        assert_eq!(km.keys_for(Scope::Global, &Action::Search), "q");
    }

    #[test]
    fn a_broken_user_file_keeps_the_defaults_with_messages() {
        let mut km = Keymap::defaults();
        let w = km.merge_toml("[panes\nmove-down = 1", "bad.toml");
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("'bad.toml' is not valid TOML"), "{}", w[0]);
        assert_eq!(km.bindings().len(), DEFAULTS.len());
        let w = km.merge_toml(
            "[nowhere]\nquit = \"x\"\n[global]\nfly = \"f\"\nquit = \"Hyper-q\"\n",
            "k.toml",
        );
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w.iter().any(|m| m.contains("'fly' is not an action")));
        assert!(w.iter().any(|m| m.contains("'Hyper-q' is not a key")));
    }
}
