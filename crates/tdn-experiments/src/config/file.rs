//! Reading `tdn.toml` leniently: a key of the wrong type or an unknown key is a warning and the
//! default is used; only a file that does not parse at all is an error.

use std::path::{Path, PathBuf};

/// A parsed config file.
#[derive(Clone, Debug, Default)]
pub struct ConfigFile {
    /// Where it was read from.
    pub path: Option<PathBuf>,
    /// Its top-level table.
    pub table: toml::Table,
}

impl ConfigFile {
    /// Reads and parses the file.
    pub fn read(path: &Path) -> Result<ConfigFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the config file: {e}", path.display()))?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!("{}: not valid TOML: {}", path.display(), e.message())
        })?;
        Ok(ConfigFile {
            path: Some(path.to_path_buf()),
            table,
        })
    }

    /// `[section] key`, when present.
    pub fn get(&self, section: &str, key: &str) -> Option<&toml::Value> {
        self.table.get(section)?.as_table()?.get(key)
    }
}
