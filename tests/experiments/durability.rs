//! What the ledger keeps when things go wrong (runner.md "Verdicts", attribution-ledger.md §4,
//! §7): a process killed mid-session leaves every sample and trial it showed in the ledger, which
//! still verifies (its batch left open); a sample that cannot be saved is shown "not saved" with
//! the reason, forms no trial, and the command exits 1; a sample held back by another process's
//! lock on the ledger is said while it waits.

use crate::support::{SampleRuns, python, survivors, wait_until};
use serde_json::Value;
use std::process::Stdio;

const RUN: &str = "refund-outdated-policy.json";
const LEDGER: &str = "refund-outdated-policy.ledger.jsonl";

/// What a sample or trial line names: the probe kind or unit, and the seed.
type Named = Vec<(String, u64)>;

/// `(probe, seed)` of every sample line shown on stderr, and every trial line as
/// `(component, seed)`.
fn shown(stderr: &str) -> (Named, Named) {
    let mut samples = Vec::new();
    let mut trials = Vec::new();
    for line in stderr.lines() {
        let Some((head, rest)) = line.trim().split_once(" seed ") else {
            continue;
        };
        let Some((seed, tail)) = rest.split_once(':') else {
            continue;
        };
        let Ok(seed) = seed.parse::<u64>() else {
            continue;
        };
        let kind = head.split_whitespace().next().unwrap_or("").to_owned();
        samples.push((kind, seed));
        for part in tail.split(" · ").skip(1) {
            // "formed a causal_ablation trial (isolated: ...) for 'policy-2019' (seed 0, effect -1)"
            let unit = part.split('\'').nth(1).unwrap_or("").to_owned();
            let s = part
                .split("(seed ")
                .nth(1)
                .and_then(|x| x.split(',').next())
                .and_then(|x| x.parse().ok())
                .unwrap_or(u64::MAX);
            trials.push((unit, s));
        }
    }
    (samples, trials)
}

fn records(s: &SampleRuns, kind: &str) -> Vec<Value> {
    let out = s.tdn(&["ledger", "show", LEDGER, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == kind)
        .map(|r| r["record"].clone())
        .collect()
}

#[test]
fn a_crash_mid_session_keeps_every_shown_sample_and_trial_verifiable() {
    if !python() {
        eprintln!("python3 is not installed: skipping the crash test");
        return;
    }
    let s = SampleRuns::new();
    // Seed 2 of the ablation waits (at most a minute) until the test releases it; everything
    // else answers at once. It ends by itself, so nothing has to be killed from outside.
    let runner = "if [ \"$TDN_EXPERIMENT\" = ablate ] && [ \"$TDN_SEED\" = 2 ]; then echo $$ >> pids; i=0; while [ ! -f release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; exit 3; fi; python3 agents/stand_in.py";
    let err_path = s.path("stderr.txt");
    let mut child = s
        .command(&[
            "experiment",
            RUN,
            "--runner",
            runner,
            "--ablate",
            "policy-2019",
            "--samples",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let sample_lines = || {
        shown(&std::fs::read_to_string(&err_path).unwrap_or_default())
            .0
            .len()
    };
    wait_until("five samples shown", || sample_lines() >= 5);
    wait_until("the hanging sample started", || {
        std::fs::read_to_string(s.path("pids")).is_ok_and(|p| !p.trim().is_empty())
    });
    // The crash: SIGKILL, so nothing of tdn-tui runs after it.
    child.kill().unwrap();
    child.wait().unwrap();
    // A killed tdn-tui runs no more code; the waiting sample's supervisor stops it (and the
    // release would end it anyway).
    std::fs::write(s.path("release"), "").unwrap();
    let pids: Vec<i32> = std::fs::read_to_string(s.path("pids"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(survivors(&pids), Vec::<i32>::new());

    let (samples, trials) = shown(&std::fs::read_to_string(&err_path).unwrap());
    assert_eq!(samples.len(), 5, "{samples:?}");
    assert_eq!(trials.len(), 2, "seeds 0 and 1 paired: {trials:?}");

    let saved = records(&s, "sample");
    for (kind, seed) in &samples {
        assert!(
            saved
                .iter()
                .any(|r| r["experiment"] == kind.as_str() && r["seed"] == *seed),
            "shown sample {kind} seed {seed} is not in the ledger"
        );
    }
    let saved = records(&s, "trial");
    for (unit, seed) in &trials {
        assert!(
            saved
                .iter()
                .any(|r| r["component_id"] == unit.as_str() && r["seed"] == *seed),
            "shown trial for {unit} seed {seed} is not in the ledger"
        );
    }
    assert!(
        records(&s, "attribution").is_empty(),
        "the batch never closed"
    );

    let (code, v) = s.verify(LEDGER);
    assert_eq!(code, 0, "a crash leaves nothing that fails: {v}");
    assert_eq!(v["counts"]["failed"], 0);
    assert_eq!(
        v["counts"]["unbound"], 2,
        "the shown trials verify, unbound until their batch is aggregated: {v}"
    );
}

#[test]
fn a_sample_that_cannot_be_saved_is_shown_not_saved_and_forms_no_trial() {
    if !python() {
        return;
    }
    let s = SampleRuns::new();
    std::fs::create_dir(s.path("kept")).unwrap();
    // Opening the ledger works; then the first sample takes its folder away.
    let runner = "rm -rf kept; python3 agents/stand_in.py";
    let out = s.tdn(&[
        "experiment",
        RUN,
        "--runner",
        runner,
        "--ablate",
        "policy-2019",
        "--samples",
        "2",
        "--ledger",
        "kept/refund.ledger.jsonl",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let not_saved = stderr.matches("(not saved: ").count();
    assert_eq!(
        not_saved, 4,
        "every sample is marked, with the reason: {stderr}"
    );
    assert!(stderr.contains("kept/refund.ledger.jsonl"), "{stderr}");
    assert!(!stderr.contains("trial for"), "no trial formed: {stderr}");
    // The verdict is still measured and shown.
    assert!(
        stdout.contains("CAUSAL: removing 'policy-2019'"),
        "{stdout}"
    );
}

#[test]
fn a_sample_held_back_by_another_process_lock_is_said_while_it_waits() {
    let s = SampleRuns::new();
    // Every sample waits (at most a minute) until the test has locked the ledger.
    let runner = "echo $$ >> pids; i=0; while [ ! -f go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo 'You will be refunded $120.'";
    let err_path = s.path("stderr.txt");
    let child = s
        .command(&[
            "experiment",
            RUN,
            "--runner",
            runner,
            "--ablate",
            "tone",
            "--samples",
            "2",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    wait_until("a sample started", || {
        std::fs::read_to_string(s.path("pids")).is_ok_and(|p| !p.trim().is_empty())
    });
    // Another process (here, the test) takes the ledger's lock; then the samples finish.
    let ledger = std::fs::File::options()
        .read(true)
        .append(true)
        .open(s.path(LEDGER))
        .unwrap();
    ledger.lock().unwrap();
    std::fs::write(s.path("go"), "").unwrap();
    wait_until("the wait for the ledger lock is said", || {
        std::fs::read_to_string(&err_path).is_ok_and(|e| e.contains("waiting for ledger lock"))
    });
    ledger.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("another process has held the lock on"),
        "says who holds it: {stderr}"
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["verdict"], "not-confirmed", "{j}");
    assert_eq!(
        j["not_saved"], 0,
        "held samples are written once the lock is free"
    );
    let (code, v) = s.verify(LEDGER);
    assert_eq!(code, 0, "{v}");
}
