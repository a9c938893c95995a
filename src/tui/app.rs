//! The one state of the screen, [`App`], and the opened [`Document`] (the run, its report and the
//! indexes built once at open so that each frame only looks things up). `update` changes an
//! `App`; `render` reads it. Nothing here does I/O or decides anything about the run.

use super::judge::JudgeState;
use super::keymap::{Keymap, Scope};
use super::overlays::confirm::ConfirmState;
use super::overlays::prompt::PromptState;
use super::overlays::search::SearchState;
use super::panes::claims::ClaimsState;
use super::panes::detail::{DetailCache, DetailState};
use super::panes::dropped::{DroppedRow, DroppedState};
use super::panes::experiments::ExperimentsState;
use super::panes::suspects::SuspectsState;
use super::panes::timeline::TimelineState;
use super::picker::{PickerState, RunChoice};
use super::theme::Theme;
use super::widgets::graph_gutter::Graph;
use super::widgets::inert_text::{clipped, one_line};
use crate::analysis::model::Run;
use crate::analysis::report::Report;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Longest step label kept for the timeline and search, in columns.
const MAX_LABEL_WIDTH: usize = 160;
/// Longest excerpt of a step's text kept for the timeline, in columns.
const MAX_EXCERPT_WIDTH: usize = 120;
/// Bytes of a step's text read to make its excerpt (the rest is never looked at).
const EXCERPT_BYTES: usize = 512;
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

/// An opened run with its report and the look-ups built once.
#[derive(Debug)]
pub struct Document {
    /// The run.
    pub run: Arc<Run>,
    /// Its report: everything the panes show about it.
    pub report: Arc<Report>,
    /// The file the run came from (experiments and the ledger need it).
    pub source: Option<PathBuf>,
    /// Per step: `id kind name @agent`, made inert and clipped (timeline rows and search).
    pub labels: Vec<String>,
    /// Per step: the start of its text (output, else input, else error) on one line, inert and
    /// clipped, shown after the label where there is room; empty when it has none.
    pub excerpts: Vec<String>,
    /// Some step records a duration or tokens (the timeline keeps columns for them).
    pub has_timing: bool,
    /// Per step: nesting depth.
    pub depth: Vec<u16>,
    /// Per step: its parent's index (always an earlier step).
    pub parent: Vec<Option<usize>>,
    /// Per step: some later step names it as `parent`.
    pub has_children: Vec<bool>,
    /// Some step has a parent (the timeline shows fold markers).
    pub nested: bool,
    /// Per step: its position in `report.suspects`.
    pub suspect_of: Vec<Option<usize>>,
    /// Steps in the suspects' shortlist.
    pub shortlisted: HashSet<usize>,
    /// The report's links, indexed for drawing.
    pub graph: Graph,
    /// The rows of the dropped pane.
    pub dropped_rows: Vec<DroppedRow>,
    /// Per step: positions of the loader warnings about it.
    pub warnings_of: HashMap<usize, Vec<usize>>,
}

impl Document {
    /// Builds the look-ups. Report entries that name no step of the run are kept in the report
    /// and simply not marked on the timeline.
    pub fn new(run: Run, report: Report, source: Option<PathBuf>) -> Document {
        let n = run.steps.len();
        let mut depth = vec![0u16; n];
        let mut parent = vec![None; n];
        let mut has_children = vec![false; n];
        let mut labels = Vec::with_capacity(n);
        let mut excerpts = Vec::with_capacity(n);
        let mut has_timing = false;
        for (i, step) in run.steps.iter().enumerate() {
            if let Some(p) = step
                .parent
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
                && p < i
            {
                let d = depth.get(p).copied().unwrap_or(0).saturating_add(1);
                if let Some(slot) = depth.get_mut(i) {
                    *slot = d;
                }
                if let Some(slot) = has_children.get_mut(p) {
                    *slot = true;
                }
                if let Some(slot) = parent.get_mut(i) {
                    *slot = Some(p);
                }
            }
            let name = step
                .name
                .as_deref()
                .or(step.tool.as_ref().map(|t| t.name.as_str()))
                .unwrap_or("");
            let mut label = format!("{} {}", step.id, step.kind_label());
            if !name.is_empty() {
                label.push(' ');
                label.push_str(name);
            }
            if let Some(a) = &step.agent {
                label.push_str(" @");
                label.push_str(a);
            }
            labels.push(clipped(&label, MAX_LABEL_WIDTH).into_owned());
            excerpts.push(step_excerpt(step));
            has_timing |= step.duration_ms().is_some()
                || step
                    .usage
                    .as_ref()
                    .is_some_and(|u| u.input_tokens.is_some() || u.output_tokens.is_some());
        }
        let mut suspect_of = vec![None; n];
        for (pos, s) in report.suspects.iter().enumerate() {
            if let Some(slot) = run.step_index(&s.step).and_then(|i| suspect_of.get_mut(i))
                && slot.is_none()
            {
                *slot = Some(pos);
            }
        }
        let shortlisted = report
            .confidence
            .shortlist
            .iter()
            .filter_map(|id| run.step_index(id))
            .collect();
        let graph = Graph::build(
            n,
            report
                .links
                .iter()
                .filter_map(|l| Some((run.step_index(&l.from)?, run.step_index(&l.to)?))),
        );
        let dropped_rows = DroppedRow::build(&report);
        let mut warnings_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (wi, w) in report.run.warnings.iter().enumerate() {
            if let Some(i) = w.step.as_deref().and_then(|id| run.step_index(id)) {
                warnings_of.entry(i).or_default().push(wi);
            }
        }
        Document {
            run: Arc::new(run),
            report: Arc::new(report),
            source,
            labels,
            excerpts,
            has_timing,
            depth,
            parent,
            nested: has_children.iter().any(|&c| c),
            has_children,
            suspect_of,
            shortlisted,
            graph,
            dropped_rows,
            warnings_of,
        }
    }

    /// The step index of a report's step id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.run.step_index(id)
    }

    /// How a person names the step at `i`: `step 's4' (position 4)`.
    pub fn describe(&self, i: usize) -> String {
        self.run
            .steps
            .get(i)
            .map(|s| s.describe())
            .unwrap_or_else(|| format!("position {}", i + 1))
    }
}

/// The start of what a step said on one line: its output, else its error, else (for a search or
/// a tool call, whose input is its query) its input, when it is text (JSON values are left to the
/// detail pane); whitespace runs become one space. A model step's input is its prompt, not
/// something it said, so it is never shown.
fn step_excerpt(step: &crate::analysis::model::Step) -> String {
    use crate::analysis::model::StepKind;
    fn text_of(v: &Option<serde_json::Value>) -> Option<&str> {
        match v {
            Some(serde_json::Value::String(t)) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        }
    }
    let query = matches!(step.kind, StepKind::Retrieval | StepKind::Tool);
    let text = text_of(&step.output)
        .or(step.error.as_deref())
        .or(if query { text_of(&step.input) } else { None })
        .unwrap_or("");
    if text.is_empty() {
        return String::new();
    }
    one_line(text, EXCERPT_BYTES, MAX_EXCERPT_WIDTH)
}

/// A modal shown over the panes.
#[derive(Debug)]
pub enum Overlay {
    /// The key help.
    Help {
        /// First visible line.
        scroll: usize,
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
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions {
            keymap: Keymap::defaults(),
            theme: Arc::new(Theme::builtin("dark").unwrap_or_else(Theme::bare)),
            messages: Vec::new(),
            headless: true,
            size: (120, 40),
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
        app
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
            mouse: false,
            tick: 0,
            headless: opts.headless,
            quit: false,
        };
        for text in opts.messages {
            let line = StatusLine {
                text,
                problem: true,
                until: MESSAGE_TICKS,
                startup: true,
            };
            if app.status.is_none() {
                app.status = Some(line);
            } else {
                app.queued.push(line);
            }
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
        let (runner_note, consented, last_job) =
            (old.runner_note.clone(), old.consented, old.last_job);
        if let Some(l) = left
            && Some(l) != to
        {
            self.parked.insert(l, old);
        }
        if let Some(back) = to.and_then(|t| self.parked.remove(&t)) {
            self.experiments = back;
        }
        self.experiments.runner_note = runner_note;
        self.experiments.consented = consented;
        self.experiments.last_job = last_job;
        self.search = SearchState::default();
        if let Some(p) = &mut self.picker {
            // The list stays, hidden, so the user can go back to it.
            p.visible = false;
            p.filtering = false;
            p.opened = p.opening.take().or(p.opened);
        }
        let top = doc
            .report
            .suspects
            .first()
            .and_then(|s| doc.index_of(&s.step));
        let has_influence = doc
            .report
            .influence
            .as_ref()
            .is_some_and(|i| !i.scores.is_empty());
        self.focus = if doc.report.suspects.is_empty() && !has_influence {
            Pane::Timeline
        } else {
            Pane::Suspects
        };
        self.secondary = Pane::Suspects;
        let warnings = doc.report.run.warnings.len();
        self.doc = Some(doc.clone());
        if let Some(i) = top {
            self.timeline.select_step(&doc, i);
        }
        if warnings > 0 {
            self.problem(format!(
                "the run loaded with {warnings} warning{}: see the header and the step detail",
                if warnings == 1 { "" } else { "s" }
            ));
        }
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
        if self.search.active {
            return vec![Scope::Search, Scope::Always];
        }
        match &self.overlay {
            Some(Overlay::Help { .. }) => return help,
            Some(Overlay::Confirm(_)) => return vec![Scope::Confirm, Scope::Always],
            Some(Overlay::Prompt(_)) => return vec![Scope::Prompt, Scope::Always],
            Some(Overlay::Viewer { .. }) => {
                return vec![Scope::Viewer, Scope::Panes, Scope::Always];
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
