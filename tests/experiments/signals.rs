//! No agent process outlives the debugger (runner.md "Processes"): for each stop signal (SIGTERM,
//! SIGHUP, SIGINT, SIGQUIT) sent to `experiment` and to the screen (headless, `--render`) while a
//! sample runs a child and a grandchild, every process is gone within a few seconds, the running
//! sample is recorded as cancelled, the batch is closed as cancelled (its trial kept, marked
//! cancelled; no attribution), the exit status is 128 + the signal, and
//! the ledger verifies. SIGKILL, which nothing can catch, is covered by the samples' supervisors:
//! nothing survives either (no process, no experiment spec file in the temporary folder), and the next start reports (and closes) the batch the dead debugger
//! left open. Also: the command line and the screen write the same ledger entries for the same
//! request.

use crate::support::{RUN, Scenario, python, running, wait_until};
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long every process a killed job started may take to go: "a few seconds".
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// Answers at once except the ablation's seed 1, which starts a child and a grandchild (their
/// pids go to `pids`) and waits for them. Seed 0 of the ablation pairs with its baseline, so a
/// trial is in the ledger before the signal.
const RUNNER: &str = "if [ \"$TDN_EXPERIMENT\" = ablate ] && [ \"$TDN_SEED\" = 1 ]; then echo $$ >> pids; sleep 30 & echo $! >> pids; sh -c 'echo $$ >> pids; sleep 30 & echo $! >> pids; wait' & wait; fi; python3 agent.py";

const CONFIG: &str =
    "[runner]\nparallel = 2\n[experiments]\nsamples = 2\nflip = \"contains:$120\"\n";

const SIGNALS: [(i32, &str); 5] = [
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGINT, "SIGINT"),
    (libc::SIGQUIT, "SIGQUIT"),
    (libc::SIGKILL, "SIGKILL"),
];

const LEDGER: &str = "refund-outdated-policy.ledger.jsonl";

fn pids(s: &Scenario) -> Vec<i32> {
    s.pids()
}

/// Waits until the hanging sample has started its child and grandchild, the first trial is in
/// the ledger, and every other sample (seed 0's pair and the baseline of seed 1, which answer at
/// once) is recorded, so the signal finds only the hanging sample running.
fn wait_for_the_hanging_sample(s: &Scenario) {
    wait_until("the sample's four processes", || pids(s).len() >= 4);
    wait_until("a trial and the three other samples in the ledger", || {
        std::fs::read_to_string(s.path(LEDGER)).is_ok_and(|l| {
            l.contains("\"type\":\"trial\"") && l.matches("\"type\":\"sample\"").count() >= 3
        })
    });
}

/// Sends `sig` to the child, waits for it, and checks that nothing it started survives.
fn signal_and_check(s: &Scenario, child: Child, sig: i32, name: &str) -> std::process::Output {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: sends a signal to the child this test started.
    unsafe {
        libc::kill(pid, sig);
    }
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    let started = pids(s);
    loop {
        let alive: Vec<i32> = started.iter().copied().filter(|&p| running(p)).collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            sent.elapsed() < GONE_WITHIN,
            "{name}: processes {alive:?} outlived tdn-tui by {GONE_WITHIN:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The running sample's spec file goes too: removed by the debugger when it could stop the
    // sample, by the sample's supervisor when the debugger was killed outright.
    let prefix = format!("tdn-spec-{pid}-");
    let left = || -> Vec<String> {
        std::fs::read_dir(std::env::temp_dir())
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with(&prefix))
                    .collect()
            })
            .unwrap_or_default()
    };
    while !left().is_empty() {
        assert!(
            sent.elapsed() < GONE_WITHIN,
            "{name}: spec files {:?} outlived tdn-tui by {GONE_WITHIN:?}",
            left()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    out
}

fn ledger_records(s: &Scenario) -> Vec<Value> {
    let out = s.tdn(&["ledger", "show", LEDGER, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["records"].as_array().unwrap().clone()
}

/// After a caught signal: the exit status says which, the stopped sample is in the ledger as
/// cancelled (by that signal), the batch is closed, and the ledger verifies.
fn check_caught(s: &Scenario, out: &std::process::Output, sig: i32, name: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + sig), "{name}: {err}");
    let records = ledger_records(s);
    let cancelled: Vec<&Value> = records
        .iter()
        .filter(|r| {
            r["type"] == "sample"
                && r["record"]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains(&format!("received {name}")))
        })
        .collect();
    assert_eq!(
        cancelled.len(),
        1,
        "{name}: one sample was stopped: {records:?}"
    );
    // The batch is closed as cancelled: its trial stays, marked cancelled, and it concludes
    // nothing (no attribution), now or when the ledger is next read.
    let cancels: Vec<&Value> = records.iter().filter(|r| r["type"] == "cancel").collect();
    assert_eq!(
        cancels.len(),
        1,
        "{name}: the batch was closed as cancelled: {records:?}"
    );
    assert!(
        cancels[0]["record"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains(name)),
        "{name}: {:?}",
        cancels[0]
    );
    assert!(
        !records.iter().any(|r| r["type"] == "attribution"),
        "{name}: a cancelled batch writes no attribution: {records:?}"
    );
    let (code, v) = verify(s);
    assert_eq!(code, 0, "{name}: {v}");
    assert_eq!(v["counts"]["unbound"], 0, "{name}: {v}");
    assert_eq!(
        v["counts"]["cancelled"], 1,
        "{name}: the trial formed before the signal: {v}"
    );
}

fn verify(s: &Scenario) -> (i32, Value) {
    let out = s.tdn(&["ledger", "verify", LEDGER, "--json"]);
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// After SIGKILL: the ledger verifies with the batch open, and the next start says a dead
/// debugger left it and closes it.
fn check_killed(s: &Scenario) {
    let (code, v) = verify(s);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["counts"]["unbound"], 1,
        "the trial shown before the kill: {v}"
    );
    let out = s.tdn(&[
        "experiment",
        RUN,
        "--config",
        "tdn.toml",
        "--runner",
        "python3 agent.py",
        "--baseline",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("left open by a tdn-tui that stopped without closing it")
            && err.contains("closed 1 batch(es) left open"),
        "{err}"
    );
    let (code, v) = verify(s);
    assert_eq!((code, &v["counts"]["unbound"]), (0, &Value::from(0)), "{v}");
}

/// Waits until `child` hangs in its sample, sends it `sig`, and checks what each kind of stop
/// must leave: after SIGKILL the open batch found and closed by the next start (`None`); after a
/// signal it catches, the one sample stopped and the batch closed (`Some`, with its output).
fn stop_and_check(
    s: &Scenario,
    child: Child,
    sig: i32,
    name: &str,
) -> Option<std::process::Output> {
    wait_for_the_hanging_sample(s);
    let out = signal_and_check(s, child, sig, name);
    if sig == libc::SIGKILL {
        check_killed(s);
        return None;
    }
    check_caught(s, &out, sig, name);
    Some(out)
}

fn scenario() -> Scenario {
    let s = Scenario::new();
    s.write("tdn.toml", CONFIG);
    s
}

#[test]
fn every_stop_signal_to_the_command_line_stops_every_process_it_started() {
    if !python() {
        eprintln!("python3 is not installed: skipping");
        return;
    }
    for (sig, name) in SIGNALS {
        let s = scenario();
        let child = s
            .command(&[
                "experiment",
                RUN,
                "--config",
                "tdn.toml",
                "--runner",
                RUNNER,
                "--ablate",
                "policy-2019",
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(out) = stop_and_check(&s, child, sig, name) else {
            continue;
        };
        let j: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: no JSON ({e})"));
        assert_eq!(
            (&j["cancelled"], &j["stopped"]),
            (&Value::from(true), &Value::from(1))
        );
    }
}

#[test]
fn every_stop_signal_to_the_screen_stops_every_process_it_started() {
    if !python() {
        eprintln!("python3 is not installed: skipping");
        return;
    }
    for (sig, name) in SIGNALS {
        let s = scenario();
        // `a` ablates the top suspect, step s3 (the unit it produced); `y` agrees to run.
        let child = s
            .command(&[
                RUN, "--config", "tdn.toml", "--runner", RUNNER, "--render", "100x30", "--keys",
                "a y",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(out) = stop_and_check(&s, child, sig, name) else {
            continue;
        };
        let screen = String::from_utf8_lossy(&out.stdout);
        assert!(screen.contains("cancelled"), "{name}: {screen}");
    }
}

/// A ledger record with what depends on time and randomness left out: ids, cohorts, times, the
/// hash chain, and the digests bound to them.
fn comparable(r: &Value) -> Value {
    let mut r = r["record"].clone();
    if let Some(m) = r.as_object_mut() {
        for k in [
            "sample_id",
            "cohort",
            "finished_at",
            "tested_at",
            "created_at",
            "prev",
            "trial_id",
            "with_sample",
            "without_sample",
            "attribution_id",
            "trial_ids",
            "matched_pair_keys",
            "source_trial_digests",
            "supersedes",
            // How long a sample took is measured, never the same twice.
            "duration_ms",
        ] {
            m.remove(k);
        }
        for side in ["with_spent", "without_spent"] {
            if let Some(spent) = m.get_mut(side).and_then(Value::as_object_mut) {
                spent.remove("duration_ms");
            }
        }
    }
    r
}

fn comparable_ledger(s: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = ledger_records(s)
        .iter()
        .map(|r| format!("{} {}", r["type"], comparable(r)))
        .collect();
    // Samples finish in whatever order their processes do.
    out.sort();
    out
}

#[test]
fn the_command_line_and_the_screen_write_the_same_ledger_entries_for_the_same_request() {
    if !python() {
        eprintln!("python3 is not installed: skipping");
        return;
    }
    // `--ablate s3` on the command line and `a` on the top suspect, step s3, in the screen: both
    // leave out the units s3 produced, under the one rule of the engine.
    let cli = scenario();
    let out = cli.tdn(&[
        "experiment",
        RUN,
        "--config",
        "tdn.toml",
        "--runner",
        "python3 agent.py",
        "--ablate",
        "s3",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let screen = scenario();
    let out = screen.tdn(&[
        RUN,
        "--config",
        "tdn.toml",
        "--runner",
        "python3 agent.py",
        "--render",
        "100x30",
        "--keys",
        "a y",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = comparable_ledger(&cli);
    let b = comparable_ledger(&screen);
    // The header, bundle B and B without the unit, 2 baseline and 2 ablation samples, 2 trials,
    // 1 attribution.
    assert_eq!(a.len(), 10, "{a:#?}");
    assert_eq!(a, b);
    assert!(
        a.iter().any(|l| l.contains("\"remove\":[\"order-1182\"]")),
        "{a:#?}"
    );
    assert!(
        a.iter()
            .any(|l| l.starts_with("\"attribution\"")
                && l.contains("\"component_id\":\"order-1182\"")),
        "{a:#?}"
    );
}
