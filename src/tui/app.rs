//! The one state of the screen, [`App`], with the opened [`Document`] (see `tui::document`).
//! `update` changes an `App`; `render` reads it. Nothing here does I/O or decides anything about
//! the run.

use super::action::Action;
pub use super::document::Document;
use super::judge::JudgeState;
use super::keymap::{Keymap, Scope};
use super::overlays::confirm::ConfirmState;
use super::overlays::prompt::PromptState;
use super::overlays::search::SearchState;
use super::panes::claims::ClaimsState;
use super::panes::detail::{DetailCache, DetailState};
use super::panes::dropped::DroppedState;
use super::panes::experiments::ExperimentsState;
use super::panes::suspects::SuspectsState;
use super::panes::timeline::TimelineState;
use super::picker::{PickerState, RunChoice};
use super::theme::Theme;
use crate::config::Viewers;
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::analysis::count::group;

/// Ticks a status message stays up (the tick is 250 ms).
pub const MESSAGE_TICKS: u64 = 40;

/// The panes, in Tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    /// The steps in order.
    Timeline,
    /// The ranked suspects and the influence ranking.
    Suspects,
    /// The selected step in full.
    Detail,
    /// Context available but never sent.
    Dropped,
    /// The claims of the final answer.
    Claims,
    /// Re-runs and their verdicts.
    Experiments,
}

impl Pane {
    /// Every pane, in Tab order.
    pub const ALL: [Pane; 6] = [
        Pane::Timeline,
        Pane::Suspects,
        Pane::Detail,
        Pane::Dropped,
        Pane::Claims,
        Pane::Experiments,
    ];

    /// The pane's title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Timeline => "Timeline",
            Pane::Suspects => "Suspects",
            Pane::Detail => "Step detail",
            Pane::Dropped => "Dropped context",
            Pane::Claims => "Claims",
            Pane::Experiments => "Experiments",
        }
    }

    /// The pane's own key scope.
    pub fn scope(self) -> Scope {
        match self {
            Pane::Timeline => Scope::Timeline,
            Pane::Suspects => Scope::Suspects,
            Pane::Detail => Scope::Detail,
            Pane::Dropped => Scope::Dropped,
            Pane::Claims => Scope::Claims,
            Pane::Experiments => Scope::Experiments,
        }
    }

    /// Panes that share the top-right slot of the wide layout.
    pub fn is_secondary(self) -> bool {
        matches!(
            self,
            Pane::Suspects | Pane::Dropped | Pane::Claims | Pane::Experiments
        )
    }

    /// The pane after (or before) this one.
    pub fn cycle(self, forward: bool) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        let n = Pane::ALL.len();
        let j = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        Pane::ALL.get(j).copied().unwrap_or(Pane::Timeline)
    }
}

/// A modal shown over the panes.
#[derive(Debug)]
pub enum Overlay {
    /// The key help.
    Help {
        /// First visible line.
        scroll: usize,
        /// Only the lines holding this text are shown (empty: all).
        filter: String,
        /// The filter is being typed.
        typing: bool,
    },
    /// The run's loader warnings and the start-up problems.
    Warnings {
        /// The selected row.
        cursor: usize,
        /// First row drawn.
        offset: std::cell::Cell<usize>,
    },
    /// Asking before a command runs.
    Confirm(ConfirmState),
    /// Typing the patch of a replay.
    Prompt(PromptState),
    /// The selected step, full-screen.
    Viewer {
        /// First visible line.
        scroll: usize,
    },
    /// The open run beside the good run it was compared with (full-screen).
    Compare(super::compare::CompareState),
    /// The list of runs to compare the open run with.
    CompareWith(super::compare::ChooserState),
}

/// What a one-line prompt in the status bar is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// The timeline filter.
    Filter,
    /// Go to a step by position or id.
    GoTo,
    /// The path of a file holding the run to compare with.
    AgainstPath,
}

/// A one-line prompt in the status bar (the search keys edit it).
#[derive(Clone, Debug)]
pub struct LineEdit {
    /// What it is for.
    pub kind: LineKind,
    /// What has been typed.
    pub text: String,
    /// The timeline filter in force when the prompt opened (`Esc` puts it back).
    pub before: Option<Arc<super::overlays::search::SearchHits>>,
    /// Why the typed filter is not understood.
    pub error: Option<String>,
}

/// Where a pane drew a selectable row (for mouse clicks): the pane, the row's screen line and
/// the index the pane's cursor takes for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowHit {
    /// The pane.
    pub pane: Pane,
    /// The screen line.
    pub y: u16,
    /// First column of the pane's inner area.
    pub x: u16,
    /// Width of the pane's inner area.
    pub width: u16,
    /// The cursor value for this row.
    pub index: usize,
}

/// A line in the status bar.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusLine {
    /// The text (never run text unless made inert).
    pub text: String,
    /// A problem rather than news.
    pub problem: bool,
    /// The tick after which it goes away.
    pub until: u64,
    /// Said when the screen opened (a config, keymap or theme problem): a newer message that
    /// replaces it sends it back to the queue, so it is seen.
    pub startup: bool,
}

/// What the screen was started with, besides the run.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// The keys in force.
    pub keymap: Keymap,
    /// The theme in force.
    pub theme: Arc<Theme>,
    /// Messages to show at start (config, theme and keymap problems).
    pub messages: Vec<String>,
    /// No terminal: `--render` or tests (copying to the clipboard is refused).
    pub headless: bool,
    /// The terminal's size.
    pub size: (u16, u16),
    /// The folder the share key writes the diagnosis to (`None`: it says there is none).
    pub share_dir: Option<std::path::PathBuf>,
    /// The pager and the editor a step is opened in (resolved with the settings).
    pub viewers: Viewers,
    /// `[experiments] max_suspects`: most suspects a shortlist ablation re-runs (what the screen
    /// says `A` does agrees with the plan the engine makes).
    pub max_suspects: usize,
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions {
            keymap: Keymap::defaults(),
            theme: Arc::new(Theme::builtin("dark").unwrap_or_else(Theme::bare)),
            messages: Vec::new(),
            headless: true,
            size: (120, 40),
            share_dir: None,
            viewers: Viewers::default(),
            max_suspects: 5,
        }
    }
}

/// The whole state of the screen.
#[derive(Debug)]
pub struct App {
    /// The opened run (none until one is chosen from the run list).
    pub doc: Option<Arc<Document>>,
    /// The run list, for a file holding several runs (kept while a run is open).
    pub picker: Option<PickerState>,
    /// The focused pane.
    pub focus: Pane,
    /// The secondary pane shown in the wide layout (the last focused of suspects, dropped,
    /// claims, experiments).
    pub secondary: Pane,
    /// The terminal size.
    pub size: (u16, u16),
    /// The modal, if any.
    pub overlay: Option<Overlay>,
    /// The keys in force.
    pub keymap: Keymap,
    /// The theme in force.
    pub theme: Arc<Theme>,
    /// The status-bar message, if any.
    pub status: Option<StatusLine>,
    /// Messages waiting for the status bar, oldest first.
    pub queued: Vec<StatusLine>,
    /// Timeline state.
    pub timeline: TimelineState,
    /// Suspects state.
    pub suspects: SuspectsState,
    /// Step detail state.
    pub detail: DetailState,
    /// Prepared step details, per (step, width).
    pub detail_cache: DetailCache,
    /// Dropped context state.
    pub dropped: DroppedState,
    /// Claims state.
    pub claims: ClaimsState,
    /// Experiments state.
    pub experiments: ExperimentsState,
    /// The experiments of the file's other runs opened earlier, by position: put back when the
    /// run is opened again (their jobs may still be running and reporting meanwhile).
    pub parked: HashMap<usize, ExperimentsState>,
    /// The search.
    pub search: SearchState,
    /// The judge, when one is configured.
    pub judge: JudgeState,
    /// A one-line prompt being typed (filter, go to), if any.
    pub line: Option<LineEdit>,
    /// The focused pane fills the screen.
    pub zoom: bool,
    /// Problems found at start (config, keymap, theme), all of them, for the warnings list.
    pub problems: Vec<String>,
    /// Where the last frame drew selectable rows (filled by `render`, read by mouse clicks).
    pub hits: std::cell::RefCell<Vec<RowHit>>,
    /// The folder the share key writes to.
    pub share_dir: Option<std::path::PathBuf>,
    /// The pager and the editor a step is opened in.
    pub viewers: Viewers,
    /// `[experiments] max_suspects` (see [`AppOptions::max_suspects`]).
    pub max_suspects: usize,
    /// Mouse support is on.
    pub mouse: bool,
    /// Ticks so far.
    pub tick: u64,
    /// No terminal (`--render`, tests).
    pub headless: bool,
    /// The user asked to leave.
    pub quit: bool,
}

impl App {
    /// A screen for one opened run.
    pub fn new(doc: Document, opts: AppOptions) -> App {
        let mut app = App::empty(opts);
        app.set_document(Arc::new(doc));
        app.show_comparison();
        app
    }

    /// Opens the compare view on the first divergence when the open run was compared with a
    /// good run (`--against`) and nothing else is open over the panes.
    pub fn show_comparison(&mut self) {
        if self.overlay.is_some() {
            return;
        }
        if let Some(view) = self.doc.as_ref().and_then(|d| d.against.as_ref()) {
            self.overlay = Some(Overlay::Compare(super::compare::CompareState::at(
                view.start_row(),
            )));
        }
    }

    /// A screen listing the runs of a file, none opened yet.
    pub fn picker(runs: Vec<RunChoice>, opts: AppOptions) -> App {
        let mut app = App::empty(opts);
        app.picker = Some(PickerState::new(runs));
        app
    }

    fn empty(opts: AppOptions) -> App {
        let mut app = App {
            doc: None,
            picker: None,
            focus: Pane::Timeline,
            secondary: Pane::Suspects,
            size: opts.size,
            overlay: None,
            keymap: opts.keymap,
            theme: opts.theme,
            status: None,
            queued: Vec::new(),
            timeline: TimelineState::default(),
            suspects: SuspectsState::default(),
            detail: DetailState::default(),
            detail_cache: DetailCache::default(),
            dropped: DroppedState::default(),
            claims: ClaimsState::default(),
            experiments: ExperimentsState::default(),
            parked: HashMap::new(),
            search: SearchState::default(),
            judge: JudgeState::default(),
            line: None,
            zoom: false,
            problems: opts.messages.clone(),
            hits: std::cell::RefCell::new(Vec::new()),
            share_dir: opts.share_dir.clone(),
            viewers: opts.viewers.clone(),
            max_suspects: opts.max_suspects,
            mouse: false,
            tick: 0,
            headless: opts.headless,
            quit: false,
        };
        if let Some(first) = opts.messages.first() {
            let more = opts.messages.len() - 1;
            let text = if more == 0 {
                first.clone()
            } else {
                format!(
                    "{first} (and {more} more problem{}: {} lists them all)",
                    if more == 1 { "" } else { "s" },
                    app.key(Action::Warnings)
                )
            };
            app.status = Some(StatusLine {
                text,
                problem: true,
                until: MESSAGE_TICKS,
                startup: true,
            });
        }
        app
    }

    /// The position in the file of the open run (0 for a file of one run).
    pub fn run_index(&self) -> usize {
        self.picker.as_ref().and_then(|p| p.opened).unwrap_or(0)
    }

    /// Shows a new report of the open run (the judge answered): the ranked lists start over on
    /// its top suspect; the experiments, the search and the focus stay.
    pub fn replace_report(&mut self, doc: Arc<Document>) {
        let experiments = std::mem::take(&mut self.experiments);
        let focus = self.focus;
        let search = std::mem::take(&mut self.search);
        self.set_document(doc);
        self.experiments = experiments;
        self.search = search;
        self.focus = focus;
    }

    /// Opens a document: every pane starts over; the top suspect is selected when there is one.
    pub fn set_document(&mut self, doc: Arc<Document>) {
        self.timeline = TimelineState::for_document(&doc);
        self.suspects = SuspectsState::for_document(&doc);
        self.detail = DetailState::default();
        self.detail_cache = DetailCache::default();
        self.dropped = DroppedState::for_document(&doc);
        self.claims = ClaimsState::default();
        // Each run of the file has its own job list, parked while another run is open (its jobs
        // may still report); the consent, the runner and the job numbers are the session's.
        let old = std::mem::take(&mut self.experiments);
        let (left, to) = match &self.picker {
            Some(p) => (p.opened, p.opening.or(p.opened)),
            None => (None, None),
        };
        let (runner_note, runner, consented, last_job) = (
            old.runner_note.clone(),
            old.runner.clone(),
            old.consented,
            old.last_job,
        );
        if let Some(l) = left
            && Some(l) != to
        {
            self.parked.insert(l, old);
        }
        if let Some(back) = to.and_then(|t| self.parked.remove(&t)) {
            self.experiments = back;
        }
        self.experiments.runner_note = runner_note;
        self.experiments.runner = runner;
        self.experiments.consented = consented;
        self.experiments.last_job = last_job;
        self.search = SearchState::default();
        if let Some(p) = &mut self.picker {
            // The list stays, hidden, so the user can go back to it.
            p.visible = false;
            p.filtering = false;
            p.opened = p.opening.take().or(p.opened);
        }
        let has_influence = doc
            .report
            .influence
            .as_ref()
            .is_some_and(|i| !i.scores.is_empty());
        self.focus =
            if doc.report.suspects.is_empty() && doc.report.leads.is_empty() && !has_influence {
                Pane::Timeline
            } else {
                Pane::Suspects
            };
        self.secondary = Pane::Suspects;
        let warnings = doc.report.run.warnings.len();
        self.doc = Some(doc.clone());
        // The timeline starts on the step of the item the suspects pane shows selected (the top
        // suspect, or the first piece of context), so every key acts on what the hint names.
        if let Some(i) = super::panes::suspects::selected(self, &doc)
            .and_then(|it| super::panes::suspects::item_step(&doc, it))
        {
            self.timeline.select_step(&doc, i);
        }
        if warnings > 0 {
            self.problem(format!(
                "the run loaded with {} warning{}: {} lists {}",
                group(warnings),
                if warnings == 1 { "" } else { "s" },
                self.key(Action::Warnings),
                if warnings == 1 { "it" } else { "them" }
            ));
        }
    }

    /// The first key of a command in the scopes of the panes, for sentences ("W lists them");
    /// the command's name when no key is bound to it.
    pub fn key(&self, a: Action) -> String {
        self.keymap
            .first_key(
                &[
                    self.focus.scope(),
                    Scope::Global,
                    Scope::Suspects,
                    Scope::Timeline,
                    Scope::Panes,
                    Scope::Always,
                ],
                &a,
            )
            .unwrap_or_else(|| a.name().to_owned())
    }

    /// The selected step's index, if the run has steps.
    pub fn selected_step(&self) -> Option<usize> {
        self.timeline.selected()
    }

    /// Shows news in the status bar.
    pub fn message(&mut self, text: impl Into<String>) {
        self.push_status(text.into(), false);
    }

    /// Shows a problem in the status bar.
    pub fn problem(&mut self, text: impl Into<String>) {
        self.push_status(text.into(), true);
    }

    fn push_status(&mut self, text: String, problem: bool) {
        let line = StatusLine {
            text,
            problem,
            until: self.tick + MESSAGE_TICKS,
            startup: false,
        };
        // The newest message answers the last key; a start-up message it replaces comes back.
        if let Some(old) = self.status.replace(line)
            && old.startup
        {
            self.queued.insert(0, old);
        }
    }

    /// The run list, when it is on screen.
    pub fn shown_picker(&self) -> Option<&PickerState> {
        self.picker
            .as_ref()
            .filter(|p| p.visible || self.doc.is_none())
    }

    /// The key scopes in force, most specific first.
    pub fn scopes(&self) -> Vec<Scope> {
        let help = vec![Scope::Help, Scope::Panes, Scope::Always];
        if let Some(p) = self.shown_picker() {
            if matches!(self.overlay, Some(Overlay::Help { .. })) {
                return help;
            }
            return if p.filtering {
                vec![Scope::Search, Scope::Always]
            } else {
                vec![Scope::Picker, Scope::Panes, Scope::Always]
            };
        }
        if self.search.active || self.line.is_some() {
            return vec![Scope::Search, Scope::Always];
        }
        match &self.overlay {
            Some(Overlay::Help { typing: true, .. }) => return vec![Scope::Search, Scope::Always],
            Some(Overlay::Help { .. }) => return help,
            Some(Overlay::Warnings { .. }) => {
                return vec![Scope::Warnings, Scope::Panes, Scope::Always];
            }
            Some(Overlay::Confirm(_)) => return vec![Scope::Confirm, Scope::Always],
            Some(Overlay::Prompt(_)) => return vec![Scope::Prompt, Scope::Always],
            Some(Overlay::Viewer { .. }) => {
                return vec![Scope::Viewer, Scope::Panes, Scope::Always];
            }
            Some(Overlay::Compare(_)) => return vec![Scope::Compare, Scope::Panes, Scope::Always],
            Some(Overlay::CompareWith(_)) => {
                return vec![Scope::CompareWith, Scope::Panes, Scope::Always];
            }
            None => {}
        }
        vec![
            self.focus.scope(),
            Scope::Panes,
            Scope::Global,
            Scope::Always,
        ]
    }
}
