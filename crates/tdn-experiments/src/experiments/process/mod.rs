//! Running one user-configured shell command in its own process group, to completion: the one
//! process runner of tdn-tui ([`group`]). `sh -c` (through its [`supervise`]or when the binary
//! installed one, so the command dies with the debugger), bytes on stdin, stdout capped, the tail
//! of stderr kept, a time-out and a [`Cancel`] signal that kill the whole group, and the group
//! killed again after the command exits so nothing it started outlives it; processes that left the
//! group are found by a mark in their environment ([`MARK_VAR`]) and killed too. The runner awaits
//! [`run_group`]; the judge and the command embedder, which are synchronous, call [`run_blocking`].
//!
//! The command text comes only from the user's command line or config (`config::UserCommand`),
//! never from a run file, and nothing is substituted into it.

mod cancel;
mod group;
pub mod supervise;

pub use cancel::Cancel;
pub use group::{GroupCommand, GroupError, GroupOutput, run_group};

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

/// Runs the command to its end, the time-out or an overflow of stdout, blocking the calling
/// thread. It runs [`run_group`] on a runtime of its own, on a thread of its own, so it can be
/// called from anywhere: a plain thread, `spawn_blocking`, or code that an async task calls.
pub fn run_blocking(cmd: &GroupCommand) -> Result<GroupOutput, GroupError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(GroupError::Spawn)?;
                rt.block_on(run_group(cmd, &Cancel::new()))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(GroupError::Wait(std::io::Error::other(
                    "the thread waiting for the command stopped",
                )))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::group::test_command;
    use super::*;

    use std::time::{Duration, Instant};

    #[test]
    fn reads_stdin_env_stdout_and_stderr() {
        let f = run_blocking(&test_command(
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
        let e = run_blocking(&test_command(&command, 300)).unwrap_err();
        assert!(matches!(e, GroupError::TimedOut { .. }), "{e}");
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The kill is sent before the call returns; the kernel may take a moment to end it.
        let end = Instant::now() + Duration::from_secs(10);
        while running(pid) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
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
        let f = run_blocking(&test_command("sleep 30 & echo done", 20_000)).unwrap();
        assert_eq!(String::from_utf8(f.stdout).unwrap(), "done\n");
        assert!(t.elapsed() < Duration::from_secs(20));
    }

    #[tokio::test]
    async fn it_can_be_called_from_inside_an_async_task() {
        let f = run_blocking(&test_command("echo inside", 10_000)).unwrap();
        assert_eq!(String::from_utf8(f.stdout).unwrap(), "inside\n");
    }

    #[test]
    fn too_much_output_is_cut_off() {
        let mut i = test_command("yes", 20_000);
        i.max_stdout = 1000;
        let e = run_blocking(&i).unwrap_err();
        assert!(
            matches!(e, GroupError::TooMuchOutput { cap: 1000, .. }),
            "{e}"
        );
    }
}
