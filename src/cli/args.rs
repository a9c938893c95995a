//! The command line, as clap types. Their doc comments are the `--help` text. Nothing here runs
//! anything: `cli::run` turns these into library calls.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// A terminal debugger for AI-agent runs: which step, which piece of context, caused this?
///
/// `tdn-tui RUN` opens the recording in a full-screen debugger. The subcommands do the same work
/// from scripts and CI.
#[derive(Debug, Parser)]
#[command(
    name = "tdn-tui",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; without one, open RUN in the debugger.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The screen's options (when no subcommand is given).
    #[command(flatten)]
    pub open: OpenArgs,
}

/// Options every command that reads a config accepts.
#[derive(Debug, Args, Clone, Default)]
pub struct ConfigArgs {
    /// Read this config file instead of ./tdn.toml or the user's tdn-tui/tdn.toml.
    #[arg(long, value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,
    /// Allow commands (runner, judge, embedder, flip rule) from a tdn.toml in the current folder.
    #[arg(long, global = true)]
    pub yes: bool,
}

/// Which run of a file, and in which format.
#[derive(Debug, Args, Clone, Default)]
pub struct InputArgs {
    /// Read the file as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_parser = clap::builder::PossibleValuesParser::new(crate::analysis::import::SourceFormat::NAMES))]
    pub from: Option<String>,
    /// For a file holding several runs: the 0-based position of the one to use.
    #[arg(long, value_name = "N")]
    pub index: Option<usize>,
}

/// Which reference answer is in force.
#[derive(Debug, Args, Clone, Default)]
pub struct ReferenceArgs {
    /// Use this text as the known-good answer (turns on contrastive scoring).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["reference_file", "no_reference"])]
    pub reference: Option<String>,
    /// Read the known-good answer from this file.
    #[arg(long, value_name = "F", conflicts_with = "no_reference")]
    pub reference_file: Option<PathBuf>,
    /// Ignore the run's reference answer.
    #[arg(long)]
    pub no_reference: bool,
}

/// What the analysis of a run reads besides the file: which run and format, which reference
/// answer, and the outcome when the recording does not say.
#[derive(Debug, Args, Clone, Default)]
pub struct AnalysisArgs {
    /// Which run and format.
    #[command(flatten)]
    pub input: InputArgs,
    /// Which reference answer.
    #[command(flatten)]
    pub reference: ReferenceArgs,
    /// The outcome, when the recording does not say.
    #[command(flatten)]
    pub outcome: OutcomeArgs,
}

/// A good run to compare with (`--against`).
#[derive(Debug, Args, Clone, Default)]
pub struct AgainstArgs {
    /// Compare with this run that went right (any format tdn-tui reads): where the runs first
    /// part is ranking evidence, and its final answer the influence reference unless --reference
    /// is given (docs/compare.md).
    #[arg(long, value_name = "GOOD")]
    pub against: Option<PathBuf>,
    /// For a GOOD file holding several runs: the 0-based position of the good run (default: the
    /// first run of the same task that succeeded).
    #[arg(long, value_name = "N", requires = "against")]
    pub against_index: Option<usize>,
}

/// The outcome the user states.
#[derive(Debug, Args, Clone, Default)]
pub struct OutcomeArgs {
    /// Whether the run's answer was right, when the recording does not say (or says wrong):
    /// failed or succeeded. A run that succeeded gets no verdict and no fault.
    #[arg(long, value_enum, value_name = "O")]
    pub outcome: Option<OutcomeArg>,
}

/// `--outcome`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutcomeArg {
    /// The answer was wrong: diagnose it.
    Failed,
    /// The answer was right: no verdict, no fault.
    Succeeded,
}

/// `tdn-tui RUN`: the screen.
#[derive(Debug, Args, Clone, Default)]
pub struct OpenArgs {
    /// The recorded run (tdn.run/1, OTLP JSON, Langfuse, Who&When or τ-bench).
    #[arg(value_name = "RUN")]
    pub run: Option<PathBuf>,
    /// Which run, which reference answer, which outcome.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// A good run to compare with.
    #[command(flatten)]
    pub against: AgainstArgs,
    /// Theme: dark, light, mono, or the path of a theme file.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// When to use colour.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<Color>,
    /// The runner command for experiments (the user's consent to run it).
    #[arg(long, value_name = "CMD")]
    pub runner: Option<String>,
    /// Render headless at this size (e.g. 120x40), print the final screen as text, and exit.
    #[arg(long, value_name = "WxH")]
    pub render: Option<String>,
    /// With --render: keys to press first, e.g. "j j Enter ? q" (names as in the help overlay).
    #[arg(long, value_name = "KEYS", requires = "render")]
    pub keys: Option<String>,
    /// Show this saved report (what 'tdn-tui analyze RUN --json' printed for the same file)
    /// instead of analysing the run again.
    #[arg(long, value_name = "REPORT")]
    pub report: Option<PathBuf>,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `--color`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Color {
    /// Colour on a terminal unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a run file against the run format; print one line per warning.
    Validate(ValidateArgs),
    /// Diagnose a run: top suspect with evidence, fault, claims (or the JSON report).
    Analyze(AnalyzeArgs),
    /// Convert a trace (OTLP, span rows, Langfuse, Phoenix, OpenAI Agents, ATIF, chat messages,
    /// ...) to tdn.run/1; --from lists every format.
    Import(ImportArgs),
    /// Measure step and agent accuracy on labelled runs, beside the baselines a guess reaches.
    Eval(EvalArgs),
    /// Compare a failed run with a good one: their steps aligned by what each did, the first
    /// step where the failed run does something else, and every difference.
    Diff(DiffArgs),
    /// Re-run the agent without a unit, with a dropped unit restored, or from a step.
    Experiment(ExperimentArgs),
    /// The whole pipeline: rank, baseline, ablate the top suspects, restore dropped units.
    Localize(LocalizeArgs),
    /// Read, verify and plan from an attribution ledger.
    Ledger(LedgerArgs),
    /// Ranking confidence of a list of scores (JSON in, JSON out).
    Confidence(ConfidenceArgs),
    /// Score evidence by influence on an answer (JSON in, JSON out).
    Influence(InfluenceArgs),
    /// Context that was available but never sent (JSON in, JSON out).
    Dropped(DroppedArgs),
    /// Built-in runners for experiments (`--runner "tdn-tui runner chat"`).
    Runner(BuiltInRunnerArgs),
}

/// `runner`.
#[derive(Debug, Args)]
pub struct BuiltInRunnerArgs {
    /// Which runner.
    #[command(subcommand)]
    pub kind: RunnerKind,
}

/// `runner chat`.
#[derive(Debug, Subcommand)]
pub enum RunnerKind {
    /// Re-send the run's recorded model call (its unit cut out, or put back) to an
    /// OpenAI-compatible endpoint: TDN_CHAT_URL (base URL ending in /v1), TDN_CHAT_KEY (else
    /// OPENAI_API_KEY), TDN_CHAT_MODEL (else the recorded model). Reads the experiment on stdin
    /// (or $TDN_SPEC_FILE); prints the reply in the runner protocol (docs/experiments.md).
    Chat,
}

/// `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The run file.
    pub run: PathBuf,
    /// Which run and format.
    #[command(flatten)]
    pub input: InputArgs,
}

/// `analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The run file.
    pub run: PathBuf,
    /// Print the JSON report (docs/report.md) instead of text (the same as --format json): one
    /// line of JSON per run, so a file holding several runs prints JSON lines.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// text (for people), json (docs/report.md) or markdown (to paste into a bug, with the
    /// verdicts the run's ledger holds).
    #[arg(long, value_enum, value_name = "F")]
    pub format: Option<ReportFormat>,
    /// Which run, which reference answer, which outcome.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// A good run to compare with.
    #[command(flatten)]
    pub against: AgainstArgs,
    /// Embedder for the influence ranking: hashed, mock, lexical or cmd:COMMAND.
    #[arg(long, value_name = "E")]
    pub embedder: Option<String>,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// How `analyze` prints the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For people.
    Text,
    /// One line of JSON per run (docs/report.md).
    Json,
    /// Markdown to paste into a bug.
    Markdown,
}

/// `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The trace to convert.
    #[arg(value_name = "IN")]
    pub input_path: PathBuf,
    /// Where to write the tdn.run/1 file.
    #[arg(short, long, value_name = "OUT.json")]
    pub output: PathBuf,
    /// Which run and format.
    #[command(flatten)]
    pub input: InputArgs,
}

/// `eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Labelled run files or folders of them; a folder holding `traces/` and `annotations/` is
    /// one set of traces labelled by the annotation file of the same name.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Ignore the runs' reference answers.
    #[arg(long)]
    pub no_reference: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Also print each rule's precision per set.
    #[arg(long)]
    pub rules: bool,
    /// Labels for runs without inline labels: a JSON file ({"file name": {"step": N or [N, ...],
    /// "agent": "..."}}), or a folder of annotation files ({"errors": [{"location": step id}]})
    /// each labelling the run file of the same name. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub labels: Vec<PathBuf>,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run that went right; with --task, the file holding the task's runs.
    #[arg(value_name = "GOOD")]
    pub good: PathBuf,
    /// The run that went wrong.
    #[arg(value_name = "BAD", required_unless_present = "task")]
    pub bad: Option<PathBuf>,
    /// Print the comparison as JSON (docs/compare.md) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Compare a failed run of this task with a succeeded one, both from the file GOOD (runs
    /// name their task as τ-bench results do).
    #[arg(long, value_name = "ID", conflicts_with_all = ["bad", "index"])]
    pub task: Option<String>,
    /// For files holding several runs: the 0-based position of the run to use in each.
    #[arg(long, value_name = "N")]
    pub index: Option<usize>,
    /// The position of the good run in its file (instead of --index; with --task, instead of the
    /// first run of the task that succeeded).
    #[arg(long, value_name = "N")]
    pub good_index: Option<usize>,
    /// The position of the bad run in its file (instead of --index; with --task, instead of the
    /// first run of the task that failed).
    #[arg(long, value_name = "N")]
    pub bad_index: Option<usize>,
    /// Read the files as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_parser = clap::builder::PossibleValuesParser::new(crate::analysis::import::SourceFormat::NAMES))]
    pub from: Option<String>,
}

/// What one `experiment` changes.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct ExperimentKind {
    /// Leave out these units (together, in one probe).
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub ablate: Vec<String>,
    /// Put these dropped units back (together, in one probe).
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub restore: Vec<String>,
    /// Re-run from this step, earlier steps from the recording.
    #[arg(long, value_name = "STEP")]
    pub replay: Option<String>,
    /// Only the baseline: change nothing.
    #[arg(long)]
    pub baseline: bool,
}

/// Options shared by `experiment` and `localize`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunnerArgs {
    /// The shell command that re-runs the agent (`sh -c`); the user's consent to run it.
    #[arg(long, value_name = "CMD")]
    pub runner: Option<String>,
    /// Samples per probe (at least 2).
    #[arg(long, value_name = "N")]
    pub samples: Option<f64>,
    /// Seconds before a sample is killed.
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
    /// How a flip is decided: similarity, exact, contains:TEXT or cmd:COMMAND.
    #[arg(long, value_name = "RULE")]
    pub flip: Option<String>,
    /// The attribution ledger (default: beside the run).
    #[arg(long, value_name = "PATH")]
    pub ledger: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `experiment`.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// The run file.
    pub run: PathBuf,
    /// What to change.
    #[command(flatten)]
    pub kind: ExperimentKind,
    /// With --replay: the output the replayed step should produce.
    #[arg(
        long,
        value_name = "TEXT",
        requires = "replay",
        conflicts_with = "patch_file"
    )]
    pub patch: Option<String>,
    /// With --replay: read that output from a file.
    #[arg(long, value_name = "F", requires = "replay")]
    pub patch_file: Option<PathBuf>,
    /// Runner options.
    #[command(flatten)]
    pub runner: RunnerArgs,
    /// Which run and format.
    #[command(flatten)]
    pub input: InputArgs,
    /// The outcome, when the recording does not say.
    #[command(flatten)]
    pub outcome: OutcomeArgs,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `localize`.
#[derive(Debug, Args)]
pub struct LocalizeArgs {
    /// The run file.
    pub run: PathBuf,
    /// Runner options.
    #[command(flatten)]
    pub runner: RunnerArgs,
    /// Which run, which reference answer, which outcome.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `ledger`.
#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// What to do with the ledger.
    #[command(subcommand)]
    pub action: LedgerAction,
}

/// `ledger show|verify|plan|select`.
#[derive(Debug, Subcommand)]
pub enum LedgerAction {
    /// List the records in file order.
    Show(LedgerPathArgs),
    /// Recompute every bound field; exit 1 on any record that does not reconstruct.
    Verify(LedgerPathArgs),
    /// Choose which conclusions to re-test under a budget of runner calls.
    Plan(LedgerPlanArgs),
    /// Say which units of the current bundle a prompt could drop.
    Select(LedgerSelectArgs),
}

/// `ledger show|verify`.
#[derive(Debug, Args)]
pub struct LedgerPathArgs {
    /// The ledger file.
    pub path: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `ledger plan`.
#[derive(Debug, Args)]
pub struct LedgerPlanArgs {
    /// The ledger file.
    pub path: PathBuf,
    /// The most runner calls to spend.
    #[arg(long, value_name = "N")]
    pub budget: u64,
    /// Take the current bundle from this run.
    #[arg(long, value_name = "RUN")]
    pub run: Option<PathBuf>,
    /// Samples per re-ablation.
    #[arg(long, value_name = "K")]
    pub samples: Option<u64>,
    /// Re-ablate every C generations.
    #[arg(long, value_name = "C")]
    pub cadence: Option<u64>,
    /// Re-ablate after P generations without improvement.
    #[arg(long, value_name = "P")]
    pub plateau: Option<u64>,
    /// The epoch to trust, the output, config and consent.
    #[command(flatten)]
    pub read: LedgerReadArgs,
}

/// `ledger select`.
#[derive(Debug, Args)]
pub struct LedgerSelectArgs {
    /// The ledger file.
    pub path: PathBuf,
    /// Take the current bundle from this run.
    #[arg(long, value_name = "RUN")]
    pub run: Option<PathBuf>,
    /// The epoch to trust, the output, config and consent.
    #[command(flatten)]
    pub read: LedgerReadArgs,
}

/// How `ledger plan` and `ledger select` read the ledger and answer.
#[derive(Debug, Args)]
pub struct LedgerReadArgs {
    /// The evaluator epoch to trust.
    #[arg(long, value_name = "E")]
    pub epoch: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Config and consent.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `--margin T | --ratio T`, `--band B`, read as text so `-1` and `Infinity` reach validation.
#[derive(Debug, Args, Clone, Default)]
pub struct StrategyArgs {
    /// Clear winner when top minus runner-up is at least T (default 0.05).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub margin: Option<String>,
    /// Clear winner when (top - runner-up) / |top| is at least T.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub ratio: Option<String>,
    /// Shortlist every score within B of the top (default 0.1).
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub band: Option<String>,
}

/// `confidence`.
#[derive(Debug, Args)]
pub struct ConfidenceArgs {
    /// JSON input (stdin when absent or -).
    pub file: Option<PathBuf>,
    /// The clear-winner rule and shortlist band.
    #[command(flatten)]
    pub strategy: StrategyArgs,
}

/// `influence`.
#[derive(Debug, Args)]
pub struct InfluenceArgs {
    /// JSON input (stdin when absent or -).
    pub file: Option<PathBuf>,
    /// semantic, lexical or contrastive (default: contrastive when a reference is given).
    #[arg(long, value_name = "S")]
    pub scorer: Option<String>,
    /// mock, lexical, hashed (default) or cmd:COMMAND.
    #[arg(long, value_name = "E")]
    pub embedder: Option<String>,
    /// The clear-winner rule and shortlist band.
    #[command(flatten)]
    pub strategy: StrategyArgs,
}

/// `dropped`.
#[derive(Debug, Args)]
pub struct DroppedArgs {
    /// JSON input (stdin when absent or -).
    pub file: Option<PathBuf>,
}
