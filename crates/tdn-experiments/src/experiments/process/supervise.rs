//! A supervisor per command, so that nothing a command starts outlives the debugger even when the
//! debugger is killed outright (SIGKILL) or crashes, which no handler inside it can see.
//!
//! When the binary installs itself ([`install`], done by `main` at start), every user command
//! (sample, judge, command embedder, `cmd:` flip rule) is started as `tdn-tui
//! --internal-supervise-command PARENT COMMAND` instead of `sh -c COMMAND`, in a process group of
//! its own: the supervisor, the group's leader, runs `sh -c COMMAND` in the same group with the
//! same stdin, stdout, stderr and environment (the command's mark included), waits for it, and
//! exits as it exited (the same code, or the same signal), so the caller sees no difference. Every
//! 50 ms it also checks that the debugger (PARENT) is still its parent; once it is not, it kills
//! every process carrying the command's mark (those that left the group), removes the sample's
//! spec file (`$TDN_SPEC_FILE`, only when it is one that debugger wrote), and then kills its whole
//! group, itself included. It is never handed a run's text: the command comes from the user's settings.
//!
//! Without [`install`] (library tests), commands run under `sh -c` directly.

use super::{MARK_VAR, kill_group, kill_marked};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

/// The first argument that starts the binary as a supervisor (not a file name anyone passes).
pub const SUPERVISE_ARG: &str = "--internal-supervise-command";

/// How often the supervisor checks its command and its parent.
const POLL: Duration = Duration::from_millis(50);

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// From now on, commands run through `program` (this binary) as their supervisor.
pub fn install(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// This binary, for [`install`]: `/proc/self/exe` on Linux (it names the running image even if
/// the file was replaced since), else the path it was started from.
pub fn this_program() -> Option<PathBuf> {
    let proc_exe = PathBuf::from("/proc/self/exe");
    if proc_exe.exists() {
        return Some(proc_exe);
    }
    std::env::current_exe().ok()
}

/// `sh -c command` in a process group of its own (the caller adds stdio and environment):
/// through the supervisor when one is installed.
pub fn shell(command: &str) -> Command {
    let mut c = match PROGRAM.get() {
        Some(p) => {
            let mut c = Command::new(p);
            c.arg(SUPERVISE_ARG)
                .arg(std::process::id().to_string())
                .arg(command);
            c
        }
        None => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(command);
            c
        }
    };
    c.process_group(0);
    c
}

fn parent() -> u32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    let p = unsafe { libc::getppid() };
    u32::try_from(p).unwrap_or(0)
}

/// Ends the supervisor as its command ended: the same exit code, or the same signal (with core
/// dumps off, so a crashed command leaves no core of this process).
fn exit_as(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return code;
    }
    if let Some(sig) = status.signal() {
        // SAFETY: setrlimit, signal and raise only change this process's own limits and
        // dispositions; they have no memory-safety preconditions.
        unsafe {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return 128 + sig;
    }
    1
}

/// The supervisor: `args` are what follow [`SUPERVISE_ARG`] (the parent's pid, the command).
/// Returns the exit code to end with.
pub fn main(args: &[OsString]) -> i32 {
    let (Some(parent_pid), Some(command)) = (
        args.first()
            .and_then(|a| a.to_str())
            .and_then(|a| a.parse::<u32>().ok()),
        args.get(1),
    ) else {
        return 2;
    };
    if parent() != parent_pid {
        // The debugger was gone before the command started: run nothing.
        return 1;
    }
    let mark = std::env::var(MARK_VAR).unwrap_or_default();
    let mut child = match Command::new("sh").arg("-c").arg(command).spawn() {
        Ok(c) => c,
        Err(_) => return 127,
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exit_as(status),
            Ok(None) => {}
            Err(_) => {
                let _ = child.kill();
                return 1;
            }
        }
        if parent() != parent_pid {
            // The debugger died without stopping its command: stop everything it started, and
            // remove the experiment's spec file it could not.
            kill_marked(&mark);
            crate::experiments::runner::shell::remove_orphaned_spec_file(parent_pid);
            kill_group(std::process::id());
            return 137;
        }
        std::thread::sleep(POLL);
    }
}
