//! docs/ledger.md (attribution-ledger §6): `ledger verify` prints one line per problem,
//! `PATH:LINE: TYPE ID8: what failed`, then the counts; `--json` has the documented keys; exit 0
//! with warnings only, 1 on a failure, 2 for a file that is not a ledger.

use super::support::{ok_json, run, show, stdout};
use serde_json::json;

#[test]
fn ledger_verify_prints_one_line_per_problem_then_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.ledger.jsonl");
    // Not a ledger: exit 2 on stderr.
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let out = run(&["ledger", "verify", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    // An empty header-only ledger with a torn tail: exit 0, the tail is a warning.
    let header = json!({"schema": 2, "type": "ledger", "prev": null, "scope": "scenario",
                        "name": "x", "created_at": "2026-01-01T00:00:00Z", "created_by": "tdn-tui/0"});
    std::fs::write(&path, format!("{header}\n{{\"schema\": 2, \"ty")).unwrap();
    let p = path.to_str().unwrap();
    let out = run(&["ledger", "verify", p]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let last = text.lines().last().unwrap();
    let summary = regex::Regex::new(
        r"^\d+ lines: \d+ verified, \d+ legacy_unverified, \d+ unbound trials, \d+ cancelled trials, 1 torn, 0 failed$",
    )
    .unwrap();
    assert!(summary.is_match(last), "{text}");
    let problem = regex::Regex::new(r"^.+x\.ledger\.jsonl:2: \S+( [0-9a-f]{8})?: ").unwrap();
    assert!(text.lines().any(|l| problem.is_match(l)), "{text}");
    let out = run(&["ledger", "verify", "--json", p]);
    let v = ok_json(&out);
    assert_eq!(v["format"], "tdn.ledger-verify/1");
    assert_eq!(v["ok"], true);
    let counts: Vec<&str> = v["counts"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "lines",
        "verified",
        "legacy_unverified",
        "unbound",
        "torn",
        "failed",
    ] {
        assert!(counts.contains(&k), "{counts:?}");
    }
    for p in v["problems"].as_array().unwrap() {
        for k in ["line", "type", "id", "code", "message"] {
            assert!(p.get(k).is_some(), "{p}");
        }
    }
    // A line in the middle that does not parse is a failure: exit 1.
    std::fs::write(&path, format!("{header}\nnot json\n{header}\n")).unwrap();
    let out = run(&["ledger", "verify", p]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stdout(&out).trim_end().ends_with("failed"),
        "{}",
        show(&out)
    );
}
