//! Fixtures for the screen's tests: the hand-written calendar run and report
//! (tests/fixtures/tui/) and headless screens over them with a scripted runner. Test support
//! only; no assertions here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::report::Report;
use tdn_tui::experiments::engine::{ExperimentPort, ScriptedPort, Target};
use tdn_tui::tui::app::{App, AppOptions, Document};
use tdn_tui::tui::effects::{Clipboard, EffectContext};
use tdn_tui::tui::headless::{Headless, parse_keys};
use tdn_tui::tui::panes::experiments::RunnerReach;
use tdn_tui::tui::theme::Theme;

/// The folder of the screen's fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui")
}

/// The refund run (a copy of the sample run the stand-in agent knows) and its report, every rule
/// score capped at `top` (the judge is asked only under 0.8; 1.0 leaves the report as written).
pub fn refund_scored(top: f64) -> Document {
    let run_path = fixtures().join("refund.run.json");
    let loaded = load_path(&run_path, &LoadOptions::default())
        .expect("the refund fixture loads")
        .remove(0);
    let text = std::fs::read_to_string(fixtures().join("refund.report.json")).expect("report");
    let mut report: Report = serde_json::from_str(&text).expect("the report fixture is a Report");
    for s in &mut report.suspects {
        s.score = s.score.min(top);
    }
    Document::new(loaded.run, report, Some(run_path))
}

/// The calendar run and its hand-written report.
pub fn calendar() -> Document {
    let run_path = fixtures().join("calendar.run.json");
    let mut runs =
        load_path(&run_path, &LoadOptions::default()).expect("the calendar fixture loads");
    let loaded = runs.remove(0);
    let text =
        std::fs::read_to_string(fixtures().join("calendar.report.json")).expect("report fixture");
    let report: Report = serde_json::from_str(&text).expect("the report fixture is a Report");
    Document::new(loaded.run, report, Some(run_path))
}

/// A headless screen of `size` over `doc` with the dark theme and a scripted runner.
pub fn screen(doc: Document, size: (u16, u16), port: Arc<dyn ExperimentPort>) -> Headless {
    screen_with(doc, size, port, "dark")
}

/// As [`screen`], with a named built-in theme.
pub fn screen_with(
    doc: Document,
    size: (u16, u16),
    port: Arc<dyn ExperimentPort>,
    theme: &str,
) -> Headless {
    let opts = AppOptions {
        theme: Arc::new(Theme::builtin(theme).expect("built-in theme")),
        size,
        ..AppOptions::default()
    };
    let mut app = App::new(doc, opts);
    app.experiments.runner_note = "runner: ./stand-in-agent.sh (from the command line)".to_owned();
    app.experiments.runner = RunnerReach::Any;
    headless(app, port)
}

/// Wraps an app in a headless screen whose picker opens nothing.
pub fn headless(app: App, port: Arc<dyn ExperimentPort>) -> Headless {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port,
        opener: Arc::new(|_| Err("no runs to open in this test".to_owned())),
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

/// A scripted runner that confirms ablating the unit `u-cal-doc` (the top of the influence
/// ranking; the top suspect step `s3` produced no unit, so it can only be replayed).
pub fn scripted() -> Arc<ScriptedPort> {
    let mut p = ScriptedPort::new("./stand-in-agent.sh");
    p.script = vec![(
        Target::Unit("u-cal-doc".into()),
        tdn_tui::analysis::report::Verdict::Confirmed,
    )];
    Arc::new(p)
}

/// Presses keys written as in `--keys`.
pub fn press(h: &mut Headless, keys: &str) {
    h.press_all(&parse_keys(keys).expect("test keys parse"));
}

/// The status bar's text ("" when it shows none).
pub fn status(h: &Headless) -> String {
    app_status(&h.app)
}

/// The status bar's text of an app driven without a screen ("" when it shows none).
pub fn app_status(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}
