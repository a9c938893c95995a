//! Where `analyze --json` writes its report (streamed through a buffer since issue 11): a write
//! that fails (a full disk) exits 2 with the same message as before, a reader that went away
//! (a closed pipe) ends the command quietly with exit 0, as docs/report.md's exit codes say.

use super::{sample, tdn};
use std::process::Stdio;

#[test]
fn a_failed_write_exits_2_and_a_reader_that_went_away_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let run = sample("calendar-friday");
    // /dev/full takes no byte: every write fails with "no space left".
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = tdn(dir.path(), &["analyze", "--json", &run])
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
        assert!(stderr.contains("cannot write to stdout"), "{stderr}");
    }
    // The reading end is closed before the report comes: the write meets a broken pipe (or,
    // should the report fit the pipe first, nothing at all); either way no error is said.
    let mut child = tdn(dir.path(), &["analyze", "--json", &run])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("cannot write"), "{stderr}");
}
