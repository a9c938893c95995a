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

/// A Rust source with comments, string and character literals' contents, and every item under
/// `#[cfg(test)]` (or `#[cfg(any(test, ...))]`) left out; and the names of the modules declared
/// under such an attribute in files of their own, with their `#[path]` when given.
fn production_code(src: &str) -> (String, Vec<(String, Option<String>)>) {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + rest.find('"').unwrap_or(0) + 1;
            i = src[body..]
                .find(&close)
                .map_or(b.len(), |e| body + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            // A module's `#[path = "…"]` is kept: it names a file.
            if out.trim_end().ends_with("#[path =") {
                out.push_str(src.get(start..i).unwrap_or("\"\""));
            } else {
                out.push_str("\"\"");
            }
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '{'), or a lifetime ('a), which stays.
            let mut chars = rest[1..].chars();
            match (chars.next(), chars.next()) {
                (Some('\\'), _) => {
                    i += 2 + rest[2..].find('\'').map_or(0, |e| e + 2);
                    out.push_str("' '");
                }
                (Some(c), Some('\'')) => {
                    i += 2 + c.len_utf8();
                    out.push_str("' '");
                }
                _ => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    // Items under a test attribute.
    let mut kept = String::with_capacity(out.len());
    let mut test_files = Vec::new();
    let mut rest = out.as_str();
    loop {
        let at = ["#[cfg(test)]", "#[cfg(any(test,"]
            .iter()
            .filter_map(|a| rest.find(a))
            .min();
        let Some(at) = at else {
            kept.push_str(rest);
            break;
        };
        kept.push_str(&rest[..at]);
        // Past this attribute and any others on the same item.
        let mut j = at;
        let mut path = None;
        while rest[j..].trim_start().starts_with("#[") {
            j += rest[j..].find("#[").unwrap_or(0);
            let end = j + rest[j..].find(']').unwrap_or(0);
            let end = if rest[j..=end].contains('(') {
                j + rest[j..].find(")]").map_or(end - j, |e| e + 1)
            } else {
                end
            };
            let attr = &rest[j..=end];
            if attr.starts_with("#[path") {
                path = Some(attr.to_owned());
            }
            j = end + 1;
        }
        let item = rest[j..].trim_start();
        let semi = item.find(';');
        let brace = item.find('{');
        let words: Vec<&str> = item.split_whitespace().take(3).collect();
        let is_mod = words.first() == Some(&"mod") || words.get(1) == Some(&"mod");
        let end = match (semi, brace) {
            (Some(s), b) if item.starts_with("use ") || b.is_none_or(|b| s < b) => {
                if is_mod {
                    let name = item[..s].split_whitespace().last().unwrap_or("");
                    test_files.push((name.to_owned(), path.clone()));
                }
                s + 1
            }
            (_, Some(b)) => {
                let mut depth = 0;
                let mut e = b;
                for (k, ch) in item[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                e = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                e
            }
            _ => item.len(),
        };
        let consumed = rest.len() - item.len() + end;
        rest = &rest[consumed..];
    }
    (kept, test_files)
}

/// `r"`, `r#"`, `br"`, ...: the number of `#`s of a raw string starting here.
fn raw_string_start(s: &str) -> Option<usize> {
    let s = s.strip_prefix('b').unwrap_or(s);
    let s = s.strip_prefix('r')?;
    let hashes = s.len() - s.trim_start_matches('#').len();
    s[hashes..].starts_with('"').then_some(hashes)
}

/// The analysis modules each analysis module's production code uses (its tests aside: a test
/// may use a module above the one it tests, as the importers' tests load what they import), with
/// the file that first does, from the sources of `crates/tdn-core/src/analysis`. `testutil`
/// (test support, built only for tests) is left out.
fn analysis_uses() -> BTreeMap<String, BTreeMap<String, String>> {
    let root = Path::new(ROOT).join("crates/tdn-core/src/analysis");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let modules: BTreeSet<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_stem()?.to_str()?.to_owned();
            (name != "mod" && (p.is_dir() || p.extension().is_some_and(|e| e == "rs")))
                .then_some(name)
        })
        .collect();
    // Every file, its production code; and the files and folders that hold only tests.
    let mut code = BTreeMap::new();
    let mut test_paths: Vec<PathBuf> = Vec::new();
    for f in &files {
        let (kept, tests) = production_code(&std::fs::read_to_string(f).unwrap());
        let dir = f.parent().unwrap();
        // Where the file's own modules live: beside a `mod.rs`, else in a folder of its name.
        let own = if f.file_name().is_some_and(|n| n == "mod.rs") {
            dir.to_path_buf()
        } else {
            dir.join(f.file_stem().unwrap())
        };
        for (name, path) in tests {
            match path.as_deref().and_then(|p| p.split('"').nth(1)) {
                Some(p) => test_paths.push(dir.join(p)),
                None => {
                    test_paths.push(own.join(format!("{name}.rs")));
                    test_paths.push(own.join(&name));
                }
            }
        }
        code.insert(f.clone(), kept);
    }
    let mut uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (f, text) in &code {
        if test_paths.iter().any(|t| f.starts_with(t)) {
            continue;
        }
        let rel = f.strip_prefix(&root).unwrap();
        let mut path: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        // `analysis/mod.rs` only declares the modules.
        let Some(from) = path.first().cloned() else {
            continue;
        };
        if from == "testutil" {
            continue;
        }
        let mut named = Vec::new();
        for (k, _) in text.match_indices("crate::analysis::") {
            let after = &text[k + "crate::analysis::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `crate::analysis::{a, b::c, d::{e, f}}`: the first segment of each path.
                let mut depth = 0;
                let mut first = true;
                let mut word = String::new();
                for ch in group.chars() {
                    match ch {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => first = true,
                        c if c.is_alphanumeric() || c == '_' => {
                            if first {
                                word.push(c);
                            }
                        }
                        _ => {
                            if !word.is_empty() {
                                named.push(std::mem::take(&mut word));
                                first = false;
                            }
                        }
                    }
                }
                if !word.is_empty() {
                    named.push(word);
                }
            } else {
                named.push(
                    after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
        // `super::…::x` reaching the analysis itself.
        let supers = "super::".repeat(path.len());
        for (k, _) in text.match_indices(&supers) {
            if text[..k].ends_with("super::") {
                continue;
            }
            named.push(
                text[k + supers.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
        for m in named {
            if m != from && m != "testutil" && modules.contains(&m) {
                uses.entry(from.clone())
                    .or_default()
                    .entry(m)
                    .or_insert_with(|| rel.display().to_string());
            }
        }
        uses.entry(from).or_default();
    }
    uses
}

/// No circle between the analysis modules: there is an order in which each uses only earlier
/// ones. The order `docs/architecture.md` gives is such an order and names every module.
#[test]
fn the_analysis_modules_use_each_other_in_one_direction() {
    let uses = analysis_uses();
    assert!(uses.len() > 10, "found only {:?}", uses.keys());
    // Take the modules that use no module left, one at a time; a circle leaves some over.
    let mut left: BTreeSet<&String> = uses.keys().collect();
    let mut order = Vec::new();
    while let Some(next) = left
        .iter()
        .find(|m| uses[**m].keys().all(|u| !left.contains(u)))
        .copied()
    {
        left.remove(next);
        order.push(next.as_str());
    }
    // Each module left uses one left: walking those uses comes back to a module, a circle.
    let mut walk: Vec<&String> = left.iter().take(1).copied().collect();
    let mut circle = Vec::new();
    while let Some(&m) = walk.last() {
        let Some((u, file)) = uses[m].iter().find(|(u, _)| left.contains(u)) else {
            break;
        };
        circle.push(format!("{m} uses {u} ({file})"));
        if let Some(start) = walk.iter().position(|w| *w == u) {
            circle.drain(..start);
            break;
        }
        walk.push(u);
    }
    assert!(
        circle.is_empty(),
        "a circle between analysis modules:\n{}",
        circle.join("\n")
    );
    // The documented order.
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/architecture.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.starts_with("Order: "))
        .expect("docs/architecture.md has no line starting 'Order: '");
    let documented: Vec<&str> = line["Order: ".len()..]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut earlier = BTreeSet::new();
    for m in &documented {
        let used = uses
            .get(*m)
            .unwrap_or_else(|| panic!("docs/architecture.md names `{m}`, not an analysis module"));
        for (u, file) in used {
            assert!(
                earlier.contains(u.as_str()),
                "docs/architecture.md puts `{m}` before `{u}`, which it uses ({file})"
            );
        }
        earlier.insert(*m);
    }
    let missing: Vec<&&str> = order.iter().filter(|m| !earlier.contains(**m)).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's order leaves out {missing:?} (one order that holds: {order:?})"
    );
}

/// The check above finds what it must: a use by path, in a group, through `super`, and not one
/// in a comment, a string or a test.
#[test]
fn production_code_leaves_out_comments_strings_and_tests() {
    let src = r##"
use crate::analysis::{a, b::c, d::{e, f}};
// use crate::analysis::g;
const S: &str = "crate::analysis::h";
const R: &str = r#"crate::analysis::i"#;
const C: char = '{';
fn x<'a>(s: &'a str) -> &'a str { s }
#[cfg(test)]
mod tests { use crate::analysis::j; }
#[cfg(test)]
#[path = "k_tests.rs"]
mod k;
#[cfg(test)]
mod l;
fn after() { crate::analysis::m::n(); }
"##;
    let (kept, tests) = production_code(src);
    for gone in ["::g", "::h", "::i", "::j", "'{'"] {
        assert!(!kept.contains(gone), "{gone} left in:\n{kept}");
    }
    for here in [
        "{a, b::c, d::{e, f}}",
        "fn x<'a>(s: &'a str)",
        "crate::analysis::m::n()",
    ] {
        assert!(kept.contains(here), "{here} lost from:\n{kept}");
    }
    assert_eq!(
        tests,
        vec![
            ("k".to_owned(), Some("#[path = \"k_tests.rs\"]".to_owned())),
            ("l".to_owned(), None)
        ]
    );
}
