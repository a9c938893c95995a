//! Runners that misbehave: every broken sample is an error with its stderr tail, never a flip and
//! never the end of the tool, and no process it started outlives it.

use crate::support::{RUN, Scenario, survivors, wait_until};
use serde_json::Value;

fn errors(j: &Value) -> &Vec<Value> {
    j["errors"].as_array().unwrap()
}

#[test]
fn a_hang_past_the_time_out_is_killed_with_everything_it_started() {
    let s = Scenario::new();
    let hang = "echo $$ >> pids; sleep 300 & echo $! >> pids; echo stuck >&2; sleep 300";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        hang,
        "--ablate",
        "tone",
        "--samples",
        "2",
        "--timeout",
        "1",
        "--flip",
        "exact",
    ]);
    assert_eq!(code, 1, "nothing completed: the verdict is error: {err}");
    assert_eq!(j["verdict"], "error");
    assert_eq!(j["class"], Value::Null);
    assert_eq!(errors(&j).len(), 4);
    for e in errors(&j) {
        assert!(e["message"].as_str().unwrap().contains("timed out"), "{e}");
        assert_eq!(e["stderr_tail"], "stuck\n");
    }
    let pids = s.pids();
    assert_eq!(pids.len(), 8, "two processes per sample");
    assert_eq!(
        survivors(&pids),
        Vec::<i32>::new(),
        "processes outlived their sample"
    );
}

#[test]
fn a_command_that_exits_leaves_nothing_running_behind() {
    let s = Scenario::new();
    let leaky = "sleep 300 & echo $! >> pids; python3 agent.py";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        leaky,
        "--baseline",
        "--samples",
        "2",
        "--flip",
        "exact",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["completed"], 2);
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}

#[test]
fn a_process_that_leaves_the_group_with_setsid_is_killed_too() {
    let s = Scenario::new();
    // A daemon in a session of its own, out of the sample's process group: the group kill
    // cannot reach it; the mark in its environment does. Baseline samples exit normally, the
    // ablation's hang past the time-out.
    let script = r#"
d=$(mktemp -d)
setsid sh -c "echo \$\$ >> pids; echo \$\$ > $d/pid; exec sleep 300" < /dev/null > /dev/null 2>&1 &
while [ ! -s "$d/pid" ]; do sleep 0.05; done
rm -r "$d"
if [ "$TDN_EXPERIMENT" = ablate ]; then sleep 300; fi
exec python3 agent.py
"#;
    std::fs::write(s.path("leaky.sh"), script).unwrap();
    let leaky = "sh leaky.sh";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        leaky,
        "--ablate",
        "tone",
        "--samples",
        "1",
        "--timeout",
        "5",
        "--flip",
        "exact",
    ]);
    let _ = (code, err);
    assert_eq!(j["baseline"]["completed"], 2, "{j}");
    assert_eq!(errors(&j).len(), 2, "{j}");
    for e in errors(&j) {
        assert!(e["message"].as_str().unwrap().contains("timed out"), "{e}");
    }
    let pids = s.pids();
    assert_eq!(pids.len(), 4, "one daemon per sample: {pids:?}");
    assert_eq!(
        survivors(&pids),
        Vec::<i32>::new(),
        "a daemon outlived its sample"
    );
}

#[test]
fn garbage_and_non_utf8_answers_are_unreadable_errors() {
    let s = Scenario::new();
    for (runner, mention) in [
        ("printf 'garbage \\033[2J\\001'", "control character"),
        ("printf '\\377\\376 answer'", "not UTF-8"),
        ("echo '{\"answer\": 1}'", "'output'"),
        ("true", "empty"),
    ] {
        let (code, j, err) = s.experiment_json(&[
            "--runner",
            runner,
            "--baseline",
            "--samples",
            "2",
            "--flip",
            "exact",
        ]);
        assert_eq!(code, 1, "{runner}: {err}");
        assert_eq!(j["completed"], 0, "{runner}");
        assert_eq!(errors(&j).len(), 2, "{runner}");
        let msg = errors(&j)[0]["message"].as_str().unwrap();
        assert!(msg.contains(mention), "{runner}: {msg}");
    }
}

#[test]
fn a_json_answer_line_is_found_among_non_utf8_output() {
    let s = Scenario::new();
    let runner = "printf '\\377\\376\\n'; python3 agent.py";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        runner,
        "--baseline",
        "--samples",
        "2",
        "--flip",
        "contains:$120",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["completed"], 2);
    assert_eq!(j["baseline"]["stable"], true);
}

#[test]
fn a_crash_mid_sample_is_an_error_that_blocks_not_confirmed() {
    let s = Scenario::new();
    let crashy = "if [ \"$TDN_EXPERIMENT\" = ablate ] && [ \"$TDN_SEED\" = 1 ]; then echo 'partial answer'; echo 'Traceback (most recent call last): boom' >&2; kill -9 $$; fi; python3 agent.py";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        crashy,
        "--ablate",
        "tone",
        "--flip",
        "contains:$120",
    ]);
    assert_eq!(code, 0, "the command ran to its end: {err}");
    assert_eq!(
        (j["completed"].as_u64(), j["flips"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(
        j["verdict"], "inconclusive",
        "an errored sample blocks not-confirmed"
    );
    let e = &errors(&j)[0];
    assert_eq!(
        (e["probe"].as_str(), e["seed"].as_u64()),
        (Some("experiment"), Some(1))
    );
    assert!(e["message"].as_str().unwrap().contains("signal 9"), "{e}");
    assert!(e["stderr_tail"].as_str().unwrap().contains("boom"), "{e}");
}

#[test]
fn stdout_over_one_mebibyte_kills_the_sample() {
    let s = Scenario::new();
    let flood = "echo $$ >> pids; head -c 3000000 /dev/zero | tr '\\0' a; echo; sleep 300";
    let (code, j, err) = s.experiment_json(&[
        "--runner",
        flood,
        "--baseline",
        "--samples",
        "2",
        "--flip",
        "exact",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(errors(&j).len(), 2);
    assert!(
        errors(&j)[0]["message"]
            .as_str()
            .unwrap()
            .contains("1048576"),
        "{j}"
    );
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}

#[test]
fn samples_run_in_parallel_up_to_the_configured_limit() {
    let s = Scenario::new();
    s.write("parallel.toml", "[runner]\nparallel = 3\n");
    // Each sample waits until all three have started: it can only finish if they run together.
    let barrier = "touch started-$TDN_SEED; n=0; while [ $(ls started-* | wc -l) -lt 3 ]; do sleep 0.05; n=$((n+1)); [ $n -gt 600 ] && exit 7; done; python3 agent.py";
    let (code, j, err) = s.experiment_json(&[
        "--config",
        "parallel.toml",
        "--runner",
        barrier,
        "--baseline",
        "--samples",
        "3",
        "--flip",
        "contains:$120",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["completed"], 3, "{j}");
}

#[test]
fn ctrl_c_cancels_the_command_and_kills_every_sample() {
    let s = Scenario::new();
    let child = s
        .command(&[
            "experiment",
            RUN,
            "--runner",
            "echo $$ >> pids; sleep 300 & echo $! >> pids; wait",
            "--baseline",
            "--samples",
            "2",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("both samples to start", || s.pids().len() >= 4);
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: sends SIGINT to the child we just started.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["cancelled"], true);
    assert_eq!(j["completed"], 0);
    assert_eq!(survivors(&s.pids()), Vec::<i32>::new());
}
