//! The real binary on a pseudo-terminal of its own (issue 31): whatever the screen is doing
//! (loading a big run, idle, with keys still unread, showing the help, the full-screen step
//! viewer, a pager it handed the terminal to, or an experiment's samples running), SIGTERM,
//! SIGHUP and SIGINT end it with status 128 + the signal, and closing the terminal ends it as
//! SIGHUP does (129), the pager with it; nothing it started is left running, and running samples
//! are recorded as cancelled in a ledger that verifies. The cases run side by side, one thread each; every wait
//! polls for what it waits for, with a generous limit.

use super::big_run::big_run;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long to wait for anything before failing.
const PATIENCE: Duration = Duration::from_secs(20);
/// How often to look.
const POLL: Duration = Duration::from_millis(20);
/// The environment variable that marks every process a case starts.
const MARK: &str = "TDN_TEST_TERMINAL_MARK";
/// Steps of the generated run that is still loading when it is ended.
const BIG_STEPS: usize = 50_000;

/// What the screen is doing when it is ended.
#[derive(Clone, Copy, Debug)]
enum State {
    Loading,
    Idle,
    KeysPending,
    Help,
    Viewer,
    Pager,
    /// An ablation's samples running (the runner sleeps).
    Experiment,
}

/// How it is ended.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Signal(i32),
    /// The terminal's far end closes with keys unread; `ctty`: it was the controlling terminal
    /// (the kernel also sends SIGHUP), else only the hang-up itself tells.
    Close {
        ctty: bool,
    },
}

/// Keys typed just before the end, so that some are still unread.
const PENDING: &[u8] = b"jjjjjjjjjjkkkkkkkkkkjjjjjjjjjjkkkkkkkkkk";

/// The binary running on a pseudo-terminal.
struct Pty {
    master: Option<OwnedFd>,
    child: Child,
    /// Everything it wrote, escape sequences removed.
    seen: Arc<Mutex<String>>,
    /// Everything it wrote, as written.
    raw: Arc<Mutex<Vec<u8>>>,
    stop_reading: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl Pty {
    fn start(args: &[OsString], dir: &Path, mark: &str, pager: Option<&str>, ctty: bool) -> Pty {
        Pty::start_with(args, dir, mark, pager, ctty, &[])
    }

    /// [`Pty::start`] with more environment variables.
    fn start_with(
        args: &[OsString],
        dir: &Path,
        mark: &str,
        pager: Option<&str>,
        ctty: bool,
        env: &[(&str, &str)],
    ) -> Pty {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors into the given ints; the name, termios and
        // size pointers are null or point to a live winsize.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two open descriptors that nothing else owns.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        // The child must not hold the terminal's far end open, or closing ours would not close it.
        // SAFETY: fcntl on an open descriptor.
        unsafe {
            libc::fcntl(master.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
            let flags = libc::fcntl(master.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("TDN_LOG", dir.join("screen.log"))
            .env("TERM", "xterm-256color")
            .env(MARK, mark)
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave));
        if let Some(p) = pager {
            cmd.env("PAGER", p);
        }
        cmd.envs(env.iter().copied());
        // SAFETY: between fork and exec the child only calls setsid and ioctl, both
        // async-signal-safe: it leads a session of its own, with the pseudo-terminal as its
        // controlling terminal when `ctty`.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if ctty && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("tdn-tui starts");
        let seen = Arc::new(Mutex::new(String::new()));
        let raw_seen = Arc::new(Mutex::new(Vec::new()));
        let stop_reading = Arc::new(AtomicBool::new(false));
        let mut out = std::fs::File::from(master.try_clone().expect("dup"));
        let (seen2, raw2, stop2) = (seen.clone(), raw_seen.clone(), stop_reading.clone());
        let reader = std::thread::spawn(move || {
            let mut raw = Vec::new();
            let mut buf = [0u8; 65536];
            while !stop2.load(Ordering::SeqCst) {
                match out.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        raw.extend_from_slice(&buf[..n]);
                        *seen2.lock().unwrap() = plain(&raw);
                        raw2.lock().unwrap().clone_from(&raw);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(POLL / 2);
                    }
                    Err(_) => break,
                }
            }
        });
        Pty {
            master: Some(master),
            child,
            seen,
            raw: raw_seen,
            stop_reading,
            reader: Some(reader),
        }
    }

    fn screen(&self) -> String {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until the screen has shown `text`.
    fn wait_for(&self, text: &str) -> Result<(), String> {
        wait_until(&format!("the screen to show {text:?}"), || {
            self.screen().contains(text)
        })
        .map_err(|e| format!("{e}; it showed:\n{}", tail(&self.screen())))
    }

    fn keys(&self, keys: &[u8]) {
        let fd = self.master.as_ref().expect("the terminal is open");
        std::fs::File::from(fd.try_clone().expect("dup"))
            .write_all(keys)
            .expect("keys written");
    }

    /// Types `keys` and closes the terminal's far end at once.
    fn close_with(&mut self, keys: &[u8]) {
        self.stop_reading.store(true, Ordering::SeqCst);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        self.keys(keys);
        self.master = None;
    }

    /// Waits for the process to exit.
    fn exit(&mut self) -> Result<ExitStatus, String> {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(s);
            }
            if start.elapsed() > PATIENCE {
                let state = process_state(self.child.id());
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(format!(
                    "still running {PATIENCE:?} after its end (state {state}); the screen showed:\n{}",
                    tail(&self.screen())
                ));
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stop_reading.store(true, Ordering::SeqCst);
    }
}

/// The text of what a terminal was sent, escape sequences left out (ratatui writes a run of
/// cells of one style as it is, so a phrase drawn at once reads through).
fn plain(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one final byte in '@'..='~'.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC '\'.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn tail(s: &str) -> String {
    let n = s.chars().count();
    s.chars().skip(n.saturating_sub(1500)).collect()
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) -> Result<(), String> {
    let start = Instant::now();
    while !ok() {
        if start.elapsed() > PATIENCE {
            return Err(format!("waited {PATIENCE:?} for {what}"));
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

/// The state letter of a process (`R`, `S`, `Z`...), from /proc.
fn process_state(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next().map(str::to_owned))
        })
        .unwrap_or_else(|| "gone".to_owned())
}

/// The processes still running (not zombies) that carry `mark`: their names.
fn marked(mark: &str) -> Vec<String> {
    let needle = format!("{MARK}={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(e.path().join("comm")).ok()?;
            (process_state(pid) != "Z").then(|| format!("{} ({pid})", name.trim()))
        })
        .collect()
}

/// One case: start the screen, bring it to `state`, end it, check how it ended.
fn case(state: State, ending: Ending, refund: &Path, big: &Path) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mark = format!("{}-{state:?}-{ending:?}", std::process::id());
    // The ledger is written beside the run: the experiment's run is a copy in `dir`.
    let own = dir.path().join("refund.json");
    let args: Vec<OsString> = match state {
        State::Loading => vec![big.into()],
        State::Experiment => {
            std::fs::copy(refund, &own).map_err(|e| e.to_string())?;
            vec![
                own.clone().into(),
                "--runner".into(),
                "sleep 600; cat".into(),
            ]
        }
        _ => vec![refund.into()],
    };
    let pager = matches!(state, State::Pager).then_some("tail -f");
    let ctty = match ending {
        Ending::Close { ctty } => ctty,
        Ending::Signal(_) => true,
    };
    let mut pty = Pty::start(&args, dir.path(), &mark, pager, ctty);
    match state {
        State::Loading => pty.wait_for("opening")?,
        _ => pty.wait_for("? help")?,
    }
    match state {
        State::Loading | State::Idle | State::KeysPending => {}
        State::Help => {
            pty.keys(b"?");
            pty.wait_for("Finding the cause of a wrong answer")?;
        }
        State::Viewer => {
            pty.keys(b"1j\r");
            pty.wait_for("Esc/q closes")?;
        }
        State::Pager => {
            pty.keys(b"O");
            wait_until("the pager to start", || {
                marked(&mark).iter().any(|p| p.starts_with("tail"))
            })?;
        }
        State::Experiment => {
            // Ablate the top context unit; the command is confirmed first.
            pty.keys(b"ia");
            pty.wait_for("Run your agent?")?;
            pty.keys(b"y");
            wait_until("the runner to start", || {
                marked(&mark).iter().any(|p| p.starts_with("sleep"))
            })?;
        }
    }
    let expected = match ending {
        Ending::Signal(n) => {
            if matches!(state, State::KeysPending) {
                pty.keys(PENDING);
            }
            let pid = libc::pid_t::try_from(pty.child.id()).map_err(|e| e.to_string())?;
            // SAFETY: kill only sends a signal to our own child.
            unsafe {
                libc::kill(pid, n);
            }
            128 + n
        }
        Ending::Close { .. } => {
            pty.close_with(if matches!(state, State::Idle) {
                b""
            } else {
                PENDING
            });
            128 + libc::SIGHUP
        }
    };
    let status = pty.exit()?;
    if status.code() != Some(expected) {
        return Err(format!(
            "ended with {status} (signal {:?}), not exit status {expected}",
            status.signal()
        ));
    }
    if matches!(state, State::Loading) && pty.screen().contains("? help") {
        return Err("the run had finished loading before the end: the case tested nothing".into());
    }
    wait_until("everything it started to end", || marked(&mark).is_empty())
        .map_err(|e| format!("{e}: left {:?}", marked(&mark)))?;
    if matches!(state, State::Experiment) {
        cancelled_and_closed(&own.with_extension("ledger.jsonl"), ending)?;
    }
    Ok(())
}

/// The ledger records the running samples as cancelled, for the reason the screen ended, and
/// closes their batch.
fn cancelled_and_closed(ledger: &Path, ending: Ending) -> Result<(), String> {
    let text = std::fs::read_to_string(ledger).map_err(|e| format!("{}: {e}", ledger.display()))?;
    let reasons: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once("\"error\":\"cancelled (").map(|(_, r)| r))
        .collect();
    let expected = match ending {
        Ending::Signal(n) if n == libc::SIGTERM => "tdn-tui received SIGTERM",
        Ending::Signal(n) if n == libc::SIGHUP => "tdn-tui received SIGHUP",
        Ending::Signal(_) => "tdn-tui received SIGINT",
        // With the terminal as its controlling terminal, SIGHUP may be heard before the hang-up.
        Ending::Close { ctty: true } => "",
        Ending::Close { ctty: false } => "the terminal hung up",
    };
    if reasons.is_empty() || !reasons.iter().all(|r| r.starts_with(expected)) {
        return Err(format!(
            "the samples are not recorded as cancelled ({expected}):\n{text}"
        ));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .args(["ledger", "verify", "--json"])
        .arg(ledger)
        .output()
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    if v["counts"]["unbound"] != 0 || v["counts"]["failed"] != 0 || v["ok"] != true {
        return Err(format!(
            "the ledger does not verify with its batch closed: {v}"
        ));
    }
    Ok(())
}

#[test]
fn every_stop_signal_and_a_closed_terminal_end_the_screen_in_every_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let refund = root.join("sample-runs/refund-outdated-policy.json");
    let files = tempfile::tempdir().expect("a temporary folder");
    let big: PathBuf = files.path().join("big.json");
    let mut run = big_run(BIG_STEPS);
    run.reindex();
    std::fs::write(&big, serde_json::to_vec(&run).expect("JSON")).expect("written");

    let states = [
        State::Loading,
        State::Idle,
        State::KeysPending,
        State::Help,
        State::Viewer,
        State::Pager,
        State::Experiment,
    ];
    let mut cases: Vec<(State, Ending)> = Vec::new();
    for s in states {
        for n in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            cases.push((s, Ending::Signal(n)));
        }
        cases.push((s, Ending::Close { ctty: true }));
    }
    // Without a controlling terminal no SIGHUP comes: the hang-up alone must end it.
    cases.push((State::KeysPending, Ending::Close { ctty: false }));
    cases.push((State::Pager, Ending::Close { ctty: false }));
    cases.push((State::Experiment, Ending::Close { ctty: false }));

    let failures: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .iter()
            .map(|&(s, e)| {
                let (refund, big) = (&refund, &big);
                (s, e, scope.spawn(move || case(s, e, refund, big)))
            })
            .collect();
        running
            .into_iter()
            .filter_map(|(s, e, h)| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(why)) => Some(format!("{s:?}, {e:?}: {why}")),
                Err(_) => Some(format!("{s:?}, {e:?}: the case panicked")),
            })
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What the screen wrote on a terminal after it showed its status bar, with `NO_COLOR` set and
/// these arguments.
fn drawn_with_no_color(extra: &[&str]) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut args: Vec<OsString> = vec![root.join("sample-runs/refund-outdated-policy.json").into()];
    args.extend(extra.iter().map(OsString::from));
    let mark = format!("{}-color-{}", std::process::id(), extra.join("-"));
    let pty = Pty::start_with(&args, dir.path(), &mark, None, true, &[("NO_COLOR", "1")]);
    if let Err(e) = pty.wait_for("? help") {
        panic!("{e}");
    }
    // The status bar is the frame's last line: the rows above it, the selected one among them,
    // were written before it.
    pty.raw.lock().unwrap().clone()
}

/// The SGR attributes `bytes` set (`ESC [ ... m`), a colour given as `38;5;N` or `38;2;R;G;B`
/// (also 48, 58) counted once, as its first number.
fn sgr_codes(bytes: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(bytes);
    let mut codes = Vec::new();
    for seq in text.split("\u{1b}[").skip(1) {
        let params: String = seq
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ';')
            .collect();
        if !seq[params.len()..].starts_with('m') {
            continue;
        }
        let mut nums = params.split(';').map(|p| p.parse::<u16>().unwrap_or(0));
        while let Some(n) = nums.next() {
            codes.push(n);
            if matches!(n, 38 | 48 | 58) {
                let skip = if nums.next() == Some(5) { 1 } else { 3 };
                nums.by_ref().take(skip).for_each(drop);
            }
        }
    }
    codes
}

/// Whether any code sets a foreground or background colour.
fn coloured(codes: &[u16]) -> bool {
    codes
        .iter()
        .any(|c| matches!(c, 30..=38 | 40..=48 | 90..=97 | 100..=107))
}

#[test]
fn color_always_draws_colour_even_with_no_color_set() {
    // docs/screen.md: NO_COLOR selects the mono theme (no colour; the selected row in reverse
    // video), and `--color always` keeps colour even with NO_COLOR: colour codes, among them
    // the selected row's background.
    let always = sgr_codes(&drawn_with_no_color(&["--color", "always"]));
    assert!(
        coloured(&always) && always.contains(&48),
        "--color always with NO_COLOR set drew no colour: {:?}",
        always.iter().collect::<std::collections::BTreeSet<_>>()
    );
    let auto = sgr_codes(&drawn_with_no_color(&[]));
    assert!(
        !coloured(&auto),
        "NO_COLOR drew colour: {:?}",
        auto.iter().collect::<std::collections::BTreeSet<_>>()
    );
    assert!(
        auto.contains(&7),
        "NO_COLOR: nothing in reverse video: {:?}",
        auto.iter().collect::<std::collections::BTreeSet<_>>()
    );
}
