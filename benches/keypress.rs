//! One keypress on a 100,000-step run: dispatch through the keymap, `update`, the effects it
//! causes (run in line, as in `--render`), and a full `render` on ratatui's `TestBackend` at
//! 120x40. The screen's target is under 16 ms per keypress (one frame at 60 Hz). Twice: on the
//! screen tests' generated run and report (every pane has content), and on a generated run of
//! many distinct values with the report the analysis makes of it (50,000 ranked pieces of
//! context, 16,000 steps with dropped context, grouped suspects).
//!
//! Also the first frame: from a run file's text to the screen drawn, in every shape of
//! `support/gen.rs` at 1,000, 10,000 and 100,000 steps (load, analyse, build the screen's
//! look-ups, draw), which the screen must show within 1.5 times what `analyze` takes
//! (docs/performance.md).
//!
//! Run with `cargo bench --bench keypress`.

/// The binary's allocator (src/main.rs), so the figures are the program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/support/big_run.rs"]
mod big_run;
#[path = "support/gen.rs"]
mod gen_runs;

use gen_runs::{Shape, run_json};
use std::path::Path;
use tdn_tui::analysis::load::{LoadOptions, load_str};
use tdn_tui::analysis::model::Run;
use tdn_tui::analysis::progress::Progress;
use tdn_tui::analysis::report::{AnalyzeOptions, Report, analyze_run};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use tdn_tui::experiments::engine::Unavailable;
use tdn_tui::tui::app::{App, AppOptions, Document};
use tdn_tui::tui::effects::{Clipboard, EffectContext};
use tdn_tui::tui::headless::{Headless, parse_keys};
use tdn_tui::tui::render::render;

/// Steps in the generated run.
const STEPS: usize = 100_000;

fn screen(doc: Document) -> Headless {
    let opts = AppOptions {
        size: (120, 40),
        ..AppOptions::default()
    };
    let app = App::new(doc, opts);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port: Arc::new(Unavailable {
            reason: "benchmark".to_owned(),
        }),
        opener: Arc::new(|_| Err("benchmark".to_owned())),
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

/// A generated run's text, loaded and analysed as the screen does, into the screen's document.
fn analysed(text: &str) -> Document {
    let (run, report) = analysed_parts(text);
    Document::from_shared(run, report, None)
}

/// The run and report of [`analysed`].
fn analysed_parts(text: &str) -> (Arc<Run>, Report) {
    let settings = tdn_tui::config::Settings::default();
    let embedder = tdn_tui::experiments::embedder::from_settings(&settings);
    let loaded = load_str(text, Path::new("bench.json"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("a generated run loads: {e}"))
        .remove(0);
    let run = Arc::new(loaded.run);
    let report = analyze_run(
        &run,
        &loaded.warnings,
        loaded.source_format,
        &AnalyzeOptions::new(embedder.as_ref()),
        &Progress::new(),
    );
    (run, report)
}

fn keypress(c: &mut Criterion) {
    keys_on(c, "keypress_100k_steps", || big_run::big(STEPS));
    let (run, report) = analysed_parts(&run_json(Shape::Distinct, STEPS));
    keys_on(c, "keypress_100k_distinct_analysed", || {
        Document::from_shared(run.clone(), report.clone(), None)
    });
}

fn keys_on(c: &mut Criterion, group: &str, doc: impl Fn() -> Document) {
    let mut g = c.benchmark_group(group);
    // (name, keys pressed once before measuring, keys pressed per iteration)
    let cases: &[(&str, &str, &str)] = &[
        ("timeline_down", "1 g", "j"),
        ("timeline_page_down", "1 g", "C-d"),
        ("timeline_top_bottom", "1", "G g"),
        ("timeline_fold_toggle", "1 g", "Space"),
        ("next_suspect", "2", "]"),
        ("influence_toggle", "2", "i"),
        ("influence_down", "2 i", "j"),
        ("focus_next_pane", "", "Tab"),
        ("detail_scroll", "3", "j"),
        // Live, the search runs off the UI task; here it runs in line, twice per iteration.
        ("search_type_and_delete", "1 / s 1", "2 Backspace"),
    ];
    for (name, setup, keys) in cases {
        let mut h = screen(doc());
        h.press_all(&parse_keys(setup).unwrap());
        let keys = parse_keys(keys).unwrap();
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        g.bench_function(*name, |b| {
            b.iter(|| {
                h.press_all(&keys);
                term.draw(|f| render(&h.app, f)).unwrap();
            })
        });
    }
    g.finish();
}

/// Building the screen's look-ups when a 100,000-step run opens (labels, nesting, lanes).
fn open(c: &mut Criterion) {
    let run = big_run::big_run(STEPS);
    let report = big_run::big_report(&run);
    c.bench_function("open_100k_steps", |b| {
        b.iter_batched(
            || (run.clone(), report.clone()),
            |(r, rep)| Document::new(r, rep, None),
            BatchSize::LargeInput,
        )
    });
}

/// From a run file's text to the first frame: load, analyse, the screen's look-ups, one draw.
fn first_frame(c: &mut Criterion) {
    for shape in Shape::ALL {
        let mut g = c.benchmark_group(format!("first_frame/{}", shape.name()));
        g.sample_size(10);
        for n in [1_000usize, 10_000, 100_000] {
            let text = run_json(shape, n);
            g.bench_function(n.to_string(), |b| {
                b.iter(|| {
                    let doc = analysed(&text);
                    let app = App::new(
                        doc,
                        AppOptions {
                            size: (120, 40),
                            ..AppOptions::default()
                        },
                    );
                    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
                    term.draw(|f| render(&app, f)).unwrap();
                    std::hint::black_box(&term);
                })
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    // The allocator tuned as the binary tunes it, before any thread starts.
    config = {
        tdn_tui::cli::heap::tune_allocator();
        Criterion::default().sample_size(30)
    };
    targets = keypress, open, first_frame
}
criterion_main!(benches);
