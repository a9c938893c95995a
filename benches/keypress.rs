//! One keypress on a 100,000-step run: dispatch through the keymap, `update`, the effects it
//! causes (run in line, as in `--render`), and a full `render` on ratatui's `TestBackend` at
//! 120x40. The screen's target is under 16 ms per keypress (one frame at 60 Hz).
//!
//! Run with `cargo bench --bench keypress`.

#[path = "../tests/support/big_run.rs"]
mod big_run;

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

fn screen() -> Headless {
    let opts = AppOptions {
        size: (120, 40),
        ..AppOptions::default()
    };
    let app = App::new(big_run::big(STEPS), opts);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
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

fn keypress(c: &mut Criterion) {
    let mut g = c.benchmark_group("keypress_100k_steps");
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
        let mut h = screen();
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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = keypress, open
}
criterion_main!(benches);
