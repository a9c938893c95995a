//! Shared pieces of the experiment tests: a scenario folder with the run and a stand-in agent, a
//! copy of sample-runs/ with its own stand-ins, the binary, and a check for processes that
//! outlived their sample.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The run every test experiments on.
pub const RUN: &str = "refund-outdated-policy.json";

/// A stand-in agent: "$120" while the outdated policy is in its context and the current one is
/// not, "$80" otherwise; 3 loops with the tone instruction, 2 without; 1,000 tokens and $0.002 a
/// run.
pub const AGENT: &str = r#"
import json, sys
spec = json.load(sys.stdin)
run = json.load(open(spec["run"]))
sent = next(s for s in run["steps"] if s.get("context"))["context"]["sent"]
ctx = (set(sent) - set(spec["remove"])) | set(spec["restore"])
amount = "$120" if "policy-2019" in ctx and "policy-2024" not in ctx else "$80"
print("thinking about order 1182...")
print(json.dumps({"output": "You will be refunded %s for order 1182." % amount,
                  "cost": {"loops": 3 if "tone" in ctx else 2, "tokens": 1000, "usd": 0.002}}))
"#;

/// A temporary folder holding the run and `agent.py`; tests run the binary inside it.
pub struct Scenario {
    pub dir: tempfile::TempDir,
}

impl Scenario {
    pub fn new() -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/experiments");
        for f in [RUN, "no-final-answer.json"] {
            std::fs::copy(fixtures.join(f), dir.path().join(f)).unwrap();
        }
        std::fs::write(dir.path().join("agent.py"), AGENT).unwrap();
        Scenario { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).unwrap();
    }

    /// `tdn-tui ARGS` in the scenario folder, with no user config folder in reach.
    pub fn tdn(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
        c.args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("no-config"))
            .env_remove("TDN_JUDGE");
        c
    }

    /// `tdn-tui experiment RUN --json ARGS`: exit code, parsed stdout, stderr.
    pub fn experiment_json(&self, args: &[&str]) -> (i32, Value, String) {
        let mut all = vec!["experiment", RUN, "--json"];
        all.extend_from_slice(args);
        let out = self.tdn(&all);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {stderr}"));
        (out.status.code().unwrap_or(-1), json, stderr)
    }

    /// Process ids the agent scripts appended to `pids`, one a line.
    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.path("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

/// True while the process exists and is not a zombie (a killed orphan stays a zombie until init
/// reaps it, which some containers never do).
pub fn running(pid: i32) -> bool {
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

/// Waits (up to a generous bound, for slow machines) until none of `pids` is running; returns
/// the survivors.
pub fn survivors(pids: &[i32]) -> Vec<i32> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<i32> = pids.iter().copied().filter(|&p| running(p)).collect();
        if alive.is_empty() || Instant::now() > end {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (up to a generous bound) until `f` holds.
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A copy of sample-runs/ (runs, agents, tdn.toml) in a temporary folder.
pub struct SampleRuns {
    pub dir: tempfile::TempDir,
}

impl SampleRuns {
    pub fn new() -> SampleRuns {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs");
        let dir = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(&src).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json" || x == "toml") {
                std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
            }
        }
        std::fs::create_dir(dir.path().join("agents")).unwrap();
        for f in ["stand_in.py", "scenarios.json"] {
            std::fs::copy(
                src.join("agents").join(f),
                dir.path().join("agents").join(f),
            )
            .unwrap();
        }
        SampleRuns { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
        c.args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("no-config"))
            .env_remove("TDN_JUDGE");
        c
    }

    pub fn tdn(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `tdn-tui experiment RUN --yes --json ARGS`: exit code and parsed stdout.
    pub fn experiment(&self, run: &str, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["experiment", run, "--yes", "--json"];
        all.extend_from_slice(args);
        let out = self.tdn(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let j = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{all:?}: stdout is not JSON ({e}); stderr: {stderr}"));
        (out.status.code().unwrap_or(-1), j)
    }

    /// `tdn-tui ledger verify PATH --json`: exit code and parsed stdout.
    pub fn verify(&self, ledger: &str) -> (i32, Value) {
        let out = self.tdn(&["ledger", "verify", ledger, "--json"]);
        let j = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "verify printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), j)
    }
}

/// True when python3 runs (the stand-in agents are Python scripts).
pub fn python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
