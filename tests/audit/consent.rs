//! docs/experiments.md, "Where the command comes from": a command found in a `tdn.toml` of the
//! current folder runs only with `--yes`, for every kind of command (runner, judge, `cmd:`
//! embedder, `cmd:` flip rule) and every command that could run it; `--config PATH` that is
//! missing or broken exits 2. Each command leaves a marker file when it runs.

use super::support::{fails, report_of, root, show, stderr, tdn};
use serde_json::Value;
use std::process::Output;

/// A folder holding a `tdn.toml` whose every command would leave a marker file.
struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    fn new(toml: &str) -> Folder {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("marker");
        std::fs::write(
            dir.path().join("tdn.toml"),
            toml.replace("MARK", &marker.display().to_string()),
        )
        .unwrap();
        std::fs::copy(
            root().join("sample-runs/refund-outdated-policy.json"),
            dir.path().join("run.json"),
        )
        .unwrap();
        Folder { dir }
    }

    fn run(&self, args: &[&str]) -> (Output, bool) {
        let marker = self.dir.path().join("marker");
        let _ = std::fs::remove_file(&marker);
        let out = tdn(self.dir.path(), args).output().unwrap();
        (out, marker.exists())
    }
}

#[test]
fn a_tdn_toml_in_the_current_folder_is_not_the_users_word_for_any_command() {
    // The runner: experiment and localize exit 2 naming the file and the command.
    let f = Folder::new("[runner]\ncommand = \"touch MARK\"\n");
    for args in [
        vec!["experiment", "run.json", "--baseline", "--samples", "2"],
        vec!["localize", "run.json", "--samples", "2"],
    ] {
        let (out, ran) = f.run(&args);
        assert!(!ran, "{args:?} ran the runner without --yes");
        fails(&out, 2, "tdn.toml");
        assert!(stderr(&out).contains("touch"), "{}", show(&out));
    }
    let (out, ran) = f.run(&[
        "experiment",
        "run.json",
        "--baseline",
        "--samples",
        "2",
        "--yes",
    ]);
    assert!(ran, "--yes allows it: {}", show(&out));

    // The judge: analyze leaves it out with a warning saying how to allow it.
    let f = Folder::new("[judge]\ncommand = \"touch MARK\"\n");
    let (out, ran) = f.run(&["analyze", "--json", "run.json"]);
    assert!(!ran);
    let r = report_of(&out);
    assert_eq!(r["judge"], Value::Null);
    assert!(
        r["run"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains("--yes")),
        "{}",
        r["run"]["warnings"]
    );

    // A cmd: embedder: analyze, eval and the screen do not run it without --yes.
    let f = Folder::new("[embedder]\nname = \"cmd:touch MARK; exit 1\"\n");
    let ww = root()
        .join("tests/fixtures/import/whowhen/algorithm-generated.json")
        .display()
        .to_string();
    for args in [
        vec!["analyze", "--json", "run.json"],
        vec!["run.json", "--render", "80x24"],
        vec!["eval", ww.as_str()],
        vec!["experiment", "run.json", "--runner", "true", "--baseline"],
        vec!["localize", "run.json", "--runner", "true"],
    ] {
        let (out, ran) = f.run(&args);
        assert!(
            !ran,
            "{args:?} ran the embedder without --yes: {}",
            show(&out)
        );
    }
    let (_, ran) = f.run(&["analyze", "--json", "--yes", "run.json"]);
    assert!(ran, "--yes allows the embedder");

    // A cmd: flip rule: experiment exits 2.
    let f = Folder::new("[experiments]\nflip = \"cmd:touch MARK\"\n");
    let (out, ran) = f.run(&["experiment", "run.json", "--runner", "true", "--baseline"]);
    assert!(!ran);
    fails(&out, 2, "flip");

    // --config PATH: missing or broken is exit 2; a broken tdn.toml found in the folder is
    // reported and the defaults are used.
    let f = Folder::new("this is [ not toml");
    for args in [
        vec!["analyze", "--config", "/nonexistent/tdn.toml", "run.json"],
        vec!["analyze", "--config", "tdn.toml", "run.json"],
        vec![
            "experiment",
            "--config",
            "/nonexistent/tdn.toml",
            "run.json",
            "--runner",
            "true",
            "--baseline",
        ],
    ] {
        let (out, _) = f.run(&args);
        fails(&out, 2, "tdn.toml");
    }
    let (out, _) = f.run(&["analyze", "--json", "run.json"]);
    report_of(&out);
    assert!(stderr(&out).contains("tdn.toml"), "{}", show(&out));
}
