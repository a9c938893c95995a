//! Lenient typed reads from `tdn.toml`: a key of the wrong type or an unknown key becomes a
//! warning naming the file and key, and the caller keeps its default.

use super::file::ConfigFile;
use crate::analysis::cost::{Price, Prices};

const KNOWN: &[(&str, &[&str])] = &[
    ("runner", &["command", "timeout_s", "parallel", "runs"]),
    ("judge", &["command", "timeout_s"]),
    ("embedder", &["name", "timeout_s"]),
    ("confidence", &["strategy", "band"]),
    (
        "experiments",
        &[
            "samples",
            "flip",
            "flip_threshold",
            "max_suspects",
            "max_candidates",
        ],
    ),
    (
        "ledger",
        &[
            "path",
            "neutral_effect",
            "high_token_cost",
            "cadence",
            "plateau",
        ],
    ),
    ("ui", &["theme", "log"]),
];

/// Reads typed values from a config file, turning every misfit into a warning.
pub(super) struct Reader<'a> {
    pub(super) file: &'a ConfigFile,
    pub(super) warnings: &'a mut Vec<String>,
}

impl Reader<'_> {
    fn where_(&self) -> String {
        self.file
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "config".to_owned())
    }

    pub(super) fn warn(&mut self, msg: String) {
        let w = format!("{}: {msg}", self.where_());
        self.warnings.push(w);
    }

    pub(super) fn check_known(&mut self) {
        let mut unknown = Vec::new();
        for (section, v) in &self.file.table {
            // `[prices."model-name"]`: any name; read (and checked) by `prices`.
            if section == "prices" {
                continue;
            }
            match KNOWN.iter().find(|(s, _)| s == section) {
                None => unknown.push(format!("[{section}]")),
                Some((_, keys)) => {
                    if let Some(t) = v.as_table() {
                        for k in t.keys() {
                            if !keys.contains(&k.as_str()) {
                                unknown.push(format!("[{section}] {k}"));
                            }
                        }
                    } else {
                        unknown.push(format!("{section} (not a section)"));
                    }
                }
            }
        }
        for u in unknown {
            self.warn(format!("unknown setting {u} was ignored"));
        }
    }

    pub(super) fn string(&mut self, section: &str, key: &str) -> Option<String> {
        match self.file.get(section, key)? {
            toml::Value::String(s) => Some(s.clone()),
            _ => {
                self.warn(format!(
                    "[{section}] {key} must be a string; the default is used"
                ));
                None
            }
        }
    }

    pub(super) fn strings(&mut self, section: &str, key: &str) -> Option<Vec<String>> {
        let v = self.file.get(section, key)?;
        let list = v.as_array().and_then(|a| {
            a.iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        });
        if list.is_none() {
            self.warn(format!(
                "[{section}] {key} must be a list of strings; the default is used"
            ));
        }
        list
    }

    pub(super) fn number(&mut self, section: &str, key: &str) -> Option<f64> {
        match self.file.get(section, key)? {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => {
                self.warn(format!(
                    "[{section}] {key} must be a number; the default is used"
                ));
                None
            }
        }
    }

    pub(super) fn positive(&mut self, section: &str, key: &str) -> Option<f64> {
        let x = self.number(section, key)?;
        if x.is_finite() && x > 0.0 {
            Some(x)
        } else {
            self.warn(format!(
                "[{section}] {key} must be a positive number; the default is used"
            ));
            None
        }
    }

    pub(super) fn count(&mut self, section: &str, key: &str) -> Option<u64> {
        match self.file.get(section, key)? {
            toml::Value::Integer(i) if *i >= 0 => u64::try_from(*i).ok(),
            _ => {
                self.warn(format!(
                    "[{section}] {key} must be a non-negative integer; the default is used"
                ));
                None
            }
        }
    }

    /// `[prices."model-name"] input_per_mtok = .., output_per_mtok = ..`: each entry whose two
    /// prices are numbers >= 0 is set in `prices`; any other is a warning and left out.
    pub(super) fn prices(&mut self, prices: &mut Prices) {
        let Some(v) = self.file.table.get("prices") else {
            return;
        };
        let Some(t) = v.as_table() else {
            self.warn("prices (not a section) was ignored".to_owned());
            return;
        };
        for (name, entry) in t {
            let number = |k: &str| {
                match entry.get(k) {
                    Some(toml::Value::Float(f)) => Some(*f),
                    Some(toml::Value::Integer(i)) => Some(*i as f64),
                    _ => None,
                }
                .filter(|x| x.is_finite() && *x >= 0.0)
            };
            let unknown: Vec<&str> = entry
                .as_table()
                .map(|e| {
                    e.keys()
                        .map(String::as_str)
                        .filter(|k| !matches!(*k, "input_per_mtok" | "output_per_mtok"))
                        .collect()
                })
                .unwrap_or_default();
            for k in unknown {
                self.warn(format!(
                    "unknown setting [prices.\"{name}\"] {k} was ignored"
                ));
            }
            match (number("input_per_mtok"), number("output_per_mtok")) {
                (Some(i), Some(o)) if !name.trim().is_empty() => prices.set(
                    name,
                    Price {
                        input_per_mtok: i,
                        output_per_mtok: o,
                    },
                ),
                _ => self.warn(format!(
                    "[prices.\"{name}\"] needs input_per_mtok and output_per_mtok, numbers of dollars per million tokens >= 0; the entry was ignored"
                )),
            }
        }
    }
}
