//! The real binary in a real terminal: tmux runs `tdn-tui` on the screen's fixtures and, from a
//! copy of the sample-runs folder, on the refund sample; the tests press keys as a user would
//! (step through the suspects, open the help, run an ablation with the folder's stand-in agent,
//! see its verdict and its ledger record, quit), read the screen with `capture-pane`, then check
//! the ledger and that nothing was left running. Each skips, with a message, when tmux (or, for
//! the ablation, python3) is not installed. Waiting for the screen polls with a generous limit;
//! nothing here measures speed.

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
    fn start(tag: &str, command: &str) -> Session {
        Session::start_in(
            tag,
            Path::new(env!("CARGO_MANIFEST_DIR")),
            (120, 40),
            command,
        )
    }

    fn start_in(tag: &str, dir: &Path, size: (u16, u16), command: &str) -> Session {
        let (w, h) = (size.0.to_string(), size.1.to_string());
        let name = format!("tdn-e2e-{tag}-{}", std::process::id());
        let dir = dir.display().to_string();
        let out = tmux(&[
            "new-session",
            "-d",
            "-c",
            &dir,
            "-s",
            &name,
            "-x",
            &w,
            "-y",
            &h,
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
        self.wait_for_all(&[text])
    }

    /// Waits until the screen contains every one of `texts` at once (a frame can be caught
    /// half drawn); fails with the last screen when it never does.
    fn wait_for_all(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "{texts:?} never appeared together; the screen was:\n{s}"
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
    let s = Session::start("tour", &command);

    // The top suspect is selected when the run opens, with its evidence.
    s.wait_for_all(&[
        "Clear winner",
        "▶#1 ★ s3",
        "its output 'Friday' flows into step 4",
    ]);

    s.keys(&["]"]);
    // The detail follows the selected suspect.
    s.wait_for_all(&["▶#2   s4", "Step detail · step 's4' (position 4)"]);
    s.keys(&["]"]);
    s.wait_for("▶#3   s9");
    s.keys(&["["]);
    s.wait_for("▶#2   s4");

    s.keys(&["?"]);
    s.wait_for_all(&[
        "Finding the cause of a wrong answer",
        "] and [ step through the suspects",
    ]);
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

/// Processes still running whose working folder is `dir` and whose command line names the
/// stand-in agent or the debugger.
fn left_behind(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if std::fs::read_link(p.join("cwd")).ok().as_deref() != Some(dir.as_path()) {
            continue;
        }
        let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let zombie = std::fs::read_to_string(p.join("stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie && (cmd.contains("stand_in") || cmd.contains("tdn-tui")) {
            out.push(cmd);
        }
    }
    out
}

/// A copy of sample-runs/ (runs, stand-in agents, tdn.toml) in a temporary folder, so the ledger
/// the journey writes stays out of the source tree.
fn sample_runs() -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs");
    let dir = tempfile::tempdir().expect("a temporary folder");
    for e in std::fs::read_dir(&src).expect("sample-runs/").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json" || x == "toml") {
            std::fs::copy(&p, dir.path().join(e.file_name())).expect("copy");
        }
    }
    std::fs::create_dir(dir.path().join("agents")).expect("agents/");
    for f in ["stand_in.py", "scenarios.json"] {
        std::fs::copy(
            src.join("agents").join(f),
            dir.path().join("agents").join(f),
        )
        .expect("copy an agent file");
    }
    dir
}

/// Issue 5's journey, by keyboard alone, in an 80x24 terminal, from inside the sample runs'
/// folder: open the refund run, step through the suspects, open the help, switch to the context
/// influence and ablate its top unit through the folder's own stand-in agent (confirming its
/// command first), see it confirmed and recorded, restore the dropped unit and see that
/// confirmed too, quit; then the ledger verifies and nothing the session started is running.
#[test]
fn a_user_ablates_the_top_context_unit_from_the_sample_runs_and_sees_it_confirmed() {
    if !tmux_available() {
        eprintln!("tmux is not installed: skipping the end-to-end ablation test");
        return;
    }
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "python3 is not installed: skipping the end-to-end ablation test (the stand-in agent is a Python script)"
        );
        return;
    }
    let dir = sample_runs();
    let command = format!(
        "env -u TDN_JUDGE XDG_CONFIG_HOME='{}' '{}' refund-outdated-policy.json; echo tdn-exit=$?; sleep 30",
        dir.path().join("no-config").display(),
        env!("CARGO_BIN_EXE_tdn-tui"),
    );
    let s = Session::start_in("journey", dir.path(), (80, 24), &command);
    let first = s.wait_for("Clear winner: step 's3'");
    assert!(
        first.contains("▶#1 ★ s3"),
        "the top suspect is selected:\n{first}"
    );

    s.keys(&["]"]);
    s.wait_for("▶#2   s4");
    s.keys(&["["]);
    s.wait_for("▶#1 ★ s3");

    s.keys(&["?"]);
    s.wait_for("Finding the cause of a wrong answer");
    s.keys(&["Escape"]);
    s.wait_for("Clear winner: step 's3'");

    // One key shows the context influence ranking: its top unit is the outdated policy.
    s.keys(&["i"]);
    s.wait_for_all(&["[Context influence (3)]", "▶1  ★ policy-2019"]);
    s.keys(&["a"]);
    // The exact command, where it came from and what it removes are shown first.
    s.wait_for_all(&[
        "Run your agent?",
        "python3 agents/stand_in.py",
        "from tdn.toml",
        "ablate 'policy-2019'",
    ]);
    s.keys(&["y"]);
    // The verdict names the intervention and the flips.
    s.wait_for_all(&[
        "✔ removing 'policy-2019' changed the answer in 3 of 3 re-runs",
        "CAUSAL",
    ]);
    // When the job ends its batch is closed: the ledger's attribution appears in the pane, its
    // words with their meaning.
    s.wait_for("⊗ harmful (removing it");

    // The restore key shows the dropped unit first; pressed again it re-runs with it put back
    // (the command was confirmed once this session).
    s.keys(&["r"]);
    s.wait_for_all(&["Dropped context", "▶ - policy-2024 (document)"]);
    s.keys(&["r"]);
    s.wait_for_all(&[
        "✔ restoring 'policy-2024' changed the answer in 3 of 3 re-runs",
        "CAUSAL",
    ]);
    s.wait_for("job #2 finished");

    s.keys(&["q"]);
    let after = s.wait_for("tdn-exit=");
    assert!(after.contains("tdn-exit=0"), "{after}");

    let out = Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .args([
            "ledger",
            "verify",
            "refund-outdated-policy.ledger.jsonl",
            "--json",
        ])
        .current_dir(dir.path())
        .output()
        .expect("tdn-tui runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("verify prints JSON");
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["counts"]["failed"], 0, "{v}");
    assert_eq!(v["counts"]["unbound"], 0, "the batch was closed: {v}");
    assert!(v["counts"]["verified"].as_u64().unwrap_or(0) >= 10, "{v}");
    assert_eq!(left_behind(dir.path()), Vec::<String>::new());
}
