//! Comparing runs end to end (docs/compare.md): pairs made from the real framework exports in
//! tests/fixtures/import/real/, the second of each pair with every id and timestamp renamed and
//! one step changed, compared by the library (`real`) and by `tdn-tui diff` (`cli`). This file
//! holds what the tests share: paths, the binary, and the renaming.

mod against;
mod cli;
mod hostile;
mod real;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A real export's path.
pub fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/real")
        .join(name)
}

/// Another test fixture's path.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every real export, as `<format>/<file>`, sorted.
pub fn real_exports() -> Vec<String> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(real("")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                out.push(format!(
                    "{}/{}",
                    dir.file_name().unwrap().to_string_lossy(),
                    f.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    out
}

/// Runs `tdn-tui` with these arguments.
pub fn tdn(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tdn-tui: {e}"))
}

/// `tdn-tui diff ... --json`, parsed; panics with stderr unless it exits 0.
pub fn diff_json(args: &[&std::ffi::OsStr]) -> Value {
    let mut all: Vec<&std::ffi::OsStr> = vec!["diff".as_ref()];
    all.extend_from_slice(args);
    all.push("--json".as_ref());
    let out = tdn(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "diff {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("diff --json prints JSON")
}

/// A string id renamed: each digit and letter moved one place within its class (`0-9`, `a-f`,
/// `g-z`, `A-F`, `G-Z`), so hex stays hex and base64 stays base64, and two ids stay two ids.
pub fn rename_id(s: &str) -> String {
    fn shift(c: char, lo: char, hi: char) -> char {
        let (lo, hi, c) = (lo as u8, hi as u8, c as u8);
        ((c - lo + 1) % (hi - lo + 1) + lo) as char
    }
    s.chars()
        .map(|c| match c {
            '0'..='9' => shift(c, '0', '9'),
            'a'..='f' => shift(c, 'a', 'f'),
            'g'..='z' => shift(c, 'g', 'z'),
            'A'..='F' => shift(c, 'A', 'F'),
            'G'..='Z' => shift(c, 'G', 'Z'),
            other => other,
        })
        .collect()
}

/// A point in time moved a day and a few seconds later, in the unit its size says (seconds,
/// milliseconds, microseconds or nanoseconds).
fn later(n: i128) -> i128 {
    let second: i128 = match n.abs() {
        x if x > 100_000_000_000_000_000 => 1_000_000_000,
        x if x > 100_000_000_000_000 => 1_000_000,
        x if x > 100_000_000_000 => 1_000,
        _ => 1,
    };
    n + (86_400 + 7) * second
}

/// A timestamp value moved later ([`later`]): a number, a number in a string, or RFC 3339 text
/// (with or without its offset). Anything else is left.
pub fn shift_time(v: &Value) -> Option<Value> {
    match v {
        Value::Number(n) => {
            let x = n.as_i64()?;
            Some(Value::from(i64::try_from(later(i128::from(x))).ok()?))
        }
        Value::String(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => {
            Some(Value::String(later(s.parse().ok()?).to_string()))
        }
        Value::String(s) => {
            let (text, bare) = if OffsetDateTime::parse(s, &Rfc3339).is_ok() {
                (s.clone(), false)
            } else {
                (format!("{s}Z"), true)
            };
            let t = OffsetDateTime::parse(&text, &Rfc3339).ok()?;
            let t = t + time::Duration::seconds(86_407);
            let out = t.format(&Rfc3339).ok()?;
            Some(Value::String(if bare {
                out.trim_end_matches('Z').to_owned()
            } else {
                out
            }))
        }
        _ => None,
    }
}

/// True for a key that holds an id in a trace export: `id`, `..._id`, `...Id`, `....id`.
fn id_key(k: &str) -> bool {
    k == "id" || k.ends_with("_id") || k.ends_with("Id") || k.ends_with(".id")
}

/// True for a key that holds a point in time: its name says time, or ends in `_at` / `At`.
fn time_key(k: &str) -> bool {
    let l = k.to_ascii_lowercase();
    (l.contains("time") && !l.contains("timeout") && !l.contains("timeto"))
        || k.ends_with("_at")
        || k.ends_with("At")
}

/// Renames every id and moves every timestamp of a trace export in place (any format: keys are
/// read by their names), the way a second recording of the same behaviour differs from the
/// first. A number under an id key is moved by 1000.
pub fn rename_export(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if id_key(k) {
                    match x {
                        Value::String(s) => *s = rename_id(s),
                        Value::Number(n) => {
                            if let Some(i) = n.as_i64() {
                                *x = Value::from(i + 1000);
                            }
                        }
                        _ => rename_export(x),
                    }
                } else if time_key(k) && (x.is_string() || x.is_number()) {
                    if let Some(t) = shift_time(x) {
                        *x = t;
                    }
                } else {
                    rename_export(x);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rename_export),
        _ => {}
    }
}

/// Renames every id of a `tdn.run/1` run in place (the run's, each step's and unit's, and every
/// reference to them; a tool call's provider id) and moves every step's times.
pub fn rename_native(run: &mut Value) {
    let ren = |v: &mut Value| {
        if let Value::String(s) = v {
            *s = rename_id(s);
        }
    };
    if let Some(id) = run.get_mut("id") {
        ren(id);
    }
    if let Some(units) = run.get_mut("context_units").and_then(Value::as_array_mut) {
        for u in units {
            for k in ["id", "produced_by"] {
                if let Some(x) = u.get_mut(k) {
                    ren(x);
                }
            }
        }
    }
    for s in run
        .get_mut("steps")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for k in ["id", "parent"] {
            if let Some(x) = s.get_mut(k) {
                ren(x);
            }
        }
        for k in ["started_at", "ended_at"] {
            if let Some(x) = s.get_mut(k)
                && let Some(t) = shift_time(x)
            {
                *x = t;
            }
        }
        if let Some(c) = s.pointer_mut("/tool/call_id") {
            ren(c);
        }
        if let Some(ctx) = s.get_mut("context") {
            for k in ["available", "sent"] {
                for u in ctx
                    .get_mut(k)
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    ren(u);
                }
            }
        }
        for o in s
            .pointer_mut("/decision/options")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            for r in o
                .get_mut("requires")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                ren(r);
            }
        }
    }
}

#[test]
fn renaming_changes_every_id_and_time_and_keeps_two_ids_two() {
    assert_eq!(rename_id("a9f-Z0"), "b0a-G1");
    assert_eq!(rename_id("zz"), "gg");
    assert_ne!(rename_id("4b613ab5cf"), "4b613ab5cf");
    assert_eq!(
        shift_time(&Value::from("2025-06-29T00:23:24.5Z")),
        Some(Value::from("2025-06-30T00:23:31.5Z"))
    );
    assert_eq!(
        shift_time(&Value::from("2025-06-29T00:23:24.123456")),
        Some(Value::from("2025-06-30T00:23:31.123456"))
    );
    assert_eq!(
        shift_time(&Value::from("1700000000000000000")),
        Some(Value::from("1700086407000000000"))
    );
    assert_eq!(
        shift_time(&Value::from(1_700_000_000_000i64)),
        Some(Value::from(1_700_086_407_000i64))
    );
}
