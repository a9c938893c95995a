//! What the audit modules share: the binary with a clean environment, the audit fixtures, and
//! small readers of a JSON report. Holds no expectations of its own.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An audit fixture's path.
pub fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/audit")
        .join(format!("{name}.json"))
        .display()
        .to_string()
}

/// The binary in `cwd` with no judge, no embedder override and no user config.
pub fn tdn(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
    c.args(args)
        .current_dir(cwd)
        .env_remove("TDN_JUDGE")
        .env_remove("TDN_EMBEDDER")
        .env("HOME", cwd)
        .env("XDG_CONFIG_HOME", cwd.join(".config"))
        .env("NO_COLOR", "1");
    c
}

/// Runs the binary in a fresh empty folder.
pub fn run(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    tdn(dir.path(), args).output().unwrap()
}

/// Runs the binary in `cwd` with `input` on stdin.
pub fn run_stdin(cwd: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = tdn(cwd, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A command may exit before reading everything (bad usage): a broken pipe is fine.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The exit code, stdout and stderr as text, for assertion messages.
pub fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The single report `analyze --json` printed for one run.
pub fn report_of(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", show(out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one object per run: {text}");
    serde_json::from_str(&text).unwrap()
}

/// `analyze --json` of an audit fixture.
pub fn analyze(name: &str) -> Value {
    report_of(&run(&["analyze", "--json", &fixture(name)]))
}

/// The suspect on step `id`, if any.
pub fn suspect<'a>(report: &'a Value, id: &str) -> Option<&'a Value> {
    report["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == id)
}

/// A number of the report, compared within rounding of the report's 6 decimals.
pub fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-6)
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes `text` to `dir/name`; returns the path as text.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The single JSON object a toolbox command printed (exit 0, one line).
pub fn ok_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", show(out));
    let text = stdout(out);
    assert!(text.ends_with('\n') && text.lines().count() == 1, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// Asserts exit `code`, nothing on stdout, and `names` in the message on stderr.
pub fn fails(out: &Output, code: i32, names: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", show(out));
    assert!(out.stdout.is_empty(), "{}", show(out));
    assert!(stderr(out).contains(names), "want {names:?}: {}", show(out));
}

/// Characters that must never reach a terminal from run text.
pub fn hazard(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Panics when `text` holds a control byte, a C1 control or a bidi override.
pub fn assert_inert(text: &str, what: &str) {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| hazard(c)) {
        let from = floor(text, at.saturating_sub(60));
        panic!(
            "{what}: raw U+{:04X} at byte {at}, after {:?}",
            u32::from(c),
            text.get(from..at).unwrap_or("")
        );
    }
}

/// The largest char boundary of `s` at or below `i`.
pub fn floor(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub fn assert_inert_bytes(bytes: &[u8], what: &str) {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    assert_inert(text, what);
}

/// Keys that visit every pane, scroll, search and open the help, as a user would.
pub const KEYS: &str = "j j G g Tab j Enter Tab j Tab j Tab j Tab ? Esc / a Enter n Esc S-Tab k";
