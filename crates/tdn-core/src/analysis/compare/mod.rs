//! Comparing a failed run with a good one (docs/compare.md): the two runs' steps aligned by what
//! each did, never by ids or times; the differences of each aligned pair; and the **first
//! divergence**, the first step of the failed run that does something else than the good run at
//! the same point, or that the good run never does.
//!
//! [`compare`] takes two [`Run`]s and gives a [`Comparison`]: plain values that `diff` prints, and
//! that the report and the screen can read (the rows hold step positions, so a reader holding
//! the two runs can show anything about either step). Nothing here prints or touches a terminal;
//! nothing is quadratic in the runs' length (see `align`), and no input makes it panic.

mod align;
mod json;
mod normalize;
mod profile;
mod steps;
mod task;
mod text;
mod words;

#[cfg(test)]
mod tests;

pub use json::ComparisonJson;
pub use normalize::{excerpt, facts, normalize_text};
pub use task::{TaskRuns, task_id, task_runs};
pub use text::render_text;
pub use words::{WordChange, word_diff};

use crate::analysis::model::{Run, Step};
use profile::{Profile, Role};
use rayon::prelude::*;

/// How an aligned row matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// Both runs did the same (ids, times and wording aside).
    Same,
    /// Both runs did a step of this kind here, with the differences listed for the row.
    Changed,
    /// Only the good run did this step.
    OnlyGood,
    /// Only the bad run did this step.
    OnlyBad,
}

impl Match {
    /// The name written in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Match::Same => "same",
            Match::Changed => "changed",
            Match::OnlyGood => "only_good",
            Match::OnlyBad => "only_bad",
        }
    }
}

/// One row of the alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The good run's step (its position), when it has one here.
    pub good: Option<usize>,
    /// The bad run's step, when it has one here.
    pub bad: Option<usize>,
    /// How they matched.
    pub matched: Match,
}

/// What differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Steps of another kind.
    Kind,
    /// Another agent acted.
    Agent,
    /// Another step name.
    Name,
    /// Another tool called (a tool step), or other tools asked for (a model step).
    Tool,
    /// An argument of a call (`key` names it).
    Argument,
    /// The step's own input (a query, a command).
    Input,
    /// What a tool returned.
    ToolResult,
    /// A step's structured output.
    Output,
    /// One step failed, or failed otherwise.
    Error,
    /// Other documents retrieved.
    Document,
    /// Another memory key or value.
    Memory,
    /// Another option chosen.
    Decision,
    /// A message that names other facts.
    Message,
    /// A message in other words, naming the same facts.
    Wording,
    /// The good run did this step here; the bad run did not.
    Skipped,
    /// The bad run did this step here; the good run did not.
    Extra,
    /// The bad run made a call that changes the world without the user's reply that the good run
    /// waited for before the same call.
    SkippedUserTurn,
    /// The runs' final answers.
    FinalAnswer,
}

impl Change {
    /// The name written in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Kind => "kind",
            Change::Agent => "agent",
            Change::Name => "name",
            Change::Tool => "tool",
            Change::Argument => "argument",
            Change::Input => "input",
            Change::ToolResult => "tool_result",
            Change::Output => "output",
            Change::Error => "error",
            Change::Document => "document",
            Change::Memory => "memory",
            Change::Decision => "decision",
            Change::Message => "message",
            Change::Wording => "wording",
            Change::Skipped => "skipped",
            Change::Extra => "extra",
            Change::SkippedUserTurn => "skipped_user_turn",
            Change::FinalAnswer => "final_answer",
        }
    }
}

/// How much a difference weighs in finding where the runs part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The runs did something else: a call, its arguments, what came back, a document, a
    /// decision, a step one run took and the other did not. The first divergence is the first of
    /// these.
    Action,
    /// The runs said something else: a message naming other facts, a message one run sent and the
    /// other did not. The first divergence when no action differs.
    Message,
    /// The same said in other words: listed, never a divergence.
    Wording,
}

impl Class {
    /// The name written in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Action => "action",
            Class::Message => "message",
            Class::Wording => "wording",
        }
    }
}

/// One thing that differs between the runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The row of the alignment it is on (`None` for the final answer, which is the run's).
    pub row: Option<usize>,
    /// The good run's step it is about.
    pub good: Option<usize>,
    /// The bad run's step it is about.
    pub bad: Option<usize>,
    /// What differs.
    pub change: Change,
    /// How much it weighs.
    pub class: Class,
    /// The tool, for an argument of a call.
    pub tool: Option<String>,
    /// Which part: an argument's path (`passengers[0].dob`), the first differing path of a tool
    /// result, a memory key.
    pub key: Option<String>,
    /// The good run's side, short (a value, the facts only it names, the step it took).
    pub good_value: Option<String>,
    /// The bad run's side, short.
    pub bad_value: Option<String>,
    /// The two values list the facts only that side names (a message, a long text argument).
    pub facts: bool,
}

impl Difference {
    fn new(
        row: Option<usize>,
        good: Option<usize>,
        bad: Option<usize>,
        change: Change,
        class: Class,
    ) -> Self {
        Difference {
            row,
            good,
            bad,
            change,
            class,
            tool: None,
            key: None,
            good_value: None,
            bad_value: None,
            facts: false,
        }
    }

    /// The difference in one sentence, about the bad run ("here") against the good one. Run
    /// text in it is as recorded: make it inert before printing.
    pub fn sentence(&self) -> String {
        text::sentence(self)
    }
}

/// Where the runs part: the row, the step of each run there (a step without children), and
/// the difference that makes it a divergence.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The row of the alignment.
    pub row: usize,
    /// The good run's step at that point (`None` when the good run had ended).
    pub good: Option<usize>,
    /// The bad run's step at that point (`None` when the bad run had ended).
    pub bad: Option<usize>,
    /// The position in [`Comparison::differences`] of what differs there.
    pub what: usize,
}

/// Two runs compared: the alignment, every difference, and the first divergence.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The aligned rows, in the order of both runs.
    pub rows: Vec<Row>,
    /// Every difference, in row order, the final answer last.
    pub differences: Vec<Difference>,
    /// Where the bad run first does something else; `None` when the runs do the same thing.
    pub first_divergence: Option<Divergence>,
    good_row: Vec<usize>,
    bad_row: Vec<usize>,
}

impl Comparison {
    /// The row holding the good run's step at `index`.
    pub fn row_of_good(&self, index: usize) -> Option<usize> {
        self.good_row.get(index).copied()
    }

    /// The row holding the bad run's step at `index`.
    pub fn row_of_bad(&self, index: usize) -> Option<usize> {
        self.bad_row.get(index).copied()
    }

    /// The differences on row `row` (a slice of [`Comparison::differences`]).
    pub fn differences_at(&self, row: usize) -> &[Difference] {
        // In row order, the final answer (row `None`) last.
        let lo = self
            .differences
            .partition_point(|d| d.row.is_some_and(|r| r < row));
        let hi = self
            .differences
            .partition_point(|d| d.row.is_some_and(|r| r <= row));
        self.differences.get(lo..hi.max(lo)).unwrap_or_default()
    }

    /// The positions of the next and previous rows after/before `row` that hold a difference of
    /// at least `class` weight (for keys that jump between differences).
    pub fn next_difference(&self, row: usize, class: Class) -> Option<usize> {
        self.differences
            .iter()
            .filter_map(|d| d.row.filter(|&r| r > row && d.class <= class))
            .next()
    }

    /// See [`Comparison::next_difference`].
    pub fn previous_difference(&self, row: usize, class: Class) -> Option<usize> {
        self.differences
            .iter()
            .rev()
            .filter_map(|d| d.row.filter(|&r| r < row && d.class <= class))
            .next()
    }

    /// The first divergence's difference.
    pub fn divergence_difference(&self) -> Option<&Difference> {
        self.first_divergence
            .as_ref()
            .and_then(|d| self.differences.get(d.what))
    }

    /// How many rows matched each way: same, changed, only good, only bad.
    pub fn counts(&self) -> [usize; 4] {
        let mut c = [0; 4];
        for r in &self.rows {
            c[r.matched as usize] += 1;
        }
        c
    }

    /// The JSON of docs/compare.md, for these two runs (the ones compared).
    pub fn json<'a>(&'a self, good: &'a Run, bad: &'a Run) -> ComparisonJson<'a> {
        ComparisonJson::new(self, good, bad)
    }
}

/// Compares `bad` (the failed run) with `good` (one that went right): see the module doc.
pub fn compare(good: &Run, bad: &Run) -> Comparison {
    let (gp, bp) = rayon::join(|| profile::profiles(good), || profile::profiles(bad));
    let pairs = align::align(&gp, &bp);
    let mut good_row = vec![0; good.steps.len()];
    let mut bad_row = vec![0; bad.steps.len()];
    for (r, &(g, b)) in pairs.iter().enumerate() {
        if let Some(slot) = g.and_then(|g| good_row.get_mut(g)) {
            *slot = r;
        }
        if let Some(slot) = b.and_then(|b| bad_row.get_mut(b)) {
            *slot = r;
        }
    }
    // The differences of each row (on the thread pool: comparing texts and JSON is the cost),
    // and a call made without the user's reply the good run waited for.
    let per_row: Vec<Vec<Difference>> = pairs
        .par_iter()
        .enumerate()
        .with_min_len(256)
        .map(|(r, &(g, b))| row_differences(good, bad, &gp, &bp, r, g, b))
        .collect();
    let (good_users, bad_users) = (
        steps::users_since_action(&gp),
        steps::users_since_action(&bp),
    );
    let mut rows: Vec<Row> = Vec::with_capacity(pairs.len());
    let mut differences: Vec<Difference> = Vec::new();
    for (r, (&(g, b), mut found)) in pairs.iter().zip(per_row).enumerate() {
        if let (Some(i), Some(j)) = (g, b)
            && let Some(d) =
                steps::skipped_user_turn(good, bad, &gp, &bp, &good_users, &bad_users, r, i, j)
        {
            found.insert(0, d);
        }
        let matched = match (g, b) {
            (Some(_), Some(_)) if found.is_empty() => Match::Same,
            (Some(_), Some(_)) => Match::Changed,
            (Some(_), None) => Match::OnlyGood,
            _ => Match::OnlyBad,
        };
        rows.push(Row {
            good: g,
            bad: b,
            matched,
        });
        differences.append(&mut found);
    }
    if let Some(d) = steps::final_answer(good, bad) {
        differences.push(d);
    }
    let first_divergence = first_divergence(&rows, &differences, &gp, &bp);
    Comparison {
        rows,
        differences,
        first_divergence,
        good_row,
        bad_row,
    }
}

/// What differs on one row.
fn row_differences(
    good: &Run,
    bad: &Run,
    gp: &[Profile],
    bp: &[Profile],
    row: usize,
    g: Option<usize>,
    b: Option<usize>,
) -> Vec<Difference> {
    match (g, b) {
        (Some(i), Some(j)) => {
            let (Some(x), Some(y), Some(px), Some(py)) =
                (good.steps.get(i), bad.steps.get(j), gp.get(i), bp.get(j))
            else {
                return Vec::new();
            };
            if px.fine == py.fine || px.role == Role::Container || py.role == Role::Container {
                return Vec::new();
            }
            steps::pair_differences(row, i, j, x, y, px, py)
        }
        (Some(i), None) => one_sided(row, good.steps.get(i), gp.get(i), Change::Skipped),
        (None, Some(j)) => one_sided(row, bad.steps.get(j), bp.get(j), Change::Extra),
        (None, None) => Vec::new(),
    }
}

/// The difference a step only one run took makes (none for a container: its children tell).
fn one_sided(
    row: usize,
    step: Option<&Step>,
    p: Option<&Profile>,
    change: Change,
) -> Vec<Difference> {
    let (Some(step), Some(p)) = (step, p) else {
        return Vec::new();
    };
    let class = match p.role {
        Role::Container => return Vec::new(),
        Role::Action => Class::Action,
        Role::Message => Class::Message,
    };
    let summary = Some(steps::summary(step));
    let mut d = if change == Change::Skipped {
        let mut d = Difference::new(Some(row), Some(step.index), None, change, class);
        d.good_value = summary;
        d
    } else {
        let mut d = Difference::new(Some(row), None, Some(step.index), change, class);
        d.bad_value = summary;
        d
    };
    d.tool = p.calls.first().cloned();
    vec![d]
}

/// The first difference of class action (else of class message) on a row, with the steps of
/// each run at that point: a skipped step is met by the bad run's next step, an extra one by the
/// good run's next step (steps without children both).
fn first_divergence(
    rows: &[Row],
    differences: &[Difference],
    gp: &[Profile],
    bp: &[Profile],
) -> Option<Divergence> {
    let pick = |class: Class| {
        differences
            .iter()
            .position(|d| d.class == class && d.row.is_some())
    };
    let what = pick(Class::Action).or_else(|| pick(Class::Message))?;
    let d = differences.get(what)?;
    let row = d.row?;
    let leaf = |p: Option<&Profile>| p.is_some_and(|p| p.role != Role::Container);
    let later = rows.get(row..).unwrap_or_default();
    let good = d.good.or_else(|| {
        later
            .iter()
            .find_map(|r| r.good.filter(|&i| leaf(gp.get(i))))
    });
    let bad = d.bad.or_else(|| {
        later
            .iter()
            .find_map(|r| r.bad.filter(|&j| leaf(bp.get(j))))
    });
    Some(Divergence {
        row,
        good,
        bad,
        what,
    })
}

/// The steps that hold `index` (its parent, the parent's parent, ...), outermost first; at most
/// `64` of them, the nearest kept.
pub fn parents(run: &Run, index: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = run.steps.get(index);
    while let Some(step) = at {
        let Some(p) = step
            .parent
            .as_ref()
            .and_then(|p| run.step_index(p.as_str()))
        else {
            break;
        };
        if p >= step.index || out.len() >= 64 {
            break;
        }
        out.push(p);
        at = run.steps.get(p);
    }
    out.reverse();
    out
}
