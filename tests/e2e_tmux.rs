//! The real binary in a real terminal: tmux runs `tdn-tui` on the calendar fixture, the test
//! presses keys as a user would (step through the suspects, open the help, quit) and reads the
//! screen with `capture-pane`. Skips, with a message, when tmux is not installed. Waiting for the
//! screen polls with a generous limit; nothing here measures speed.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long to wait for the screen to show something before failing.
const PATIENCE: Duration = Duration::from_secs(20);
/// How often to look.
const POLL: Duration = Duration::from_millis(100);

fn tmux(args: &[&str]) -> Output {
    Command::new("tmux").args(args).output().expect("tmux runs")
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tmux session of our own, killed when the test ends however it ends.
struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux(&["kill-session", "-t", &self.0]);
    }
}

impl Session {
    fn start(command: &str) -> Session {
        let name = format!("tdn-e2e-{}", std::process::id());
        let out = tmux(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "120",
            "-y",
            "40",
            command,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Session(name)
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", &self.0]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.0];
        args.extend_from_slice(keys);
        assert!(tmux(&args).status.success());
    }

    /// Waits until the screen contains `text`; fails with the last screen when it never does.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "'{text}' never appeared; the screen was:\n{s}"
            );
            std::thread::sleep(POLL);
        }
    }
}

#[test]
fn a_user_steps_through_the_suspects_reads_the_help_and_quits() {
    if !tmux_available() {
        eprintln!("tmux is not installed: skipping the end-to-end screen test");
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui");
    let command = format!(
        "'{}' '{}' --report '{}'; echo tdn-exit=$?; sleep 30",
        env!("CARGO_BIN_EXE_tdn-tui"),
        fixtures.join("calendar.run.json").display(),
        fixtures.join("calendar.report.json").display()
    );
    let s = Session::start(&command);

    let first = s.wait_for("Clear winner");
    assert!(
        first.contains("▶#1 ★ s3"),
        "the top suspect is selected when the run opens:\n{first}"
    );
    assert!(
        first.contains("its output 'Friday' flows into step 4"),
        "its evidence is shown"
    );

    s.keys(&["]"]);
    let second = s.wait_for("▶#2   s4");
    assert!(
        second.contains("Step detail · step 's4' (position 4)"),
        "the detail follows:\n{second}"
    );
    s.keys(&["]"]);
    s.wait_for("▶#3   s9");
    s.keys(&["["]);
    s.wait_for("▶#2   s4");

    s.keys(&["?"]);
    let help = s.wait_for("Finding the cause of a wrong answer");
    assert!(help.contains("] and [ step through the suspects"));
    s.keys(&["Escape"]);
    s.wait_for("Clear winner");

    s.keys(&["q"]);
    let after = s.wait_for("tdn-exit=");
    assert!(
        after.contains("tdn-exit=0"),
        "quit leaves with status 0:\n{after}"
    );
    assert!(
        !after.contains("Clear winner"),
        "the terminal is back to the shell's screen:\n{after}"
    );
}
