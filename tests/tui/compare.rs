//! The compare view (docs/screen.md, "Compare with a good run"): a real export (the OpenAI
//! Agents SDK's `get_weather` run, as Langfuse recorded it) beside a copy with every step id
//! renamed and the city asked for changed. It opens on the first divergence, moves between
//! differences, shows both steps with the changed words marked, hands the step to the timeline,
//! and is reached from an open run by a key that offers the trials of the same task that
//! succeeded. Snapshots at 80x24 and 120x40.

use super::fixture::{press, screen, scripted, status};
use super::readable::real;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tdn_tui::analysis::compare::compare;
use tdn_tui::analysis::influence::HashedEmbedder;
use tdn_tui::analysis::load::{LoadOptions, Loaded, load_path};
use tdn_tui::analysis::report::{Against, AnalyzeOptions, analyze};
use tdn_tui::tui::app::{Document, Overlay};
use tdn_tui::tui::compare::AgainstView;

const AGENTS: &str = "langfuse/langfuse__openai-agents-2025-09-30.trace.json";

fn load(path: &Path) -> Loaded {
    load_path(path, &LoadOptions::default())
        .expect("the file loads")
        .remove(0)
}

/// The run, and the copy with its ids renamed and `Tokyo` asked for as `Kyoto`, analysed
/// against it, as `tdn-tui BAD --against GOOD` opens it.
fn compared(dir: &Path) -> Document {
    compared_with(dir, "Kyoto")
}

/// [`compared`], the city asked for being `city`.
fn compared_with(dir: &Path, city: &str) -> Document {
    let good = load(&real(AGENTS));
    let mut v = serde_json::to_value(&good.run).unwrap();
    v["id"] = Value::from("another-run");
    for s in v["steps"].as_array_mut().unwrap() {
        for k in ["id", "parent"] {
            if let Some(Value::String(id)) = s.get_mut(k) {
                *id = format!("r-{id}");
            }
        }
        if s["tool"]["name"] == "get_weather" {
            s["tool"]["arguments"]["city"] = Value::from(city);
        }
    }
    v["context_units"] = Value::Array(Vec::new());
    let path = dir.join("bad.json");
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    let bad = load(&path);
    let cmp = compare(&good.run, &bad.run);
    let mut opts = AnalyzeOptions::new(&HashedEmbedder);
    opts.against = Some(Against {
        run: &good.run,
        comparison: &cmp,
    });
    let report = analyze(&bad, &opts);
    let mut doc = Document::new(bad.run, report, Some(path));
    doc.against = Some(Arc::new(AgainstView {
        good: Arc::new(good.run),
        label: "good.json".to_owned(),
        comparison: cmp,
    }));
    doc
}

fn row(h: &tdn_tui::tui::headless::Headless) -> Option<usize> {
    match &h.app.overlay {
        Some(Overlay::Compare(s)) => Some(s.row),
        _ => None,
    }
}

#[test]
fn the_view_opens_on_the_first_divergence_and_marks_the_changed_words() {
    let dir = tempfile::tempdir().unwrap();
    let doc = compared(dir.path());
    let view = doc.against.clone().unwrap();
    let first = view
        .comparison
        .first_divergence
        .clone()
        .expect("the runs part");
    let mut h = screen(doc, (120, 40), scripted());
    assert_eq!(row(&h), Some(first.row));
    let text = h.screen();
    assert!(text.contains("» first divergence"), "{text}");
    assert!(
        text.contains("argument 'city' of get_weather: 'Kyoto' here, 'Tokyo' in the good run"),
        "{text}"
    );
    // Both steps, side by side, the changed word marked on each side.
    assert!(text.contains("[-\"Tokyo\"-]"), "{text}");
    assert!(text.contains("{+\"Kyoto\"+}"), "{text}");
    insta::assert_snapshot!("compare_120x40_first_divergence", text);
    // `n` goes to the next row that differs, `N` back.
    let next = view.step_difference(first.row, true);
    press(&mut h, "n");
    match next {
        Some(r) => assert_eq!(row(&h), Some(r)),
        None => {
            assert_eq!(row(&h), Some(first.row));
            assert!(status(&h).contains("no further row"), "{}", status(&h));
        }
    }
    press(&mut h, "N");
    assert_eq!(row(&h), Some(first.row));
    // Enter shows this run's step in the timeline; D opens the view again on the divergence.
    press(&mut h, "j Enter");
    assert!(h.app.overlay.is_none());
    let shown = view.comparison.rows[(first.row + 1).min(view.comparison.rows.len() - 1)..]
        .iter()
        .find_map(|r| r.bad);
    assert_eq!(h.app.selected_step(), shown);
    press(&mut h, "D");
    assert_eq!(row(&h), Some(first.row));
    press(&mut h, "Esc");
    assert!(h.app.overlay.is_none());
}

#[test]
fn the_view_at_80x24_keeps_the_changed_lines_in_sight() {
    let dir = tempfile::tempdir().unwrap();
    let h = screen(compared(dir.path()), (80, 24), scripted());
    let text = h.screen();
    assert!(text.contains("{+\"Kyoto\"+}"), "{text}");
    insta::assert_snapshot!("compare_80x24_first_divergence", text);
}

#[test]
fn the_divergence_is_a_suspect_of_the_open_run() {
    let dir = tempfile::tempdir().unwrap();
    let doc = compared(dir.path());
    let a = doc.report.against.clone().expect("an against section");
    let blamed = a.suspect.expect("the divergence is counted").index;
    assert!(
        doc.report
            .suspects
            .iter()
            .take(3)
            .any(|s| s.index == blamed)
    );
    let mut h = screen(doc, (120, 40), scripted());
    press(&mut h, "Esc 2");
    let text = h.screen();
    assert!(text.contains("first_diverge"), "{text}");
}

#[test]
fn a_key_offers_the_trials_of_the_same_task_that_succeeded() {
    // Three τ-bench trials: run 0 failed, run 2 succeeded at the same task 7, run 1 is another
    // task's.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/taubench.json"),
    )
    .unwrap();
    let mut records: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut good = records[0].clone();
    good["trial"] = Value::from(1);
    good["reward"] = Value::from(1.0);
    good["traj"][2]["tool_calls"][0]["function"]["arguments"] =
        Value::from("{\"reservation_id\": \"ABC123\"}");
    records.push(good);
    let file = dir.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&records).unwrap()).unwrap();
    let render = |keys: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
            .arg(&file)
            .args(["--render", "120x40", "--keys", keys])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Run 0 opened from the list; D lists run 2, not run 1.
    let list = render("Enter D");
    assert!(list.contains("Compare with a good run"), "{list}");
    assert!(list.contains("run 2: "), "{list}");
    assert!(!list.contains("run 1: "), "{list}");
    assert!(list.contains("a file: type its path"), "{list}");
    // Enter compares: the view opens on the changed reservation id.
    let view = render("Enter D Enter");
    assert!(view.contains("Compare · good: run 2 of the file"), "{view}");
    assert!(
        view.contains("'ABC132' here, 'ABC123' in the good run"),
        "{view}"
    );
    // `--against` opens on the view at once.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
        .arg(&file)
        .args(["--index", "0", "--against"])
        .arg(&file)
        .args(["--render", "80x24"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("» first divergence"), "{text}");
}

#[test]
fn run_text_in_the_view_is_inert() {
    let dir = tempfile::tempdir().unwrap();
    let city = "Kyo\u{1b}[2J\u{1b}]52;c;aGk=\u{7}to\u{202e}";
    for size in [(80, 24), (120, 40)] {
        let h = screen(compared_with(dir.path(), city), size, scripted());
        let text = h.screen();
        assert!(text.contains("» first divergence"), "{text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
            "{text}"
        );
        assert!(text.contains("\\u{1b}"), "{text}");
    }
}
