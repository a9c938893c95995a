//! Running one user-configured shell command on tokio, in its own process group: `sh -c` in the
//! current folder (through the command's supervisor when the binary installed one, so it dies with
//! the debugger even when the debugger is killed outright), bytes on stdin, stdout read without blocking and capped, the tail of stderr
//! kept, a time-out, and a [`Cancel`] signal. On time-out, cancel, stdout overflow or drop of the
//! future, the whole group gets SIGKILL; it gets it again after the command exits, so nothing the
//! command started in its group outlives the call, and so does every process that left the group
//! but still carries the command's mark in its environment (`process::MARK_VAR`).
//!
//! The command text comes only from the user's command line or config, never from a run file, and
//! nothing is substituted into it. This file knows nothing of experiments or answers.

use super::cancel::Cancel;
use super::{MARK_VAR, kill_all, new_mark, supervise};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

/// After the group is killed, how long to wait for its pipes to close (a process that left the
/// group with `setsid` could hold them open forever).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// What to run and how.
#[derive(Clone, Debug)]
pub struct GroupCommand {
    /// The shell command (`sh -c`), exactly as the user wrote it.
    pub command: String,
    /// Written to stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Kill the group after this long.
    pub timeout: Duration,
    /// Keep at most this many bytes of stdout; one more byte kills the group.
    pub max_stdout: usize,
    /// Keep the last this many bytes of stderr.
    pub stderr_tail: usize,
}

/// A command that exited by itself (whatever its status).
#[derive(Clone, Debug)]
pub struct GroupOutput {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Everything it printed on stdout (at most `max_stdout` bytes).
    pub stdout: Vec<u8>,
    /// The tail of stderr, lossy UTF-8.
    pub stderr_tail: String,
}

/// Why a command gave no output to read.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// `sh` could not be started.
    #[error("cannot start `sh -c`: {0}")]
    Spawn(std::io::Error),
    /// It ran past the time-out.
    #[error("timed out after {secs} s; its process group was killed")]
    TimedOut {
        /// The time-out in seconds.
        secs: f64,
        /// The stderr tail so far.
        stderr_tail: String,
    },
    /// It printed more than the cap on stdout.
    #[error("printed more than {cap} bytes on stdout; its process group was killed")]
    TooMuchOutput {
        /// The cap in bytes.
        cap: usize,
        /// The stderr tail so far.
        stderr_tail: String,
    },
    /// The cancel signal fired.
    #[error("cancelled; its process group was killed")]
    Cancelled {
        /// The stderr tail so far.
        stderr_tail: String,
    },
    /// Waiting for it failed.
    #[error("lost track of the command: {0}")]
    Wait(std::io::Error),
}

impl GroupError {
    /// The stderr tail, when one was collected.
    pub fn stderr_tail(&self) -> &str {
        match self {
            GroupError::TimedOut { stderr_tail, .. }
            | GroupError::TooMuchOutput { stderr_tail, .. }
            | GroupError::Cancelled { stderr_tail } => stderr_tail,
            GroupError::Spawn(_) | GroupError::Wait(_) => "",
        }
    }
}

/// Kills the process group, and the processes carrying its mark that left it, when dropped:
/// covers a future dropped mid-run.
struct GroupGuard(Option<u32>, String);

impl GroupGuard {
    fn kill_now(&mut self) {
        if let Some(pgid) = self.0.take() {
            kill_all(pgid, &self.1);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
    }
}

enum End {
    Exited(std::io::Result<std::process::ExitStatus>),
    Overflow,
    TimedOut,
    Cancelled,
}

/// Runs the command to its end, the time-out, an overflow of stdout, or `cancel`.
pub async fn run_group(cmd: &GroupCommand, cancel: &Cancel) -> Result<GroupOutput, GroupError> {
    if cancel.is_cancelled() {
        return Err(GroupError::Cancelled {
            stderr_tail: String::new(),
        });
    }
    // `sh -c` in a group of its own, through the supervisor that stops it if the debugger dies.
    let mut c = tokio::process::Command::from(supervise::shell(&cmd.command));
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in &cmd.env {
        c.env(k, v);
    }
    let mark = new_mark();
    c.env(MARK_VAR, &mark);
    let mut child = c.spawn().map_err(GroupError::Spawn)?;
    // The group id is the leader's pid (`process_group(0)`); `id()` is `Some` until reaped.
    let mut guard = GroupGuard(child.id(), mark);

    let stdin_task = child.stdin.take().map(|mut s| {
        let data = cmd.stdin.clone();
        tokio::spawn(async move {
            // A command that does not read its stdin closes the pipe early; that is its choice.
            let _ = s.write_all(&data).await;
            let _ = s.shutdown().await;
        })
    });
    let cap = cmd.max_stdout;
    let mut out_task = spawn_reader(child.stdout.take(), move |r| read_capped(r, cap));
    let keep = cmd.stderr_tail;
    let err_task = spawn_reader(child.stderr.take(), move |r| read_tail(r, keep));

    let deadline = tokio::time::sleep(cmd.timeout);
    tokio::pin!(deadline);
    let mut out_done: Option<(Vec<u8>, bool)> = None;
    let end = loop {
        tokio::select! {
            status = child.wait() => break End::Exited(status),
            r = &mut out_task, if out_done.is_none() => {
                let r = r.unwrap_or_default();
                let overflow = r.1;
                out_done = Some(r);
                if overflow {
                    break End::Overflow;
                }
            }
            () = &mut deadline => break End::TimedOut,
            () = cancel.cancelled() => break End::Cancelled,
        }
    };
    guard.kill_now();
    if !matches!(end, End::Exited(_)) {
        // The group is dead; reap the shell so it leaves no zombie.
        let _ = tokio::time::timeout(PIPE_GRACE, child.wait()).await;
    }
    if let Some(t) = stdin_task {
        t.abort();
    }
    let (stdout, overflow) = match out_done {
        Some(r) => r,
        None => finish_reader(out_task).await,
    };
    let stderr_tail = finish_reader(err_task).await;
    match end {
        End::Exited(_) | End::Overflow if overflow => {
            Err(GroupError::TooMuchOutput { cap, stderr_tail })
        }
        End::Exited(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt;
            Ok(GroupOutput {
                code: status.code(),
                signal: status.signal(),
                stdout,
                stderr_tail,
            })
        }
        End::Exited(Err(e)) => Err(GroupError::Wait(e)),
        End::Overflow => Err(GroupError::TooMuchOutput { cap, stderr_tail }),
        End::TimedOut => Err(GroupError::TimedOut {
            secs: cmd.timeout.as_secs_f64(),
            stderr_tail,
        }),
        End::Cancelled => Err(GroupError::Cancelled { stderr_tail }),
    }
}

fn spawn_reader<R, T, F, Fut>(r: Option<R>, f: F) -> JoinHandle<T>
where
    R: AsyncRead + Unpin + Send + 'static,
    T: Default + Send + 'static,
    F: FnOnce(R) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    match r {
        Some(r) => tokio::spawn(f(r)),
        None => tokio::spawn(async { T::default() }),
    }
}

/// Waits a little for a reader whose pipe should now close; gives up with nothing after that.
async fn finish_reader<T: Default>(mut task: JoinHandle<T>) -> T {
    match tokio::time::timeout(PIPE_GRACE, &mut task).await {
        Ok(r) => r.unwrap_or_default(),
        Err(_) => {
            task.abort();
            T::default()
        }
    }
}

/// Reads up to `cap` bytes; returns them and whether more was offered.
async fn read_capped(mut r: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return (out, false),
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or_default();
                let room = cap.saturating_sub(out.len());
                if chunk.len() > room {
                    out.extend_from_slice(chunk.get(..room).unwrap_or_default());
                    return (out, true);
                }
                out.extend_from_slice(chunk);
            }
        }
    }
}

/// Reads everything, keeping the last `keep` bytes, as lossy UTF-8 (a character cut at the start
/// of the tail is dropped).
async fn read_tail(mut r: impl AsyncRead + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tail.extend_from_slice(buf.get(..n).unwrap_or_default());
                if tail.len() > keep.saturating_mul(2).max(16 * 1024) {
                    let cut = tail.len() - keep;
                    tail.drain(..cut);
                }
            }
        }
    }
    if tail.len() > keep {
        let cut = tail.len() - keep;
        tail.drain(..cut);
        // Skip UTF-8 continuation bytes left over from a character cut in half.
        let skip = tail
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xC0 == 0x80)
            .count();
        tail.drain(..skip);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// A command for the tests: `{"x": 1}` on stdin, `TDN_TEST_VAR=hello`, a 1 MiB stdout cap.
#[cfg(test)]
pub(super) fn test_command(command: &str, timeout_ms: u64) -> GroupCommand {
    GroupCommand {
        command: command.to_owned(),
        stdin: b"{\"x\": 1}".to_vec(),
        env: vec![("TDN_TEST_VAR".to_owned(), "hello".to_owned())],
        timeout: Duration::from_millis(timeout_ms),
        max_stdout: 1 << 20,
        stderr_tail: 4096,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_stdin_env_stdout_and_stderr() {
        let out = run_group(
            &test_command(
                "cat; echo \" $TDN_TEST_VAR\"; echo oops >&2; exit 3",
                10_000,
            ),
            &Cancel::new(),
        )
        .await
        .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "{\"x\": 1} hello\n");
        assert_eq!(out.stderr_tail, "oops\n");
        assert_eq!(out.code, Some(3));
    }

    #[tokio::test]
    async fn stdout_past_the_cap_is_an_error() {
        let mut c = test_command("yes", 20_000);
        c.max_stdout = 1000;
        let e = run_group(&c, &Cancel::new()).await.unwrap_err();
        assert!(
            matches!(e, GroupError::TooMuchOutput { cap: 1000, .. }),
            "{e}"
        );
    }

    #[tokio::test]
    async fn only_the_tail_of_stderr_is_kept() {
        let mut c = test_command(
            "i=0; while [ $i -lt 3000 ]; do echo line$i >&2; i=$((i+1)); done",
            20_000,
        );
        c.stderr_tail = 100;
        let out = run_group(&c, &Cancel::new()).await.unwrap();
        assert!(out.stderr_tail.len() <= 100);
        assert!(
            out.stderr_tail.ends_with("line2999\n"),
            "{}",
            out.stderr_tail
        );
    }

    #[tokio::test]
    async fn a_time_out_and_a_cancel_end_the_command() {
        let e = run_group(&test_command("sleep 30", 200), &Cancel::new())
            .await
            .unwrap_err();
        assert!(matches!(e, GroupError::TimedOut { .. }), "{e}");
        let cancel = Cancel::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let e = run_group(&test_command("echo started >&2; sleep 30", 60_000), &cancel)
            .await
            .unwrap_err();
        assert!(matches!(e, GroupError::Cancelled { .. }), "{e}");
    }

    #[tokio::test]
    async fn a_signal_is_reported_as_such() {
        let out = run_group(&test_command("kill -9 $$", 10_000), &Cancel::new())
            .await
            .unwrap();
        assert_eq!(out.code, None);
        assert_eq!(out.signal, Some(9));
    }
}
