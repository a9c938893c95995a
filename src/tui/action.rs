//! Every change the screen can undergo, as one [`Action`] enum: the commands a key can be bound
//! to (unit variants, each with a kebab-case [`Action::name`] used in keymap.toml and a one-line
//! [`Action::doc`] shown in the help overlay) and the internal messages that arrive from effects,
//! the terminal and the experiment runner. Holds no state and does no I/O.

use super::app::Document;
use super::overlays::search::SearchHits;
use super::panes::detail::DetailDoc;
use crate::analysis::model::StepId;
use crate::experiments::engine::{EngineError, Plan, Request, RunEvidence};
use crate::experiments::event::Event;
use std::sync::Arc;

/// A command or message for [`super::update::update`].
#[derive(Clone, Debug)]
pub enum Action {
    // ---- bindable commands ----
    /// Leave the debugger.
    Quit,
    /// Suspend to the shell (`fg` to come back).
    Suspend,
    /// Show or hide the key help.
    Help,
    /// Close the overlay or clear the search.
    Back,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Focus the timeline.
    FocusTimeline,
    /// Focus the suspects.
    FocusSuspects,
    /// Focus the step detail.
    FocusDetail,
    /// Focus the dropped context.
    FocusDropped,
    /// Focus the claims.
    FocusClaims,
    /// Focus the experiments.
    FocusExperiments,
    /// Move down one row.
    MoveDown,
    /// Move up one row.
    MoveUp,
    /// Move down one page.
    PageDown,
    /// Move up one page.
    PageUp,
    /// Go to the first row.
    Top,
    /// Go to the last row.
    Bottom,
    /// Select the next suspect and show its step.
    NextSuspect,
    /// Select the previous suspect and show its step.
    PrevSuspect,
    /// Fold the selected step's children (or go to its parent).
    Collapse,
    /// Unfold the selected step's children.
    Expand,
    /// Fold or unfold the selected step.
    ToggleFold,
    /// Show the selected item's step in the timeline and detail.
    JumpToStep,
    /// Jump to the claim's evidence step.
    JumpEvidence,
    /// Jump to the claim's origin step.
    JumpOrigin,
    /// Open the selected step full-screen.
    OpenViewer,
    /// Copy the selected step's output to the clipboard.
    CopyOutput,
    /// Copy the selected step, as JSON, to the clipboard.
    CopyStep,
    /// Search steps (fuzzy).
    Search,
    /// Go to the next search match.
    SearchNext,
    /// Go to the previous search match.
    SearchPrev,
    /// Accept the search and keep the selection.
    SearchAccept,
    /// Delete the last search character.
    SearchBackspace,
    /// Re-run without the selected suspect or unit (ablation).
    Ablate,
    /// Ablate each member of the shortlist, one at a time.
    AblateShortlist,
    /// Re-run with the selected dropped unit put back (restoration).
    Restore,
    /// Re-run from the selected step (replay).
    Replay,
    /// Re-run from the selected step with a patch: the output it should have produced.
    ReplayPatched,
    /// Run the whole pipeline: baseline, ablate the top suspects, restore dropped units.
    Localize,
    /// Cancel the selected running experiment.
    Cancel,
    /// Aggregate the ledger's batches left open by a session that ended before closing them.
    Aggregate,
    /// Run the replay with the typed patch.
    PromptAccept,
    /// Delete a character of the patch.
    PromptBackspace,
    /// Go ahead with the shown command.
    ConfirmYes,
    /// Do not run it.
    ConfirmNo,
    /// Open the selected run of the file.
    PickRun,
    /// Show the list of the file's runs again.
    RunList,
    /// Switch the suspects pane between the ranked steps and the context-influence ranking.
    ToggleInfluence,
    /// Turn mouse support on or off.
    ToggleMouse,
    /// Ask the configured judge about the open run (pressed twice: the first press shows the
    /// command).
    AskJudge,
    /// Say whether the open run's answer was right (succeeded and failed in turn) and analyse it
    /// again.
    SetOutcome,
    /// Filter the timeline (failed steps, suspects, a kind, an agent, text).
    Filter,
    /// Sort the timeline by position, duration or tokens, in turn.
    Sort,
    /// Go to a step by its position or id.
    GoTo,
    /// Show the timeline's steps on the run's clock (a waterfall), or not.
    Waterfall,
    /// Show the focused pane on the whole screen, or back.
    Zoom,
    /// List the run's loader warnings and the start-up problems.
    Warnings,
    /// Open the selected step in `$PAGER`.
    OpenPager,
    /// Open the selected step in `$EDITOR`.
    OpenEditor,
    /// Read the run's file again.
    Reload,
    /// Write the diagnosis as Markdown to a file, to share it.
    Share,
    /// Show the open run beside a good run (the compare view), or pick one.
    Compare,
    /// Pick another run to compare with.
    CompareWith,
    /// Compare view: the next row where the runs differ.
    NextDifference,
    /// Compare view: the previous row where the runs differ.
    PrevDifference,

    // ---- internal messages ----
    /// Show this step in the timeline and detail.
    JumpTo(StepId),
    /// A character typed into the search prompt.
    SearchInput(char),
    /// A character typed into the patch prompt.
    PromptInput(char),
    /// Search results for a query.
    SearchResults(Arc<SearchHits>),
    /// The terminal's new size.
    Resize(u16, u16),
    /// Time passes (spinners, message expiry).
    Tick,
    /// A prepared step detail for the cache.
    DetailReady(Arc<DetailDoc>),
    /// A run chosen in the picker, analysed.
    Opened(Arc<Document>),
    /// Opening a run of the file failed: why.
    OpenFailed(String),
    /// A message for the status bar.
    Message(String),
    /// A problem for the status bar.
    Problem(String),
    /// Progress of an experiment job, from the engine.
    Experiment(Arc<Event>),
    /// What the run's ledger holds, or why it could not be read.
    LedgerLoaded(Arc<Result<RunEvidence, EngineError>>),
    /// What a request would run (or why it cannot), from the engine.
    Planned(Arc<(Request, Result<Plan, EngineError>)>),
    /// A mouse wheel turn (positive: down) at a column and row.
    Scroll(i8, u16, u16),
    /// A mouse click at a column and row.
    Click(u16, u16),
    /// The steps a timeline filter keeps (for the query typed), or why it is not understood.
    FilterResults(String, Result<Arc<SearchHits>, String>),
    /// The run's file changed since it was read (checked on the tick).
    FileChanged,
    /// The run's file, read and analysed again (the position in the file it is about).
    Reloaded(usize, Arc<Document>),
    /// An external program (pager, editor) ended: what to say.
    ExternalDone(Result<String, String>),
    /// The run at this position of the file analysed again with the judge's answer.
    Judged(usize, Arc<Document>),
    /// The run at this position could not be analysed again with the judge: why.
    JudgeFailed(usize, String),
    /// The run at this position analysed again with the outcome the user set.
    OutcomeSet(usize, Arc<Document>),
    /// The run at this position could not be analysed again with the outcome set: why.
    OutcomeFailed(usize, String),
    /// The run at this position analysed against a good run (its document holds the comparison).
    Compared(usize, Arc<Document>),
    /// No comparison could be made: why.
    CompareFailed(String),
}

impl Action {
    /// Every bindable command, in help order.
    pub const BINDABLE: &[Action] = &[
        Action::Quit,
        Action::Suspend,
        Action::Help,
        Action::Back,
        Action::FocusNext,
        Action::FocusPrev,
        Action::FocusTimeline,
        Action::FocusSuspects,
        Action::FocusDetail,
        Action::FocusDropped,
        Action::FocusClaims,
        Action::FocusExperiments,
        Action::MoveDown,
        Action::MoveUp,
        Action::PageDown,
        Action::PageUp,
        Action::Top,
        Action::Bottom,
        Action::NextSuspect,
        Action::PrevSuspect,
        Action::Collapse,
        Action::Expand,
        Action::ToggleFold,
        Action::JumpToStep,
        Action::JumpEvidence,
        Action::JumpOrigin,
        Action::OpenViewer,
        Action::CopyOutput,
        Action::CopyStep,
        Action::Search,
        Action::SearchNext,
        Action::SearchPrev,
        Action::SearchAccept,
        Action::SearchBackspace,
        Action::Ablate,
        Action::AblateShortlist,
        Action::Restore,
        Action::Replay,
        Action::ReplayPatched,
        Action::Localize,
        Action::Cancel,
        Action::Aggregate,
        Action::PromptAccept,
        Action::PromptBackspace,
        Action::ConfirmYes,
        Action::ConfirmNo,
        Action::PickRun,
        Action::RunList,
        Action::ToggleInfluence,
        Action::ToggleMouse,
        Action::AskJudge,
        Action::SetOutcome,
        Action::Filter,
        Action::Sort,
        Action::GoTo,
        Action::Waterfall,
        Action::Zoom,
        Action::Warnings,
        Action::OpenPager,
        Action::OpenEditor,
        Action::Reload,
        Action::Share,
        Action::Compare,
        Action::CompareWith,
        Action::NextDifference,
        Action::PrevDifference,
    ];

    /// The command's name in keymap.toml and the help overlay.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Suspend => "suspend",
            Action::Help => "help",
            Action::Back => "back",
            Action::FocusNext => "focus-next",
            Action::FocusPrev => "focus-prev",
            Action::FocusTimeline => "focus-timeline",
            Action::FocusSuspects => "focus-suspects",
            Action::FocusDetail => "focus-detail",
            Action::FocusDropped => "focus-dropped",
            Action::FocusClaims => "focus-claims",
            Action::FocusExperiments => "focus-experiments",
            Action::MoveDown => "move-down",
            Action::MoveUp => "move-up",
            Action::PageDown => "page-down",
            Action::PageUp => "page-up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::NextSuspect => "next-suspect",
            Action::PrevSuspect => "prev-suspect",
            Action::Collapse => "collapse",
            Action::Expand => "expand",
            Action::ToggleFold => "toggle-fold",
            Action::JumpToStep => "jump-to-step",
            Action::JumpEvidence => "jump-evidence",
            Action::JumpOrigin => "jump-origin",
            Action::OpenViewer => "open-viewer",
            Action::CopyOutput => "copy-output",
            Action::CopyStep => "copy-step",
            Action::Search => "search",
            Action::SearchNext => "search-next",
            Action::SearchPrev => "search-prev",
            Action::SearchAccept => "search-accept",
            Action::SearchBackspace => "search-backspace",
            Action::Ablate => "ablate",
            Action::AblateShortlist => "ablate-shortlist",
            Action::Restore => "restore",
            Action::Replay => "replay",
            Action::ReplayPatched => "replay-patched",
            Action::Localize => "localize",
            Action::Cancel => "cancel",
            Action::Aggregate => "aggregate",
            Action::PromptAccept => "prompt-accept",
            Action::PromptBackspace => "prompt-backspace",
            Action::ConfirmYes => "confirm-yes",
            Action::ConfirmNo => "confirm-no",
            Action::PickRun => "pick-run",
            Action::RunList => "run-list",
            Action::ToggleInfluence => "toggle-influence",
            Action::ToggleMouse => "toggle-mouse",
            Action::AskJudge => "ask-judge",
            Action::SetOutcome => "set-outcome",
            Action::Filter => "filter",
            Action::Sort => "sort",
            Action::GoTo => "go-to",
            Action::Waterfall => "waterfall",
            Action::Zoom => "zoom",
            Action::Warnings => "warnings",
            Action::OpenPager => "open-pager",
            Action::OpenEditor => "open-editor",
            Action::Reload => "reload",
            Action::Share => "share",
            Action::Compare => "compare",
            Action::CompareWith => "compare-with",
            Action::NextDifference => "next-difference",
            Action::PrevDifference => "prev-difference",
            Action::JumpTo(_) => "jump-to",
            Action::SearchInput(_) => "search-input",
            Action::PromptInput(_) => "prompt-input",
            Action::SearchResults(_) => "search-results",
            Action::Resize(..) => "resize",
            Action::Tick => "tick",
            Action::DetailReady(_) => "detail-ready",
            Action::Opened(_) => "opened",
            Action::OpenFailed(_) => "open-failed",
            Action::Message(_) => "message",
            Action::Problem(_) => "problem",
            Action::Experiment(_) => "experiment-event",
            Action::LedgerLoaded(_) => "ledger-loaded",
            Action::Planned(_) => "planned",
            Action::Scroll(..) => "scroll",
            Action::Click(..) => "click",
            Action::FilterResults(..) => "filter-results",
            Action::FileChanged => "file-changed",
            Action::Reloaded(..) => "reloaded",
            Action::ExternalDone(_) => "external-done",
            Action::Judged(..) => "judged",
            Action::JudgeFailed(..) => "judge-failed",
            Action::OutcomeSet(..) => "outcome-set",
            Action::OutcomeFailed(..) => "outcome-failed",
            Action::Compared(..) => "compared",
            Action::CompareFailed(_) => "compare-failed",
        }
    }

    /// A few words for the status-bar hints (the help shows [`Action::doc`] too).
    pub fn label(&self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Suspend => "suspend",
            Action::Help => "help",
            Action::Back => "back",
            Action::FocusNext => "next pane",
            Action::FocusPrev => "previous pane",
            Action::FocusTimeline => "timeline",
            Action::FocusSuspects => "suspects",
            Action::FocusDetail => "step detail",
            Action::FocusDropped => "dropped context",
            Action::FocusClaims => "claims",
            Action::FocusExperiments => "experiments",
            Action::MoveDown => "down",
            Action::MoveUp => "up",
            Action::PageDown => "page down",
            Action::PageUp => "page up",
            Action::Top => "first",
            Action::Bottom => "last",
            Action::NextSuspect => "next suspect",
            Action::PrevSuspect => "previous suspect",
            Action::Collapse => "fold",
            Action::Expand => "unfold",
            Action::ToggleFold => "fold/unfold",
            Action::JumpToStep => "show step",
            Action::JumpEvidence => "evidence step",
            Action::JumpOrigin => "origin step",
            Action::OpenViewer => "full step",
            Action::CopyOutput => "copy output",
            Action::CopyStep => "copy step",
            Action::Search => "search",
            Action::SearchNext => "next match",
            Action::SearchPrev => "previous match",
            Action::SearchAccept => "keep",
            Action::SearchBackspace => "delete",
            Action::Ablate => "ablate",
            Action::AblateShortlist => "ablate shortlist",
            Action::Restore => "restore",
            Action::Replay => "replay",
            Action::ReplayPatched => "replay patched",
            Action::Localize => "localize",
            Action::Cancel => "cancel job",
            Action::Aggregate => "aggregate",
            Action::PromptAccept => "replay",
            Action::PromptBackspace => "delete",
            Action::ConfirmYes => "run it",
            Action::ConfirmNo => "do not run",
            Action::PickRun => "open run",
            Action::RunList => "run list",
            Action::ToggleInfluence => "switch list",
            Action::ToggleMouse => "mouse",
            Action::AskJudge => "ask the judge",
            Action::SetOutcome => "outcome",
            Action::Filter => "filter",
            Action::Sort => "sort",
            Action::GoTo => "go to step",
            Action::Waterfall => "waterfall",
            Action::Zoom => "zoom",
            Action::Warnings => "warnings",
            Action::OpenPager => "pager",
            Action::OpenEditor => "editor",
            Action::Reload => "reload",
            Action::Share => "share",
            Action::Compare => "compare",
            Action::CompareWith => "compare with",
            Action::NextDifference => "next difference",
            Action::PrevDifference => "previous difference",
            other => other.name(),
        }
    }

    /// One line saying what the command does.
    pub fn doc(&self) -> &'static str {
        match self {
            Action::Quit => "leave the debugger",
            Action::Suspend => "suspend to the shell (fg brings it back)",
            Action::Help => "show or hide this help",
            Action::Back => {
                "close what is open: a prompt, an overlay, the zoom, the search's matches, the filter"
            }
            Action::FocusNext => "focus the next pane",
            Action::FocusPrev => "focus the previous pane",
            Action::FocusTimeline => "focus the timeline",
            Action::FocusSuspects => "focus the suspects",
            Action::FocusDetail => "focus the step detail",
            Action::FocusDropped => "focus the dropped context",
            Action::FocusClaims => "focus the claims",
            Action::FocusExperiments => "focus the experiments",
            Action::MoveDown => "move down",
            Action::MoveUp => "move up",
            Action::PageDown => "move down a page",
            Action::PageUp => "move up a page",
            Action::Top => "go to the first row",
            Action::Bottom => "go to the last row",
            Action::NextSuspect => "next suspect: select it and show its step",
            Action::PrevSuspect => "previous suspect: select it and show its step",
            Action::Collapse => "fold the step's children, or go to its parent",
            Action::Expand => "unfold the step's children",
            Action::ToggleFold => "fold or unfold the step",
            Action::JumpToStep => "show the selected item's step",
            Action::JumpEvidence => "jump to the claim's evidence step",
            Action::JumpOrigin => "jump to the claim's origin step",
            Action::OpenViewer => "open the selected step full-screen (Esc comes back)",
            Action::CopyOutput => "copy the step's output to the clipboard",
            Action::CopyStep => "copy the whole step, as JSON, to the clipboard",
            Action::Search => {
                "search the steps: labels fuzzily, content as typed (in the help: its lines)"
            }
            Action::SearchNext => "next search match",
            Action::SearchPrev => "previous search match",
            Action::SearchAccept => "keep the match selected",
            Action::SearchBackspace => "delete a character",
            Action::Ablate => "re-run without the selected suspect or unit (ablation)",
            Action::AblateShortlist => "ablate each shortlisted suspect, one at a time",
            Action::Restore => "re-run with the selected dropped unit put back",
            Action::Replay => "re-run from the selected step (replay)",
            Action::ReplayPatched => {
                "replay from the selected step with a patch: type the output it should give"
            }
            Action::Localize => "baseline, ablate the top suspects, restore dropped units",
            Action::Cancel => "cancel the selected running experiment",
            Action::Aggregate => {
                "aggregate the ledger's batches left open by a session that is gone"
            }
            Action::PromptAccept => "replay with the typed patch",
            Action::PromptBackspace => "delete a character",
            Action::ConfirmYes => "run it",
            Action::ConfirmNo => "do not run it",
            Action::PickRun => "open the selected run",
            Action::RunList => "back to the list of the file's runs",
            Action::ToggleInfluence => {
                "suspects pane: switch between the ranked steps and the context influence"
            }
            Action::ToggleMouse => "turn mouse support on or off",
            Action::AskJudge => {
                "ask the configured judge which step to blame (press twice: the first shows the command)"
            }
            Action::SetOutcome => {
                "say whether the run's answer was right: succeeded (no verdict, no fault) or failed, in turn; the run is analysed again"
            }
            Action::Filter => {
                "filter the timeline: is:failed, is:suspect, kind:KIND, agent:NAME or text in the steps"
            }
            Action::Sort => "sort the timeline by position, duration or tokens, in turn",
            Action::GoTo => "go to a step: type its position or its id",
            Action::Waterfall => "show the steps as bars on the run's clock (waterfall), or not",
            Action::Zoom => "show the focused pane on the whole screen, or back",
            Action::Warnings => "list the run's warnings and the start-up problems",
            Action::OpenPager => "open the selected step in $PAGER (less)",
            Action::OpenEditor => "open the selected step in $EDITOR (vi)",
            Action::Reload => "read the run's file again (done by itself when it changes)",
            Action::Share => "write the diagnosis as Markdown to a file, to paste into a bug",
            Action::Compare => {
                "compare the run with one that went right: the two side by side, where they part first"
            }
            Action::CompareWith => {
                "pick the run to compare with: a trial of the same task that succeeded, or a file"
            }
            Action::NextDifference => "compare view: the next row where the runs differ",
            Action::PrevDifference => "compare view: the previous row where the runs differ",
            Action::JumpTo(_) => "show a step",
            Action::SearchInput(_) => "type into the search",
            Action::PromptInput(_) => "type into the patch prompt",
            Action::SearchResults(_) => "search results",
            Action::Resize(..) => "the terminal was resized",
            Action::Tick => "time passes",
            Action::DetailReady(_) => "a step detail is ready",
            Action::Opened(_) => "a run was opened",
            Action::OpenFailed(_) => "a run could not be opened",
            Action::Message(_) => "a status message",
            Action::Problem(_) => "a problem to report",
            Action::Experiment(_) => "experiment progress",
            Action::LedgerLoaded(_) => "the ledger's earlier trials",
            Action::Planned(_) => "a plan to confirm",
            Action::Scroll(..) => "mouse wheel",
            Action::Click(..) => "mouse click",
            Action::FilterResults(..) => "the steps a filter keeps",
            Action::FileChanged => "the run's file changed",
            Action::Reloaded(..) => "the run's file was read again",
            Action::ExternalDone(_) => "a pager or editor ended",
            Action::Judged(..) => "the judge answered",
            Action::JudgeFailed(..) => "the judge could not be asked",
            Action::OutcomeSet(..) => "the run was analysed again with the outcome set",
            Action::OutcomeFailed(..) => "the outcome could not be set",
            Action::Compared(..) => "the run was compared with a good run",
            Action::CompareFailed(_) => "the runs could not be compared",
        }
    }

    /// The bindable command with this name.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::BINDABLE.iter().find(|a| a.name() == name).cloned()
    }

    /// True for the commands a key can be bound to.
    pub fn is_bindable(&self) -> bool {
        Action::BINDABLE.iter().any(|a| a.name() == self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for a in Action::BINDABLE {
            let n = a.name();
            assert!(seen.insert(n), "'{n}' twice");
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{n}");
            assert_eq!(Action::from_name(n).map(|b| b.name()), Some(n));
            assert!(!a.doc().is_empty());
            assert!(
                a.label() != n || !n.contains('-'),
                "'{n}' has no words for the hints"
            );
        }
        assert!(
            Action::from_name("jump-to").is_none(),
            "internal messages are not bindable"
        );
    }
}
