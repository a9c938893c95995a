//! The shell runner of docs/experiments.md: the user's command under `sh -c` in the current
//! folder, in its own process group, with the experiment as JSON on stdin, in a private temporary
//! file named by `$TDN_SPEC_FILE`, and flattened into `TDN_*` environment variables.
//!
//! The command comes only from `--runner` or the user's config (`config::UserCommand`), never
//! from a run file, and nothing is substituted into it.
//!
//! The spec file is removed when its sample ends, however it ends (an answer, an error, a
//! time-out, a cancel, or the sample's future dropped). When the debugger dies before it can (a
//! SIGKILL), the sample's supervisor removes it ([`remove_orphaned_spec_file`]).

use super::{Cancel, MAX_STDOUT, Runner, STDERR_TAIL, SampleError, SampleErrorKind, SampleRun};
use crate::experiments::process::{GroupCommand, GroupError, run_group};
use crate::experiments::spec::ExperimentSpec;
use futures_util::future::BoxFuture;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs the user's command once per sample.
#[derive(Clone, Debug)]
pub struct ShellRunner {
    command: String,
    timeout: Duration,
    max_stdout: usize,
}

impl ShellRunner {
    /// A runner for `command` with this time-out per sample.
    pub fn new(command: impl Into<String>, timeout: Duration) -> Self {
        ShellRunner {
            command: command.into(),
            timeout,
            max_stdout: MAX_STDOUT,
        }
    }

    /// The environment a sample gets besides [`SPEC_FILE_VAR`] (ids comma-separated; the JSON is
    /// authoritative for an id holding a comma).
    pub fn spec_env(spec: &ExperimentSpec) -> Vec<(String, String)> {
        vec![
            ("TDN_RUN".to_owned(), spec.run.clone()),
            (
                "TDN_SOURCE".to_owned(),
                spec.source.clone().unwrap_or_else(|| spec.run.clone()),
            ),
            ("TDN_RUN_ID".to_owned(), spec.run_id.clone()),
            ("TDN_SEED".to_owned(), spec.seed.to_string()),
            ("TDN_SAMPLE".to_owned(), spec.sample.to_string()),
            (
                "TDN_EXPERIMENT".to_owned(),
                spec.experiment.as_str().to_owned(),
            ),
            ("TDN_REMOVE".to_owned(), spec.remove.join(",")),
            ("TDN_RESTORE".to_owned(), spec.restore.join(",")),
            (
                "TDN_FROM_STEP".to_owned(),
                spec.from_step.clone().unwrap_or_default(),
            ),
        ]
    }

    async fn run_one(&self, spec: &ExperimentSpec, cancel: &Cancel) -> SampleRun {
        let json = serde_json::to_vec(spec).map_err(|e| SampleError {
            kind: SampleErrorKind::Spawn,
            message: format!("cannot write the experiment as JSON: {e}"),
            stderr_tail: String::new(),
        })?;
        let spec_file = SpecFile::write(&json).await.map_err(|e| SampleError {
            kind: SampleErrorKind::Spawn,
            message: format!("cannot write the experiment to a temporary file: {e}"),
            stderr_tail: String::new(),
        })?;
        let mut env = Self::spec_env(spec);
        env.push((
            crate::experiments::chat::TIMEOUT_VAR.to_owned(),
            self.timeout.as_secs_f64().to_string(),
        ));
        env.push((
            SPEC_FILE_VAR.to_owned(),
            spec_file.path.display().to_string(),
        ));
        let cmd = GroupCommand {
            command: self.command.clone(),
            stdin: json,
            env,
            timeout: self.timeout,
            max_stdout: self.max_stdout,
            stderr_tail: STDERR_TAIL,
        };
        let out = run_group(&cmd, cancel)
            .await
            .map_err(|e| group_error(&e, &self.command))?;
        drop(spec_file);
        if out.code != Some(0) {
            let how = match (out.code, out.signal) {
                (Some(c), _) => format!("exited with status {c}"),
                (None, Some(s)) => format!("was killed by signal {s}"),
                (None, None) => "ended without an exit status".to_owned(),
            };
            return Err(SampleError {
                kind: SampleErrorKind::Exit,
                message: format!("the runner '{}' {how}", self.command),
                stderr_tail: out.stderr_tail,
            });
        }
        super::parse_answer(&out.stdout).map_err(|why| SampleError {
            kind: SampleErrorKind::Unreadable,
            message: format!("the runner's answer cannot be read: {why}"),
            stderr_tail: out.stderr_tail,
        })
    }
}

fn group_error(e: &GroupError, command: &str) -> SampleError {
    let kind = match e {
        GroupError::Spawn(_) | GroupError::Wait(_) => SampleErrorKind::Spawn,
        GroupError::TimedOut { .. } => SampleErrorKind::TimedOut,
        GroupError::TooMuchOutput { .. } => SampleErrorKind::TooMuchOutput,
        GroupError::Cancelled { .. } => SampleErrorKind::Cancelled,
    };
    let hint = match kind {
        SampleErrorKind::TimedOut => "; raise --timeout or [runner] timeout_s if it needs longer",
        _ => "",
    };
    SampleError {
        kind,
        message: format!("the runner '{command}' {e}{hint}"),
        stderr_tail: e.stderr_tail().to_owned(),
    }
}

impl Runner for ShellRunner {
    fn command(&self) -> &str {
        &self.command
    }

    fn run<'a>(&'a self, spec: &'a ExperimentSpec, cancel: &'a Cancel) -> BoxFuture<'a, SampleRun> {
        Box::pin(self.run_one(spec, cancel))
    }
}

/// The variable naming a sample's spec file.
pub const SPEC_FILE_VAR: &str = "TDN_SPEC_FILE";

/// The start of the name of every spec file a debugger with this pid writes.
fn spec_prefix(pid: u32) -> String {
    format!("tdn-spec-{pid}-")
}

/// True when `path` is a spec file the debugger `pid` wrote: in the temporary folder, named
/// `tdn-spec-PID-HEX.json`. Nothing else is ever removed for it.
pub fn is_spec_file_of(path: &Path, pid: u32) -> bool {
    let in_temp = path.parent() == Some(std::env::temp_dir().as_path());
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(&spec_prefix(pid)))
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    in_temp && named
}

/// True when `path` is a converted run the debugger `pid` wrote for its runners: in the
/// temporary folder, named `tdn-run-PID-HEX.json`.
pub fn is_run_file_of(path: &Path, pid: u32) -> bool {
    let in_temp = path.parent() == Some(std::env::temp_dir().as_path());
    let prefix = crate::experiments::engine::run_file::run_file_prefix(pid);
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(&prefix))
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    in_temp && named
}

/// For a sample's supervisor once its debugger (`parent`) died: removes the spec file its
/// environment names, when it is one that debugger wrote ([`is_spec_file_of`]), and the
/// converted run it names, when that debugger wrote one ([`is_run_file_of`]).
pub fn remove_orphaned_spec_file(parent: u32) {
    if let Some(path) = std::env::var_os(SPEC_FILE_VAR).map(PathBuf::from)
        && is_spec_file_of(&path, parent)
    {
        let _ = std::fs::remove_file(&path);
    }
    if let Some(path) = std::env::var_os("TDN_RUN").map(PathBuf::from)
        && is_run_file_of(&path, parent)
    {
        let _ = std::fs::remove_file(&path);
    }
}

/// The experiment in a private temporary file, removed when dropped.
struct SpecFile {
    path: PathBuf,
}

impl SpecFile {
    async fn write(json: &[u8]) -> std::io::Result<SpecFile> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let path =
            std::env::temp_dir().join(format!("{}{name}.json", spec_prefix(std::process::id())));
        let mut f = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .await?;
        let file = SpecFile { path };
        tokio::io::AsyncWriteExt::write_all(&mut f, json).await?;
        tokio::io::AsyncWriteExt::flush(&mut f).await?;
        Ok(file)
    }
}

impl Drop for SpecFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::spec::ExperimentKind;

    fn spec() -> ExperimentSpec {
        ExperimentSpec {
            run: "runs/run.json".to_owned(),
            run_id: "r-1".to_owned(),
            experiment: ExperimentKind::Ablate,
            remove: vec!["u1".to_owned(), "u,2".to_owned()],
            restore: vec![],
            from_step: None,
            patch: None,
            seed: 2,
            sample: 2,
            source: None,
        }
    }

    #[tokio::test]
    async fn the_spec_reaches_stdin_the_file_and_the_environment() {
        let r = ShellRunner::new(
            r#"stdin=$(cat); file=$(cat "$TDN_SPEC_FILE"); [ "$stdin" = "$file" ] || exit 9; printf '%s|%s|%s|%s|[%s]\n' "$TDN_EXPERIMENT" "$TDN_SEED" "$TDN_REMOVE" "$TDN_RUN" "$TDN_FROM_STEP""#,
            Duration::from_secs(20),
        );
        let a = r.run(&spec(), &Cancel::new()).await.unwrap();
        assert_eq!(a.output, "ablate|2|u1,u,2|runs/run.json|[]");
    }

    #[tokio::test]
    async fn the_spec_file_is_removed_afterwards() {
        let r = ShellRunner::new("echo \"$TDN_SPEC_FILE\"", Duration::from_secs(20));
        let a = r.run(&spec(), &Cancel::new()).await.unwrap();
        assert!(a.output.contains("tdn-spec-"));
        assert!(!std::path::Path::new(&a.output).exists());
    }

    /// The spec file a sample saw, as it wrote its path to `seen` before ending as `then`.
    async fn spec_file_after(then: &str, timeout: Duration, cancel: &Cancel) -> PathBuf {
        let dir = tempfile::tempdir().expect("temp dir");
        let seen = dir.path().join("seen");
        let command = format!(
            "test -s \"$TDN_SPEC_FILE\" || exit 9; printf %s \"$TDN_SPEC_FILE\" > '{}'; {then}",
            seen.display()
        );
        let r = ShellRunner::new(command, timeout);
        let _ = r.run(&spec(), cancel).await;
        PathBuf::from(std::fs::read_to_string(&seen).unwrap_or_default())
    }

    #[tokio::test]
    async fn the_spec_file_is_removed_however_the_sample_ends() {
        let long = Duration::from_secs(20);
        let failed = spec_file_after("exit 3", long, &Cancel::new()).await;
        let timed_out =
            spec_file_after("sleep 30", Duration::from_millis(300), &Cancel::new()).await;
        let unreadable = spec_file_after("echo not-json", long, &Cancel::new()).await;
        let cancel = Cancel::new();
        let firing = cancel.clone();
        let waiter = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            firing.cancel();
        });
        let cancelled = spec_file_after("sleep 30", long, &cancel).await;
        let _ = waiter.await;
        for (how, path) in [
            ("failed", failed),
            ("timed out", timed_out),
            ("unreadable", unreadable),
            ("cancelled", cancelled),
        ] {
            assert!(
                is_spec_file_of(&path, std::process::id()),
                "{how}: the sample saw a spec file ({})",
                path.display()
            );
            assert!(!path.exists(), "{how}: {} is left behind", path.display());
        }
    }

    #[test]
    fn only_a_spec_file_of_that_debugger_counts_as_one() {
        let tmp = std::env::temp_dir();
        assert!(is_spec_file_of(&tmp.join("tdn-spec-42-00ff.json"), 42));
        for other in [
            tmp.join("tdn-spec-43-00ff.json"),
            tmp.join("tdn-spec-42-.json"),
            tmp.join("tdn-spec-42-00ff.json.bak"),
            tmp.join("tdn-spec-42-../../etc.json"),
            tmp.join("sub").join("tdn-spec-42-00ff.json"),
            PathBuf::from("/etc/tdn-spec-42-00ff.json"),
        ] {
            assert!(!is_spec_file_of(&other, 42), "{}", other.display());
        }
    }

    #[tokio::test]
    async fn a_non_zero_exit_is_an_error_with_the_stderr_tail() {
        let r = ShellRunner::new(
            "echo '{\"output\": \"x\"}'; echo boom >&2; exit 4",
            Duration::from_secs(20),
        );
        let e = r.run(&spec(), &Cancel::new()).await.unwrap_err();
        assert_eq!(e.kind, SampleErrorKind::Exit);
        assert!(e.message.contains("status 4"), "{}", e.message);
        assert_eq!(e.stderr_tail, "boom\n");
    }
}
