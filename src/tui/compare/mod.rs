//! The compare view (docs/screen.md, "Compare with a good run"): a full-screen view over the
//! panes with the good run's and this run's steps side by side, aligned as `diff` aligns them
//! (a gap where a step has no partner), the first divergence marked and selected, and below the
//! selected row's differences and both steps, their texts and JSON arguments diffed word by word.
//! The comparison is made by the analysis ([`crate::analysis::compare::compare`]) when the run
//! is opened against a good one; this module only holds where the view is and draws it.

pub mod render;

use crate::analysis::compare::{Class, Comparison, WordChange};
use crate::analysis::model::Run;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// The good run an opened run was compared with, and the comparison.
#[derive(Debug)]
pub struct AgainstView {
    /// The run that went right.
    pub good: Arc<Run>,
    /// Where it came from (`good.json`, `run 55 of the file`), as the user named it.
    pub label: String,
    /// `compare(good, the open run)`.
    pub comparison: Comparison,
}

impl AgainstView {
    /// The row the view opens on: the first divergence's, else the first.
    pub fn start_row(&self) -> usize {
        self.comparison
            .first_divergence
            .as_ref()
            .map_or(0, |d| d.row)
    }

    /// The next (or previous) row after `row` with a difference in what the runs did or said
    /// (wording only is skipped).
    pub fn step_difference(&self, row: usize, forward: bool) -> Option<usize> {
        if forward {
            self.comparison.next_difference(row, Class::Message)
        } else {
            self.comparison.previous_difference(row, Class::Message)
        }
    }
}

/// Where the compare view is.
#[derive(Debug, Default)]
pub struct CompareState {
    /// The selected row of the alignment.
    pub row: usize,
    /// First row drawn.
    pub offset: Cell<usize>,
    /// The word diff of the two steps of a row, made when the row is first drawn (not again on
    /// every frame).
    pub diffed: RefCell<Option<(usize, Arc<Vec<WordChange>>)>>,
}

impl CompareState {
    /// The view opened on `row`.
    pub fn at(row: usize) -> CompareState {
        CompareState {
            row,
            ..CompareState::default()
        }
    }

    /// The word diff of the selected row, made by `make` the first time it is asked for.
    pub fn diff(&self, make: impl FnOnce() -> Vec<WordChange>) -> Arc<Vec<WordChange>> {
        let mut kept = self.diffed.borrow_mut();
        match kept.as_ref() {
            Some((row, d)) if *row == self.row => d.clone(),
            _ => {
                let d = Arc::new(make());
                *kept = Some((self.row, d.clone()));
                d
            }
        }
    }
}

/// One choice of the run to compare with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgainstChoice {
    /// Another run of the file (a trial of the same task that succeeded).
    Run {
        /// Its position in the file.
        index: usize,
        /// How the list names it.
        label: String,
    },
    /// A file: its path is typed in a prompt.
    File,
}

/// The list of runs to compare the open run with.
#[derive(Debug)]
pub struct ChooserState {
    /// The choices: the trials of the same task that succeeded, then a file.
    pub items: Vec<AgainstChoice>,
    /// The selected choice.
    pub cursor: usize,
    /// What the list is about (the open run's task).
    pub about: String,
}

/// Where the good run comes from, for the effect that compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgainstPick {
    /// The run at this position of the open file.
    Run(usize),
    /// The (only, or first succeeded same-task) run of this file.
    File(String),
}
