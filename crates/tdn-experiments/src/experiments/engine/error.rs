//! Why the engine will not run something: typed, with the value at fault, in words free of
//! command-line flags. The command line and the screen add their own hint of how to fix it (a
//! flag, a key) by matching on the variant; the rule itself is said here once.

use crate::analysis::model::inert_line;
use crate::config::FlipRuleError;
use std::path::PathBuf;

/// The most samples per probe a session takes. Each sample is one run of the user's agent, so
/// more is never a real budget; a larger count is refused instead of reserving room for every
/// sample's result up front.
pub const MAX_SAMPLES: usize = 10_000;

/// Why an experiment cannot be planned, started or read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// No runner command is configured.
    #[error(
        "no runner: no command is configured to re-run your agent (see docs/experiments.md, \"Configuring a runner\")"
    )]
    NoRunner,
    /// A command from a `tdn.toml` in the current folder, not yet agreed to.
    #[error(
        "the {what} command '{}' comes from '{origin}' in the current folder, which anyone who wrote this folder could have put there",
        inert_line(command)
    )]
    NeedsConsent {
        /// `runner`, `flip rule`, `embedder` or `judge`.
        what: &'static str,
        /// The command.
        command: String,
        /// The file it came from.
        origin: String,
    },
    /// The runner's time-out is not a usable number of seconds.
    #[error("the runner time-out '{0}' must be a positive number of seconds, at most 4294967295")]
    Timeout(f64),
    /// More samples per probe than any budget.
    #[error(
        "{asked} samples per probe asks for more than {MAX_SAMPLES} runs of your agent per probe"
    )]
    TooManySamples {
        /// The count as given.
        asked: f64,
    },
    /// The flip rule does not parse.
    #[error(transparent)]
    FlipRule(#[from] FlipRuleError),
    /// No run is open (the screen before a run is chosen).
    #[error("no run is open")]
    NoRun,
    /// The run records no final answer to compare a re-run with.
    #[error(
        "run '{}' records no final_answer, so a re-run has nothing to be compared with; record the agent's final answer in the run",
        inert_line(run)
    )]
    NoFinalAnswer {
        /// The run's id.
        run: String,
    },
    /// The runner is configured to re-run only some runs (`[runner] runs`), not this one.
    #[error(
        "the runner re-runs only {}, not run '{}'",
        covered(runs),
        inert_line(run)
    )]
    NotCovered {
        /// The run's id.
        run: String,
        /// The runs it re-runs.
        runs: Vec<String>,
    },
    /// The request names something the run cannot test.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The ledger cannot take the samples (not a ledger, another run's, not writable, locked).
    #[error("{}: cannot use the attribution ledger: {why}", path.display())]
    Ledger {
        /// The ledger.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The imported run could not be converted to the `tdn.run/1` file a runner is given.
    #[error("cannot give the runner the run as tdn.run/1: {0}")]
    RunFile(String),
    /// No engine here (tests, benchmarks): why.
    #[error("experiments are not available: {0}")]
    Unavailable(String),
    /// The runtime or the random source failed, or a job's task died.
    #[error("the experiment stopped: {0}")]
    Stopped(String),
}

/// `run 'a'`, `runs 'a', 'b' and 'c'`, `4 named runs`: the runs a runner covers, in words.
pub fn covered(runs: &[String]) -> String {
    let q = |r: &String| format!("'{}'", inert_line(r));
    match runs {
        [] => "no run".to_owned(),
        [one] => format!("run {}", q(one)),
        [a, b] => format!("runs {} and {}", q(a), q(b)),
        [a, b, c] => format!("runs {}, {} and {}", q(a), q(b), q(c)),
        many => format!("{} named runs", many.len()),
    }
}

/// What the run cannot test, by id. The ids are run text: printed inert.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Not a unit, and not a step, of the run.
    #[error("'{}': the run has no context unit or step with that id", inert_line(.0))]
    NoUnitOrStep(String),
    /// Not a unit of the run.
    #[error(
        "'{}': the run has no context unit with that id; name a unit listed in its context_units",
        inert_line(.0)
    )]
    NoUnit(String),
    /// Not a step of the run.
    #[error("'{}': the run has no step with that id", inert_line(.0))]
    NoStep(String),
    /// A step with no unit to remove.
    #[error(
        "step '{}' produced no context unit, so ablating it removes nothing; it can only be replayed",
        inert_line(.0)
    )]
    NothingProduced(String),
    /// An empty list to ablate or restore.
    #[error("nothing to {0}: the list is empty")]
    Empty(&'static str),
    /// `localize` on a report with nothing to remove or restore.
    #[error(
        "nothing to localize: no ranked piece of context has a unit to remove, and nothing was dropped"
    )]
    NothingToLocalize,
}
