//! Showing a step in the user's own pager or editor: the step's detail as plain text, then the
//! step as JSON, written inert (escape sequences and bidirectional overrides made visible) to a
//! temporary file that is removed afterwards. The program is the one the settings resolved
//! (`config::Viewers`: `$PAGER`, else `less`; `$VISUAL`, else `$EDITOR`, else `vi`) and runs
//! under `sh -c` with the file's path as its argument `$1` (the shell itself ignores Ctrl-C, so
//! that only the program hears it): run text never reaches a command line.
//!
//! The program is given the terminal as a shell gives it to a job: it runs in a process group of
//! its own, made the terminal's foreground group (so Ctrl-C and Ctrl-Z reach the program, not the
//! debugger), and is waited for on a thread of its own, so the screen's loop still hears the stop
//! signals and sees the terminal go. Ctrl-Z in the program suspends the debugger with it (`fg`
//! brings both back). A stop signal ends the program's whole group ([`Running::end`]). The event
//! loop leaves the screen before [`start`] and takes the terminal back after
//! [`Running::reclaim`].

use super::app::{App, Document};
use super::effects::External;
use super::input::{self, InputThread};
use super::panes::detail;
use super::theme::Theme;
use super::{End, Lost, TICK, Term, leave, reenter};
use crate::analysis::model::inert_block;
use crate::config::ViewerCommand;
use crate::experiments::engine::drive::StopSignals;
use std::io::Write;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};
use std::time::Duration;
use tokio::sync::oneshot;

/// Columns the detail is laid out for in the file.
const FILE_WIDTH: u16 = 100;
/// How long an ended program's group has after SIGTERM, and then after SIGKILL.
const END_GRACE: Duration = Duration::from_secs(1);

/// The text a step is shown as: its detail as plain lines, then the whole step as JSON, inert.
pub fn step_text(doc: &Document, step: usize, theme: &Theme) -> String {
    let d = detail::build(doc, step, FILE_WIDTH, true, theme);
    let mut out = String::new();
    for l in &d.lines {
        for s in &l.spans {
            out.push_str(&s.content);
        }
        out.push('\n');
    }
    if let Some(s) = doc.run.steps.get(step) {
        out.push_str("\n── The step as recorded (JSON) ──\n");
        out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        out.push('\n');
    }
    inert_block(&out).into_owned()
}

/// A program given the terminal, until it ends.
pub struct Running {
    /// Its process group (the `sh` it was started as leads it).
    group: libc::pid_t,
    /// The waiting thread's answer.
    done: oneshot::Receiver<std::io::Result<ExitStatus>>,
    /// The terminal handed over, with its modes as they were: given back by [`Running::reclaim`].
    handed: Option<(RawFd, Option<libc::termios>)>,
    program: External,
    command: ViewerCommand,
    /// The step's file, removed when this is dropped.
    _file: tempfile::TempPath,
}

/// Writes the step to a temporary file and starts the program on it in a process group of its
/// own, given the terminal `tty` (the screen must have left it). Returns what to tell the user
/// when it cannot.
pub fn start(
    program: External,
    command: &ViewerCommand,
    doc: &Document,
    step: usize,
    theme: &Theme,
    tty: Option<RawFd>,
) -> Result<Running, String> {
    let (cmd, from) = (&command.text, command.from);
    let mut file = tempfile::Builder::new()
        .prefix("tdn-step-")
        .suffix(".txt")
        .tempfile()
        .map_err(|e| format!("cannot make a temporary file ({e})"))?;
    file.write_all(step_text(doc, step, theme).as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("cannot write the temporary file ({e})"))?;
    let path = file.into_temp_path();
    // The terminal is handed over only when it is ours to give (this process's group is its
    // foreground group); without a controlling terminal no job control applies.
    let handed = tty.filter(|&fd| foreground_is_ours(fd)).map(|fd| {
        // SAFETY: an all-zero termios is a valid value for tcgetattr to fill in.
        let mut modes: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `modes` is a valid termios for tcgetattr to write; `fd` is open.
        let saved = (unsafe { libc::tcgetattr(fd, &mut modes) } == 0).then_some(modes);
        (fd, saved)
    });
    let to_child = handed.map(|(fd, _)| fd);
    let mut c = Command::new("sh");
    c.arg("-c")
        // The shell only waits: Ctrl-C is the program's to handle (less and vi stay), not a
        // reason for the shell to end under it.
        .arg(format!("trap : INT; {cmd} \"$1\""))
        .arg("tdn-tui")
        .arg(&*path);
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (signal, setpgid, sigprocmask, tcsetpgrp, getpid).
    unsafe {
        c.pre_exec(move || {
            // The program gets the keyboard's signals as any program does, even when tdn-tui was
            // started with them ignored (by `nohup`, or as a background job of a script), which
            // the shell and the program would otherwise inherit and could not undo.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = to_child {
                // A background group asking for the terminal is sent SIGTTOU unless it blocks it.
                let mut block: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut block);
                libc::sigaddset(&mut block, libc::SIGTTOU);
                libc::sigprocmask(libc::SIG_BLOCK, &block, &mut old);
                libc::tcsetpgrp(fd, libc::getpid());
                libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            }
            Ok(())
        });
    }
    let child = c
        .spawn()
        .map_err(|e| format!("cannot start '{cmd}' (from {from}): {e}"))?;
    let group = libc::pid_t::try_from(child.id()).unwrap_or(0);
    let (tx, done) = oneshot::channel();
    let waited = std::thread::Builder::new()
        .name("tdn-external".to_owned())
        .spawn(move || {
            let _ = tx.send(wait_job(group, to_child));
        });
    if let Err(e) = waited {
        kill_group(group, libc::SIGKILL);
        if let Some((fd, saved)) = handed {
            give_terminal(fd, own_group(), saved.as_ref());
        }
        return Err(format!("cannot wait for '{cmd}' ({e})"));
    }
    Ok(Running {
        group,
        done,
        handed,
        program,
        command: command.clone(),
        _file: path,
    })
}

impl Running {
    /// Waits until the program ends; returns what to tell the user. Cancel-safe: a stop signal
    /// may cut the wait short, and [`Running::end`] then ends the program.
    pub async fn finished(&mut self) -> Result<String, String> {
        let status = (&mut self.done)
            .await
            .unwrap_or_else(|_| Err(std::io::Error::other("its waiting thread stopped")));
        let (cmd, from) = (&self.command.text, self.command.from);
        let what = match self.program {
            External::Pager => "pager",
            External::Editor => "editor",
        };
        match status {
            Ok(s) if s.success() => Ok(format!(
                "back from the {what} '{cmd}' (from {from}); edits there change nothing in the run"
            )),
            Ok(s) => Err(format!(
                "the {what} '{cmd}' (from {from}) ended with {s}; set {} to choose another",
                self.command.variable
            )),
            Err(e) => Err(format!(
                "lost track of the {what} '{cmd}' (from {from}): {e}"
            )),
        }
    }

    /// Ends the program's whole process group: SIGTERM (and SIGCONT, should it be stopped),
    /// then SIGKILL if it is still there after [`END_GRACE`]; waits for it at most that long
    /// again.
    pub async fn end(&mut self) {
        kill_group(self.group, libc::SIGTERM);
        kill_group(self.group, libc::SIGCONT);
        if tokio::time::timeout(END_GRACE, &mut self.done)
            .await
            .is_err()
        {
            kill_group(self.group, libc::SIGKILL);
            let _ = tokio::time::timeout(END_GRACE, &mut self.done).await;
        }
    }

    /// Takes the terminal back from the program's group, in the modes it had before the program
    /// (a program killed part way leaves its own).
    pub fn reclaim(&self) {
        if let Some((fd, saved)) = self.handed {
            give_terminal(fd, own_group(), saved.as_ref());
        }
    }
}

/// Hands the terminal to the program for the step and waits until it ends, hearing the stop
/// signals and watching the terminal meanwhile; then takes the terminal back. Returns what to
/// tell the user, or how the screen ends: a stop signal, or the terminal's loss, for which the
/// program's group is ended first.
#[allow(clippy::too_many_arguments)]
pub(super) async fn hand_over(
    terminal: &mut Term,
    input: &InputThread,
    signals: &mut StopSignals,
    app: &App,
    program: External,
    command: &ViewerCommand,
    doc: &Document,
    step: usize,
) -> Result<Result<String, String>, End> {
    // The program gets the terminal: stop reading keys, leave the screen.
    input.pause().await;
    leave();
    let said = match start(program, command, doc, step, &app.theme, input::tty_fd()) {
        Err(why) => Err(why),
        Ok(mut running) => {
            let mut tick = tokio::time::interval(TICK);
            let cut = loop {
                tokio::select! {
                    said = running.finished() => break Ok(said),
                    (n, name) = signals.next() => break Err(End::Signal(n, name)),
                    _ = tick.tick() => {
                        if let Some(why) = input::lost() {
                            break Err(End::Lost(why));
                        }
                    }
                }
            };
            match cut {
                Ok(said) => {
                    if input::lost().is_none() {
                        running.reclaim();
                    }
                    said
                }
                Err(end) => {
                    running.end().await;
                    if !matches!(end, End::Lost(_)) && input::lost().is_none() {
                        running.reclaim();
                    }
                    return Err(end);
                }
            }
        }
    };
    if let Some(why) = input::lost() {
        return Err(End::Lost(why));
    }
    if let Err(e) = reenter(terminal, app.mouse) {
        return Err(End::Lost(Lost::from(e).0));
    }
    input.resume();
    Ok(said)
}

/// This process's group.
fn own_group() -> libc::pid_t {
    // SAFETY: getpgrp has no preconditions and cannot fail.
    unsafe { libc::getpgrp() }
}

/// Whether this process's group is the terminal's foreground group.
fn foreground_is_ours(fd: RawFd) -> bool {
    // SAFETY: tcgetpgrp only queries the descriptor; an error returns -1.
    let fg = unsafe { libc::tcgetpgrp(fd) };
    fg > 0 && fg == own_group()
}

/// Makes `group` the terminal's foreground group (and sets `modes` when given), from this
/// thread with SIGTTOU blocked, as a shell does when it gives a job the terminal or takes it back.
fn give_terminal(fd: RawFd, group: libc::pid_t, modes: Option<&libc::termios>) {
    // SAFETY: the signal sets are initialised by sigemptyset before use; pthread_sigmask,
    // tcsetpgrp and tcsetattr only act on this thread's mask and the open descriptor.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGTTOU);
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        libc::tcsetpgrp(fd, group);
        if let Some(m) = modes {
            libc::tcsetattr(fd, libc::TCSADRAIN, m);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
}

/// Sends `signal` to a process group; one already gone is fine.
fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    if group > 0 {
        // SAFETY: killpg only sends a signal; a stale group returns an error we ignore.
        unsafe {
            libc::killpg(group, signal);
        }
    }
}

/// Waits for the program (the leader of `group`) to end. When it is stopped (Ctrl-Z reached
/// its group), the debugger takes the terminal back and stops too, as one job with it; when
/// continued (`fg`), it gives the program the terminal again and continues it.
fn wait_job(group: libc::pid_t, tty: Option<RawFd>) -> std::io::Result<ExitStatus> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes the status of our own child into `status`.
        let r = unsafe { libc::waitpid(group, &mut status, libc::WUNTRACED) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !libc::WIFSTOPPED(status) {
            return Ok(ExitStatus::from_raw(status));
        }
        if let Some(fd) = tty {
            give_terminal(fd, own_group(), None);
        }
        // SAFETY: raising SIGTSTP on this process stops it until SIGCONT; no preconditions.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        // Continued in the background (`bg`), the program stops again when it reads, and so does
        // the debugger, until `fg`.
        if let Some(fd) = tty.filter(|&fd| foreground_is_ours(fd)) {
            give_terminal(fd, group, None);
        }
        kill_group(group, libc::SIGCONT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{Run, RunStatus, Step, StepKind};
    use crate::analysis::report::Report;

    fn calendar_report() -> Report {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("fixture")
    }

    /// Runs the program to its end, without a terminal to hand over.
    fn run_program(
        program: External,
        command: &ViewerCommand,
        doc: &Document,
        step: usize,
        theme: &Theme,
    ) -> Result<String, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let mut running = start(program, command, doc, step, theme, None)?;
        rt.block_on(running.finished())
    }

    #[test]
    fn the_program_is_the_command_given_with_the_file_as_its_argument() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps.push(Step::new("s1", StepKind::Tool));
        run.reindex();
        let doc = Document::new(run, calendar_report(), None);
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("seen.txt");
        // `sh -c '<command> "$1"'`: this command copies the file it is given.
        let command = ViewerCommand {
            text: format!("cat >'{}' <", out.display()),
            from: "a test",
            variable: "$PAGER",
        };
        let said = run_program(External::Pager, &command, &doc, 0, &Theme::bare());
        assert!(said.is_ok_and(|m| m.contains("(from a test)")));
        let seen = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(seen.contains("step 's1'"), "{seen}");
        let failing = ViewerCommand {
            text: "false".to_owned(),
            from: "a test",
            variable: "$EDITOR",
        };
        let said = run_program(External::Editor, &failing, &doc, 0, &Theme::bare());
        assert!(said.is_err_and(|m| m.contains("set $EDITOR to choose another")));
    }

    /// The live (not zombie) processes of a process group, from /proc.
    fn members(group: libc::pid_t) -> usize {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return 0;
        };
        dir.flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter(|stat| {
                let mut rest = stat
                    .rsplit_once(')')
                    .map_or("", |(_, r)| r)
                    .split_whitespace();
                let state = rest.next();
                let pgrp = rest.nth(1).and_then(|g| g.parse::<libc::pid_t>().ok());
                state != Some("Z") && pgrp == Some(group)
            })
            .count()
    }

    fn wait_until(mut ok: impl FnMut() -> bool) -> bool {
        let start = std::time::Instant::now();
        while !ok() {
            if start.elapsed() > Duration::from_secs(20) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    fn one_step() -> Document {
        let mut run = Run::new("r", RunStatus::Failed);
        run.steps.push(Step::new("s1", StepKind::Tool));
        run.reindex();
        Document::new(run, calendar_report(), None)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    /// The pager `text` started on a one-step run, once its process group holds `n` live
    /// processes.
    fn started_pager(text: &str, n: usize) -> (tokio::runtime::Runtime, Running) {
        let command = ViewerCommand {
            text: text.to_owned(),
            from: "a test",
            variable: "$PAGER",
        };
        let rt = runtime();
        let running = start(
            External::Pager,
            &command,
            &one_step(),
            0,
            &Theme::bare(),
            None,
        )
        .expect("started");
        let group = running.group;
        assert!(wait_until(|| members(group) == n), "{}", members(group));
        (rt, running)
    }

    #[test]
    fn ending_a_program_ends_its_whole_process_group() {
        // `sh -c 'trap : INT; sleep 600 & sleep 600; cat "$1"'`: a shell, two sleeps, one group.
        let (rt, mut running) = started_pager("sleep 600 & sleep 600; cat", 3);
        let group = running.group;
        rt.block_on(running.end());
        assert!(wait_until(|| members(group) == 0), "{}", members(group));
    }

    #[test]
    fn ctrl_c_is_the_programs_to_handle_not_the_shells() {
        // The group gets SIGINT while `sleep` runs: sleep ends, the shell goes on to `cat`.
        let (rt, mut running) = started_pager("sleep 600; cat >/dev/null <", 2);
        kill_group(running.group, libc::SIGINT);
        let said = rt.block_on(running.finished());
        assert!(said.is_ok(), "{said:?}");
    }

    #[test]
    fn the_file_holds_the_step_inert() {
        let mut run = Run::new("r", RunStatus::Failed);
        let mut s = Step::new("s1", StepKind::Tool);
        s.output = Some(serde_json::json!("evil \u{1b}]52;c;x\u{7} \u{202e}text").into());
        run.steps.push(s);
        run.reindex();
        let report: Report = serde_json::from_str(include_str!(
            "../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("fixture");
        let doc = Document::new(run, report, None);
        let text = step_text(&doc, 0, &Theme::bare());
        assert!(text.contains("step 's1'"), "{text}");
        assert!(text.contains("The step as recorded (JSON)"));
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{text}"
        );
    }
}
