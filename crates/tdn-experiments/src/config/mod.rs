//! Settings, resolved once: flags > environment (`NO_COLOR`, `TDN_*`, `PAGER`, `VISUAL`,
//! `EDITOR`) > `tdn.toml` > defaults.
//!
//! Nothing else in the program reads environment variables or config paths. Every command the
//! tool can run (runner, judge, `cmd:` embedder, `cmd:` flip rule) comes only from here, with the
//! place it came from, so the consent rule of docs/experiments.md can be applied; never from a run.

mod file;
mod paths;
mod programs;
mod reader;
mod rules;
mod settings;

pub use file::ConfigFile;
pub use paths::{ConfigOrigin, user_config_dir};
pub use programs::{ViewerCommand, Viewers};
pub use rules::{
    DEFAULT_FLIP_THRESHOLD, EmbedderChoice, FlipRule, FlipRuleError, parse_embedder, parse_flip,
};
pub use settings::{
    ColorChoice, CommandOrigin, ConfigError, ExperimentSettings, LedgerSettings, Overrides,
    Settings, UiSettings, UserCommand,
};
