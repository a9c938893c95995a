//! Running one user-configured shell command to completion, synchronously: `sh -c` (through its
//! [`supervise`]or when the binary installed one, so the command dies with the debugger), its own
//! process group, JSON on stdin, stdout and stderr read on their own threads and capped, a
//! time-out that kills the whole group, and the group killed again after the command exits so
//! nothing it started outlives it; processes that left the group are found by a mark in their
//! environment ([`MARK_VAR`]) and killed too. Used by the judge and the command embedder; the
//! runner has its own async version.
//!
//! The command text comes only from the user's command line or config (`config::UserCommand`),
//! never from a run file, and nothing is substituted into it.

pub mod supervise;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How often the waiting loop checks the child.
const POLL: Duration = Duration::from_millis(5);

/// What to run and how.
#[derive(Clone, Debug)]
pub struct Invocation<'a> {
    /// The shell command (`sh -c`).
    pub command: &'a str,
    /// Written to stdin, which is then closed.
    pub stdin: &'a [u8],
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Kill the group after this long.
    pub timeout: Duration,
    /// Keep at most this many bytes of stdout; more kills the group.
    pub max_stdout: usize,
    /// Keep the last this many bytes of stderr.
    pub stderr_tail: usize,
}

/// A command that ran to completion (whatever its exit status).
#[derive(Clone, Debug)]
pub struct Finished {
    /// The exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// Everything it printed on stdout (at most `max_stdout` bytes).
    pub stdout: Vec<u8>,
    /// The tail of stderr.
    pub stderr_tail: String,
}

/// Why a command produced no usable result.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// It could not be started.
    #[error("cannot start `sh -c`: {0}")]
    Spawn(std::io::Error),
    /// It ran past the time-out; the group was killed.
    #[error("timed out after {secs:.1} s; its process group was killed")]
    TimedOut {
        /// The time-out in seconds.
        secs: f64,
        /// The stderr tail so far.
        stderr_tail: String,
    },
    /// It printed more than the stdout cap; the group was killed.
    #[error("printed more than {cap} bytes on stdout; its process group was killed")]
    TooMuchOutput {
        /// The cap.
        cap: usize,
        /// The stderr tail so far.
        stderr_tail: String,
    },
    /// Waiting for it failed.
    #[error("lost track of the command: {0}")]
    Wait(std::io::Error),
}

impl ProcessError {
    /// The stderr tail, when one was collected.
    pub fn stderr_tail(&self) -> &str {
        match self {
            ProcessError::TimedOut { stderr_tail, .. }
            | ProcessError::TooMuchOutput { stderr_tail, .. } => stderr_tail,
            _ => "",
        }
    }
}

/// The environment variable that marks every process one command starts, so those that leave
/// its process group (`setsid`, a daemon) can still be found and killed ([`kill_marked`]).
pub const MARK_VAR: &str = "TDN_PROCESS_MARK";

/// A mark no other command of any tdn-tui process shares: this process's id, a counter, and the
/// time.
pub fn new_mark() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{n}-{nanos}", std::process::id())
}

/// Kills the group `pgid`, then every process still carrying `mark` (see [`MARK_VAR`]).
pub fn kill_all(pgid: u32, mark: &str) {
    kill_group(pgid);
    kill_marked(mark);
}

/// Sends SIGKILL to every process of this user whose environment holds `MARK_VAR=mark`: those
/// a command started that left its group. Linux only (it reads `/proc/*/environ`); elsewhere it
/// does nothing. A process that cleared its environment is not found. Two passes, so a child
/// forked just before the first kill landed is found by the second.
pub fn kill_marked(mark: &str) {
    if !cfg!(target_os = "linux") || mark.is_empty() {
        return;
    }
    let needle = format!("{MARK_VAR}={mark}");
    let me = std::process::id();
    for _ in 0..2 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut found = false;
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&p| p != me)
            else {
                continue;
            };
            // Other users' processes cannot be read, and are none of ours.
            let Ok(env) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if env.split(|b| *b == 0).any(|v| v == needle.as_bytes())
                && let Ok(pid) = libc::pid_t::try_from(pid)
            {
                // SAFETY: kill only sends a signal; a pid that just exited returns an error.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                found = true;
            }
        }
        if !found {
            return;
        }
    }
}

/// Sends SIGKILL to a whole process group; a group that is already gone is fine.
pub fn kill_group(pgid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pgid)
        && pid > 0
    {
        // SAFETY: killpg only sends a signal; a stale or foreign id returns an error we ignore.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// Runs the command and waits for it, within the time-out and output caps.
pub fn run(inv: &Invocation<'_>) -> Result<Finished, ProcessError> {
    let mut cmd = supervise::shell(inv.command);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &inv.env {
        cmd.env(k, v);
    }
    let mark = new_mark();
    cmd.env(MARK_VAR, &mark);
    let mut child = cmd.spawn().map_err(ProcessError::Spawn)?;
    let pgid = child.id();

    let stdin_data = inv.stdin.to_vec();
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            // A command that does not read its stdin closes the pipe early; that is its choice.
            let _ = s.write_all(&stdin_data);
        }
    });
    let cap = inv.max_stdout;
    let stdout = child.stdout.take();
    let out_reader = std::thread::spawn(move || read_capped(stdout, cap));
    let tail = inv.stderr_tail;
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || read_tail(stderr, tail));

    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() >= inv.timeout => break Err(None),
            Ok(None) => {
                if out_reader.is_finished() {
                    // The reader only stops early when the cap was passed (or stdout closed).
                    if let Some(status) = child.try_wait().ok().flatten() {
                        break Ok(status);
                    }
                }
                std::thread::sleep(POLL);
            }
            Err(e) => break Err(Some(e)),
        }
    };
    kill_all(pgid, &mark);
    let _ = child.wait();
    let _ = writer.join();
    let (stdout, overflow) = out_reader.join().unwrap_or_default();
    let stderr_tail = err_reader.join().unwrap_or_default();
    match status {
        Ok(status) if overflow => {
            let _ = status;
            Err(ProcessError::TooMuchOutput { cap, stderr_tail })
        }
        Ok(status) => Ok(Finished {
            code: status.code(),
            stdout,
            stderr_tail,
        }),
        Err(None) if overflow => Err(ProcessError::TooMuchOutput { cap, stderr_tail }),
        Err(None) => Err(ProcessError::TimedOut {
            secs: inv.timeout.as_secs_f64(),
            stderr_tail,
        }),
        Err(Some(e)) => Err(ProcessError::Wait(e)),
    }
}

/// Reads up to `cap` bytes; returns them and whether more was offered. Stops reading past the
/// cap, so the writer blocks until the group is killed.
fn read_capped(r: Option<impl Read>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut r) = r else {
        return (Vec::new(), false);
    };
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return (out, false),
            Ok(n) => {
                if out.len() + n > cap {
                    let room = cap - out.len();
                    out.extend_from_slice(&buf[..room]);
                    return (out, true);
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// Reads everything, keeping the last `keep` bytes, as lossy UTF-8.
fn read_tail(r: Option<impl Read>, keep: usize) -> String {
    let Some(mut r) = r else {
        return String::new();
    };
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > keep.saturating_mul(2).max(8192) {
                    let cut = tail.len() - keep;
                    tail.drain(..cut);
                }
            }
        }
    }
    if tail.len() > keep {
        let cut = tail.len() - keep;
        tail.drain(..cut);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(command: &str, timeout_ms: u64) -> Invocation<'_> {
        Invocation {
            command,
            stdin: b"{\"x\": 1}",
            env: vec![("TDN_TEST_VAR".to_owned(), "hello".to_owned())],
            timeout: Duration::from_millis(timeout_ms),
            max_stdout: 1 << 20,
            stderr_tail: 4096,
        }
    }

    #[test]
    fn reads_stdin_env_stdout_and_stderr() {
        let f = run(&inv(
            "cat; echo \" $TDN_TEST_VAR\"; echo oops >&2; exit 3",
            10_000,
        ))
        .unwrap();
        assert_eq!(String::from_utf8(f.stdout).unwrap(), "{\"x\": 1} hello\n");
        assert_eq!(f.stderr_tail, "oops\n");
        assert_eq!(f.code, Some(3));
    }

    #[test]
    fn a_hang_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-pid");
        let command = format!("sleep 30 & echo $! > '{}'; wait", marker.display());
        let e = run(&inv(&command, 300)).unwrap_err();
        assert!(matches!(e, ProcessError::TimedOut { .. }), "{e}");
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!running(pid), "the background sleep outlived the time-out");
    }

    /// True while the process exists and is not a zombie (a killed orphan stays a zombie until
    /// init reaps it, which some containers never do).
    fn running(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => false,
            Ok(stat) => {
                let state = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next());
                !matches!(state, Some("Z" | "X"))
            }
        }
    }

    #[test]
    fn a_background_child_left_behind_does_not_hold_the_call() {
        let t = Instant::now();
        let f = run(&inv("sleep 30 & echo done", 20_000)).unwrap();
        assert_eq!(String::from_utf8(f.stdout).unwrap(), "done\n");
        assert!(t.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn too_much_output_is_cut_off() {
        let mut i = inv("yes", 20_000);
        i.max_stdout = 1000;
        let e = run(&i).unwrap_err();
        assert!(
            matches!(e, ProcessError::TooMuchOutput { cap: 1000, .. }),
            "{e}"
        );
    }
}
