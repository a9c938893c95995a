//! The run file a runner is told about (the spec's `run`): always a `tdn.run/1` file, so one
//! runner works on every format (docs/experiments.md, "What your command receives"). For a
//! native run it is the file the run was read from; for an imported trace, the run converted to
//! `tdn.run/1` exactly as `tdn-tui import` writes it, in a private temporary file
//! (`tdn-run-PID-HEX.json`, readable by the user only) made on first use and removed when the
//! subject goes; a sample's supervisor removes it when the debugger is killed outright.

use crate::analysis::import::{self, SourceFormat};
use crate::analysis::load::{parse_document, read_text};
use crate::analysis::model::inert_line;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The start of the name of every converted run a debugger with this pid writes.
pub fn run_file_prefix(pid: u32) -> String {
    format!("tdn-run-{pid}-")
}

/// The run file of one subject.
#[derive(Debug)]
pub struct RunFile {
    source: PathBuf,
    format: SourceFormat,
    run_id: String,
    converted: OnceLock<Result<TempRun, String>>,
}

#[derive(Debug)]
struct TempRun {
    path: PathBuf,
}

impl Drop for TempRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl RunFile {
    /// The run `run_id` read from `source` (an absolute path) in `format`.
    pub fn new(source: PathBuf, format: SourceFormat, run_id: &str) -> RunFile {
        RunFile {
            source,
            format,
            run_id: run_id.to_owned(),
            converted: OnceLock::new(),
        }
    }

    /// A native run file.
    pub fn native(source: PathBuf) -> RunFile {
        RunFile::new(source, SourceFormat::Native, "")
    }

    /// The file the run was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The `tdn.run/1` file a runner gets: the source itself for a native run, else the
    /// converted run (written on first use). Blocking file I/O.
    pub fn for_runner(&self) -> Result<PathBuf, String> {
        if self.format == SourceFormat::Native {
            return Ok(self.source.clone());
        }
        match self.converted.get_or_init(|| self.convert()) {
            Ok(t) => Ok(t.path.clone()),
            Err(e) => Err(e.clone()),
        }
    }

    fn convert(&self) -> Result<TempRun, String> {
        let shown = || inert_line(&self.source.display().to_string()).into_owned();
        let text = read_text(&self.source).map_err(|e| e.to_string())?;
        let doc = parse_document(&text, &self.source).map_err(|e| e.to_string())?;
        let mut runs = import::to_native_values(self.format, doc, None)
            .map_err(|e| format!("{}: {e}", shown()))?;
        let pick = match runs.iter().position(|r| {
            r.value.get("id").and_then(serde_json::Value::as_str) == Some(self.run_id.as_str())
        }) {
            Some(i) => i,
            None if runs.len() == 1 => 0,
            None => {
                return Err(format!(
                    "{}: the run '{}' is not among its {} converted runs",
                    shown(),
                    inert_line(&self.run_id),
                    runs.len()
                ));
            }
        };
        let value = runs.swap_remove(pick).value;
        let json = serde_json::to_vec_pretty(&value).map_err(|e| e.to_string())?;
        write_private(&json).map_err(|e| format!("cannot write the converted run: {e}"))
    }
}

fn write_private(bytes: &[u8]) -> std::io::Result<TempRun> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut r = [0u8; 8];
    getrandom::fill(&mut r).map_err(|e| std::io::Error::other(e.to_string()))?;
    let name: String = r.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!(
        "{}{name}.json",
        run_file_prefix(std::process::id())
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    let t = TempRun { path };
    f.write_all(bytes)?;
    f.write_all(b"\n")?;
    f.flush()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_is_given_converted_and_the_file_goes_with_the_subject() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("chat.json");
        std::fs::write(
            &src,
            r#"[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]"#,
        )
        .unwrap();
        let loaded = crate::analysis::load::load_one(&src, &Default::default()).unwrap();
        assert_ne!(loaded.source_format, SourceFormat::Native);
        let f = RunFile::new(src.clone(), loaded.source_format, &loaded.run.id);
        let path = f.for_runner().unwrap();
        assert_ne!(path, src);
        assert_eq!(f.for_runner().unwrap(), path, "converted once");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["format"], "tdn.run/1");
        assert_eq!(v["id"], loaded.run.id.as_str());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "readable by the user only");
        drop(f);
        assert!(!path.exists(), "removed with the subject");
        let native = RunFile::native(src.clone());
        assert_eq!(native.for_runner().unwrap(), src);
    }
}
