//! The screen: state tests of `update` (tui/state.rs), the defects users met (tui/defects.rs; on
//! real exports, tui/readable.rs), snapshots of real exports (tui/real.rs),
//! the features users expect (tui/features.rs), snapshots of every pane, the help, the viewer,
//! the confirm box, the filter, the waterfall and the too-small notice at 80x24, 100x30 and
//! 160x50 (tests/snapshots/), cell styles that text snapshots cannot show, the `--render`
//! command line, and the real binary on a pseudo-terminal ended by signals and by closing its
//! terminal (tui/terminal.rs).

#[path = "support/big_run.rs"]
mod big_run;
#[path = "tui/compare.rs"]
mod compare;
#[path = "tui/conversation.rs"]
mod conversation;
#[path = "tui/defects.rs"]
mod defects;
#[path = "tui/features.rs"]
mod features;
#[path = "support/tui_fixture.rs"]
mod fixture;
#[path = "tui/journey.rs"]
mod journey;
#[path = "tui/judge.rs"]
mod judge;
#[path = "tui/readable.rs"]
mod readable;
#[path = "tui/real.rs"]
mod real;
#[path = "tui/run_switch.rs"]
mod run_switch;
#[path = "tui/state.rs"]
mod state;
#[path = "tui/terminal.rs"]
mod terminal;

use fixture::{calendar, press, screen, screen_with, scripted};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Style};
use std::path::Path;
use std::process::Command;
use tdn_tui::tui::theme::{Role, Theme};

const SIZES: [(u16, u16); 3] = [(80, 24), (100, 30), (160, 50)];

/// The screen after `keys` at every size, each matched with its snapshot
/// (`tests/snapshots/tui__{W}x{H}_{name}.snap`).
fn pinned(name: &str, keys: &str) {
    for (w, h) in SIZES {
        let mut s = screen(calendar(), (w, h), scripted());
        press(&mut s, keys);
        insta::assert_snapshot!(format!("{w}x{h}_{name}"), s.screen());
    }
}

/// One test per screen worth pinning, so a failure names the view: `name => "keys"`.
macro_rules! pinned_screens {
    ($($name:ident => $keys:literal,)*) => {
        /// Every pinned screen's name, for the check that each has its snapshots.
        const PINNED: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                pinned(stringify!($name), $keys);
            }
        )*
    };
}

/// The snapshot tests of each view of the sample run.
mod view {
    use super::pinned;

    pinned_screens! {
        timeline => "1",
        suspects => "2",
        suspects_context => "2 i",
        detail => "3",
        dropped => "4",
        claims => "5",
        experiments_empty => "6",
        experiments_confirmed => "i a y 6",
        confirm => "i a",
        help => "?",
        viewer => "1 j Enter",
        search => "1 / c r e",
        filter => "f i s : s u s p e c t",
        sorted => "1 s",
        waterfall => "w",
        zoom => "z",
        help_search => "? / a b l a t e",
        warnings => "W",
    }

    #[test]
    fn every_pinned_view_has_its_snapshots_and_no_snapshot_is_left_over() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
        for name in PINNED {
            for (w, h) in super::SIZES {
                let file = dir.join(format!("tui__{w}x{h}_{name}.snap"));
                assert!(file.exists(), "{} is missing", file.display());
            }
        }
        // A snapshot of a view no longer pinned would be checked by nothing.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file = entry.unwrap().file_name().to_string_lossy().into_owned();
            let Some(rest) = file
                .strip_prefix("tui__")
                .and_then(|f| f.strip_suffix(".snap"))
            else {
                continue;
            };
            let Some((_, name)) = rest.split_once('_') else {
                continue;
            };
            assert!(
                PINNED.contains(&name) || name == "too_small",
                "{file} belongs to no pinned view"
            );
        }
    }
}

#[test]
fn the_too_small_notice_matches_its_snapshot() {
    let s = screen(calendar(), (50, 12), scripted());
    insta::assert_snapshot!("50x12_too_small", s.screen());
}

/// The style of the first cell holding `glyph` at or after `row_text` on the first row that
/// contains it (the fixture's texts are one cell per character).
fn style_of(buf: &Buffer, row_text: &str, glyph: &str) -> Style {
    let w = usize::from(buf.area.width);
    for (y, row) in buf.content.chunks(w).enumerate() {
        let symbols: Vec<&str> = row.iter().map(|c| c.symbol()).collect();
        let text = symbols.concat();
        if let Some(byte) = text.find(row_text) {
            let start = text[..byte].chars().count();
            let x = (start..row.len())
                .find(|&x| symbols[x] == glyph)
                .unwrap_or_else(|| panic!("no '{glyph}' after '{row_text}' in row {y}: {text}"));
            return row[x].style();
        }
    }
    panic!("no row contains '{row_text}'");
}

#[test]
fn marks_and_the_selection_carry_their_role_styles() {
    let dark = Theme::builtin("dark").unwrap();
    let mut s = screen(calendar(), (120, 40), scripted());
    let term = s.draw();
    let buf = term.backend().buffer();
    assert_eq!(style_of(buf, "✗#2", "✗").fg, dark.style(Role::StepError).fg);
    assert_eq!(
        style_of(buf, "#1 ★3", "#").fg,
        dark.style(Role::SuspectTop).fg
    );
    assert_eq!(
        style_of(buf, "#1 ★3", "★").fg,
        dark.style(Role::Shortlist).fg
    );
    // The suspects pane has focus, so its selected row is drawn in the selection style.
    assert_eq!(
        style_of(buf, "root cause", "r").bg,
        dark.style(Role::Selection).bg
    );
    press(&mut s, "5");
    let term = s.draw();
    let buf = term.backend().buffer();
    assert_eq!(
        style_of(buf, "≠ contradicted", "≠").fg,
        dark.style(Role::ClaimContradicted).fg
    );
    assert_eq!(
        style_of(buf, "· no claim", "·").fg,
        dark.style(Role::ClaimNone).fg
    );
}

#[test]
fn mono_draws_no_colour_and_keeps_the_glyphs() {
    for keys in ["1", "2", "3", "4 j", "5", "i a y 6", "?"] {
        let mut s = screen_with(calendar(), (120, 40), scripted(), "mono");
        press(&mut s, keys);
        let term = s.draw();
        for cell in &term.backend().buffer().content {
            for c in [cell.fg, cell.bg] {
                assert!(
                    c == Color::Reset,
                    "mono drew colour {c:?} at '{}' after '{keys}'",
                    cell.symbol()
                );
            }
        }
        if keys == "1" {
            let text = s.screen();
            assert!(text.contains('✗') && text.contains('★') && text.contains("#1"));
        }
    }
}

#[test]
fn run_text_is_shown_inert() {
    // Step s5's second document holds ESC [2J and an OSC 52 sequence.
    let mut s = screen(calendar(), (120, 40), scripted());
    press(&mut s, "1 j j");
    let text = s.screen();
    assert!(
        text.contains("\\u{1b}[2J\\u{1b}]52;c;ZXZpbA==\\u{7}"),
        "{text}"
    );
    for cell in &s.draw().backend().buffer().content {
        assert!(
            !cell.symbol().chars().any(|c| c.is_control()),
            "a control character reached a cell"
        );
    }
}

#[test]
fn hostile_text_anywhere_in_a_run_or_report_never_reaches_a_cell() {
    // Terminal escapes, a bell and a bidi override in names, ids, arguments, titles and evidence.
    let evil = "create\\u001b]0;pwned\\u0007\\u001b[2J_event\\u202e";
    let f = fixture::fixtures();
    let run_text = std::fs::read_to_string(f.join("calendar.run.json"))
        .unwrap()
        .replace("create_event", evil);
    let report_text = std::fs::read_to_string(f.join("calendar.report.json"))
        .unwrap()
        .replace("create_event", evil);
    let loaded =
        tdn_tui::analysis::load::load_str(&run_text, Path::new("evil.json"), &Default::default())
            .unwrap()
            .remove(0);
    let report: tdn_tui::analysis::report::Report = serde_json::from_str(&report_text).unwrap();
    let name = &loaded.run.steps[3].tool.as_ref().unwrap().name;
    assert!(
        name.contains('\u{1b}') && name.contains('\u{202e}'),
        "the fixture really is hostile"
    );
    for keys in [
        "1",
        "2",
        "2 ] ]",
        "3",
        "1 j j j Enter",
        "4 j",
        "5",
        "a y 6",
        "1 / c r e",
        "?",
    ] {
        for size in SIZES {
            let doc = tdn_tui::tui::app::Document::new(loaded.run.clone(), report.clone(), None);
            let mut s = screen(doc, size, scripted());
            press(&mut s, keys);
            for cell in &s.draw().backend().buffer().content {
                let bad = cell
                    .symbol()
                    .chars()
                    .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c));
                assert!(
                    !bad,
                    "a raw control or bidi character reached the screen after '{keys}'"
                );
            }
        }
    }
}

#[test]
fn scores_are_never_percentages_and_influence_is_labelled_as_correlation() {
    for keys in ["2", "2 i", "a y 6"] {
        let mut s = screen(calendar(), (120, 40), scripted());
        press(&mut s, keys);
        let text = s.screen();
        assert!(!text.contains('%'), "a percentage after '{keys}':\n{text}");
    }
    let mut s = screen(calendar(), (120, 40), scripted());
    press(&mut s, "2 i");
    assert!(s.screen().contains("correlation, not a cause"));
}

#[test]
fn an_untested_suspect_names_the_key_that_can_test_it() {
    // The refund run's top suspect s3 produced the unit 'policy-2019': ablating it removes it.
    let f = fixture::fixtures();
    let loaded = tdn_tui::analysis::load::load_path(
        &f.join("refund.run.json"),
        &tdn_tui::analysis::load::LoadOptions::default(),
    )
    .unwrap()
    .remove(0);
    let report =
        serde_json::from_str(&std::fs::read_to_string(f.join("refund.report.json")).unwrap())
            .unwrap();
    let doc = tdn_tui::tui::app::Document::new(loaded.run, report, None);
    let s = screen(doc, (120, 40), scripted());
    assert!(s.screen().contains("(press a to ablate)"), "{}", s.screen());
    // The calendar run's top suspect s3 produced no unit: only a replay from it tests it.
    let s = screen(calendar(), (120, 40), scripted());
    let text = s.screen();
    assert!(text.contains("(press p to replay from it)"), "{text}");
    assert!(!text.contains("press a to ablate"), "{text}");
}

#[test]
fn the_suspects_pane_lists_the_report_in_its_order() {
    let s = screen(calendar(), (120, 40), scripted());
    let text = s.screen();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("'{needle}' missing"))
    };
    let doc = calendar();
    let ids: Vec<usize> = doc
        .report
        .suspects
        .iter()
        .map(|x| at(&format!("#{} ", x.rank)))
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "suspects out of order: {ids:?}"
    );
    assert!(at("▶#1 ★ s3") < at("#2   s4") && at("#2   s4") < at("#3   s9"));
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tdn-tui"));
    c.env("NO_COLOR", "1").env_remove("TDN_LOG");
    c
}

fn fixture_args(c: &mut Command) -> &mut Command {
    let f = fixture::fixtures();
    c.arg(f.join("calendar.run.json"))
        .arg("--report")
        .arg(f.join("calendar.report.json"))
}

#[test]
fn render_prints_the_screen_after_the_keys() {
    let out = fixture_args(&mut bin())
        .args(["--render", "100x30", "--keys", "?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 30);
    assert!(text.contains("Finding the cause of a wrong answer"));
    assert!(!text.contains('\u{1b}'), "--render prints plain text");
}

#[test]
fn a_saved_report_says_it_is_not_read_again() {
    let out = fixture_args(&mut bin())
        .args(["--render", "160x30", "--keys", "C-r"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("saved report 'calendar.report.json' (--report) is never analysed again"),
        "{text}"
    );
}

#[test]
fn unusable_input_is_reported_on_stderr_with_exit_2() {
    let out = bin()
        .args(["no/such/run.json", "--render", "80x24"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/run.json"));

    let out = fixture_args(&mut bin())
        .args(["--render", "80by24"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--render '80by24' is not a size"));

    let out = fixture_args(&mut bin())
        .args(["--render", "80x24", "--keys", "j Hyper-x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'Hyper-x' is not a key"));

    let f = fixture::fixtures();
    let out = bin()
        .arg(f.join("calendar.run.json"))
        .arg("--report")
        .arg(f.join("calendar.run.json"))
        .args(["--render", "80x24"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a tdn.report/1 report"));
}

#[test]
fn without_a_terminal_the_screen_says_how_to_render_instead() {
    let out = fixture_args(&mut bin()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --render 120x40"));
}

#[test]
fn the_screen_docs_name_every_action_binding_and_role() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screen.md"))
            .unwrap();
    for a in tdn_tui::tui::action::Action::BINDABLE {
        assert!(
            docs.contains(&format!("`{}`", a.name())),
            "docs/screen.md does not name '{}'",
            a.name()
        );
    }
    for b in tdn_tui::tui::keymap::Keymap::defaults().bindings() {
        let row = format!("`{}`", b.chord);
        assert!(
            docs.contains(&row),
            "docs/screen.md does not list the key {row}"
        );
    }
    for r in Role::ALL {
        assert!(
            docs.contains(&format!("| `{}` |", r.key())),
            "docs/screen.md does not list the role '{}'",
            r.key()
        );
    }
}

#[test]
fn analyze_prints_a_markdown_page_to_share() {
    let out = bin()
        .args(["analyze", "--format", "markdown"])
        .arg(fixture::fixtures().join("refund.run.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = String::from_utf8(out.stdout).unwrap();
    // The refund run: its id, its top suspect s3, its reference answer "$80".
    assert!(
        page.starts_with("# Diagnosis of run refund-outdated-policy: failed"),
        "{page}"
    );
    assert!(
        page.contains("## Top suspect: step 's3' (position 3)"),
        "{page}"
    );
    assert!(
        page.contains("**Reference answer**: You will be refunded $80."),
        "{page}"
    );
    assert!(page.contains("## Claims of the final answer"), "{page}");
    assert!(page.contains("## Experiments"), "{page}");
    // Scores are never printed (the page may speak of them, never give one).
    for (at, _) in page.match_indices("score") {
        let after = page[at + 5..].trim_start_matches([' ', ':']);
        assert!(
            !after.starts_with(|c: char| c.is_ascii_digit()),
            "a score is printed:\n{page}"
        );
    }
}
