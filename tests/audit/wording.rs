//! Messages that quote exactly what the user wrote and say precisely what is wrong: a step that
//! is not an object (docs/run-format.md), a weight given as a non-finite string, and a score too
//! large for a 64-bit float (docs/influence.md §10: exit 2 either way).

use super::support::{fails, run_stdin, stderr, write};

#[test]
fn a_step_that_is_not_an_object_is_named_by_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "run.json",
        r#"{"format": "tdn.run/1", "id": "r", "status": "failed",
            "steps": [{"id": "a", "kind": "user", "output": "hi"}, 5]}"#,
    );
    for cmd in ["validate", "analyze"] {
        let out = super::support::run(&[cmd, &f]);
        fails(
            &out,
            2,
            "the step at position 2 is a number; each step must be an object",
        );
        assert!(!stderr(&out).contains("(step)"), "{}", stderr(&out));
    }
}

#[test]
fn a_non_finite_weight_is_quoted_as_written() {
    let dir = tempfile::tempdir().unwrap();
    for (written, quoted) in [
        (r#""Infinity""#, "'Infinity'"),
        (r#""-Infinity""#, "'-Infinity'"),
        (r#""NaN""#, "'NaN'"),
        ("-0.5", "'-0.5'"),
    ] {
        let input = format!(
            r#"{{"answer": "a", "evidence": [{{"id": "e", "text": "a"}}],
                "weights": {{"fa": 1, "avg": {written}, "persist": 1, "depth": 1}}}}"#
        );
        let out = run_stdin(dir.path(), &["influence"], input.as_bytes());
        fails(&out, 2, "weights.avg");
        let msg = stderr(&out);
        assert!(msg.contains(quoted), "{msg}");
        assert!(!msg.contains("'inf'") && !msg.contains(" inf;"), "{msg}");
    }
}

#[test]
fn a_number_too_large_for_a_float_is_said_to_be_valid_json_that_overflows() {
    let dir = tempfile::tempdir().unwrap();
    for input in [
        r#"{"scores": [{"id": "a", "score": 1e400}]}"#,
        r#"{"scores": [{"id": "a", "score": -1e400}]}"#,
    ] {
        let out = run_stdin(dir.path(), &["confidence"], input.as_bytes());
        fails(&out, 2, "1:");
        let msg = stderr(&out);
        assert!(!msg.contains("not valid JSON"), "{msg}");
        assert!(msg.contains("too large"), "{msg}");
        assert!(msg.contains("\"Infinity\""), "{msg}");
    }
    // Real syntax errors are still called invalid JSON.
    let out = run_stdin(dir.path(), &["confidence"], b"{\"scores\": [}");
    fails(&out, 2, "not valid JSON");
}
