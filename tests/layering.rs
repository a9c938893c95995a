//! The layers: `tdn-core` (the analysis) ← `tdn-experiments` (re-runs, ledger, settings) ←
//! `tdn-tui` (the screen, the command line, the binary). The compiler refuses an arrow back up: a
//! crate cannot name one built on it. These tests check what the compiler does not: that nothing
//! the core is built from (directly or through other crates, per `Cargo.lock`) is a terminal,
//! screen or async runtime crate, that the experiments pull in no screen, and that the core's code
//! starts no process, prints nothing and reads no environment variable.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read_toml(path: &str) -> toml::Table {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap();
    text.parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The normal (not dev) dependencies a member's manifest lists, target-specific ones included.
fn direct_dependencies(manifest: &str) -> BTreeSet<String> {
    let table = read_toml(manifest);
    let mut names = BTreeSet::new();
    let mut add = |t: Option<&toml::Value>| {
        if let Some(deps) = t.and_then(|v| v.as_table()) {
            names.extend(deps.keys().cloned());
        }
    };
    add(table.get("dependencies"));
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            add(target.get("dependencies"));
        }
    }
    names
}

/// Every package `Cargo.lock` can pull in through `start`, by name (all versions together).
fn closure(start: &BTreeSet<String>) -> BTreeSet<String> {
    let lock = read_toml("Cargo.lock");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for package in lock["package"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let deps = package
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str()?.split(' ').next().map(str::to_owned));
        edges.entry(name).or_default().extend(deps);
    }
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = start.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone()) {
            todo.extend(edges.get(&name).into_iter().flatten().cloned());
        }
    }
    seen
}

fn assert_none_of(crate_name: &str, manifest: &str, forbidden: &[&str]) {
    let direct = direct_dependencies(manifest);
    assert!(!direct.is_empty(), "{manifest} lists no dependencies");
    let all = closure(&direct);
    let found: Vec<&&str> = forbidden.iter().filter(|f| all.contains(**f)).collect();
    assert!(found.is_empty(), "{crate_name} is built from {found:?}");
}

#[test]
fn the_core_is_built_from_no_terminal_screen_or_runtime_crate() {
    assert_none_of(
        "tdn-core",
        "crates/tdn-core/Cargo.toml",
        &[
            "tokio",
            "ratatui",
            "crossterm",
            "futures-util",
            "tdn-experiments",
            "tdn-tui",
        ],
    );
}

#[test]
fn the_experiments_are_built_on_the_core_and_from_no_screen() {
    let direct = direct_dependencies("crates/tdn-experiments/Cargo.toml");
    assert!(
        direct.contains("tdn-core"),
        "tdn-experiments without tdn-core"
    );
    assert_none_of(
        "tdn-experiments",
        "crates/tdn-experiments/Cargo.toml",
        &["ratatui", "crossterm", "tdn-tui"],
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What a dependency list cannot forbid: the standard library's processes, printing and
/// environment. The core takes its settings as arguments and reports through return values.
#[test]
fn the_core_starts_no_process_prints_nothing_and_reads_no_environment() {
    const FORBIDDEN: &[&str] = &[
        "std::process",
        "println!",
        "eprintln!",
        "print!(",
        "std::env::var",
    ];
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("crates/tdn-core/src"), &mut files);
    assert!(files.len() > 5, "crates/tdn-core/src looks empty");
    let mut offences = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for bad in FORBIDDEN {
                if code.contains(bad) {
                    offences.push(format!("{}:{}: {bad}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "layering broken:\n{}",
        offences.join("\n")
    );
}
