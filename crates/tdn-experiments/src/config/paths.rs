//! Where the config file is looked for: `--config PATH`, else `tdn.toml` in the current folder,
//! else `tdn-tui/tdn.toml` in the user's config folder. Only the first found is read, never a file
//! beside a run.

use std::path::{Path, PathBuf};

/// Where the config file in force was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// Named by `--config`.
    Argument,
    /// `tdn.toml` in the current folder: not yet the user's word for running commands.
    CurrentDir,
    /// The user's own config folder.
    UserDir,
}

/// The user's config folder for this tool (`$XDG_CONFIG_HOME/tdn-tui` on Linux), if there is one.
pub fn user_config_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.config_dir().join("tdn-tui"))
}

/// The config file to read, and where it was found.
pub fn find(explicit: Option<&Path>) -> Option<(PathBuf, ConfigOrigin)> {
    if let Some(p) = explicit {
        return Some((p.to_path_buf(), ConfigOrigin::Argument));
    }
    let here = PathBuf::from("tdn.toml");
    if here.is_file() {
        return Some((here, ConfigOrigin::CurrentDir));
    }
    let user = user_config_dir()?.join("tdn.toml");
    user.is_file().then_some((user, ConfigOrigin::UserDir))
}
