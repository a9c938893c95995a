//! The analysis layer knows no terminal, process, runtime or printing: a crate boundary's
//! guarantee, kept by a test. `src/analysis/` must not mention the forbidden names below.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "ratatui",
    "crossterm",
    "tokio",
    "std::process",
    "println!",
    "eprintln!",
    "print!(",
    "crate::experiments",
    "crate::tui",
    "crate::cli",
    "crate::config",
    "std::env::var",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_analysis_layer_has_no_terminal_process_or_printing() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analysis"),
        &mut files,
    );
    assert!(files.len() > 5, "src/analysis looks empty");
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

#[test]
fn experiments_do_not_reach_up_into_the_screen_or_command_line() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/experiments"),
        &mut files,
    );
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for bad in ["crate::tui", "crate::cli", "ratatui", "crossterm"] {
            assert!(!text.contains(bad), "{} mentions {bad}", f.display());
        }
    }
}
