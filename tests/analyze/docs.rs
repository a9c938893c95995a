//! What the README and docs/ say the program prints, checked against the program (issue 32):
//! every example of `tdn-tui analyze sample-runs/NAME.json` (a fenced block right after a
//! paragraph naming that command) is what the binary prints, the detector count and the lists of
//! `detector`, `category` and `source_format` values are the code's, and the commands said to take
//! `--index` and `--from` are the ones that do.
//!
//! The normalisation, also said beside each example:
//! - text: every line as printed, except that a line `...` stands for any number of lines and a
//!   line ending in `...` for a line that starts with what comes before the dots;
//! - JSON: the same keys in every object; the string `"..."` stands for any string, and as the
//!   last item of a list for any number of further items; a number stands for the printed one
//!   rounded to two decimals.

use super::{root, run};
use serde_json::Value;
use std::collections::BTreeSet;
use tdn_tui::analysis::detect::{ALL as DETECTORS, Category};
use tdn_tui::analysis::import::SourceFormat;

fn doc(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One example: the command's arguments after `tdn-tui`, the fence's language, its lines.
struct Example {
    args: Vec<String>,
    lang: String,
    body: String,
}

/// The fenced blocks whose paragraph just before names `tdn-tui analyze sample-runs/NAME.json`
/// (with or without `--json`) in backquotes.
fn examples(text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut paragraph = String::new();
    let mut after_blank = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            if let Some(args) = command_in(&paragraph) {
                out.push(Example {
                    args,
                    lang: lang.to_owned(),
                    body: body.join("\n"),
                });
            }
            paragraph.clear();
        } else if line.trim().is_empty() {
            after_blank = true;
        } else {
            if after_blank {
                paragraph.clear();
                after_blank = false;
            }
            paragraph.push_str(line);
            paragraph.push(' ');
        }
    }
    out
}

fn command_in(paragraph: &str) -> Option<Vec<String>> {
    let start = paragraph.find("`tdn-tui analyze sample-runs/")?;
    let rest = &paragraph[start + 1..];
    let cmd = &rest[..rest.find('`')?];
    Some(cmd.split_whitespace().skip(1).map(str::to_owned).collect())
}

fn printed(args: &[String]) -> String {
    let mut args: Vec<String> = args.to_vec();
    // The path is the repository's, whatever folder the test runs in.
    for a in &mut args {
        if a.starts_with("sample-runs/") {
            *a = root().join(&*a).display().to_string();
        }
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&refs);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether the doc's lines match the printed ones (see the module's normalisation).
fn lines_match(doc: &[&str], out: &[&str]) -> bool {
    match doc.split_first() {
        None => out.is_empty(),
        Some((&"...", rest)) => (0..=out.len()).any(|skip| lines_match(rest, &out[skip..])),
        Some((line, rest)) => {
            let Some((first, others)) = out.split_first() else {
                return false;
            };
            let same = match line.strip_suffix("...") {
                Some(prefix) => first.starts_with(prefix),
                None => first == line,
            };
            same && lines_match(rest, others)
        }
    }
}

/// Where the doc's JSON differs from the printed one, if anywhere.
fn json_mismatch(doc: &Value, out: &Value, at: &str) -> Option<String> {
    let differs = || {
        Some(format!(
            "{at}: the doc says {doc}, the program prints {out}"
        ))
    };
    match (doc, out) {
        (Value::String(d), Value::String(_)) if d == "..." => None,
        (Value::Number(d), Value::Number(o)) => {
            let (d, o) = (d.as_f64()?, o.as_f64()?);
            let rounded = (o * 100.0).round() / 100.0;
            if d == o || (d - rounded).abs() < 1e-9 {
                None
            } else {
                differs()
            }
        }
        (Value::Array(d), Value::Array(o)) => {
            let open = d.last() == Some(&Value::String("...".to_owned()));
            let shown = if open { &d[..d.len() - 1] } else { &d[..] };
            if o.len() < shown.len() || (!open && o.len() != shown.len()) {
                return differs();
            }
            shown
                .iter()
                .zip(o)
                .enumerate()
                .find_map(|(i, (d, o))| json_mismatch(d, o, &format!("{at}[{i}]")))
        }
        (Value::Object(d), Value::Object(o)) => {
            let (dk, ok): (BTreeSet<_>, BTreeSet<_>) = (d.keys().collect(), o.keys().collect());
            if dk != ok {
                return Some(format!("{at}: the doc's keys {dk:?}, the program's {ok:?}"));
            }
            d.iter()
                .find_map(|(k, v)| json_mismatch(v, &o[k], &format!("{at}.{k}")))
        }
        _ if doc == out => None,
        _ => differs(),
    }
}

fn check_examples(path: &str) -> usize {
    let text = doc(path);
    let found = examples(&text);
    for ex in &found {
        let out = printed(&ex.args);
        match ex.lang.as_str() {
            "json" => {
                let d: Value = serde_json::from_str(&ex.body)
                    .unwrap_or_else(|e| panic!("{path}: the example is not JSON: {e}"));
                let o: Value = serde_json::from_str(&out).unwrap();
                if let Some(why) = json_mismatch(&d, &o, "report") {
                    panic!("{path}: `tdn-tui {}`: {why}", ex.args.join(" "));
                }
            }
            _ => {
                let doc_lines: Vec<&str> = ex.body.lines().collect();
                let out_lines: Vec<&str> = out.lines().collect();
                assert!(
                    lines_match(&doc_lines, &out_lines),
                    "{path}: `tdn-tui {}` prints something else:\n{out}",
                    ex.args.join(" ")
                );
            }
        }
    }
    found.len()
}

#[test]
fn the_readme_and_report_examples_are_what_analyze_prints() {
    assert_eq!(
        check_examples("README.md"),
        1,
        "the README's analyze example"
    );
    assert_eq!(
        check_examples("docs/report.md"),
        1,
        "docs/report.md's example"
    );
}

#[test]
fn the_example_matcher_tells_a_changed_output() {
    let out = ["a", "b", "c: long line", "d"];
    assert!(lines_match(&["a", "...", "c: long...", "d"], &out));
    assert!(lines_match(&["...", "d"], &out));
    assert!(!lines_match(&["a", "c: long line", "d"], &out));
    assert!(!lines_match(&["a", "...", "c: short..."], &out));
    let doc = serde_json::json!({"n": 0.41, "s": "...", "l": [1, "..."], "k": "x"});
    let same = serde_json::json!({"n": 0.414857, "s": "any", "l": [1, 2, 3], "k": "x"});
    assert_eq!(json_mismatch(&doc, &same, "r"), None);
    for other in [
        serde_json::json!({"n": 0.42, "s": "any", "l": [1], "k": "x"}),
        serde_json::json!({"n": 0.41, "s": "any", "l": [2], "k": "x"}),
        serde_json::json!({"n": 0.41, "s": "any", "l": [1], "k": "y"}),
        serde_json::json!({"n": 0.41, "s": "any", "l": [1], "k": "x", "new": 1}),
    ] {
        assert!(json_mismatch(&doc, &other, "r").is_some(), "{other}");
    }
}

/// The English word for `n` below 100.
fn number_word(n: usize) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..20 => ONES[n].to_owned(),
        _ if n.is_multiple_of(10) => TENS[n / 10].to_owned(),
        _ => format!("{}-{}", TENS[n / 10], ONES[n % 10]),
    }
}

fn word_number(word: &str) -> Option<usize> {
    (0..100).find(|&n| number_word(n) == word)
}

#[test]
fn the_detector_count_in_the_docs_is_the_registered_one() {
    let n = DETECTORS.len();
    let word = number_word(n);
    let readme = doc("README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let said = format!("{word} detectors (");
    let at = readme
        .find(&said)
        .unwrap_or_else(|| panic!("the README does not say '{said}' ({n} are registered)"));
    // "(the eleven of the method, six for ..., eight for ...)": the parts add up.
    let inside = &readme[at + said.len()..];
    let inside = &inside[..inside.find(')').unwrap()];
    let parts: Vec<usize> = inside
        .split(", ")
        .filter_map(|p| word_number(p.trim_start_matches("the ").split(' ').next()?))
        .collect();
    assert!(parts.len() >= 2, "the README's detectors by kind: {inside}");
    assert_eq!(
        parts.iter().sum::<usize>(),
        n,
        "the README's detectors by kind: {inside}"
    );
    let how = doc("docs/how-it-decides.md");
    assert!(
        how.contains(&format!("{word} rule detectors")),
        "docs/how-it-decides.md does not say '{word} rule detectors'"
    );
}

/// The backquoted names in `text` between `from` and the next `to`.
fn quoted_between(text: &str, from: &str, to: &str) -> BTreeSet<String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} not found"))
        + from.len();
    let part = &text[start..];
    let part = &part[..part.find(to).unwrap_or_else(|| panic!("{to:?} not found"))];
    part.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_docs_list_every_detector_category_and_source_format() {
    let report = doc("docs/report.md");
    let detectors = quoted_between(&report, "- `detector`:", "; a step found");
    let mut registered: BTreeSet<String> = DETECTORS
        .iter()
        .map(|d| d.id().as_str().to_owned())
        .collect();
    registered.insert("judge".to_owned());
    assert_eq!(detectors, registered, "docs/report.md, `detector`");

    let how = doc("docs/how-it-decides.md");
    for c in Category::ALL {
        assert!(
            how.contains(&format!("`{}`", c.as_str())),
            "docs/how-it-decides.md does not name the category `{}`",
            c.as_str()
        );
    }

    let names: BTreeSet<String> = SourceFormat::NAMES.iter().map(|n| n.to_string()).collect();
    let listed = [
        (
            "docs/report.md",
            quoted_between(&report, "`source_format` (", "; the names"),
        ),
        (
            "docs/importers.md",
            quoted_between(
                &doc("docs/importers.md"),
                "`--from` forces one of",
                "(the same",
            ),
        ),
        (
            "docs/run-format.md",
            quoted_between(&doc("docs/run-format.md"), "forces one of", "(the names"),
        ),
    ];
    for (path, listed) in listed {
        assert_eq!(listed, names, "{path}: the formats");
    }
}

/// The subcommands a `--help` page lists (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

fn help(command: &[&str]) -> String {
    let mut args = command.to_vec();
    args.push("--help");
    String::from_utf8(run(&args).stdout).unwrap()
}

#[test]
fn the_commands_said_to_take_index_and_from_are_the_ones_that_do() {
    // Every command and subcommand, the screen's (`tdn-tui RUN`) first.
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut i = 0;
    while i < commands.len() {
        let cmd = commands[i].clone();
        let refs: Vec<&str> = cmd.iter().map(String::as_str).collect();
        for sub in subcommands(&help(&refs)) {
            let mut next = cmd.clone();
            next.push(sub);
            commands.push(next);
        }
        i += 1;
    }
    assert!(commands.len() > 10, "{commands:?}");
    let mut taking = BTreeSet::new();
    for cmd in &commands {
        let refs: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let h = help(&refs);
        let (index, from) = (h.contains("--index <N>"), h.contains("--from <FORMAT>"));
        assert_eq!(
            index,
            from,
            "`{}` takes one of --index and --from",
            cmd.join(" ")
        );
        if index {
            taking.insert(if cmd.is_empty() {
                "tdn-tui RUN".to_owned()
            } else {
                cmd.join(" ")
            });
        }
    }
    let said: BTreeSet<String> = quoted_between(
        &doc("docs/importers.md"),
        "forces the format, on these commands:",
        ". `eval` takes neither",
    )
    .into_iter()
    .filter(|n| !n.starts_with("--"))
    .collect();
    assert_eq!(said, taking, "docs/importers.md");
    let not = quoted_between(
        &doc("docs/importers.md"),
        "`eval` takes neither",
        "Without `--index`",
    );
    for n in not.iter().filter(|n| !n.starts_with("--")) {
        let n = n.trim_end_matches(" --run");
        assert!(
            commands.iter().any(|c| c.join(" ") == n) && !taking.contains(n),
            "docs/importers.md says `{n}` takes neither"
        );
    }
}
