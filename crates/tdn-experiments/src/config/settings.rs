//! The resolved [`Settings`]: every option of the tool with the place it came from.

use super::file::ConfigFile;
use super::paths::{self, ConfigOrigin};
use super::programs::Viewers;
use super::reader::Reader;
use super::rules::{
    DEFAULT_FLIP_THRESHOLD, EmbedderChoice, FlipRule, FlipRuleError, parse_embedder, parse_flip,
};
use crate::analysis::cost::Prices;
use crate::analysis::influence::{ConfidenceOptions, Strategy};
use std::path::{Path, PathBuf};

/// Where a command came from; decides whether it may run without asking (docs/experiments.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandOrigin {
    /// Given on the command line: the user's consent.
    CommandLine,
    /// From an environment variable the user set (e.g. `TDN_JUDGE`).
    Environment(&'static str),
    /// From a config file.
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// How it was found.
        origin: ConfigOrigin,
    },
}

/// A shell command the user configured (runner, judge, embedder, flip rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCommand {
    /// The exact text run under `sh -c`; nothing is ever substituted into it.
    pub text: String,
    /// Where it came from.
    pub origin: CommandOrigin,
}

impl UserCommand {
    /// True when the command came from a `tdn.toml` in the current folder, which a repository
    /// someone else wrote may hold: headless commands need `--yes` to run it.
    pub fn needs_consent(&self) -> bool {
        matches!(
            self.origin,
            CommandOrigin::ConfigFile {
                origin: ConfigOrigin::CurrentDir,
                ..
            }
        )
    }

    /// Where it came from, in words.
    pub fn origin_text(&self) -> String {
        match &self.origin {
            CommandOrigin::CommandLine => "the command line".to_owned(),
            CommandOrigin::Environment(var) => format!("the environment variable {var}"),
            CommandOrigin::ConfigFile { path, .. } => path.display().to_string(),
        }
    }
}

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour (modifiers only).
    Never,
}

/// `[experiments]` (influence.md §7).
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentSettings {
    /// Samples per probe as given (resolved as `max(2, floor(x))`, non-finite → 3, by the
    /// experiments layer).
    pub samples: f64,
    /// The flip rule (`[experiments] flip` with `flip_threshold`, `--flip`), or why what was
    /// written is not one (experiments refuse to start on it).
    pub flip: Result<FlipRule, FlipRuleError>,
    /// Most suspects ablated by `localize`.
    pub max_suspects: usize,
    /// Most dropped units restored by `localize`.
    pub max_candidates: usize,
}

/// `[ledger]` (attribution-ledger.md).
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerSettings {
    /// Overrides the place beside the run.
    pub path: Option<PathBuf>,
    /// Effects within ±this are neutral.
    pub neutral_effect: f64,
    /// Token cost from which an effect-less unit is a demotion candidate.
    pub high_token_cost: u64,
    /// Re-ablation cadence in generations.
    pub cadence: u64,
    /// Plateau length that triggers re-ablation.
    pub plateau: u64,
}

/// `[ui]` and the display flags.
#[derive(Clone, Debug, PartialEq)]
pub struct UiSettings {
    /// Theme name or path of a theme file.
    pub theme: Option<String>,
    /// `--color`.
    pub color: ColorChoice,
    /// `NO_COLOR` was set (non-empty).
    pub no_color: bool,
    /// The user's keymap file, when present.
    pub keymap_path: Option<PathBuf>,
    /// Where logs go while the screen is up.
    pub log_path: Option<PathBuf>,
    /// The pager and the editor the screen opens a step in (`O`, `E`).
    pub viewers: Viewers,
}

/// What the command line sets; `None` leaves the lower layers in force.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--config PATH`.
    pub config: Option<PathBuf>,
    /// `--runner CMD`.
    pub runner: Option<String>,
    /// `--timeout S`.
    pub timeout_s: Option<f64>,
    /// `--samples N`.
    pub samples: Option<f64>,
    /// `--flip RULE`.
    pub flip: Option<String>,
    /// `--ledger PATH`.
    pub ledger: Option<PathBuf>,
    /// `--embedder NAME`.
    pub embedder: Option<String>,
    /// `--theme NAME`.
    pub theme: Option<String>,
    /// `--color`.
    pub color: Option<ColorChoice>,
    /// `--yes`: the user consents to commands from a `tdn.toml` in the current folder.
    pub yes: bool,
    /// Read no config file at all (the toolbox commands).
    pub no_config: bool,
}

/// A `--config PATH` that cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Every setting, resolved once.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The config file in force.
    pub config_path: Option<PathBuf>,
    /// How it was found.
    pub config_origin: Option<ConfigOrigin>,
    /// Problems found in the config (reported; defaults used).
    pub warnings: Vec<String>,
    /// `--yes`.
    pub yes: bool,
    /// `--runner` or `[runner] command`.
    pub runner: Option<UserCommand>,
    /// `[runner] timeout_s` / `--timeout` (default 300).
    pub runner_timeout_s: f64,
    /// `[runner] parallel` (default 4).
    pub runner_parallel: usize,
    /// `[runner] runs`: the ids of the runs the configured runner can re-run (`None`: any run).
    /// It belongs to the file's runner: a runner from the command line can re-run any run.
    pub runner_runs: Option<Vec<String>>,
    /// `TDN_JUDGE` or `[judge] command`.
    pub judge: Option<UserCommand>,
    /// `[judge] timeout_s` (default 60).
    pub judge_timeout_s: f64,
    /// `[embedder] name` / `--embedder`: `hashed` (default), `mock`, `lexical` or `cmd:COMMAND`.
    pub embedder: EmbedderChoice,
    /// `[embedder] timeout_s` (default 60).
    pub embedder_timeout_s: f64,
    /// `[confidence]`.
    pub confidence: ConfidenceOptions,
    /// `[experiments]`.
    pub experiments: ExperimentSettings,
    /// `[ledger]`.
    pub ledger: LedgerSettings,
    /// The price table (`[prices."model-name"]` over the built-in one).
    pub prices: Prices,
    /// Display.
    pub ui: UiSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            config_path: None,
            config_origin: None,
            warnings: Vec::new(),
            yes: false,
            runner: None,
            runner_timeout_s: 300.0,
            runner_parallel: 4,
            runner_runs: None,
            judge: None,
            judge_timeout_s: 60.0,
            embedder: EmbedderChoice::Hashed,
            embedder_timeout_s: 60.0,
            confidence: ConfidenceOptions::default(),
            experiments: ExperimentSettings {
                samples: 3.0,
                flip: Ok(FlipRule::default()),
                max_suspects: 5,
                max_candidates: 5,
            },
            ledger: LedgerSettings {
                path: None,
                neutral_effect: 0.0,
                high_token_cost: 256,
                cadence: 5,
                plateau: 3,
            },
            prices: Prices::built_in(),
            ui: UiSettings {
                theme: None,
                color: ColorChoice::Auto,
                no_color: false,
                keymap_path: None,
                log_path: None,
                viewers: Viewers::default(),
            },
        }
    }
}

/// The process environment as the settings see it (a seam for tests).
pub trait Env {
    /// The variable's value, when set and valid UTF-8.
    fn var(&self, name: &str) -> Option<String>;
}

struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Settings {
    /// Resolves flags > environment > config file > defaults.
    pub fn resolve(o: &Overrides) -> Result<Settings, ConfigError> {
        Self::resolve_with(o, &ProcessEnv, paths::find(o.config.as_deref()))
    }

    /// [`Settings::resolve`] with an explicit environment and config location (tests).
    pub fn resolve_with(
        o: &Overrides,
        env: &dyn Env,
        found: Option<(PathBuf, ConfigOrigin)>,
    ) -> Result<Settings, ConfigError> {
        let mut s = Settings {
            yes: o.yes,
            ..Settings::default()
        };
        let found = if o.no_config { None } else { found };
        let mut flip = WrittenFlip {
            rule: "similarity".to_owned(),
            origin: CommandOrigin::CommandLine,
            threshold: DEFAULT_FLIP_THRESHOLD,
        };
        if let Some((path, origin)) = found {
            match ConfigFile::read(&path) {
                Ok(file) => {
                    s.config_path = Some(path.clone());
                    s.config_origin = Some(origin.clone());
                    s.apply_file(&file, &path, &origin, &mut flip);
                }
                Err(e) if origin == ConfigOrigin::Argument => return Err(ConfigError(e)),
                Err(e) => s.warnings.push(format!("{e}; the defaults are used")),
            }
        }
        s.apply_env(env);
        s.apply_overrides(o, &mut flip);
        let WrittenFlip {
            rule,
            origin,
            threshold,
        } = flip;
        s.experiments.flip = parse_flip(&rule, threshold, |text| UserCommand { text, origin });
        s.ui.keymap_path = paths::user_config_dir()
            .map(|d| d.join("keymap.toml"))
            .filter(|p| p.is_file());
        Ok(s)
    }

    fn apply_file(
        &mut self,
        f: &ConfigFile,
        path: &Path,
        origin: &ConfigOrigin,
        flip: &mut WrittenFlip,
    ) {
        let from_file = CommandOrigin::ConfigFile {
            path: path.to_path_buf(),
            origin: origin.clone(),
        };
        let cmd = |text: String| UserCommand {
            text,
            origin: from_file.clone(),
        };
        let mut warnings = Vec::new();
        let mut r = Reader {
            file: f,
            warnings: &mut warnings,
        };
        r.check_known();
        if let Some(t) = r.string("runner", "command") {
            self.runner = Some(cmd(t));
        }
        if let Some(runs) = r.strings("runner", "runs") {
            self.runner_runs = Some(runs);
        }
        if let Some(x) = r.positive("runner", "timeout_s") {
            self.runner_timeout_s = x;
        }
        if let Some(n) = r.count("runner", "parallel").filter(|&n| n > 0) {
            self.runner_parallel = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(t) = r.string("judge", "command") {
            self.judge = Some(cmd(t));
        }
        if let Some(x) = r.positive("judge", "timeout_s") {
            self.judge_timeout_s = x;
        }
        if let Some(name) = r.string("embedder", "name") {
            match parse_embedder(&name, cmd) {
                Ok(e) => self.embedder = e,
                Err(e) => r.warn(format!(
                    "[embedder] name: {e}; the default hashed embedder is used"
                )),
            }
        }
        if let Some(x) = r.positive("embedder", "timeout_s") {
            self.embedder_timeout_s = x;
        }
        if let Some(text) = r.string("confidence", "strategy") {
            match parse_strategy(&text) {
                Ok(st) => self.confidence.strategy = st,
                Err(e) => r.warn(format!(
                    "[confidence] strategy: {e}; the default margin:0.05 is used"
                )),
            }
        }
        if let Some(b) = r.number("confidence", "band") {
            if b >= 0.0 {
                self.confidence.band = b;
            } else {
                r.warn(format!(
                    "[confidence] band = {b} must be >= 0; the default 0.1 is used"
                ));
            }
        }
        if let Some(x) = r.number("experiments", "samples") {
            self.experiments.samples = x;
        }
        if let Some(rule) = r.string("experiments", "flip") {
            flip.rule = rule;
            flip.origin = from_file.clone();
        }
        if let Some(x) = r.number("experiments", "flip_threshold") {
            flip.threshold = x;
        }
        if let Some(n) = r.count("experiments", "max_suspects") {
            self.experiments.max_suspects = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = r.count("experiments", "max_candidates") {
            self.experiments.max_candidates = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(p) = r.string("ledger", "path") {
            self.ledger.path = Some(PathBuf::from(p));
        }
        if let Some(x) = r.number("ledger", "neutral_effect") {
            if x.is_finite() && x >= 0.0 {
                self.ledger.neutral_effect = x;
            } else {
                r.warn(
                    "[ledger] neutral_effect must be a finite number >= 0; the default 0 is used"
                        .to_owned(),
                );
            }
        }
        if let Some(n) = r.count("ledger", "high_token_cost") {
            self.ledger.high_token_cost = n;
        }
        if let Some(n) = r.count("ledger", "cadence") {
            self.ledger.cadence = n;
        }
        if let Some(n) = r.count("ledger", "plateau") {
            self.ledger.plateau = n;
        }
        r.prices(&mut self.prices);
        if let Some(t) = r.string("ui", "theme") {
            self.ui.theme = Some(t);
        }
        if let Some(t) = r.string("ui", "log") {
            self.ui.log_path = Some(PathBuf::from(t));
        }
        self.warnings.append(&mut warnings);
    }

    fn apply_env(&mut self, env: &dyn Env) {
        if let Some(j) = env.var("TDN_JUDGE").filter(|j| !j.trim().is_empty()) {
            self.judge = Some(UserCommand {
                text: j,
                origin: CommandOrigin::Environment("TDN_JUDGE"),
            });
        }
        if env.var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            self.ui.no_color = true;
        }
        if let Some(p) = env.var("TDN_LOG").filter(|p| !p.is_empty()) {
            self.ui.log_path = Some(PathBuf::from(p));
        }
        self.ui.viewers = Viewers::from_env(env);
    }

    fn apply_overrides(&mut self, o: &Overrides, flip: &mut WrittenFlip) {
        let line = |text: String| UserCommand {
            text,
            origin: CommandOrigin::CommandLine,
        };
        if let Some(r) = &o.runner {
            self.runner = Some(line(r.clone()));
            // The file's list of runs described the file's runner.
            self.runner_runs = None;
        }
        if let Some(t) = o.timeout_s {
            self.runner_timeout_s = t;
        }
        if let Some(n) = o.samples {
            self.experiments.samples = n;
        }
        if let Some(f) = &o.flip {
            flip.rule.clone_from(f);
            flip.origin = CommandOrigin::CommandLine;
        }
        if let Some(p) = &o.ledger {
            self.ledger.path = Some(p.clone());
        }
        if let Some(e) = &o.embedder {
            match parse_embedder(e, line) {
                Ok(e) => self.embedder = e,
                Err(e) => self.warnings.push(format!(
                    "--embedder: {e}; the default hashed embedder is used"
                )),
            }
        }
        if let Some(t) = &o.theme {
            self.ui.theme = Some(t.clone());
        }
        if let Some(c) = o.color {
            self.ui.color = c;
        }
    }

    /// Every configured command with a name for it, for consent checks and the screen's prompt.
    pub fn commands(&self) -> Vec<(&'static str, &UserCommand)> {
        let mut out = Vec::new();
        if let Some(c) = &self.runner {
            out.push(("runner", c));
        }
        if let Some(c) = &self.judge {
            out.push(("judge", c));
        }
        if let Some(c) = self.embedder.command() {
            out.push(("embedder", c));
        }
        if let Ok(FlipRule::Command(c)) = &self.experiments.flip {
            out.push(("flip rule", c));
        }
        out
    }
}

/// A flip rule as written, collected from the file and the flags before it is parsed once.
struct WrittenFlip {
    rule: String,
    origin: CommandOrigin,
    threshold: f64,
}

/// Parses `margin:T` or `ratio:T` (T >= 0, as in influence.md §5).
pub fn parse_strategy(text: &str) -> Result<Strategy, String> {
    let (kind, t) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}' is not margin:T or ratio:T"))?;
    let t: f64 = t
        .trim()
        .parse()
        .map_err(|_| format!("'{t}' is not a number"))?;
    if t.is_nan() || t < 0.0 {
        return Err(format!("the strategy threshold {t} must be >= 0"));
    }
    match kind.trim() {
        "margin" => Ok(Strategy::Margin(t)),
        "ratio" => Ok(Strategy::Ratio(t)),
        other => Err(format!("'{other}' is not margin or ratio")),
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
